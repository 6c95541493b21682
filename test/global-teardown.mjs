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
 * less workspaces and the reference tables; and every statement on custom_records names its
 * object, as the record scope does (docs/decisions/0061-one-path-to-sql.md). Fails the run,
 * naming each offender.
 */
async function checkTenantScope() {
  const file = globalThis.__sqlRecording;
  if (!file) return;
  try {
    if (!existsSync(file)) return;
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    let tables;
    let objects;
    try {
      tables = (
        await client.query(
          `SELECT c.table_name AS name FROM information_schema.columns c
             JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
            WHERE c.table_schema = 'public' AND c.column_name = 'workspace_id' AND t.table_type = 'BASE TABLE'`,
        )
      ).rows.map((r) => r.name);
      // Tables of several objects' records: a record table (with `custom`) with an `object_id` (custom_records).
      objects = (
        await client.query(
          `SELECT c.table_name AS name FROM information_schema.columns c
             JOIN information_schema.columns o ON o.table_schema = c.table_schema AND o.table_name = c.table_name AND o.column_name = 'object_id'
            WHERE c.table_schema = 'public' AND c.column_name = 'custom'`,
        )
      ).rows.map((r) => r.name);
    } finally {
      await client.end();
    }
    const tenant = new Set(tables.filter((t) => t !== 'workspaces' && !(t in REFERENCE_TABLES_WITH_WORKSPACE)));
    const report = await checkRecording(readFileSync(file, 'utf8').split('\n'), tenant, new Set(objects));
    if (report.offenders.length) {
      const list = report.offenders
        .map(
          (o) =>
            `- ${o.from}: ${o.offences.map((x) => `${x.table} (${x.reason})`).join(', ')}\n    ${o.sql.replace(/\s+/g, ' ').slice(0, 400)}`,
        )
        .join('\n');
      throw new Error(
        `${report.offenders.length} of ${report.checked} statements touch a tenant table without a workspace_id equality (docs/scaling.md "Distributed Postgres (Citus)") or a custom object's records without their object (docs/decisions/0061-one-path-to-sql.md):\n${list}`,
      );
    }
    process.stdout.write(
      `\nTenant scope: ${report.checked} distinct statements checked, each tenant table with a workspace_id equality, custom_records with its object.\n`,
    );
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
}
