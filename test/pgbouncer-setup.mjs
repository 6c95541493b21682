// Global setup of jest.pgbouncer.config.js: the usual test database (global-setup.mjs), then a
// real PgBouncer in transaction mode in front of it with 3 server connections, so the records
// suites' clients really share server sessions. test/pgbouncer-env.ts points each test file at it.
import globalSetup from './global-setup.mjs';
import { PGBOUNCER, pgbouncerAvailable, startPgBouncer } from './pgbouncer.mjs';

export default async function pgbouncerSetup() {
  await globalSetup();
  if (!pgbouncerAvailable()) {
    process.stderr.write(`\n${PGBOUNCER} not found: the suites through PgBouncer are skipped (apt-get install -y pgbouncer)\n`);
    return;
  }
  const bouncer = await startPgBouncer({ directUrl: process.env.DATABASE_URL, poolSize: 3 });
  globalThis.__pgbouncer = bouncer;
  process.env.WRS_PGBOUNCER_URL = bouncer.url;
}
