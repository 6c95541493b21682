import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startApi, stopChild } from './children.js';
import { resolveDatabaseUrl } from '#database/data-source.js';
import { benchDatabaseName, benchDatabaseUrl, DEFAULT_ROWS, ensureBenchDatabase, prepareBenchData } from './seed.js';

/**
 * `npm run bench -- --prepared`: what switching off named prepared statements costs
 * (DATABASE_PREPARED_STATEMENTS=off, the default behind a transaction pooler; docs/scaling.md "Behind
 * PgBouncer"), and what PgBouncer in transaction mode adds. Two or three records APIs on the
 * same data run at once — prepared statements on; off; off through PgBouncer 1.18 when
 * /usr/sbin/pgbouncer exists — and are measured in turn, ROUNDS times each with the order
 * rotated, so a machine whose load drifts (other processes) weighs on each alike; the
 * medians are compared.
 */
const CONNECTIONS = 16;
const RUN_S = Number(process.env.BENCH_DURATION) || 3;
const ROUNDS = 5;
const LIMIT = 60;

const log = (line: string) => process.stdout.write(`${line}\n`);

interface Variant {
  label: string;
  env: Record<string, string>;
  base?: string;
  child?: ChildProcess;
}

async function rps(base: string, path: string, headers: Record<string, string>): Promise<number> {
  const r = await autocannon({ url: `${base}${path}`, connections: CONNECTIONS, duration: RUN_S, headers });
  if (r.non2xx || r.errors) throw new Error(`${base}${path}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return r.requests.average;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function preparedBench(): Promise<void> {
  const { url, embedded } = await resolveDatabaseUrl(log);
  const benchUrl = benchDatabaseUrl(url, benchDatabaseName(DEFAULT_ROWS));
  await ensureBenchDatabase(benchUrl);
  const data = await prepareBenchData(benchUrl, DEFAULT_ROWS, log);
  const base = { DATABASE_URL: benchUrl, LOG_LEVEL: 'warn' };
  const variants: Variant[] = [
    { label: 'prepared statements on', env: base },
    { label: 'prepared statements off', env: { ...base, DATABASE_PREPARED_STATEMENTS: 'off' } },
  ];
  type Bouncer = { url: string; stop(): Promise<void> };
  let bouncer: Bouncer | undefined;
  const bin = fileURLToPath(new URL('../../test/pgbouncer.mjs', import.meta.url));
  if (existsSync('/usr/sbin/pgbouncer') && existsSync(bin)) {
    const { startPgBouncer } = (await import(bin)) as {
      startPgBouncer: (o: { directUrl: string; poolSize: number }) => Promise<Bouncer>;
    };
    bouncer = await startPgBouncer({ directUrl: benchUrl, poolSize: 20 });
    variants.push({
      label: 'off, through PgBouncer 1.18 (transaction mode, 20 server connections)',
      env: { ...base, DATABASE_URL: bouncer.url, DATABASE_SESSION_URL: benchUrl, DATABASE_POOLER: 'transaction' },
    });
  } else log('(no /usr/sbin/pgbouncer: the PgBouncer variant is left out; apt-get install -y pgbouncer)');
  log(
    `Prepared statements A/B: ${variants.length} records APIs on records_bench (${DEFAULT_ROWS} companies${embedded ? ', embedded PostgreSQL' : ''}), ` +
      `${CONNECTIONS} connections, ${RUN_S} s per run, ${ROUNDS} rounds in rotated order; median req/s.`,
  );
  const scenarios: { label: string; path: string }[] = [
    { label: 'list companies, first page', path: `/rest/companies?limit=${LIMIT}&order_by=createdAt%5BDescNullsLast%5D` },
    {
      label: `list people, lastName = ${data.filterLastName}`,
      path: `/rest/people?limit=${LIMIT}&filter=${encodeURIComponent(`name.lastName[eq]:"${data.filterLastName}"`)}`,
    },
    { label: 'get company by id', path: `/rest/companies/${data.companyIds[0]}` },
  ];
  const headers = { authorization: `Bearer ${data.secret}` };
  try {
    for (const v of variants) {
      const { child, port } = await startApi(v.env);
      v.child = child;
      v.base = `http://127.0.0.1:${port}`;
    }
    for (const s of scenarios) {
      for (const v of variants) await rps(v.base!, s.path, headers); // warm-up: connections, plans, caches
      const results = variants.map(() => [] as number[]);
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < variants.length; k++) {
          const i = (round + k) % variants.length;
          results[i].push(await rps(variants[i].base!, s.path, headers));
        }
      }
      const first = median(results[0]);
      log(`${s.label}:`);
      variants.forEach((v, i) => {
        const m = median(results[i]);
        log(
          `  ${v.label.padEnd(72)} ${Math.round(m).toString().padStart(6)} req/s  ${(m / first).toFixed(2)}x  (runs: ${results[i].map(Math.round).join(', ')})`,
        );
      });
    }
  } finally {
    for (const v of variants) await stopChild(v.child);
    await bouncer?.stop();
    if (embedded?.owned) await embedded.stop();
  }
}
