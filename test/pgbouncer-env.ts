// Each test file of jest.pgbouncer.config.js: the app's DATABASE_URL is the PgBouncer in
// transaction mode (test/pgbouncer-setup.mjs), the direct URL is its session URL, as docs/scaling.md
// "Behind PgBouncer" configures it. Without pgbouncer installed nothing changes (the files skip).
if (process.env.WRS_PGBOUNCER_URL) {
  process.env.DATABASE_SESSION_URL = process.env.DATABASE_URL;
  process.env.DATABASE_URL = process.env.WRS_PGBOUNCER_URL;
  process.env.DATABASE_POOLER = 'transaction';
}
