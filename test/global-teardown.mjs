import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import pg from 'pg';
import { checkRecording, REFERENCE_TABLES_WITH_WORKSPACE } from '../dist/libs/database/src/tenant-scope.js';

export default async function globalTeardown() {
  if (globalThis.__testTeardownDone) return;
  globalThis.__testTeardownDone = true;
  let failure;
  try {
    await checkTenantScope();
  } catch (err) {
    failure = err;
  }
  const test = globalThis.__testDatabase;
  if (test) {
    const admin = new pg.Client({ connectionString: test.adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${test.name} WITH (FORCE)`);
    await admin.end();
  }
  const db = globalThis.__embeddedPg;
  if (db?.owned) await db.stop();
  if (failure) throw failure;
}

/**
 * Citus readiness (docs/scaling.md "Distributed Postgres (Citus)"): every statement the application
 * sent during this run (global-setup.mjs records them) carries a workspace_id equality on
 * each tenant table it touches: a table of the public schema with a workspace_id column,
 * less workspaces and the reference tables. Fails the run, naming each offender.
 */
async function checkTenantScope() {
  const file = globalThis.__sqlRecording;
  if (!file) return;
  try {
    if (!existsSync(file)) return;
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    let tables;
    try {
      tables = (
        await client.query(
          `SELECT c.table_name AS name FROM information_schema.columns c
             JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
            WHERE c.table_schema = 'public' AND c.column_name = 'workspace_id' AND t.table_type = 'BASE TABLE'`,
        )
      ).rows.map((r) => r.name);
    } finally {
      await client.end();
    }
    const tenant = new Set(tables.filter((t) => t !== 'workspaces' && !(t in REFERENCE_TABLES_WITH_WORKSPACE)));
    const report = await checkRecording(readFileSync(file, 'utf8').split('\n'), tenant);
    if (report.offenders.length) {
      const list = report.offenders
        .map(
          (o) =>
            `- ${o.from}: ${o.offences.map((x) => `${x.table} (${x.reason})`).join(', ')}\n    ${o.sql.replace(/\s+/g, ' ').slice(0, 400)}`,
        )
        .join('\n');
      throw new Error(
        `${report.offenders.length} of ${report.checked} statements touch a tenant table without a workspace_id equality (docs/scaling.md "Distributed Postgres (Citus)"):\n${list}`,
      );
    }
    process.stdout.write(
      `\nTenant scope: ${report.checked} distinct statements checked, each tenant table with a workspace_id equality.\n`,
    );
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
}
