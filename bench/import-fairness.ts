import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { apiNodeFlags, loadConfig } from '#config/config.js';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { fileURLToPath } from 'node:url';
import { stopChild } from './children.js';
import { freshDatabase, uploadFile } from './import.js';

/**
 * `npm run bench -- --import-fairness`: how much an import that is being parsed slows another
 * workspace's reads on the same records API (docs/benchmark.md, "Import fairness"). One
 * records API process (import worker on, as deployed); workspace R reads one of its companies
 * (`GET /rest/companies/{id}`, CONNECTIONS connections) for DURATION_S seconds, first alone,
 * then while workspace W uploads and imports files one after the other: 30 MB of rows of
 * 500,000 cells each ("wide", the attack of issue 35), then about 30 MB of ordinary rows
 * ("narrow"). Prints R's p50/p99 and W's imports per run.
 *
 * `BENCH_API_DIST=<dir>` runs the records API of another build (its `bench/api-server.js`),
 * to measure a commit before a change with the same client.
 */
const DB = 'records_bench_import_fairness';
const CONNECTIONS = 4;
const DURATION_S = Number(process.env.BENCH_DURATION || 15);
const log = (m: string) => console.log(m);

/** 30 rows of 500,000 one-letter cells under a two-column header (each row ~1 MB, under the 1 MB record bound). */
function wideFile(): Buffer {
  const row = Buffer.from('x,'.repeat(499_999) + 'x\n');
  return Buffer.concat([Buffer.from('name,domainName.primaryLinkUrl\n'), ...Array(30).fill(row)]);
}

/** About 30 MB of ordinary rows. */
function narrowFile(): Buffer {
  const lines = ['name,domainName.primaryLinkUrl'];
  for (let i = 0; lines.length < 700_000; i++) lines.push(`Narrow Company ${i},narrow-${i}.example.com`);
  return Buffer.from(lines.join('\n') + '\n');
}

/** The records API (this build's, or BENCH_API_DIST's) with the node flags `npm start` gives it, and its event loop's delay measured. */
function startApiOf(dist: string | undefined, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const server = dist ? resolve(dist, 'bench/api-server.js') : fileURLToPath(new URL('./api-server.js', import.meta.url));
  const execArgv = [...apiNodeFlags(loadConfig()), '--import', fileURLToPath(new URL('./loop-delay.js', import.meta.url))];
  return new Promise((done, fail) => {
    const child = fork(server, [], { env: { ...process.env, ...env }, execArgv });
    child.once('message', (m) => done({ child, port: (m as { port: number }).port }));
    child.once('exit', (code) => fail(new Error(`the records API ${dist ? `of ${dist} ` : ''}exited (code ${code})`)));
  });
}

/** The child's event loop delay since the last call (bench/loop-delay.ts). */
function loopDelay(child: ChildProcess): Promise<{ p50: number; p99: number; max: number }> {
  return new Promise((done) => {
    const take = (m: unknown) => {
      const reading = (m as { loopDelay?: { p50: number; p99: number; max: number } }).loopDelay;
      if (!reading) return;
      child.off('message', take);
      done(reading);
    };
    child.on('message', take);
    child.send('loop-delay');
  });
}

export async function importFairnessBench(): Promise<void> {
  const dist = process.env.BENCH_API_DIST;
  const { ds, dbUrl, embedded } = await freshDatabase(DB);
  const keyOf = async (name: string) => {
    const ws = await createWorkspace(ds, name);
    const role = await findRole(ds, ws.id, 'Admin');
    return {
      ws,
      key: (await createApiKey(ds, { workspaceId: ws.id, role, name: 'bench', expiresAt: new Date(Date.now() + 86_400_000) })).secret,
    };
  };
  const reader = await keyOf('Bench Fair Reader');
  const importer = await keyOf('Bench Fair Importer');
  const [company] = await ds.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, 'Read me') RETURNING id`, [reader.ws.id]);
  log(
    `Import fairness bench: records API ${dist ? `of ${dist}` : 'of this build'}, database ${DB}${embedded ? ' (embedded PostgreSQL)' : ''}; ` +
      `${CONNECTIONS} connections read for ${DURATION_S} s per run.`,
  );
  const api = await startApiOf(dist, { DATABASE_URL: dbUrl.toString(), IMPORTS_WORKER: 'on', WEBHOOKS_WORKER: 'off', LOG_LEVEL: 'warn' });
  const reads = () =>
    autocannon({
      url: `http://127.0.0.1:${api.port}/rest/companies/${company.id}`,
      connections: CONNECTIONS,
      duration: DURATION_S,
      headers: { authorization: `Bearer ${reader.key}` },
    });
  /** Imports `file` again and again until `stop` says so; the imports that ended and the rows read. */
  const importing = async (file: Buffer, stop: { now: boolean }) => {
    let ended = 0;
    let rows = 0;
    while (!stop.now) {
      const answer = await uploadFile(api.port, importer.key, file);
      if (answer.status !== 202) throw new Error(`the upload was answered ${answer.status}: ${answer.body}`);
      const id = JSON.parse(answer.body).data.import.id as string;
      for (;;) {
        const [row] = await ds.query('SELECT status, rows_done::int AS rows FROM imports WHERE workspace_id = $1 AND id = $2', [
          importer.ws.id,
          id,
        ]);
        if (!['queued', 'running'].includes(row.status)) {
          ended++;
          rows += row.rows;
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return { ended, rows };
  };
  try {
    await autocannon({
      url: `http://127.0.0.1:${api.port}/rest/companies/${company.id}`,
      connections: 2,
      duration: 2,
      headers: { authorization: `Bearer ${reader.key}` },
    });
    const line = async (name: string, r: Awaited<ReturnType<typeof autocannon>>, imports?: { ended: number; rows: number }) => {
      const loop = await loopDelay(api.child);
      log(
        `${name.padEnd(28)} GET p50 ${String(r.latency.p50).padStart(4)} ms  p99 ${String(r.latency.p99).padStart(4)} ms  max ${String(r.latency.max).padStart(5)} ms  ` +
          `${String(Math.round(r.requests.total / r.duration)).padStart(5)} req/s; event loop delay p99 ${loop.p99.toFixed(0)} ms, max ${loop.max.toFixed(0)} ms` +
          `${imports ? `; ${imports.ended} imports ended meanwhile (${imports.rows.toLocaleString('en-US')} rows read)` : ''}`,
      );
    };
    await loopDelay(api.child);
    await line('alone', await reads());
    for (const [name, file] of [
      ['during 30 MB wide imports', wideFile()],
      ['during 30 MB narrow imports', narrowFile()],
    ] as const) {
      const stop = { now: false };
      const running = importing(file, stop);
      const r = await reads();
      stop.now = true;
      await line(name, r, await running);
    }
  } finally {
    await stopChild(api.child);
    await ds.destroy();
    await embedded?.stop();
  }
}
