import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startApi, stopChild } from './children.js';
import { startReplicaPair } from './replica-pair.js';
import { prepareBenchData } from './seed.js';

/**
 * `npm run bench -- --replica [--rows N]` (docs/benchmark.md, "Read replicas"): the list and
 * GraphQL reads of the records API on the primary alone, then with one streaming replica
 * (bench/replica-pair.ts) in DATABASE_READ_URL, in the same run, 16 connections, one API
 * process. The replica runs on the same machine, so this shows what the routing costs per
 * read (the write-position look-up on the primary, the replica's pool), not a speed-up: a
 * replica pays off when it has cores of its own. Each run also counts the transactions
 * each server committed, to show where the reads went.
 */
const CONNECTIONS = 16;
const WARMUP_S = 1.5;
const DURATION_S = Number(process.env.BENCH_DURATION) || 6;
const DEFAULT_ROWS = 10_000;
const log = (m: string) => console.log(m);

interface Result {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  primaryXacts: number;
  replicaXacts: number;
}

async function xacts(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()');
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

export async function replicaBench(): Promise<void> {
  const argv = process.argv.slice(2);
  const rowsAt = argv.indexOf('--rows');
  const rows = rowsAt >= 0 ? Number(argv[rowsAt + 1]) : DEFAULT_ROWS;
  process.env.VAULT_MASTER_KEY ||= randomBytes(32).toString('base64');
  log(`Read replicas: a primary and one streaming replica from the embedded binaries on this machine, ${rows} rows per workspace.`);
  const pair = await startReplicaPair();
  try {
    const data = await prepareBenchData(pair.primaryUrl, rows, log);
    const headers = { authorization: `Bearer ${data.secret}`, 'content-type': 'application/json' };
    const scenarios = [
      { label: 'REST list, 60 companies', method: 'GET' as const, path: '/rest/companies?limit=60' },
      {
        label: 'GraphQL list, 60 companies',
        method: 'POST' as const,
        path: '/graphql',
        body: JSON.stringify({ query: '{ companies(first: 60) { totalCount edges { node { id name } } } }' }),
      },
    ];
    const setups = [
      { label: 'primary alone', env: { DATABASE_URL: pair.primaryUrl, DATABASE_READ_URL: '' } },
      { label: 'primary + 1 replica', env: { DATABASE_URL: pair.primaryUrl, DATABASE_READ_URL: pair.replicaUrl } },
    ];
    const results: { setup: string; scenario: string; result: Result }[] = [];
    for (const setup of setups) {
      const { child, port } = await startApi(setup.env);
      try {
        // The replica needs a poll or two before it is used.
        await new Promise((r) => setTimeout(r, 1000));
        for (const s of scenarios) {
          const options = { url: `http://127.0.0.1:${port}${s.path}`, method: s.method, headers, body: s.body, connections: CONNECTIONS };
          await autocannon({ ...options, duration: WARMUP_S });
          const [p0, r0] = [await xacts(pair.primaryUrl), await xacts(pair.replicaUrl)];
          const r = await autocannon({ ...options, duration: DURATION_S });
          const [p1, r1] = [await xacts(pair.primaryUrl), await xacts(pair.replicaUrl)];
          results.push({
            setup: setup.label,
            scenario: s.label,
            result: {
              rps: Math.round(r.requests.total / r.duration),
              p50: r.latency.p50,
              p99: r.latency.p99,
              non2xx: r.non2xx,
              errors: r.errors,
              primaryXacts: Math.round(((p1 - p0 - 1) / r.requests.total) * 100) / 100,
              replicaXacts: Math.round(((r1 - r0 - 1) / r.requests.total) * 100) / 100,
            },
          });
        }
      } finally {
        await stopChild(child);
      }
    }
    log('');
    log('| read | setup | req/s | p50 ms | p99 ms | non-2xx | transactions per request on primary / replica |');
    log('|---|---|---|---|---|---|---|');
    for (const { setup, scenario, result: r } of results) {
      log(`| ${scenario} | ${setup} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.non2xx + r.errors} | ${r.primaryXacts} / ${r.replicaXacts} |`);
    }
    for (const s of scenarios) {
      const [alone, withReplica] = setups.map((setup) => results.find((x) => x.setup === setup.label && x.scenario === s.label)!.result);
      log(`${s.label}: with the replica ${(withReplica.rps / alone.rps).toFixed(2)}x the req/s of the primary alone`);
    }
    log('(One machine: the replica takes cores from the API and the primary, so this is the routing cost, not a speed-up.)');
  } finally {
    await pair.stop();
  }
}
