import pg from 'pg';
import { DataSource } from 'typeorm';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { createField } from '#identity/data-model.js';
import { createObject } from '#identity/objects.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { benchDatabaseUrl, ensureBenchDatabase } from './seed.js';
import { startApi, startChild, stopChild } from './children.js';
import { CONNECTIONS, DURATION_S, median, rowsArg, rps, seedState } from './custom-objects.js';

/**
 * `npm run bench -- --relations [--rows N]`: a custom relation at scale against the bare
 * server's equivalent SQL (docs/benchmark.md "Relations"; docs/decisions/0066-relations.md).
 * One workspace holds N records of a custom object `deal`, each linked to one of N/100
 * companies through the relation `company` (its links in `record_links`), seeded once with
 * INSERT … SELECT generate_series in its own database (`records_bench_relations`). Two
 * scenarios — a relation filter (`company.name[eq]`, a company's ~100 deals, first 20) and
 * a page of 60 with `depth=1` (each deal's company embedded) — run on the records API and on
 * bench/relations-bare.ts in turn, ROUNDS times; target ≥ 0.6× of the bare server.
 */

const ROUNDS = 3;
const DEFAULT_ROWS = 1_000_000;
const WORKSPACE = 'Bench Relations';
const SEED_VERSION = 1;
const TARGET = 0.6;
const log = (m: string) => console.log(m);

interface Seeded {
  workspaceId: string;
  objectId: string;
  fieldId: string;
}

async function seed(ds: DataSource, pool: pg.Pool, rows: number): Promise<Seeded> {
  await pool.query('TRUNCATE workspaces, users CASCADE');
  const { id: workspaceId } = await createWorkspace(ds, WORKSPACE);
  const actor = { userId: null, email: 'bench' };
  const { id: objectId } = await createObject(ds, workspaceId, actor, {
    nameSingular: 'deal',
    namePlural: 'deals',
    labelSingular: 'Deal',
    labelPlural: 'Deals',
  });
  const { id: fieldId } = await createField(ds, workspaceId, actor, {
    object: 'deals',
    name: 'company',
    type: 'RELATION',
    relation: { type: 'MANY_TO_ONE', targetObject: 'companies', inverseName: 'deals' },
  });
  const companies = Math.max(10, Math.floor(rows / 100));
  await pool.query(
    `INSERT INTO companies (workspace_id, name, created_at)
     SELECT $1, 'Company ' || i, now() - i * interval '1 second' FROM generate_series(1, ${companies}) i`,
    [workspaceId],
  );
  // One statement: the links follow in the same transaction (the record_links trigger).
  await pool.query(
    `WITH c AS (SELECT row_number() OVER (ORDER BY name) AS n, id FROM companies WHERE workspace_id = $1)
     INSERT INTO custom_records (workspace_id, object_id, custom, created_at)
     SELECT $1, $2, jsonb_build_object('name', 'Deal ' || i, 'companyId', c.id), now() - i * interval '1 second'
       FROM generate_series(1, ${rows}) i JOIN c ON c.n = 1 + i % ${companies}`,
    [workspaceId, objectId],
  );
  for (const table of ['companies', 'custom_records', 'record_links']) await pool.query(`VACUUM ANALYZE ${table}`);
  await pool.query('TRUNCATE bench_seed');
  await pool.query('INSERT INTO bench_seed (version, rows) VALUES ($1, $2)', [SEED_VERSION, rows]);
  return { workspaceId, objectId, fieldId };
}

export async function relationsBench(): Promise<void> {
  const rows = rowsArg();
  const { url, embedded } = await resolveDatabaseUrl(log);
  const benchUrl = benchDatabaseUrl(url, rows === DEFAULT_ROWS ? 'records_bench_relations' : `records_bench_relations_${rows}`);
  await ensureBenchDatabase(benchUrl);
  const ds = await new DataSource(dataSourceOptions(benchUrl, 4)).initialize();
  const pool = new pg.Pool({ connectionString: benchUrl, max: 2 });
  const children: Awaited<ReturnType<typeof startApi>>['child'][] = [];
  try {
    await runMigrations(ds);
    const state = await seedState(pool, WORKSPACE);
    let seeded: Seeded;
    if (state.version === SEED_VERSION && state.rows === rows && state.workspace_id) {
      log(`Relations bench: reusing ${rows} deals`);
      const [found] = (
        await pool.query(
          `SELECT o.id AS "objectId", f.id AS "fieldId" FROM objects o JOIN custom_fields f ON f.workspace_id = o.workspace_id
            WHERE o.workspace_id = $1 AND o.name_plural = 'deals' AND f.object = 'deals' AND f.name = 'company'`,
          [state.workspace_id],
        )
      ).rows;
      seeded = { workspaceId: state.workspace_id, ...found };
    } else {
      log(`Relations bench: seeding ${rows} deals linked to ${Math.floor(rows / 100)} companies…`);
      const started = Date.now();
      seeded = await seed(ds, pool, rows);
      log(`  seeded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
    const role = await findRole(ds, seeded.workspaceId, 'Admin');
    const { secret } = await createApiKey(ds, {
      workspaceId: seeded.workspaceId,
      role,
      name: 'bench',
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const headers = { authorization: `Bearer ${secret}` };
    const api = await startApi({ DATABASE_URL: benchUrl, LOG_LEVEL: 'warn', WEBHOOKS_WORKER: 'off', IMPORTS_WORKER: 'off' });
    children.push(api.child);
    const bare = await startChild<{ port: number }>('./relations-bare.js', {
      DATABASE_URL: benchUrl,
      BENCH_WORKSPACE_ID: seeded.workspaceId,
      BENCH_OBJECT_ID: seeded.objectId,
      BENCH_FIELD_ID: seeded.fieldId,
    });
    children.push(bare.child);
    const servers = { ours: `http://127.0.0.1:${api.port}`, bare: `http://127.0.0.1:${bare.message.port}` };
    const scenarios = [
      { label: 'relation filter company.name', path: `/rest/deals?filter=${encodeURIComponent('company.name[eq]:"Company 42"')}&limit=20` },
      { label: 'depth=1, a page of 60', path: '/rest/deals?limit=60&depth=1' },
    ];
    log(`Relations (${rows} deals), ${CONNECTIONS} connections, median of ${ROUNDS} rounds of ${DURATION_S} s:`);
    for (const s of scenarios) {
      const got: Record<keyof typeof servers, number[]> = { ours: [], bare: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of (round % 2 ? ['bare', 'ours'] : ['ours', 'bare']) as (keyof typeof servers)[]) {
          got[side].push(await rps(servers[side] + s.path, headers));
        }
      }
      const [ours, floor] = [median(got.ours), median(got.bare)];
      const ratio = ours / floor;
      log(
        `  ${s.label.padEnd(30)} ours ${ours.toFixed(0).padStart(6)} req/s, bare ${floor.toFixed(0).padStart(6)} req/s: ` +
          `${ratio.toFixed(2)}x (target ≥ ${TARGET}x: ${ratio >= TARGET ? 'met' : 'NOT met'})`,
      );
    }
  } finally {
    for (const child of children) await stopChild(child);
    await pool.end();
    await ds.destroy();
    // The embedded database this bench started would keep the process alive.
    if (embedded?.owned) await embedded.stop();
  }
}
