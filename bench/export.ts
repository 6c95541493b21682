import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { DataSource } from 'typeorm';
import { startApi, stopChild } from './children.js';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { createField } from '#identity/data-model.js';
import { fieldIndexesSettled } from '#identity/field-indexes.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { RssSampler } from './rss.js';

/**
 * `npm run bench -- --export`: streamed exports of 1M companies (docs/benchmark.md
 * "Exports") against Postgres's own `COPY (SELECT …) TO STDOUT` of the same rows, in the
 * same run on the same machine. Database `records_bench_export`: one workspace of
 * EXPORT_ROWS companies with three custom fields, seeded set-based once and reused.
 *
 * Each measurement reads a whole answer and throws the bytes away: the baseline through
 * node-postgres and pg-copy-streams (the table's columns, the same rows and order), the
 * exports through HTTP from the records API (its own process, as deployed: API_HEAP_MB).
 * Each runs BENCH_EXPORT_RUNS times (default 3), interleaved; the best run of each counts.
 * The records API's RSS is polled every 100 ms throughout.
 */
const DB = 'records_bench_export';
const ROWS = Number(process.env.BENCH_EXPORT_ROWS) || 1_000_000;
const RUNS = Number(process.env.BENCH_EXPORT_RUNS) || 3;
const WORKSPACE = 'Bench Export';
/** The targets (docs/benchmark.md): export rows/s at least this share of COPY's, RSS at most this. */
const MIN_RATIO = 0.5;
const RSS_LIMIT_MB = 250;
const log = (m: string) => console.log(m);

interface Run {
  seconds: number;
  bytes: number;
}

async function seed(ds: DataSource, pool: pg.Pool): Promise<string> {
  const found = await pool.query<{ id: string; n: number }>(
    `SELECT w.id, (SELECT count(*)::int FROM companies c WHERE c.workspace_id = w.id AND c.deleted_at IS NULL) AS n
       FROM workspaces w WHERE w.name = $1`,
    [WORKSPACE],
  );
  if (found.rows[0]?.n === ROWS) return found.rows[0].id;
  if (found.rows[0]) await pool.query('DELETE FROM workspaces WHERE id = $1', [found.rows[0].id]);
  const started = Date.now();
  const { id } = await createWorkspace(ds, WORKSPACE);
  const actor = { userId: null, email: 'bench@example.com' };
  await createField(ds, id, actor, {
    object: 'companies',
    name: 'tier',
    type: 'SELECT',
    label: 'Tier',
    options: ['GOLD', 'SILVER', 'BRONZE'].map((value) => ({ value, label: value })),
  });
  await createField(ds, id, actor, { object: 'companies', name: 'score', type: 'NUMBER', label: 'Score' });
  await createField(ds, id, actor, { object: 'companies', name: 'budget', type: 'CURRENCY', label: 'Budget' });
  await fieldIndexesSettled();
  // In created_at order, as a table filled over time; names and domains of realistic length.
  await pool.query(
    `INSERT INTO companies (workspace_id, name, domain_primary_link_url, domain_primary_link_label, created_at, updated_at, custom)
     SELECT $1, 'Company ' || g || ', ' || (ARRAY['Inc.','GmbH','Ltd','"The" Co'])[1 + g % 4],
            'company-' || g || '.example', CASE WHEN g % 3 = 0 THEN 'Website' END,
            timestamptz '2023-01-01' + g * interval '1 minute', timestamptz '2023-01-01' + g * interval '1 minute',
            jsonb_build_object('tier', (ARRAY['GOLD','SILVER','BRONZE'])[1 + g % 3], 'score', round((random() * 100)::numeric, 2),
                               'budget', jsonb_build_object('amountMicros', g::bigint * 1000000, 'currencyCode', 'USD'))
       FROM generate_series(1, $2::int) g`,
    [id, ROWS],
  );
  await pool.query('VACUUM ANALYZE companies');
  log(`Seeded ${ROWS} companies in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return id;
}

/** Postgres's own COPY of the same rows (every column of the table's live rows of the workspace, in the export's order). */
async function copyBaseline(url: string, workspaceId: string): Promise<Run> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const started = process.hrtime.bigint();
    const stream = client.query(
      copyTo(
        `COPY (SELECT * FROM companies WHERE workspace_id = '${workspaceId}' AND deleted_at IS NULL
               ORDER BY created_at ASC NULLS FIRST, id ASC) TO STDOUT WITH (FORMAT csv)`,
      ),
    );
    let bytes = 0;
    for await (const chunk of stream) bytes += (chunk as Buffer).length;
    return { seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes };
  } finally {
    await client.end();
  }
}

/** One whole export over HTTP, its bytes counted and dropped. */
function httpExport(base: string, secret: string, format: 'csv' | 'ndjson'): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    http
      .get(`${base}/rest/companies/export?format=${format}`, { headers: { Authorization: `Bearer ${secret}` } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`export answered ${res.statusCode}`));
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => (res.complete ? resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes }) : reject()));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

export async function exportBench(): Promise<void> {
  const { url, embedded } = await resolveDatabaseUrl(log);
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${DB}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  if (!(await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB])).rowCount) await admin.query(`CREATE DATABASE ${DB}`);
  await admin.end();

  const ds = new DataSource(dataSourceOptions(dbUrl.toString(), 2));
  await ds.initialize();
  await runMigrations(ds);
  const pool = new pg.Pool({ connectionString: dbUrl.toString(), max: 1, options: '-c statement_timeout=0' });
  let api: { child: ChildProcess; base: string } | undefined;
  try {
    const workspaceId = await seed(ds, pool);
    const { secret } = await createApiKey(ds, {
      workspaceId,
      role: await findRole(ds, workspaceId, 'Admin'),
      name: 'bench export',
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const started = await startApi({ DATABASE_URL: dbUrl.toString() });
    api = { child: started.child, base: `http://127.0.0.1:${started.port}` };
    const apiPid = api.child.pid!;
    const rss = new RssSampler(() => [apiPid], 100);
    rss.start();
    log(
      `Export bench: ${ROWS} companies (3 custom fields), ${RUNS} runs of each, best counted; database ${DB}${embedded ? ' (embedded PostgreSQL)' : ''}; ` +
        `${os.availableParallelism()} cores shared by Postgres, the records API and this process; load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(', ')}.`,
    );
    const runs: Record<'copy' | 'csv' | 'ndjson', Run[]> = { copy: [], csv: [], ndjson: [] };
    for (let i = 0; i < RUNS; i++) {
      runs.copy.push(await copyBaseline(dbUrl.toString(), workspaceId));
      runs.csv.push(await httpExport(api.base, secret, 'csv'));
      runs.ndjson.push(await httpExport(api.base, secret, 'ndjson'));
    }
    rss.stop();
    const best = (list: Run[]) => list.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    const rate = (run: Run) => ROWS / run.seconds;
    const copy = best(runs.copy);
    const line = (label: string, run: Run, all: Run[]) =>
      log(
        `  ${label.padEnd(34)} ${Math.round(rate(run)).toLocaleString('en-US').padStart(9)} rows/s  ${(run.bytes / 1e6).toFixed(0).padStart(4)} MB  ` +
          `best ${run.seconds.toFixed(2)} s (runs: ${all.map((r) => r.seconds.toFixed(2)).join(', ')} s)`,
      );
    line('Postgres COPY … TO STDOUT (csv)', copy, runs.copy);
    for (const format of ['csv', 'ndjson'] as const) {
      const run = best(runs[format]);
      line(`GET /rest/companies/export ${format}`, run, runs[format]);
      const ratio = rate(run) / rate(copy);
      log(`    ratio to COPY: ${ratio.toFixed(2)}× (target ≥ ${MIN_RATIO}×: ${ratio >= MIN_RATIO ? 'met' : 'NOT met'})`);
    }
    const peak = rss.maxOf(apiPid);
    log(
      `  records API RSS: peak ${peak?.toFixed(1) ?? '-'} MB while exporting (target ≤ ${RSS_LIMIT_MB} MB: ${peak !== undefined && peak <= RSS_LIMIT_MB ? 'met' : 'NOT met'})`,
    );
  } finally {
    await stopChild(api?.child);
    await pool.end();
    await ds.destroy();
    if (embedded?.owned) await embedded.stop();
  }
}
