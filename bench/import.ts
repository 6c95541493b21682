import { createReadStream, createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DataSource } from 'typeorm';
import { loadConfig } from '#config/config.js';
import { startApi, stopChild } from './children.js';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { readMemory, RssSampler } from './rss.js';

/**
 * `npm run bench -- --import [--import-rows N]`: a CSV of N companies (1,000,000 by default;
 * name and domain) loaded twice into the same table of a fresh database
 * (`records_bench_import`), each into a workspace of its own: first by Postgres `COPY … FROM
 * STDIN` (the floor: no validation, one statement), then through `POST /rest/imports` on the
 * records API (its own process, worker on, heap as deployed), timed from the first byte of
 * the upload to `completed`. Prints rows/s of both, their ratio (target ≥ 0.3×) and the
 * records API's peak RSS while it uploads and imports (target ≤ 250 MB).
 */
const DB = 'records_bench_import';
const DEFAULT_ROWS = 1_000_000;
const RATIO_TARGET = 0.3;
const RSS_TARGET_MB = 250;
const log = (m: string) => console.log(m);

function rowsArg(): number {
  const i = process.argv.indexOf('--import-rows');
  if (i < 0) return DEFAULT_ROWS;
  const n = Number(process.argv[i + 1]?.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--import-rows needs a whole number ≥ 1; got "${process.argv[i + 1] ?? ''}"`);
  return n;
}

/** The file, made once per size under .data/ (about 45 MB at 1M rows). */
async function csvFile(rows: number): Promise<string> {
  const dir = join(loadConfig().dataDir, 'bench');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `companies-${rows}.csv`);
  if (existsSync(file)) return file;
  const out = createWriteStream(`${file}.part`);
  async function* lines() {
    yield 'name,domainName.primaryLinkUrl\n';
    let batch = '';
    for (let i = 1; i <= rows; i++) {
      batch += `Import Company ${i},company-${i}.example.com\n`;
      if (i % 10_000 === 0) {
        yield batch;
        batch = '';
      }
    }
    if (batch) yield batch;
  }
  await pipeline(lines, out);
  const { renameSync } = await import('node:fs');
  renameSync(`${file}.part`, file);
  return file;
}

/** The file (a path, streamed from disk, or the bytes) as the body of POST /rest/imports (Content-Length set). */
export function uploadFile(port: number, key: string, file: string | Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/rest/imports?object=companies&mode=create',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'text/csv',
          'content-length': typeof file === 'string' ? statSync(file).size : file.length,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    if (typeof file === 'string') createReadStream(file).pipe(req);
    else req.end(file);
  });
}

/** A database `name` made afresh on the bench's Postgres (the embedded one unless DATABASE_URL is set), migrated. */
export async function freshDatabase(name: string): Promise<{ ds: DataSource; dbUrl: URL; embedded?: { stop(): Promise<void> } }> {
  const { url, embedded } = await resolveDatabaseUrl(log);
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${name}`;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const ds = await new DataSource(dataSourceOptions(dbUrl.toString(), 2)).initialize();
  await runMigrations(ds);
  return { ds, dbUrl, embedded };
}

export async function importBench(): Promise<void> {
  const rows = rowsArg();
  const { ds, dbUrl, embedded } = await freshDatabase(DB);
  const copyWorkspace = await createWorkspace(ds, 'Bench Import COPY');
  const apiWorkspace = await createWorkspace(ds, 'Bench Import API');
  const role = await findRole(ds, apiWorkspace.id, 'Admin');
  const key = await createApiKey(ds, { workspaceId: apiWorkspace.id, role, name: 'bench', expiresAt: new Date(Date.now() + 86_400_000) });
  const file = await csvFile(rows);
  const mb = (statSync(file).size / 1024 / 1024).toFixed(1);
  log(`Import bench: ${rows.toLocaleString('en-US')} companies, ${mb} MB CSV, database ${DB}${embedded ? ' (embedded PostgreSQL)' : ''}.`);

  // COPY of the same file into the same table: the workspace column takes the scratch workspace by default meanwhile.
  const copy = new pg.Client({ connectionString: dbUrl.toString() });
  await copy.connect();
  await copy.query(`ALTER TABLE companies ALTER COLUMN workspace_id SET DEFAULT '${copyWorkspace.id}'`);
  const copyStarted = performance.now();
  await pipeline(
    createReadStream(file),
    copy.query(copyFrom('COPY companies (name, domain_primary_link_url) FROM STDIN WITH (FORMAT csv, HEADER true)')),
  );
  const copyMs = performance.now() - copyStarted;
  await copy.query('ALTER TABLE companies ALTER COLUMN workspace_id DROP DEFAULT');
  await copy.end();
  const copyRate = rows / (copyMs / 1000);
  log(`COPY:   ${(copyMs / 1000).toFixed(1)} s, ${Math.round(copyRate).toLocaleString('en-US')} rows/s`);

  const api = await startApi({ DATABASE_URL: dbUrl.toString(), IMPORTS_WORKER: 'on', WEBHOOKS_WORKER: 'off', LOG_LEVEL: 'warn' });
  const idle = readMemory(api.child.pid!)?.rssMb;
  const rss = new RssSampler(() => [api.child.pid!], 100);
  rss.start();
  const window = rss.mark();
  try {
    const started = performance.now();
    const answer = await uploadFile(api.port, key.secret, file);
    const uploadMs = performance.now() - started;
    if (answer.status !== 202) throw new Error(`the upload was answered ${answer.status}: ${answer.body}`);
    const id = JSON.parse(answer.body).data.import.id as string;
    let state: { status: string; created: number; failed: number; rowsRead: number };
    for (;;) {
      const [row] = await ds.query('SELECT status, created::int, failed::int, rows_done::int AS "rowsRead" FROM imports WHERE id = $1', [
        id,
      ]);
      state = row;
      if (!['queued', 'running'].includes(state.status)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const importMs = performance.now() - started;
    const importRate = rows / (importMs / 1000);
    const peak = rss.maxSince(window, api.child.pid!);
    const [{ n }] = await ds.query('SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1', [apiWorkspace.id]);
    log(
      `Import: ${(importMs / 1000).toFixed(1)} s (upload ${(uploadMs / 1000).toFixed(1)} s), ${Math.round(importRate).toLocaleString('en-US')} rows/s; ${state.status}, ${state.created} created, ${state.failed} refused, ${n} in the table`,
    );
    const ratio = importRate / copyRate;
    log(`Ratio import ÷ COPY: ${ratio.toFixed(2)}× (target ≥ ${RATIO_TARGET}×)${ratio >= RATIO_TARGET ? '' : '  ← below target'}`);
    log(
      `Records API peak RSS during upload and import: ${peak?.toFixed(1) ?? '-'} MB, ${idle?.toFixed(1) ?? '-'} MB before (target ≤ ${RSS_TARGET_MB} MB)${(peak ?? 0) > RSS_TARGET_MB ? '  ← over target' : ''}`,
    );
  } finally {
    rss.stop();
    await stopChild(api.child);
    await ds.destroy();
    await embedded?.stop();
  }
}
