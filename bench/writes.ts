import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { startChild, stopChild } from './children.js';

/**
 * `npm run bench -- --writes`: single-record creates in one workspace, by 1 writer and by 16
 * concurrent writers, on the records API and beside it the bare server (bench/bare-server.ts)
 * doing the same INSERT, in the same run, one server at a time. `BENCH_ROUNDS=<n>` (default
 * 2) repeats every pair, alternating which server goes first, so the spread shows.
 *
 * Database: records_bench_writes (BENCH_WRITES_DB=<name> for another, e.g. to compare two
 * checkouts whose migrations differ), emptied on every run (TRUNCATE, then one workspace with
 * an Admin key and 10,000 companies for the people's companyId, then VACUUM), so no run
 * inherits the previous one's rows. It is not dropped: DROP DATABASE waits for every backend
 * of the server to answer a barrier, which one stuck on a slow client never does. No webhook
 * is configured (bench --webhooks measures those).
 */
const DB = process.env.BENCH_WRITES_DB || 'records_bench_writes';
const COMPANIES = 10_000;
const WARMUP_S = 1;
/** Seconds of each scenario on each server before the first measured run. */
const WARMUP_FIRST_S = 3;
const DURATION_S = Number(process.env.BENCH_DURATION) || 5;
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 2;
const WRITERS = [1, 16];
const log = (m: string) => console.log(m);

/** User + system CPU seconds of a process (Linux /proc; 0 elsewhere or when gone). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

interface Scenario {
  key: string;
  label: string;
  path: string;
  /** The i-th request's body. */
  body: (i: number) => string;
}

interface Figure {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** CPU µs per request of the server process and of the database's backends. */
  serverUs?: number;
  postgresUs?: number;
}

export async function writesBench(): Promise<void> {
  const { url, embedded } = await resolveDatabaseUrl(log);
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${DB}`;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const adminClient = new pg.Client({ connectionString: admin.toString() });
  await adminClient.connect();
  if (!/^[a-z_][a-z0-9_]*$/.test(DB)) throw new Error(`unexpected database name "${DB}"`);
  const found = await adminClient.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB]);
  if (!found.rowCount) await adminClient.query(`CREATE DATABASE ${DB}`);
  await adminClient.end();

  const ds = new DataSource(dataSourceOptions(dbUrl.toString(), 2));
  await ds.initialize();
  await runMigrations(ds);
  await ds.query('TRUNCATE workspaces, users CASCADE');
  const workspace = await createWorkspace(ds, 'Bench Writes');
  const role = await findRole(ds, workspace.id, 'Admin');
  const key = await createApiKey(ds, { workspaceId: workspace.id, role, name: 'bench', expiresAt: new Date(Date.now() + 86_400_000) });
  await ds.query(`INSERT INTO companies (workspace_id, name) SELECT $1, 'Company ' || g FROM generate_series(1, $2::int) g`, [
    workspace.id,
    COMPANIES,
  ]);
  await ds.query('VACUUM ANALYZE companies, people, record_counts');
  const companyIds = (
    (await ds.query(`SELECT id FROM companies WHERE workspace_id = $1 ORDER BY md5(id::text) LIMIT 1000`, [workspace.id])) as {
      id: string;
    }[]
  ).map((r) => r.id);
  const monitor = new pg.Client({ connectionString: dbUrl.toString() });
  await monitor.connect();
  const backends = async () =>
    (await monitor.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [DB])).rows.map(
      (r) => r.pid as number,
    );

  const children: ChildProcess[] = [];
  try {
    const env = { DATABASE_URL: dbUrl.toString(), BENCH_WORKSPACE_ID: workspace.id, LOG_LEVEL: 'warn' };
    const api = await startChild<{ port: number }>('./api-server.js', env);
    children.push(api.child);
    const bare = await startChild<{ withCount: number; noCount: number }>('./bare-server.js', env);
    children.push(bare.child);
    const servers = [
      { key: 'ours', label: 'records API', base: `http://127.0.0.1:${api.message.port}`, pid: api.child.pid! },
      { key: 'bare', label: 'bare server', base: `http://127.0.0.1:${bare.message.noCount}`, pid: bare.child.pid! },
    ] as const;
    const headers = { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' };

    let n = 0;
    const scenarios: Scenario[] = [
      {
        key: 'createCompany',
        label: 'create company',
        path: '/rest/companies',
        body: (i) => JSON.stringify({ name: `Bench Write ${i}`, domainName: { primaryLinkUrl: `https://write-${i}.example.com` } }),
      },
      {
        key: 'createPerson',
        label: 'create person (with companyId)',
        path: '/rest/people',
        body: (i) =>
          JSON.stringify({
            name: { firstName: 'Bench', lastName: `Write ${i}` },
            emails: { primaryEmail: `bench.write${i}@example.com` },
            companyId: companyIds[i % companyIds.length],
          }),
      },
    ];

    const run = async (server: (typeof servers)[number], s: Scenario, connections: number, duration: number): Promise<Figure> => {
      const options = {
        url: server.base + s.path,
        method: 'POST' as const,
        connections,
        headers,
        requests: [{ setupRequest: (req: Record<string, any>) => ({ ...req, body: s.body(n++) }) }],
      };
      const pids = await backends();
      const before = { server: cpuSeconds(server.pid), pg: new Map(pids.map((pid) => [pid, cpuSeconds(pid)])) };
      const r = await autocannon({ ...options, duration });
      let pgSeconds = 0;
      for (const pid of await backends()) pgSeconds += cpuSeconds(pid) - (before.pg.get(pid) ?? 0);
      const total = r.requests.total;
      const us = (seconds: number) => (existsSync('/proc/stat') && total ? Math.round((seconds * 1e6) / total) : undefined);
      return {
        rps: Math.round(total / r.duration),
        p50: r.latency.p50,
        p99: r.latency.p99,
        non2xx: r.non2xx,
        serverUs: us(cpuSeconds(server.pid) - before.server),
        postgresUs: us(pgSeconds),
      };
    };

    log(
      `Writes bench: single creates in one workspace, ${WRITERS.join(' and ')} writer(s), ${WARMUP_FIRST_S} s of each scenario on each server first, then ${WARMUP_S} s warm-up + ${DURATION_S} s per run, ` +
        `${ROUNDS} round(s); database ${DB}${embedded ? ' (embedded PostgreSQL)' : ''}; load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(', ')} on ${os.availableParallelism()} cores.`,
    );
    // Both servers run every scenario once first, so no measured round meets a cold JIT: with
    // only the 1 s warm-up, the records API's first round by 1 writer cost ~2x the Node CPU
    // per create of its second (1600-1900 against 780-1090 µs).
    for (const server of servers) for (const s of scenarios) await run(server, s, 16, WARMUP_FIRST_S);
    const table: string[][] = [];
    for (const s of scenarios) {
      for (const connections of WRITERS) {
        for (let round = 0; round < ROUNDS; round++) {
          const order = round % 2 === 0 ? servers : [...servers].reverse();
          const figures: Partial<Record<(typeof servers)[number]['key'], Figure>> = {};
          for (const server of order) {
            await run(server, s, connections, WARMUP_S);
            figures[server.key] = await run(server, s, connections, DURATION_S);
          }
          const [ours, bareFig] = [figures.ours!, figures.bare!];
          const cpu = (f: Figure) => (f.serverUs === undefined ? '-' : `${f.serverUs} + ${f.postgresUs}`);
          const row = [
            s.label,
            String(connections),
            String(round + 1),
            `${ours.rps} (${ours.p50} / ${ours.p99})`,
            `${bareFig.rps} (${bareFig.p50} / ${bareFig.p99})`,
            `${(ours.rps / bareFig.rps).toFixed(2)}x`,
            cpu(ours),
            cpu(bareFig),
          ];
          table.push(row);
          log(`  ${row.join(' | ')}`);
          if (ours.non2xx || bareFig.non2xx) log(`  ! non-2xx answers: records API ${ours.non2xx}, bare server ${bareFig.non2xx}`);
        }
      }
    }
    log('');
    log(
      '| scenario | writers | round | records API req/s (p50 / p99 ms) | bare server req/s (p50 / p99 ms) | ratio | CPU µs/create ours (node + pg) | bare (node + pg) |',
    );
    log('|---|---|---|---|---|---|---|---|');
    for (const row of table) log(`| ${row.join(' | ')} |`);

    // The stored counts are exact after all of it: the unfiltered totalCount against count(*),
    // once the creates still in flight when the last run stopped have answered.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const object of ['companies', 'people']) {
      const res = await fetch(`${servers[0].base}/rest/${object}?limit=1`, { headers });
      const json = (await res.json()) as { totalCount: number };
      const [{ n: counted }] = (
        await monitor.query(`SELECT count(*)::int AS n FROM ${object} WHERE workspace_id = $1 AND deleted_at IS NULL`, [workspace.id])
      ).rows;
      log(`${object}: totalCount ${json.totalCount}, count(*) ${counted}${json.totalCount === counted ? '' : '  ! DIFFERENT'}`);
    }
  } finally {
    for (const child of children) await stopChild(child);
    await monitor.end().catch(() => undefined);
    await ds.destroy();
    await embedded?.stop();
  }
}
