import pg from 'pg';
import { DataSource } from 'typeorm';
import { createWorkspace } from '#identity/accounts.js';
import { buildIndexSql } from '#identity/field-indexes.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { benchDatabaseUrl, ensureBenchDatabase } from './seed.js';

/**
 * `npm run bench -- --field-indexes`: what the shared custom-field indexes cost the writes of
 * a workspace that uses none of them (docs/decisions/0048-custom-field-index-sweeper.md): each
 * index covers every live record of the table, so every insert of every workspace adds an
 * entry to each. Database `records_bench_field_indexes`, emptied at start and before each run. For 0, 8
 * (one workspace's share), 16 and 64 (a table's slots) indexes of other workspaces' fields,
 * it inserts BENCH_FIELD_INDEX_ROWS companies (default 30,000) with two custom values, in
 * statements of 60 rows (a batch create), through the tables' triggers as the API's writes
 * are; best of BENCH_FIELD_INDEX_RUNS (default 3).
 */
const DB = 'records_bench_field_indexes';
const ROWS = Number(process.env.BENCH_FIELD_INDEX_ROWS) || 30_000;
const RUNS = Number(process.env.BENCH_FIELD_INDEX_RUNS) || 3;
const BATCH = 60;
const COUNTS = [0, 8, 16, 64];
const log = (m: string) => console.log(m);

async function rowsPerSecond(pool: pg.Pool, workspaceId: string): Promise<number> {
  await pool.query('TRUNCATE companies CASCADE');
  await pool.query('VACUUM ANALYZE companies');
  const started = process.hrtime.bigint();
  for (let done = 0; done < ROWS; done += BATCH) {
    await pool.query(
      `INSERT INTO companies (workspace_id, name, custom)
       SELECT $1, 'Company ' || ($2::int + g), jsonb_build_object('tier', 'GOLD', 'score', $2::int + g) FROM generate_series(1, $3::int) g`,
      [workspaceId, done, BATCH],
    );
  }
  return ROWS / (Number(process.hrtime.bigint() - started) / 1e9);
}

export async function fieldIndexBench(): Promise<void> {
  const { url, embedded } = await resolveDatabaseUrl(log);
  const benchUrl = benchDatabaseUrl(url, DB);
  await ensureBenchDatabase(benchUrl);
  const ds = await new DataSource(dataSourceOptions(benchUrl, 2)).initialize();
  const pool = new pg.Pool({ connectionString: benchUrl, max: 1, options: '-c statement_timeout=0' });
  try {
    await runMigrations(ds);
    // The database is this bench's alone: what an earlier run left goes.
    await pool.query('TRUNCATE workspaces CASCADE');
    const left = await pool.query<{ name: string }>(
      `SELECT indexname AS name FROM pg_indexes WHERE tablename = 'companies' AND indexname LIKE 'cf\\_%'`,
    );
    for (const { name } of left.rows) await pool.query(`DROP INDEX ${name}`);
    const { id } = await createWorkspace(ds, 'Bench field indexes');
    log(`Inserts of ${ROWS} companies in statements of ${BATCH}, best of ${RUNS}, with other workspaces' custom-field indexes:`);
    let none = 0;
    let present = 0;
    for (const count of COUNTS) {
      for (; present < count; present++) await pool.query(buildIndexSql('companies', `other${present}`, present % 2 ? 'number' : 'text'));
      let best = 0;
      for (let run = 0; run < RUNS; run++) best = Math.max(best, await rowsPerSecond(pool, id));
      none ||= best;
      log(`  ${String(count).padStart(2)} indexes: ${Math.round(best)} rows/s (${(best / none).toFixed(2)}× of none)`);
    }
  } finally {
    await pool.end();
    await ds.destroy();
    if (embedded?.owned) await embedded.stop();
  }
}
