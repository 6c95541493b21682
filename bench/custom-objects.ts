import autocannon from 'autocannon';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { createField } from '#identity/data-model.js';
import { fieldIndexesSettled } from '#identity/field-indexes.js';
import { createObject } from '#identity/objects.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { benchDatabaseUrl, ensureBenchDatabase } from './seed.js';
import { startApi, stopChild } from './children.js';

/**
 * `npm run bench -- --custom-objects [--rows N]`: a workspace's own object against a standard
 * one, same run, same server (docs/benchmark.md "Custom objects";
 * docs/decisions/0057-custom-objects-storage.md). One workspace holds N companies and N
 * records of a custom object `deal`, each with the same 10 custom fields (a SELECT `tier`, a
 * NUMBER `score`, 8 TEXT), seeded once with INSERT … SELECT generate_series in its own
 * database (`records_bench_objects`). Each scenario — the first page, a filter on the
 * custom SELECT, an order by the custom NUMBER, a get by id, a create — runs on
 * `/rest/companies` and `/rest/deals` in turn, ROUNDS times, and the medians are compared:
 * target ≥ 0.8× for the custom object.
 */

export const CONNECTIONS = 16;
export const DURATION_S = Number(process.env.BENCH_DURATION) || 4;
const ROUNDS = 3;
const DEFAULT_ROWS = 1_000_000;
const WORKSPACE = 'Bench Objects';
const SEED_VERSION = 1;
const TARGET = 0.8;
const TEXTS = ['note1', 'note2', 'note3', 'note4', 'note5', 'note6', 'note7', 'note8'];
const log = (m: string) => console.log(m);

/** `--rows N` (default 1M), as the custom-object benches take it. */
export function rowsArg(): number {
  const i = process.argv.indexOf('--rows');
  const value = i < 0 ? DEFAULT_ROWS : Number(process.argv[i + 1]?.replace(/_/g, ''));
  if (!Number.isInteger(value) || value < 1000) throw new Error('--rows needs a whole number ≥ 1000');
  return value;
}

/** The custom values of row `i`, as SQL over `i`: a tier in 4, a score, 8 texts. */
const CUSTOM = `jsonb_build_object('tier', (ARRAY['GOLD','SILVER','BRONZE','IRON'])[1 + i % 4], 'score', (i % 1000)::float8,
  ${TEXTS.map((n) => `'${n}', 'text ' || i`).join(', ')})`;

async function seed(ds: DataSource, pool: pg.Pool, rows: number): Promise<string> {
  await pool.query('TRUNCATE workspaces, users CASCADE');
  const { id: workspaceId } = await createWorkspace(ds, WORKSPACE);
  const actor = { userId: null, email: 'bench' };
  await createObject(ds, workspaceId, actor, { nameSingular: 'deal', namePlural: 'deals', labelSingular: 'Deal', labelPlural: 'Deals' });
  for (const object of ['companies', 'deals']) {
    await createField(ds, workspaceId, actor, {
      object,
      name: 'tier',
      type: 'SELECT',
      options: ['GOLD', 'SILVER', 'BRONZE', 'IRON'].map((value) => ({ value })),
    });
    await createField(ds, workspaceId, actor, { object, name: 'score', type: 'NUMBER' });
    for (const name of TEXTS) await createField(ds, workspaceId, actor, { object, name, type: 'TEXT' });
  }
  const [{ id: objectId }] = (await pool.query(`SELECT id FROM objects WHERE workspace_id = $1 AND name_plural = 'deals'`, [workspaceId]))
    .rows;
  await pool.query(
    `INSERT INTO companies (workspace_id, name, custom, created_at)
     SELECT $1, 'Company ' || i, ${CUSTOM}, now() - i * interval '1 second' FROM generate_series(1, ${rows}) i`,
    [workspaceId],
  );
  await pool.query(
    `INSERT INTO custom_records (workspace_id, object_id, custom, created_at)
     SELECT $1, $2, ${CUSTOM} || jsonb_build_object('name', 'Deal ' || i), now() - i * interval '1 second' FROM generate_series(1, ${rows}) i`,
    [workspaceId, objectId],
  );
  await pool.query('VACUUM ANALYZE companies');
  await pool.query('VACUUM ANALYZE custom_records');
  await pool.query('TRUNCATE bench_seed');
  await pool.query('INSERT INTO bench_seed (version, rows) VALUES ($1, $2)', [SEED_VERSION, rows]);
  return workspaceId;
}

/** Requests per second of one autocannon run; a non-2xx answer or an error fails the bench. */
export async function rps(url: string, headers: Record<string, string>, method: 'GET' | 'POST' = 'GET', body?: string): Promise<number> {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S, headers, method, body });
  if (r.non2xx || r.errors) throw new Error(`${method} ${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.average;
}

/** What a bench database holds already: its seed's version and size, and the workspace named `workspace`. */
export async function seedState(pool: pg.Pool, workspace: string): Promise<{ version: number; rows: number; workspace_id: string }> {
  await pool.query('CREATE TABLE IF NOT EXISTS bench_seed (version int NOT NULL, rows int NOT NULL)');
  const { rows } = await pool.query(
    `SELECT (SELECT version FROM bench_seed) AS version, (SELECT rows FROM bench_seed) AS rows,
            (SELECT id FROM workspaces WHERE name = $1) AS workspace_id`,
    [workspace],
  );
  return rows[0];
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function customObjectsBench(): Promise<void> {
  const rows = rowsArg();
  const { url } = await resolveDatabaseUrl(log);
  const benchUrl = benchDatabaseUrl(url, rows === DEFAULT_ROWS ? 'records_bench_objects' : `records_bench_objects_${rows}`);
  await ensureBenchDatabase(benchUrl);
  const ds = await new DataSource(dataSourceOptions(benchUrl, 4)).initialize();
  const pool = new pg.Pool({ connectionString: benchUrl, max: 2 });
  let child: Awaited<ReturnType<typeof startApi>>['child'] | undefined;
  try {
    await runMigrations(ds);
    const state = await seedState(pool, WORKSPACE);
    let workspaceId: string = state.workspace_id;
    if (state.version === SEED_VERSION && state.rows === rows && workspaceId)
      log(`Custom objects bench: reusing ${rows} companies and deals`);
    else {
      log(`Custom objects bench: seeding ${rows} companies and ${rows} deals, 10 custom fields each…`);
      const started = Date.now();
      workspaceId = await seed(ds, pool, rows);
      log(`  seeded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
    // The shared indexes of the custom fields (both tables), built by the sweep the field creates asked for.
    await fieldIndexesSettled();
    const role = await findRole(ds, workspaceId, 'Admin');
    const { secret } = await createApiKey(ds, { workspaceId, role, name: 'bench', expiresAt: new Date(Date.now() + 86_400_000) });
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
    const api = await startApi({ DATABASE_URL: benchUrl, LOG_LEVEL: 'warn', WEBHOOKS_WORKER: 'off', IMPORTS_WORKER: 'off' });
    child = api.child;
    const base = `http://127.0.0.1:${api.port}`;
    const idOf = async (object: string) =>
      ((await (await fetch(`${base}/rest/${object}?limit=1&order_by=score[DescNullsLast]`, { headers })).json()) as any).data[object][0]
        .id as string;
    const ids = { companies: await idOf('companies'), deals: await idOf('deals') };
    const scenarios: { label: string; path: (o: 'companies' | 'deals') => string; method?: 'POST'; body?: (o: string) => string }[] = [
      { label: 'list, first page (60)', path: (o) => `/rest/${o}` },
      { label: 'filter on a custom SELECT', path: (o) => `/rest/${o}?filter=tier%5Beq%5D%3A%22GOLD%22&limit=20` },
      { label: 'order by a custom NUMBER', path: (o) => `/rest/${o}?order_by=score%5BDescNullsLast%5D&limit=20` },
      { label: 'get by id', path: (o) => `/rest/${o}/${ids[o]}` },
      { label: 'create', path: (o) => `/rest/${o}`, method: 'POST', body: () => JSON.stringify({ name: 'Bench', tier: 'GOLD', score: 1 }) },
    ];
    log(
      `Custom objects (${rows} records each, 10 custom fields), ${CONNECTIONS} connections, median of ${ROUNDS} rounds of ${DURATION_S} s:`,
    );
    for (const s of scenarios) {
      const got: Record<string, number[]> = { companies: [], deals: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const o of (round % 2 ? ['deals', 'companies'] : ['companies', 'deals']) as ('companies' | 'deals')[]) {
          got[o].push(await rps(base + s.path(o), headers, s.method ?? 'GET', s.body?.(o)));
        }
      }
      const [standard, custom] = [median(got.companies), median(got.deals)];
      const ratio = custom / standard;
      log(
        `  ${s.label.padEnd(28)} companies ${standard.toFixed(0).padStart(6)} req/s, deals ${custom.toFixed(0).padStart(6)} req/s: ` +
          `${ratio.toFixed(2)}x (target ≥ ${TARGET}x: ${ratio >= TARGET ? 'met' : 'NOT met'})`,
      );
    }
  } finally {
    await stopChild(child);
    await pool.end();
    await ds.destroy();
  }
}
