import pg from 'pg';
import { DataSource } from 'typeorm';
import { createWorkspace } from '#identity/accounts.js';
import { createField } from '#identity/data-model.js';
import { createObject, updateObject } from '#identity/objects.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { benchDatabaseUrl, ensureBenchDatabase } from './seed.js';

/**
 * `npm run bench -- --custom-object-search`: what search costs the writes of a custom object
 * (docs/decisions/0060-custom-objects-data-surfaces.md). Database `records_bench_custom_object_search`,
 * emptied at start. Inserts BENCH_CO_ROWS records (default 30,000) of an object with a TEXT
 * name, a TEXT title, an EMAILS contact and a NUMBER score into `custom_records`, in statements
 * of 60 rows (a batch create), through the table's triggers as the API's writes are: with the
 * search triggers and index, and without them (disabled, the index dropped), runs alternating,
 * best of BENCH_CO_RUNS (default 3). Then the time a change of the object's label identifier
 * takes (it indexes every record of the object again, in the change's transaction).
 */
const DB = 'records_bench_custom_object_search';
const ROWS = Number(process.env.BENCH_CO_ROWS) || 30_000;
const RUNS = Number(process.env.BENCH_CO_RUNS) || 3;
const BATCH = 60;
const SEARCH_TRIGGERS = ['custom_records_search', 'custom_records_words_insert', 'custom_records_words_update'];
const INDEX = `CREATE INDEX custom_records_search_idx ON custom_records USING gin (workspace_id, object_id, search_vector) WHERE deleted_at IS NULL`;
const log = (m: string) => console.log(m);

/** The values of record `n`: a TEXT title shared by 1 in 40, a unique e-mail, a number. */
const VALUES = (n: string) => `'title', 'Printer jam on floor ' || (${n}) % 40,
  'contact', jsonb_build_object('primaryEmail', 'user' || (${n}) || '@example.com', 'additionalEmails', '[]'::jsonb),
  'score', ${n}`;

/** Inserts ROWS rows, BATCH a statement, after `reset`; `insert` is the INSERT of one batch ($1 the first number, $2 the batch size). */
async function rowsPerSecond(pool: pg.Pool, reset: [string, unknown[]][], insert: string, params: unknown[]): Promise<number> {
  for (const [sql, values] of reset) await pool.query(sql, values);
  const started = process.hrtime.bigint();
  for (let done = 0; done < ROWS; done += BATCH) await pool.query(insert, [...params, done, BATCH]);
  return ROWS / (Number(process.hrtime.bigint() - started) / 1e9);
}

/** Records of the custom object. */
const customRecords = (pool: pg.Pool, workspaceId: string, objectId: string) =>
  rowsPerSecond(
    pool,
    [
      ['DELETE FROM custom_records WHERE workspace_id = $1 AND object_id = $2', [workspaceId, objectId]],
      ['DELETE FROM search_words WHERE workspace_id = $1', [workspaceId]],
      ['VACUUM ANALYZE custom_records', []],
    ],
    `INSERT INTO custom_records (workspace_id, object_id, custom)
     SELECT $1, $2, jsonb_build_object('name', 'Ticket ' || ($3::int + g), ${VALUES('$3::int + g')}) FROM generate_series(1, $4::int) g`,
    [workspaceId, objectId],
  );

/** The same values into companies (name, and the same custom fields there): what the standard tables' search costs, for comparison. */
const companies = (pool: pg.Pool, workspaceId: string) =>
  rowsPerSecond(
    pool,
    [
      ['DELETE FROM companies WHERE workspace_id = $1', [workspaceId]],
      ['VACUUM ANALYZE companies', []],
    ],
    `INSERT INTO companies (workspace_id, name, custom)
     SELECT $1, 'Ticket ' || ($2::int + g), jsonb_build_object(${VALUES('$2::int + g')}) FROM generate_series(1, $3::int) g`,
    [workspaceId],
  );

async function setSearch(pool: pg.Pool, on: boolean): Promise<void> {
  for (const trigger of SEARCH_TRIGGERS) await pool.query(`ALTER TABLE custom_records ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`);
  await pool.query(on ? INDEX : 'DROP INDEX IF EXISTS custom_records_search_idx');
}

export async function customObjectSearchBench(): Promise<void> {
  const { url, embedded } = await resolveDatabaseUrl(log);
  const benchUrl = benchDatabaseUrl(url, DB);
  await ensureBenchDatabase(benchUrl);
  const ds = await new DataSource(dataSourceOptions(benchUrl, 2)).initialize();
  const pool = new pg.Pool({ connectionString: benchUrl, max: 1, options: '-c statement_timeout=0' });
  try {
    await runMigrations(ds);
    await pool.query('TRUNCATE workspaces CASCADE');
    await pool.query('DROP INDEX IF EXISTS custom_records_search_idx');
    await setSearch(pool, true);
    const { id: workspaceId } = await createWorkspace(ds, 'Bench custom object search');
    const actor = { userId: null, email: 'bench' };
    const object = await createObject(ds, workspaceId, actor, { nameSingular: 'ticket', namePlural: 'tickets' });
    for (const [name, type] of [
      ['title', 'TEXT'],
      ['contact', 'EMAILS'],
      ['score', 'NUMBER'],
    ])
      for (const object of ['tickets', 'companies']) await createField(ds, workspaceId, actor, { object, name, type });
    log(`Inserts of ${ROWS} records of a custom object in statements of ${BATCH}, best of ${RUNS}, runs alternating:`);
    const best = { with: 0, without: 0, companies: 0 };
    for (let run = 0; run < RUNS; run++) {
      for (const on of [false, true]) {
        await setSearch(pool, on);
        const rate = await customRecords(pool, workspaceId, object.id);
        if (on) best.with = Math.max(best.with, rate);
        else best.without = Math.max(best.without, rate);
      }
      best.companies = Math.max(best.companies, await companies(pool, workspaceId));
    }
    log(`  without search: ${Math.round(best.without)} rows/s`);
    log(`  with search:    ${Math.round(best.with)} rows/s (${(best.with / best.without).toFixed(2)}× of without)`);
    log(`  companies with the same values and search: ${Math.round(best.companies)} rows/s`);
    const started = process.hrtime.bigint();
    await updateObject(ds, workspaceId, actor, object.id, { labelIdentifierField: 'title' });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    log(`  a new label identifier re-indexes the ${ROWS} records in ${Math.round(ms)} ms (${((ms / ROWS) * 1000).toFixed(0)} µs a record)`);
  } finally {
    await pool.end();
    await ds.destroy();
    if (embedded?.owned) await embedded.stop();
  }
}
