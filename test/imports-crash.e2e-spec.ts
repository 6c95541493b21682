import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { newWorkspace, useEmptyDatabase } from './factories.js';
import { sleep } from './import-helpers.js';
import { freePort } from './public-origin.js';

/**
 * An import survives its worker's death (docs/decisions/0035-imports.md): a records API
 * process running an import is killed with SIGKILL mid-file; another one started afterwards
 * takes the import over (the heartbeat releases the dead worker's job) and finishes it with
 * every row exactly once.
 */
const API = resolve(process.cwd(), 'dist/apps/records-api/src/main.js');
const ROWS = 60_000;

async function startApi(databaseUrl: string): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [API], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      AUTH_PORT: String(await freePort()),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      AUTH_PROXY: 'off',
      IMPORTS_WORKER: 'on',
      IMPORTS_HEARTBEAT_MS: '500',
      LOG_LEVEL: 'error',
    },
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const up = await fetch(`${base}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { child, base };
    if (i > 300) throw new Error('the records API did not start within 30 s');
    await sleep(100);
  }
}

describe('an import whose worker is killed', () => {
  // A database of its own: no other suite's import worker can take this import.
  const db = useEmptyDatabase('imports_crash');
  const children: ChildProcess[] = [];
  db.beforeDrop(async () => {
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('is finished by the next worker after a SIGKILL mid-file, with every row exactly once', async () => {
    const ds = db.ds;
    const ws = await newWorkspace(ds, 'imp-crash');
    const first = await startApi(db.url);
    children.push(first.child);
    const csv = ['name,domainName.primaryLinkUrl', ...Array.from({ length: ROWS }, (_, i) => `Crash ${i},crash-${i}.example`)].join('\n');
    const res = await fetch(`${first.base}/rest/imports?object=companies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ws.keys.Admin}`, 'content-type': 'text/csv' },
      body: csv,
    });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { data: { import: { id: string } } }).data.import.id;

    // Killed once some batches are committed and most of the file is still to come.
    const progress = async () =>
      (await ds.query('SELECT status, rows_done::int AS done FROM imports WHERE workspace_id = $1 AND id = $2', [ws.id, id]))[0] as {
        status: string;
        done: number;
      };
    for (let i = 0; (await progress()).done < 2000; i++) {
      if (i > 600) throw new Error(`the import did not start: ${JSON.stringify(await progress())}`);
      await sleep(50);
    }
    const exited = new Promise<NodeJS.Signals | null>((done) => first.child.once('exit', (_code, signal) => done(signal)));
    first.child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const atDeath = await progress();
    expect(atDeath.status).toBe('running');
    expect(atDeath.done).toBeLessThan(ROWS);
    // What was committed is exactly what rows_done says: no batch is half in.
    const committed = Number((await ds.query('SELECT count(*) AS n FROM companies WHERE workspace_id = $1', [ws.id]))[0].n);
    expect(committed).toBe(atDeath.done);

    const second = await startApi(db.url);
    children.push(second.child);
    let state: Record<string, unknown>;
    for (let i = 0; ; i++) {
      const r = await fetch(`${second.base}/rest/imports/${id}`, { headers: { authorization: `Bearer ${ws.keys.Admin}` } });
      state = ((await r.json()) as { data: { import: Record<string, unknown> } }).data.import;
      if (state.status !== 'running' && state.status !== 'queued') break;
      if (i > 1200) throw new Error(`the import did not finish after the restart: ${JSON.stringify(state)}`);
      await sleep(100);
    }
    expect(state).toMatchObject({ status: 'completed', rowsRead: ROWS, created: ROWS, failed: 0, progress: 1 });
    const [counts] = await ds.query(
      'SELECT count(*)::int AS n, count(DISTINCT name)::int AS names FROM companies WHERE workspace_id = $1',
      [ws.id],
    );
    expect(counts).toEqual({ n: ROWS, names: ROWS });
    const [{ n: stored }] = await ds.query('SELECT sum(live_count)::int AS n FROM record_counts WHERE workspace_id = $1 AND object = $2', [
      ws.id,
      'companies',
    ]);
    expect(stored).toBe(ROWS);
  }, 180_000);
});
