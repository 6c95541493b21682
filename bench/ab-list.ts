import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { RoleEntity } from '#database/entities/index.js';
import { dataSourceOptions, resolveDatabaseUrl } from '#database/data-source.js';
import { createApiKey } from '#identity/accounts.js';
import { benchDatabaseName, benchDatabaseUrl, DEFAULT_ROWS, prepareBenchData } from './seed.js';

/**
 * `node dist/bench/ab-list.js --before <dir> [--rows N] [--rounds R] [--seconds S]`: the REST
 * list of the bench's first page (`GET /rest/companies?limit=60`, 16 connections) on two builds
 * of the records API at once — `<dir>` (another checkout, built: `dist/bench/api-server.js`)
 * and this one — over the same bench database, in turns (before, after, after with a role
 * that hides a field), R rounds of S seconds. On a machine shared with other work, turns
 * taken in the same minutes compare two builds better than two runs of `npm run bench`
 * taken minutes apart (docs/benchmark.md, "Field permissions").
 */

const CONNECTIONS = 16;

function option(name: string, fallback?: string): string {
  const i = process.argv.indexOf(name);
  const value = i >= 0 ? process.argv[i + 1] : fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
}

function start(dir: string, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((done, fail) => {
    const child = fork(resolve(dir, 'dist/bench/api-server.js'), [], { cwd: dir, env: { ...process.env, ...env } });
    child.once('message', (m) => done({ child, port: (m as { port: number }).port }));
    child.once('exit', (code) => fail(new Error(`${dir}: the records API exited (code ${code}) before listening`)));
  });
}

function run(port: number, secret: string, seconds: number) {
  return autocannon({
    url: `http://127.0.0.1:${port}/rest/companies?limit=60`,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${secret}` },
  });
}

async function main(): Promise<void> {
  const before = resolve(option('--before'));
  const after = resolve(process.cwd());
  const rows = Number(option('--rows', String(DEFAULT_ROWS)));
  const rounds = Number(option('--rounds', '4'));
  const seconds = Number(option('--seconds', '5'));
  const { url } = await resolveDatabaseUrl();
  const benchUrl = benchDatabaseUrl(url, benchDatabaseName(rows));
  const data = await prepareBenchData(benchUrl, rows, (m) => console.log(m));

  // A role like Admin that cannot read companies.domainName, and a key of it.
  const ds = new DataSource({ ...dataSourceOptions(benchUrl, 2), migrationsRun: false });
  await ds.initialize();
  const repo = ds.getRepository(RoleEntity);
  const admin = await repo.findOneByOrFail({ workspaceId: data.workspaceId, name: 'Admin' });
  const role = await repo.save(
    repo.create({
      workspaceId: data.workspaceId,
      name: `Bench hidden domain ${Date.now()}`,
      objectPermissions: admin.objectPermissions,
      fieldPermissions: { companies: { domainName: { read: false, update: false } } },
      settingsPermissions: [],
    }),
  );
  const hidden = (
    await createApiKey(ds, { workspaceId: data.workspaceId, role, name: 'bench', expiresAt: new Date(Date.now() + 86_400_000) })
  ).secret;
  await ds.destroy();

  const env = { DATABASE_URL: benchUrl, LOG_LEVEL: 'warn' };
  const servers = [await start(before, env), await start(after, env)];
  const turns: [string, number, string][] = [
    ['before', servers[0].port, data.secret],
    ['after', servers[1].port, data.secret],
    ['after, a role hiding domainName', servers[1].port, hidden],
  ];
  try {
    for (const [, port, secret] of turns) await run(port, secret, 2);
    const rps = new Map<string, number[]>(turns.map(([name]) => [name, []]));
    for (let round = 1; round <= rounds; round++) {
      for (const [name, port, secret] of turns) {
        const r = await run(port, secret, seconds);
        if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} answers not 2xx, ${r.errors} errors`);
        rps.get(name)!.push(r.requests.average);
        console.log(`round ${round} ${name}: ${r.requests.average} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms`);
      }
    }
    for (const [name, values] of rps) {
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      console.log(`${name}: mean ${Math.round(mean)} req/s (${values.map(Math.round).join(', ')})`);
    }
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
  }
}

await main();
process.exit(0);
