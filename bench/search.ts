import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { Search1764700000000 } from '#database/migrations/1764700000000-search.js';
import { benchDatabaseUrl, ensureBenchDatabase, FIRST_NAMES, LAST_NAMES } from './seed.js';
import { startApi, startChild, stopChild } from './children.js';

/**
 * `npm run bench -- --search [--rows N] [--migration]`: search at 1M people
 * (docs/benchmark.md, "Search"; docs/decisions/0030-search.md). Its own database
 * (`records_bench_search`, `records_bench_search_<N>` for another size) holds one workspace
 * of N people (default 1,000,000), seeded once with one INSERT … SELECT generate_series (the
 * search triggers run in it: the row trigger per row, the lexicon trigger once), and reused
 * while the count and seed version hold. Each scenario runs on the records API, then on the
 * bare server (bench/bare-server.ts) running the same statements (searchStatement, the
 * lexicon probe) without framework or authentication, one server at a time, 16 connections.
 * Targets: p50 ≤ 20 ms and ≥ 0.6× the bare server's req/s.
 *
 * `--migration` also times the search migration on these rows: its down(), then its up()
 * (the set-based backfill of every vector and of the lexicon, and the GIN index build).
 * Before the searches, the write cost of the search upkeep (writeCost).
 */

const CONNECTIONS = 16;
const WARMUP_S = 1.5;
const DURATION_S = Number(process.env.BENCH_DURATION) || 6;
const DEFAULT_ROWS = 1_000_000;
const WORKSPACE = 'Bench Search';
/** Bump when the generated rows change: a database seeded by another version is seeded again. */
const SEED_VERSION = 1;
const TARGET_P50_MS = 20;
const TARGET_OVER_BARE = 0.6;
const log = (m: string) => console.log(m);

interface Scenario {
  key: string;
  label: string;
  path: string;
}

/** A first name and a last-name prefix (about 1 person in 2,400), then the same with two letters swapped. */
const SCENARIOS: Scenario[] = [
  { key: 'searchPrefix', label: 'search people "emma smi" (word prefix)', path: '/rest/search?q=emma%20smi&objects=people&limit=20' },
  { key: 'searchTypo', label: 'search people "emma smiht" (one typo)', path: '/rest/search?q=emma%20smiht&objects=people&limit=20' },
];

function parseArgs(argv: string[]): { rows: number; migration: boolean } {
  const args = { rows: DEFAULT_ROWS, migration: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    if (flag === '--search') continue;
    if (flag === '--migration') args.migration = true;
    else if (flag === '--rows') {
      const value = Number((inline ?? argv[++i])?.replace(/_/g, ''));
      if (!Number.isInteger(value) || value < 1000) throw new Error(`--rows needs a whole number ≥ 1000`);
      args.rows = value;
    } else throw new Error(`unknown argument "${argv[i]}" with --search (known: --rows N, --migration)`);
  }
  return args;
}

/**
 * N people in one workspace: names drawn from the main bench's lists, e-mails
 * first.last<n>@example.com (so every person brings a word of its own to the lexicon). The
 * secondary indexes are dropped and built again after the rows (sorting instead of updating
 * them row by row), in the seed's transaction.
 */
async function seed(ds: DataSource, pool: pg.Pool, rows: number): Promise<{ workspaceId: string; seconds: number }> {
  const started = Date.now();
  await pool.query('TRUNCATE workspaces, users CASCADE');
  await pool.query('TRUNCATE search_words');
  const { id: workspaceId } = await createWorkspace(ds, WORKSPACE);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SET LOCAL maintenance_work_mem = '256MB'`);
    const { rows: indexes } = await client.query<{ name: string; def: string }>(
      `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i
        WHERE i.indrelid = 'people'::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
    );
    for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
    await client.query('SELECT setseed(0.42)');
    await client.query(
      `INSERT INTO people (workspace_id, first_name, last_name, primary_email, created_at, updated_at)
       SELECT $1, p.first_name, p.last_name, lower(p.first_name || '.' || p.last_name || p.g) || '@example.com', p.ts, p.ts
         FROM (SELECT g, timestamptz '2023-01-01 00:00:00+00' + random() * interval '730 days' AS ts,
                      ($3::text[])[1 + floor(random() * cardinality($3::text[]))::int] AS first_name,
                      ($4::text[])[1 + floor(random() * cardinality($4::text[]))::int] AS last_name
                 FROM generate_series(1, $2::int) g) p
        ORDER BY p.ts`,
      [workspaceId, rows, FIRST_NAMES, LAST_NAMES],
    );
    const inserted = (Date.now() - started) / 1000;
    for (const index of indexes) await client.query(index.def);
    await client.query('COMMIT');
    log(
      `  rows ${inserted.toFixed(1)} s (the search triggers included), indexes ${((Date.now() - started) / 1000 - inserted).toFixed(1)} s`,
    );
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  await pool.query('VACUUM (ANALYZE) people, search_words, record_counts');
  await pool.query('CREATE TABLE IF NOT EXISTS bench_seed (version int NOT NULL)');
  await pool.query('DELETE FROM bench_seed');
  await pool.query('INSERT INTO bench_seed (version) VALUES ($1)', [SEED_VERSION]);
  return { workspaceId, seconds: (Date.now() - started) / 1000 };
}

/** The search migration's down() then up() on the seeded rows, each timed (one transaction each, as migrations run). */
async function timeMigration(ds: DataSource): Promise<{ downS: number; upS: number }> {
  const migration = new Search1764700000000();
  const run = async (step: 'down' | 'up') => {
    const runner = ds.createQueryRunner();
    const started = Date.now();
    try {
      await runner.startTransaction();
      // As runMigrations runs them: no statement timeout.
      await runner.query(`SET LOCAL maintenance_work_mem = '256MB'`);
      await runner.query('SET LOCAL statement_timeout = 0');
      await migration[step](runner);
      await runner.commitTransaction();
    } catch (err) {
      await runner.rollbackTransaction();
      throw err;
    } finally {
      await runner.release();
    }
    return (Date.now() - started) / 1000;
  };
  const [{ applied }] = await ds.query(
    `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 'people' AND column_name = 'search_vector') AS applied`,
  );
  const downS = applied ? await run('down') : 0; // an earlier timing stopped between the two
  const upS = await run('up');
  await ds.query('VACUUM (ANALYZE) people, search_words');
  return { downS, upS };
}

/** User + system CPU seconds of a local process (undefined when /proc does not show it: Postgres on another host). */
function processCpu(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * What the search upkeep costs a single-row insert: rounds of WRITE_ROWS `INSERT INTO people`
 * (each its own transaction, a new e-mail each, as the API's create does), alternately with
 * the search triggers enabled and disabled (the GIN index is there both times), measured as
 * the backend's CPU time per insert (and wall time). Best round of each; the rows are removed.
 */
const WRITE_ROWS = 500;
const WRITE_ROUNDS = 4;
async function writeCost(
  url: string,
  workspaceId: string,
): Promise<{ on: number; off: number; wallOn: number; wallOff: number; cpu: boolean }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const triggers = ['people_search', 'people_search_words_insert'];
  const best = { on: Infinity, off: Infinity, wallOn: Infinity, wallOff: Infinity };
  let cpu = true;
  try {
    await client.query('SET synchronous_commit = off'); // the commit's WAL flush is not the search's cost
    const [{ pid }] = (await client.query('SELECT pg_backend_pid() AS pid')).rows;
    for (let round = 0; round < WRITE_ROUNDS * 2; round++) {
      const on = round % 2 === 0;
      await client.query(triggers.map((t) => `ALTER TABLE people ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${t}`).join('; '));
      const [cpu0, t0] = [processCpu(pid), Date.now()];
      for (let i = 0; i < WRITE_ROWS; i++) {
        await client.query({
          name: 'bench-search-insert',
          text: `INSERT INTO people (workspace_id, first_name, last_name, primary_email)
                 VALUES ($1, 'Bench', 'Write-Cost', 'bench.write' || (random() * 1e12)::bigint || '@example.com') RETURNING id`,
          values: [workspaceId],
        });
      }
      const cpu1 = processCpu(pid);
      const wall = ((Date.now() - t0) * 1000) / WRITE_ROWS;
      if (cpu0 === undefined || cpu1 === undefined) cpu = false;
      const used = cpu0 !== undefined && cpu1 !== undefined ? ((cpu1 - cpu0) * 1e6) / WRITE_ROWS : wall;
      if (on) [best.on, best.wallOn] = [Math.min(best.on, used), Math.min(best.wallOn, wall)];
      else [best.off, best.wallOff] = [Math.min(best.off, used), Math.min(best.wallOff, wall)];
    }
  } finally {
    await client.query(triggers.map((t) => `ALTER TABLE people ENABLE TRIGGER ${t}`).join('; ')).catch(() => undefined);
    await client.query(`DELETE FROM people WHERE workspace_id = $1 AND last_name = 'Write-Cost'`, [workspaceId]).catch(() => undefined);
    await client.end();
  }
  return { ...best, cpu };
}

interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
}

async function measure(base: string, path: string, headers: Record<string, string>, connections = CONNECTIONS): Promise<Measurement> {
  const options = { url: base + path, connections, headers };
  await autocannon({ ...options, duration: WARMUP_S });
  const r = await autocannon({ ...options, duration: DURATION_S });
  return {
    rps: Math.round((r.requests.total / r.duration) * 10) / 10,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
  };
}

export async function searchBench(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const database = args.rows === DEFAULT_ROWS ? 'records_bench_search' : `records_bench_search_${args.rows}`;
  const { url } = await resolveDatabaseUrl(log);
  const benchUrl = benchDatabaseUrl(url, database);
  await ensureBenchDatabase(benchUrl);
  const ds = new DataSource(dataSourceOptions(benchUrl, 2));
  await ds.initialize();
  const pool = new pg.Pool({ connectionString: benchUrl, max: 2 });
  const children: ChildProcess[] = [];
  try {
    await runMigrations(ds);
    await pool.query('CREATE TABLE IF NOT EXISTS bench_seed (version int NOT NULL)');
    const { rows: state } = await pool.query(
      `SELECT (SELECT version FROM bench_seed LIMIT 1) AS version,
              (SELECT w.id FROM workspaces w WHERE w.name = $1) AS workspace_id,
              (SELECT rc.live_count FROM record_counts rc JOIN workspaces w ON w.id = rc.workspace_id
                WHERE w.name = $1 AND rc.object = 'people')::int AS people`,
      [WORKSPACE],
    );
    let workspaceId: string = state[0].workspace_id;
    if (state[0].version === SEED_VERSION && state[0].people === args.rows) {
      log(`Search bench: reusing ${database} (${args.rows} people in "${WORKSPACE}")`);
    } else {
      log(`Search bench: seeding ${database} with ${args.rows} people in one INSERT … SELECT…`);
      const seeded = await seed(ds, pool, args.rows);
      workspaceId = seeded.workspaceId;
      log(`  seeded in ${seeded.seconds.toFixed(1)} s`);
    }
    let migration: { downS: number; upS: number } | undefined;
    if (args.migration) {
      log(`Timing the search migration on ${args.rows} people: down(), then up()…`);
      migration = await timeMigration(ds);
      log(`  down ${migration.downS.toFixed(1)} s, up ${migration.upS.toFixed(1)} s (vectors, lexicon, GIN index)`);
    }

    const { rows: sizes } = await pool.query(
      `SELECT (SELECT count(*) FROM search_words)::int AS words,
              pg_size_pretty(pg_relation_size('people_search_idx')) AS gin, pg_size_pretty(pg_relation_size('people')) AS heap`,
    );
    log(`  lexicon ${sizes[0].words} words; people heap ${sizes[0].heap}, GIN index ${sizes[0].gin}`);
    const write = await writeCost(benchUrl, workspaceId);
    const unit = write.cpu ? 'µs of backend CPU' : 'µs wall (no /proc for the backend)';
    log(
      `Single-row INSERT INTO people, best of ${WRITE_ROUNDS} rounds of ${WRITE_ROWS}: search triggers on ${Math.round(write.on)}, ` +
        `off ${Math.round(write.off)} ${unit} per insert (+${Math.round(write.on - write.off)}); wall ${Math.round(write.wallOn)} vs ${Math.round(write.wallOff)} µs`,
    );
    const role = await findRole(ds, workspaceId, 'Admin');
    await pool.query(`DELETE FROM api_keys WHERE workspace_id = $1 AND name = 'bench'`, [workspaceId]);
    const { secret } = await createApiKey(ds, { workspaceId, role, name: 'bench', expiresAt: new Date(Date.now() + 86_400_000) });
    const headers = { authorization: `Bearer ${secret}` };
    const env = {
      DATABASE_URL: benchUrl,
      BENCH_WORKSPACE_ID: workspaceId,
      RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_WORKSPACE_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
    };
    const api = await startApi(env);
    children.push(api.child);
    const bare = await startChild<{ withCount: number; noCount: number }>('./bare-server.js', env);
    children.push(bare.child);
    const targets = [
      { key: 'ours', label: 'records API', base: `http://127.0.0.1:${api.port}` },
      { key: 'bare', label: 'bare server', base: `http://127.0.0.1:${bare.message.noCount}` },
    ] as const;

    const results: Record<string, unknown>[] = [];
    for (const s of SCENARIOS) {
      // Both servers must answer, with the same people in the same order.
      const answers = await Promise.all(
        targets.map((t) => fetch(t.base + s.path, { headers }).then(async (r) => [r.status, await r.json()])),
      );
      const ids = answers.map(([, json]) => (json as any)?.data?.search?.map((h: { id: string }) => h.id).join());
      for (const [i, [status, json]] of answers.entries()) {
        if (status !== 200) throw new Error(`${targets[i].label}, ${s.label}: ${status} ${JSON.stringify(json).slice(0, 200)}`);
      }
      if (ids[0] !== ids[1]) log(`  ! ${s.label}: the bare server returns other people than the records API`);
      const hits = (answers[0][1] as any).data.search.length;
      const m: Record<string, Measurement> = {};
      for (const t of targets) {
        m[t.key] = await measure(t.base, s.path, headers);
        log(`${s.label} / ${t.label}: ${m[t.key].rps} req/s, p50 ${m[t.key].p50} ms, p99 ${m[t.key].p99} ms (${m[t.key].non2xx} non-2xx)`);
      }
      // One connection: the latency of a request alone, without queueing behind 15 others.
      for (const t of targets) {
        m[`${t.key}Alone`] = await measure(t.base, s.path, headers, 1);
        log(`${s.label} / ${t.label}, 1 connection: p50 ${m[`${t.key}Alone`].p50} ms, p99 ${m[`${t.key}Alone`].p99} ms`);
      }
      const ratio = m.ours.rps / m.bare.rps;
      const meets = m.ours.p50 <= TARGET_P50_MS && ratio >= TARGET_OVER_BARE;
      log(
        `  ${hits} results per page; ours ÷ bare ${ratio.toFixed(2)}x; ` +
          `target p50 ≤ ${TARGET_P50_MS} ms and ≥ ${TARGET_OVER_BARE}x: ${meets ? 'met' : 'NOT met'}`,
      );
      results.push({
        key: s.key,
        label: s.label,
        path: s.path,
        hits,
        ours: m.ours,
        bare: m.bare,
        alone: { ours: m.oursAlone, bare: m.bareAlone },
        ratio: Number(ratio.toFixed(2)),
        meets,
      });
    }
    writeFileSync(
      fileURLToPath(new URL(`../../bench/results-search${args.rows === DEFAULT_ROWS ? '' : `-${args.rows}`}.json`, import.meta.url)),
      JSON.stringify(
        { at: new Date().toISOString(), rows: args.rows, connections: CONNECTIONS, durationS: DURATION_S, migration, write, results },
        null,
        2,
      ) + '\n',
    );
  } finally {
    for (const child of children) await stopChild(child);
    await pool.end();
    await ds.destroy();
  }
}
