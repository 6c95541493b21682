import pg from 'pg';

export default async function globalTeardown() {
  const test = globalThis.__testDatabase;
  if (test) {
    const admin = new pg.Client({ connectionString: test.adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${test.name} WITH (FORCE)`);
    await admin.end();
  }
  const db = globalThis.__embeddedPg;
  if (db?.owned) await db.stop();
}
