import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { resolveDatabaseUrl } from '#database/data-source.js';
import { BENCH_DB, CREATED_MARK, MAIN_ROWS, benchDatabaseUrl, ensureBenchDatabase, prepareBenchData } from './seed.js';

/**
 * `npm run bench`: the records API against a bare node:http + pg server (with and without
 * a count) on the same requests, one server at a time, with autocannon; results also go
 * to bench/results.json. BENCH_DURATION=<seconds> shortens or lengthens each measured run.
 */

const CONNECTIONS = 16;
const WARMUP_S = 1.5;
const DURATION_S = Number(process.env.BENCH_DURATION) || 6;
const DEEP_PAGES = 1500;
const LIMIT = 60;
const RESULTS_FILE = fileURLToPath(new URL('../../bench/results.json', import.meta.url));

const log = (message: string) => console.log(message);

interface Scenario {
  key: string;
  label: string;
  method: 'GET' | 'POST';
  /** One or more paths (rotated per request), the same for every server. */
  paths: string[];
  bodies?: string[];
  /** SQL run before each server's run, so each starts from the same state. */
  before?: string;
  skipped?: string;
}

interface Target {
  key: 'ours' | 'bareWithCount' | 'bareNoCount';
  label: string;
  base: string;
  pid: number;
}

interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
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

function startChild<M>(file: string, env: Record<string, string>): Promise<{ child: ChildProcess; message: M }> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL(file, import.meta.url)), [], { env: { ...process.env, ...env } });
    child.once('message', (message) => resolve({ child, message: message as M }));
    child.once('exit', (code) => reject(new Error(`${file} exited (code ${code}) before listening`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------- requests

function query(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}

async function call(base: string, s: Scenario, headers: Record<string, string>): Promise<{ status: number; json: any }> {
  const res = await fetch(base + s.paths[0], { method: s.method, headers, body: s.bodies?.[0] });
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

function describe(status: number, json: any): string {
  const text = typeof json === 'string' ? json : JSON.stringify(json);
  return `${status} ${text.slice(0, 200)}`;
}

async function measure(target: Target, s: Scenario, headers: Record<string, string>, pgPids: () => Promise<number[]>): Promise<Measurement> {
  let n = 0;
  const rotate = s.paths.length > 1 || (s.bodies?.length ?? 0) > 1;
  const options = {
    url: target.base + s.paths[0],
    connections: CONNECTIONS,
    method: s.method,
    headers,
    body: s.bodies?.[0],
    requests: rotate
      ? [
          {
            setupRequest: (req: Record<string, any>) => {
              const i = n++;
              return { ...req, path: s.paths[i % s.paths.length], body: s.bodies?.[i % s.bodies.length] };
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
    rps: Math.round(r.requests.total / r.duration),
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, v]) => [code, Number(v.count)])),
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

// ---------------------------------------------------------------- output

const fmt = {
  rps: (m?: Measurement) => (m ? String(m.rps) : '-'),
  ms: (v?: number) => (v === undefined ? '-' : String(v)),
  ratio: (a?: Measurement, b?: Measurement) => (a && b && b.rps ? `${(a.rps / b.rps).toFixed(2)}x` : '-'),
};

function printTable(rows: { s: Scenario; m: Partial<Record<Target['key'], Measurement>> }[]): void {
  const header = [
    'scenario', 'ours req/s', 'p50', 'p99', 'bare+count req/s', 'p50', 'p99', 'bare req/s', 'p50', 'p99', 'ours/bare+count', 'ours/bare',
  ];
  const lines = rows.map(({ s, m }) =>
    s.skipped
      ? [s.label, `skipped: ${s.skipped}`]
      : [
          s.label,
          fmt.rps(m.ours), fmt.ms(m.ours?.p50), fmt.ms(m.ours?.p99),
          fmt.rps(m.bareWithCount), fmt.ms(m.bareWithCount?.p50), fmt.ms(m.bareWithCount?.p99),
          fmt.rps(m.bareNoCount), fmt.ms(m.bareNoCount?.p50), fmt.ms(m.bareNoCount?.p99),
          fmt.ratio(m.ours, m.bareWithCount), fmt.ratio(m.ours, m.bareNoCount),
        ],
  );
  const widths = header.map((h, i) => Math.max(h.length, ...lines.filter((l) => l.length > 2).map((l) => l[i].length)));
  const row = (cells: string[]) =>
    cells.length === 2 ? `${cells[0].padEnd(widths[0])}  ${cells[1]}` : cells.map((c, i) => (i ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  log('');
  log(row(header));
  log(widths.map((w) => '-'.repeat(w)).join('  '));
  lines.forEach((l) => log(row(l)));
  log('');
  log('req/s: mean over the run; p50/p99: latency in ms (2xx answers); ratios: req/s of ours over the bare server.');
  const cpuRows = rows.filter(({ s, m }) => !s.skipped && m.ours?.cpuUs);
  if (cpuRows.length) {
    log('');
    log('CPU per request, µs: node server / Postgres backends / autocannon / rest of the machine');
    log('(the rest: Postgres parallel workers and background processes, and anything else running on the machine)');
    const split = (c?: CpuSplit) => (c ? `${c.server} / ${c.postgres} / ${c.autocannon} / ${c.other}` : '-');
    const cells = cpuRows.map(({ s, m }) => [s.label, split(m.ours?.cpuUs), split(m.bareWithCount?.cpuUs), split(m.bareNoCount?.cpuUs)]);
    const head = ['scenario', 'ours', 'bare + count', 'bare, no count'];
    const w = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
    for (const c of [head, ...cells]) log(c.map((v, i) => (i ? v.padStart(w[i]) : v.padEnd(w[i]))).join('  '));
  }
  for (const { s, m } of rows) {
    for (const [key, v] of Object.entries(m)) {
      if (v && (v.non2xx || v.errors)) log(`  ! ${s.label} / ${key}: ${v.non2xx} non-2xx, ${v.errors} errors, status codes ${JSON.stringify(v.statusCodes)}`);
    }
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  if (process.argv.includes('--webhooks')) return (await import('./webhooks.js')).webhookBench();
  const cpus = os.availableParallelism();
  log(`Records API bench: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per run, one server at a time.`);
  log(`Records API runs with the rate limit OFF (RATE_LIMIT_PER_MINUTE=0), NODE_ENV=production, LOG_LEVEL=warn.`);
  log(`autocannon, the server under test and Postgres share this machine's ${cpus} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}).`);

  const busy = await busyShare(1000);
  if (busy !== undefined && busy > 0.15) {
    log(`! ${Math.round(busy * 100)}% of the CPU was busy before the bench started: other processes are running, so the numbers will be noisy.`);
  }

  const { url, embedded } = await resolveDatabaseUrl(log);
  const benchUrl = benchDatabaseUrl(url);
  const children: ChildProcess[] = [];
  const monitor = new pg.Client({ connectionString: benchUrl });
  try {
    await ensureBenchDatabase(benchUrl);
    log(`Database: ${BENCH_DB} on ${new URL(benchUrl).host}${embedded ? ' (embedded PostgreSQL)' : ''}`);
    const data = await prepareBenchData(benchUrl, log);
    if (!data.seeded) log(`Reusing the seeded data (${MAIN_ROWS} companies + ${MAIN_ROWS} people in the main workspace)`);

    const env = { DATABASE_URL: benchUrl, BENCH_WORKSPACE_ID: data.workspaceId, RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' };
    const api = await startChild<{ port: number }>('./api-server.js', env);
    children.push(api.child);
    const bare = await startChild<{ withCount: number; noCount: number }>('./bare-server.js', env);
    children.push(bare.child);
    const targets: Target[] = [
      { key: 'ours', label: 'records API', base: `http://127.0.0.1:${api.message.port}`, pid: api.child.pid! },
      { key: 'bareWithCount', label: 'bare + count(*)', base: `http://127.0.0.1:${bare.message.withCount}`, pid: bare.child.pid! },
      { key: 'bareNoCount', label: 'bare, no count', base: `http://127.0.0.1:${bare.message.noCount}`, pid: bare.child.pid! },
    ];
    await monitor.connect();
    const pgPids = async () =>
      (await monitor.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [BENCH_DB])).rows.map(
        (r) => r.pid as number,
      );
    const auth = { authorization: `Bearer ${data.secret}` };
    const jsonHeaders = { ...auth, 'content-type': 'application/json' };

    const firstPage = `/rest/companies?${query({ limit: String(LIMIT), order_by: 'createdAt[DescNullsLast]' })}`;
    log(`Walking ${DEEP_PAGES} pages of companies on the records API for the deep cursor…`);
    const deep = await deepCursor(targets[0].base, firstPage, auth, benchUrl, data.workspaceId);
    log(
      `  ${DEEP_PAGES} pages in ${deep.walkSeconds.toFixed(1)} s (${((deep.walkSeconds * 1000) / DEEP_PAGES).toFixed(2)} ms per page, one at a time); ` +
        `ms per page for pages 1–300, 301–600, …: ${deep.msPerPageByDepth.join(', ')}; ` +
        `endCursor ${deep.matchesOffset ? 'matches' : 'DOES NOT match'} the row at OFFSET ${DEEP_PAGES * LIMIT - 1}`,
    );

    const scenarios: Scenario[] = [
      { key: 'listCompanies', label: 'list companies, first page', method: 'GET', paths: [firstPage] },
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
      },
      {
        key: 'createPerson',
        label: 'create person',
        method: 'POST',
        paths: ['/rest/people'],
        // Every insert updates the one record_counts row of (workspace, people): start each run with it vacuumed.
        before: 'VACUUM record_counts',
        bodies: data.companyIds.map((companyId, i) =>
          JSON.stringify({
            name: { firstName: 'Bench', lastName: CREATED_MARK },
            emails: { primaryEmail: `bench.created${i}@example.com` },
            companyId,
          }),
        ),
      },
    ];

    const rows: { s: Scenario; m: Partial<Record<Target['key'], Measurement>> }[] = [];
    for (const s of scenarios) {
      const headers = s.method === 'POST' ? jsonHeaders : auth;
      // One request to each server first: both must answer, and with the same records.
      const ours = await call(targets[0].base, s, headers);
      if (s.key === 'graphqlCompanies' && (ours.status === 404 || ours.json?.errors)) {
        s.skipped = ours.status === 404 ? 'POST /graphql answers 404 (GraphQL layer not there yet)' : `GraphQL errors: ${describe(ours.status, ours.json)}`;
      } else if (ours.status >= 300) {
        s.skipped = `records API answered ${describe(ours.status, ours.json)}`;
      }
      const m: Partial<Record<Target['key'], Measurement>> = {};
      rows.push({ s, m });
      if (s.skipped) {
        log(`${s.label}: skipped (${s.skipped})`);
        continue;
      }
      for (const target of targets.slice(1)) {
        const answer = await call(target.base, s, headers);
        if (answer.status >= 300) throw new Error(`${target.label}, ${s.label}: ${describe(answer.status, answer.json)}`);
        const [a, b] = [idsOf(ours.json), idsOf(answer.json)];
        if (s.key !== 'createPerson' && a && b && a.join() !== b.join()) log(`  ! ${s.label}: ${target.label} returns other records than the records API`);
      }
      for (const target of targets) {
        if (s.before) await monitor.query(s.before);
        m[target.key] = await measure(target, s, headers, pgPids);
        log(`${s.label} / ${target.label}: ${m[target.key]!.rps} req/s, p50 ${m[target.key]!.p50} ms, p99 ${m[target.key]!.p99} ms`);
      }
    }

    printTable(rows);
    const results = {
      date: new Date().toISOString(),
      machine: { cpus, cpuModel: os.cpus()[0]?.model, node: process.version, platform: `${os.platform()} ${os.release()}` },
      settings: { connections: CONNECTIONS, warmupSeconds: WARMUP_S, durationSeconds: DURATION_S, rateLimit: 'off', nodeEnv: 'production', database: BENCH_DB },
      data: { mainWorkspaceRows: MAIN_ROWS, seededThisRun: data.seeded, seedSeconds: data.seedSeconds, filterLastName: data.filterLastName },
      deepCursor: { pages: DEEP_PAGES, walkSeconds: deep.walkSeconds, msPerPageByDepth: deep.msPerPageByDepth, matchesOffset: deep.matchesOffset },
      scenarios: rows.map(({ s, m }) => ({
        key: s.key,
        label: s.label,
        request: `${s.method} ${s.paths[0]}${s.paths.length > 1 ? ` (+${s.paths.length - 1} more ids)` : ''}`,
        ...(s.skipped
          ? { skipped: s.skipped }
          : {
              ours: m.ours,
              bareWithCount: m.bareWithCount,
              bareNoCount: m.bareNoCount,
              ratioRps: {
                oursOverBareWithCount: m.ours && m.bareWithCount ? m.ours.rps / m.bareWithCount.rps : null,
                oursOverBareNoCount: m.ours && m.bareNoCount ? m.ours.rps / m.bareNoCount.rps : null,
              },
            }),
      })),
    };
    writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
    log(`Wrote ${RESULTS_FILE}`);
  } finally {
    await monitor.end().catch(() => undefined);
    for (const child of children) await stopChild(child);
    if (embedded?.owned) await embedded.stop();
  }
}

await main();
