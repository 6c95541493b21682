import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { dataSourceOptions } from '#database/data-source.js';
import { createWebhook } from '#webhooks/webhooks.js';
import { alive, childrenOf, ownPostgres, spawnApp, waitUntil, type AppProcess, type OwnPostgres } from './processes.js';
import { Receiver, TEST_WORKER_ENV } from './webhook-receiver.js';

/**
 * Queue workers across Postgres crashes (docs/decisions/0051-queue-workers-that-outlive-postgres.md):
 * a records API keeps running while its Postgres is killed (SIGKILL of the postmaster) and
 * started again on the same data. A worker whose job's outcome could not be recorded is
 * stopped by graphile-worker; it must be replaced, and an import must always end.
 */
const ROWS = 30_000;
/** More than an import job's 5 attempts: each crash mid-import stops the worker running it. */
const CRASHES = 6;
const DAY = 86_400_000;

interface Workspace {
  id: string;
  key: string;
}

describe('queue workers when Postgres crashes', () => {
  let own: OwnPostgres;
  let db: pg.Pool;
  let api: AppProcess | undefined;
  const receiver = new Receiver();
  const workspaces: string[] = [];

  const connect = () => {
    db = new pg.Pool({ connectionString: own.url, max: 2 });
    db.on('error', () => undefined);
  };

  beforeAll(async () => {
    own = await ownPostgres('queue-crash');
    connect();
    await receiver.start();
  }, 60_000);

  afterEach(async () => {
    if (api && api.child.exitCode === null && api.child.signalCode === null) {
      api.child.kill('SIGKILL');
      await api.exited;
    }
    api = undefined;
    // What a test left unfinished is not for the next test's process to run.
    for (const id of workspaces)
      await db
        .query(`UPDATE imports SET status = 'cancelled' WHERE workspace_id = $1 AND status IN ('queued', 'running')`, [id])
        .catch(() => undefined);
  });

  afterAll(async () => {
    await db?.end().catch(() => undefined);
    await receiver.close();
    await own?.remove();
  });

  async function workspace(label: string): Promise<Workspace> {
    const ds = await new DataSource(dataSourceOptions(own.url, 2)).initialize();
    try {
      const ws = await createWorkspace(ds, label);
      workspaces.push(ws.id);
      const role = await findRole(ds, ws.id, 'Admin');
      const { secret } = await createApiKey(ds, { workspaceId: ws.id, role, name: label, expiresAt: new Date(Date.now() + DAY) });
      return { id: ws.id, key: secret };
    } finally {
      await ds.destroy();
    }
  }

  /** A workspace with a webhook of company creates to the receiver. */
  async function workspaceWithWebhook(label: string): Promise<Workspace> {
    const ws = await workspace(label);
    const setup = await new DataSource(dataSourceOptions(own.url, 2)).initialize();
    await createWebhook(setup, ws.id, { url: receiver.url, operations: ['company.created'] }, { allowPrivate: true });
    await setup.destroy();
    return ws;
  }

  async function createCompany(ws: Workspace, name: string): Promise<void> {
    const res = await fetch(`${api!.url}/rest/companies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    expect(res.status).toBe(201);
  }

  /** A company created whose event the receiver takes and does not answer yet: the only webhook worker is in the middle of its POST. */
  async function createdAndHeld(ws: Workspace, name: string): Promise<void> {
    receiver.hold = true;
    await createCompany(ws, name);
    await waitUntil(
      () => receiver.held === 1,
      15_000,
      () => `the event of ${name} to be POSTed`,
    );
  }

  /** SIGKILL of the postmaster (its backends then exit too), and a new one on the same data. */
  async function crashPostgres(whileDown: () => Promise<void>): Promise<void> {
    const postmaster = own.db.postmaster();
    expect(postmaster).toBeDefined();
    const backends = childrenOf(postmaster!);
    own.db.release();
    process.kill(postmaster!, 'SIGKILL');
    await waitUntil(
      () => !alive(postmaster!) && backends.every((pid) => !alive(pid)),
      15_000,
      () => 'the killed postmaster and its backends to exit',
    );
    await whileDown();
    await db.end().catch(() => undefined);
    await own.restart();
    connect();
  }

  const progress = async (ws: Workspace, id: string) =>
    (
      await db.query<{ status: string; done: number; error: string | null }>(
        'SELECT status, rows_done::int AS done, error FROM imports WHERE workspace_id = $1 AND id = $2',
        [ws.id, id],
      )
    ).rows[0];

  async function upload(ws: Workspace, csv: string): Promise<string> {
    const res = await fetch(`${api!.url}/rest/imports?object=companies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
      body: csv,
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { data: { import: { id: string } } }).data.import.id;
  }

  async function ended(ws: Workspace, id: string, ms: number): Promise<Record<string, unknown>> {
    let state: Record<string, unknown> = {};
    await waitUntil(
      async () => {
        const r = await fetch(`${api!.url}/rest/imports/${id}`, { headers: { authorization: `Bearer ${ws.key}` } });
        if (r.status !== 200) return false;
        state = ((await r.json()) as { data: { import: Record<string, unknown> } }).data.import;
        return !['queued', 'running'].includes(state.status as string);
      },
      ms,
      () => `the import to end: ${JSON.stringify(state)}\n${api!.output().slice(-3000)}`,
    );
    return state;
  }

  /** graphile-worker's line for a worker that could not record its job's outcome (it then stops). */
  const webhookWorkerStopped = () => /\[webhooks\][^\n]*Failed to release job/.test(api!.output());

  it(`an import goes on after each of ${CRASHES} Postgres crashes and completes with every row once; the webhook worker stopped by a crash is replaced`, async () => {
    const ws = await workspaceWithWebhook('queue-crash');
    api = await spawnApp('records-api', {
      ...TEST_WORKER_ENV,
      DATABASE_URL: own.url,
      IMPORTS_WORKER: 'on',
      IMPORTS_CONCURRENCY: '1',
      IMPORTS_HEARTBEAT_MS: '300',
      WEBHOOKS_CONCURRENCY: '1',
      WEBHOOKS_HEARTBEAT_MS: '300',
      LOG_LEVEL: 'error',
    });
    // The only webhook worker is in the middle of a POST when Postgres goes away.
    await createdAndHeld(ws, 'Before');

    const csv = ['name,domainName.primaryLinkUrl', ...Array.from({ length: ROWS }, (_, i) => `Crash ${i},crash-${i}.example`)].join('\n');
    const id = await upload(ws, csv);
    let atCrash = 0;
    for (let crash = 1; crash <= CRASHES; crash++) {
      // Crashed while running, with some batches committed since the last crash.
      await waitUntil(
        async () => {
          const p = await progress(ws, id).catch(() => undefined);
          return p?.status === 'running' && p.done > atCrash;
        },
        30_000,
        () => `the import to go on after crash ${crash - 1} (at ${atCrash} rows)\n${api!.output().slice(-3000)}`,
      );
      await crashPostgres(async () => {
        if (crash > 1) return;
        // The webhook target answers while Postgres is down: its worker cannot record the outcome, and graphile-worker stops it.
        receiver.answerHeld();
        await waitUntil(
          () => webhookWorkerStopped(),
          15_000,
          () => `the webhook worker to stop\n${api!.output().slice(-3000)}`,
        );
      });
      atCrash = (await progress(ws, id)).done;
      expect(atCrash).toBeLessThan(ROWS);
    }

    const state = await ended(ws, id, 60_000);
    expect(state).toMatchObject({ status: 'completed', rowsRead: ROWS, created: ROWS, failed: 0, progress: 1, error: null });
    const [counts] = (
      await db.query(
        `SELECT count(*)::int AS n, count(DISTINCT name)::int AS names FROM companies WHERE workspace_id = $1 AND name LIKE 'Crash %'`,
        [ws.id],
      )
    ).rows;
    expect(counts).toEqual({ n: ROWS, names: ROWS });

    // A webhook worker delivers again: the event after the crashes arrives.
    await createCompany(ws, 'After');
    await waitUntil(
      () => receiver.receipts.some((r) => r.json?.data?.record?.name === 'After'),
      20_000,
      () => `the event after the crashes to be delivered (${receiver.receipts.length} received)\n${api!.output().slice(-3000)}`,
    );
    // An import worker runs imports again: a new one completes.
    const small = await upload(ws, ['name', ...Array.from({ length: 100 }, (_, i) => `Later ${i}`)].join('\n'));
    expect(await ended(ws, small, 20_000)).toMatchObject({ status: 'completed', created: 100 });
    const ready = await fetch(`${api.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { database: 'up', importWorkers: 'up', webhookWorkers: 'up' } });
    expect(api.child.exitCode).toBeNull();
  }, 240_000);

  it('reports not ready while a stopped worker cannot be replaced, though requests are served, and is ready again once it is', async () => {
    const ws = await workspaceWithWebhook('queue-ready');
    // The queue's connections (DATABASE_SESSION_URL) go through a TCP relay the test can cut; requests use DATABASE_URL.
    const relay = await new TcpRelay(Number(new URL(own.url).port)).open();
    try {
      const session = new URL(own.url);
      session.port = String(relay.port);
      api = await spawnApp('records-api', {
        ...TEST_WORKER_ENV,
        DATABASE_URL: own.url,
        DATABASE_SESSION_URL: session.toString(),
        IMPORTS_WORKER: 'off',
        WEBHOOKS_CONCURRENCY: '1',
        WEBHOOKS_HEARTBEAT_MS: '300',
        LOG_LEVEL: 'error',
      });
      await createdAndHeld(ws, 'Held');
      relay.cut();
      receiver.answerHeld();
      const readiness = async () => {
        const r = await fetch(`${api!.url}/health/ready`);
        return { status: r.status, body: await r.json() };
      };
      let seen: unknown;
      await waitUntil(
        async () => {
          seen = await readiness();
          return (seen as { status: number }).status === 503;
        },
        15_000,
        () => `/health/ready to turn 503 (last: ${JSON.stringify(seen)})\n${api!.output().slice(-3000)}`,
      );
      expect(seen).toEqual({ status: 503, body: { status: 'unavailable', checks: { database: 'up', webhookWorkers: 'down' } } });
      await createCompany(ws, 'Later');

      await relay.open();
      await waitUntil(
        async () => (await readiness()).status === 200,
        15_000,
        () => `/health/ready to turn 200 again\n${api!.output().slice(-3000)}`,
      );
      expect(await readiness()).toEqual({ status: 200, body: { status: 'ok', checks: { database: 'up', webhookWorkers: 'up' } } });
      await waitUntil(
        () => receiver.receipts.some((r) => r.json?.data?.record?.name === 'Later'),
        20_000,
        () => `the event written while the worker was missing to be delivered\n${api!.output().slice(-3000)}`,
      );
    } finally {
      relay.cut();
    }
  }, 90_000);

  it('an import whose job its dead workers spent (SIGKILL mid-file, its last attempt) gets a new job and completes with every row once', async () => {
    const ws = await workspace('queue-spent');
    const env = { DATABASE_URL: own.url, WEBHOOKS_WORKER: 'off', IMPORTS_WORKER: 'on', IMPORTS_HEARTBEAT_MS: '300', LOG_LEVEL: 'error' };
    api = await spawnApp('records-api', env);
    const rows = 20_000;
    const id = await upload(ws, ['name', ...Array.from({ length: rows }, (_, i) => `Spent ${i}`)].join('\n'));
    await waitUntil(
      async () => (await progress(ws, id))?.done > 0,
      30_000,
      () => `the import to start\n${api!.output().slice(-3000)}`,
    );
    api.child.kill('SIGKILL');
    await api.exited;
    // Each worker death spends an attempt that no failure records: this one was the fifth.
    const { rowCount } = await db.query(
      `UPDATE graphile_worker._private_jobs SET attempts = max_attempts WHERE payload->>'importId' = $1 AND locked_by IS NOT NULL`,
      [id],
    );
    expect(rowCount).toBe(1);
    const atDeath = (await progress(ws, id)).done;
    expect(atDeath).toBeLessThan(rows);

    api = await spawnApp('records-api', env);
    expect(await ended(ws, id, 30_000)).toMatchObject({ status: 'completed', rowsRead: rows, created: rows, failed: 0 });
    const [counts] = (
      await db.query(`SELECT count(*)::int AS n, count(DISTINCT name)::int AS names FROM companies WHERE workspace_id = $1`, [ws.id])
    ).rows;
    expect(counts).toEqual({ n: rows, names: rows });
    // The spent job went with the new one's run.
    const left = await db.query(`SELECT id FROM graphile_worker._private_jobs WHERE payload->>'importId' = $1`, [id]);
    expect(left.rows).toEqual([]);
  }, 90_000);

  it('an import whose runs keep failing without importing a row ends failed with the reason, instead of waiting on longer and longer retries', async () => {
    const ws = await workspace('queue-stuck');
    api = await spawnApp('records-api', {
      DATABASE_URL: own.url,
      WEBHOOKS_WORKER: 'off',
      IMPORTS_WORKER: 'on',
      IMPORTS_HEARTBEAT_MS: '300',
      IMPORT_RETRY_BASE_MS: '100',
      IMPORT_MAX_FAILED_RUNS: '3',
      DATABASE_STATEMENT_TIMEOUT_MS: '500',
      LOG_LEVEL: 'error',
    });
    // Every run's first INSERT waits on this lock until its statement times out.
    const locker = await db.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE companies IN SHARE MODE');
      const id = await upload(ws, ['name', ...Array.from({ length: 10 }, (_, i) => `Stuck ${i}`)].join('\n'));
      const state = await ended(ws, id, 30_000);
      expect(state).toMatchObject({ status: 'failed', rowsRead: 0, created: 0 });
      expect(state.error).toMatch(/3 runs in a row/);
      expect(state.error).toMatch(/statement timeout/);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
    }
  }, 60_000);
});

/** A TCP relay on loopback to a Postgres port: `cut` drops every connection and refuses new ones until `open` again (same port). */
class TcpRelay {
  port = 0;
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly target: number) {}

  async open(): Promise<this> {
    const server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => this.sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  cut(): void {
    this.server?.close();
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
  }
}
