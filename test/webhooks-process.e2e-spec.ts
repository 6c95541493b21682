import type { INestApplication } from '@nestjs/common';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { createRecordsApi } from '../apps/records-api/src/bootstrap.js';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { createRole } from '#identity/roles.js';
import { RECORD_OBJECTS, type ObjectPermissions } from '#database/entities/index.js';
import { dataSourceOptions } from '#database/data-source.js';
import { createWebhook } from '#webhooks/webhooks.js';
import { useEmptyDatabase } from './factories.js';
import { spawnApp, waitUntil } from './processes.js';
import { freePort, unique } from './public-origin.js';
import { Receiver, TEST_WORKER_ENV, sleep } from './webhook-receiver.js';

/**
 * Webhooks across real processes (README "Webhooks"): the operator CLI, a records API killed with
 * SIGKILL between commit and delivery or with its POSTs out, and several workers sharing one queue.
 */
const CLI = resolve(process.cwd(), 'dist/apps/cli/src/main.js');
const API = resolve(process.cwd(), 'dist/apps/records-api/src/main.js');
const DAY = 86_400_000;
process.env.LOG_LEVEL ??= 'error';

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** An in-process records API; the env applies while it is created (the worker reads it at bootstrap). */
async function recordsApi(env: Record<string, string>): Promise<INestApplication> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const app = await createRecordsApi();
    await app.init();
    return app;
  } finally {
    process.env = saved;
  }
}

describe('Webhooks across processes', () => {
  // A database of its own: the in-process records APIs of suites running alongside are
  // webhook workers on the shared database (without WEBHOOKS_ALLOW_PRIVATE nor short
  // retries), and one taking these jobs would put them off by minutes.
  const db = useEmptyDatabase('webhooks_process');
  const sharedUrl = process.env.DATABASE_URL;
  let ds: DataSource;

  beforeAll(async () => {
    process.env.DATABASE_URL = db.url;
    ds = new DataSource(dataSourceOptions(db.url, 4));
    await ds.initialize();
    db.beforeDrop(() => ds.destroy());
  });

  afterAll(() => {
    process.env.DATABASE_URL = sharedUrl;
  });

  async function workspaceWithKey(label: string) {
    const workspace = await createWorkspace(ds, unique(label));
    const role = await findRole(ds, workspace.id, 'Admin');
    const key = await createApiKey(ds, { workspaceId: workspace.id, role, name: 'k', expiresAt: new Date(Date.now() + DAY) });
    return { workspace, key: key.secret };
  }

  it('webhook:create | list | delete with --json, as docs/webhooks.md shows; bad input exits non-zero with the error object', async () => {
    const { workspace } = await workspaceWithKey('wh-cli');
    const created = await cli([
      'webhook:create',
      '--workspace',
      workspace.name,
      '--url',
      'https://hooks.example.com/in',
      '--operations',
      'company.*,person.created',
      '--description',
      'ops',
      '--json',
    ]);
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    expect(created.stdout.trim().split('\n')).toHaveLength(1);
    const hook = JSON.parse(created.stdout);
    expect(hook).toEqual({
      id: expect.any(String),
      url: 'https://hooks.example.com/in',
      operations: ['company.*', 'person.created'],
      secret: expect.stringMatching(/^whsec_/),
    });

    const listed = await cli(['webhook:list', '--workspace', workspace.id, '--json']);
    expect(listed.code).toBe(0);
    const list = JSON.parse(listed.stdout);
    expect(list.webhooks).toEqual([
      expect.objectContaining({ id: hook.id, url: hook.url, operations: hook.operations, enabled: true, description: 'ops' }),
    ]);
    expect(listed.stdout).not.toContain(hook.secret);

    for (const [args, message] of [
      [['--url', 'http://hooks.example.com/in'], /url must be https/],
      [['--url', 'https://127.0.0.1/in'], /private/],
      [['--url', 'https://hooks.example.com/in', '--operations', 'company.exploded'], /unknown pattern/],
      [['--url', 'https://hooks.example.com/in', '--operations', ','], /at least one pattern/],
      [['--url', 'https://hooks.example.com/in', '--description', 'x'.repeat(501)], /at most 500/],
    ] as const) {
      const bad = await cli(['webhook:create', '--workspace', workspace.id, ...args, '--json'], { WEBHOOKS_ALLOW_PRIVATE: '' });
      expect(bad.code).not.toBe(0);
      expect(JSON.parse(bad.stdout).error).toEqual({ code: 'VALIDATION_FAILED', message: expect.stringMatching(message) });
      expect(bad.stderr).toMatch(/^error: /);
    }
    // A workspace has at most 20 webhooks.
    for (let i = 1; i < 20; i++)
      await createWebhook(ds, workspace.id, { url: `https://hooks.example.com/more/${i}` }, { allowPrivate: false });
    const over = await cli(['webhook:create', '--workspace', workspace.id, '--url', 'https://hooks.example.com/one-too-many', '--json']);
    expect(over.code).not.toBe(0);
    expect(JSON.parse(over.stdout).error).toEqual({ code: 'CONFLICT', message: expect.stringMatching(/at most 20 webhooks/) });
    await ds.query("DELETE FROM webhooks WHERE workspace_id = $1 AND url LIKE 'https://hooks.example.com/more/%'", [workspace.id]);
    const missing = await cli(['webhook:delete', '--id', '00000000-0000-4000-8000-000000000000', '--json']);
    expect(JSON.parse(missing.stdout).error.code).toBe('NOT_FOUND');

    const deleted = await cli(['webhook:delete', '--id', hook.id, '--json']);
    expect(JSON.parse(deleted.stdout)).toEqual({ id: hook.id, deleted: true });
    expect(JSON.parse((await cli(['webhook:list', '--workspace', workspace.id, '--json'])).stdout).webhooks).toEqual([]);
    const audit = await ds.query('SELECT action, actor_email FROM audit_log WHERE workspace_id = $1 ORDER BY created_at', [workspace.id]);
    expect(audit).toEqual([
      { action: 'webhook.create', actor_email: 'operator (CLI)' },
      { action: 'webhook.delete', actor_email: 'operator (CLI)' },
    ]);
  }, 120_000);

  it('webhook:create --role names the role it delivers as (Admin by default), and webhook:list shows it', async () => {
    const { workspace } = await workspaceWithKey('wh-cli-role');
    const objectPermissions = Object.fromEntries(
      RECORD_OBJECTS.map((o) => [o, { read: o !== 'people', create: false, update: false, delete: false }]),
    ) as ObjectPermissions;
    const role = await createRole(ds, workspace.id, {
      name: 'No people',
      description: '',
      objectPermissions,
      settingsPermissions: [],
      assignableToUsers: false,
      assignableToApiKeys: true,
    });
    const create = (...args: string[]) =>
      cli(['webhook:create', '--workspace', workspace.id, '--url', 'https://hooks.example.com/role', ...args, '--json']);
    const plain = JSON.parse((await create()).stdout);
    const narrowed = await create('--role', 'no people');
    expect({ code: narrowed.code, stderr: narrowed.stderr }).toEqual({ code: 0, stderr: '' });
    const hook = JSON.parse(narrowed.stdout);
    const unknown = await create('--role', 'Nobody');
    expect(unknown.code).not.toBe(0);
    expect(JSON.parse(unknown.stdout).error).toEqual({ code: 'NOT_FOUND', message: expect.stringMatching(/No role "Nobody"/) });

    const list = JSON.parse((await cli(['webhook:list', '--workspace', workspace.id, '--json'])).stdout).webhooks;
    const admin = await findRole(ds, workspace.id, 'Admin');
    expect(list.map((w: any) => [w.id, w.role])).toEqual([
      [plain.id, { id: admin.id, name: 'Admin' }],
      [hook.id, { id: role.id, name: 'No people' }],
    ]);
    const text = await cli(['webhook:list', '--workspace', workspace.id]);
    expect(text.stdout).toMatch(new RegExp(`${hook.id} .* as No people`));
    const audit = await ds.query(
      `SELECT details FROM audit_log WHERE workspace_id = $1 AND action = 'webhook.create' ORDER BY created_at`,
      [workspace.id],
    );
    expect(audit.map((a: any) => a.details.role)).toEqual(['Admin', 'No people']);
  }, 60_000);

  it('a records API killed (SIGKILL) right after its commits loses no event, and no event exists without its record', async () => {
    const { workspace, key } = await workspaceWithKey('wh-kill');
    const receiver = await new Receiver().start();
    const hook = await createWebhook(ds, workspace.id, { url: receiver.url, operations: ['company.created'] }, { allowPrivate: true });
    const port = await freePort();
    // The API that takes the writes delivers nothing itself: everything it committed is still waiting when it dies.
    const child: ChildProcess = spawn(process.execPath, [API], {
      env: {
        ...process.env,
        PORT: String(port),
        AUTH_PORT: String(await freePort()),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        AUTH_PROXY: 'off',
        WEBHOOKS_WORKER: 'off',
        RATE_LIMIT_PER_MINUTE: '0',
        RATE_LIMIT_PER_WORKSPACE_PER_MINUTE: '0',
        LOG_LEVEL: 'error',
      },
      stdio: 'ignore',
    });
    let worker: INestApplication | undefined;
    try {
      const base = `http://127.0.0.1:${port}`;
      for (let i = 0; ; i++) {
        const up = await fetch(`${base}/health/ready`).then(
          (r) => r.ok,
          () => false,
        );
        if (up) break;
        if (i > 300) throw new Error('the records API did not start within 30 s');
        await sleep(100);
      }
      let acknowledged = 0;
      const acknowledgedIds: string[] = [];
      const writes = Array.from({ length: 40 }, (_, i) =>
        fetch(`${base}/rest/companies`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Crash ${i}` }),
        })
          .then(async (r) => {
            if (r.status === 201) {
              acknowledged++;
              acknowledgedIds.push(((await r.json()) as any).data.createCompany.id);
            }
          })
          .catch(() => undefined),
      );
      while (acknowledged < 10) await sleep(5);
      const exited = new Promise<NodeJS.Signals | null>((done) => child.once('exit', (_code, signal) => done(signal)));
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      await Promise.all(writes);
      // The killed API delivered nothing itself (WEBHOOKS_WORKER=off); a worker of a suite
      // running alongside on the same database may already be delivering, as another
      // instance would in production. What counts is what has arrived once a worker is up.

      // Events the killed API committed but had not queued yet are found by the worker's heartbeat
      // sweep (webhooks.md "Delivery"): every 300 ms here, for deliveries a second without a job.
      worker = await recordsApi({ ...TEST_WORKER_ENV, WEBHOOKS_HEARTBEAT_MS: '300', WEBHOOKS_STRANDED_AFTER_MS: '1000' });
      const rows: { id: string }[] = await ds.query('SELECT id FROM companies WHERE workspace_id = $1', [workspace.id]);
      expect(rows.length).toBeGreaterThanOrEqual(acknowledgedIds.length);
      await receiver.waitFor(rows.length);
      await sleep(1500);
      const events = receiver.verified(hook.secret) as any[];
      const delivered = events.map((e) => e.data.record.id);
      expect(new Set(delivered).size).toBe(delivered.length);
      expect(delivered.sort()).toEqual(rows.map((r) => r.id).sort());
      for (const id of acknowledgedIds) expect(delivered).toContain(id);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await worker?.close();
      await receiver.close();
    }
  }, 120_000);

  it('a records API killed (SIGKILL) while its POSTs are out: every event is delivered within a minute of the restart', async () => {
    const { workspace, key } = await workspaceWithKey('wh-strand');
    const receiver = await new Receiver().start();
    receiver.hang = true;
    const hook = await createWebhook(ds, workspace.id, { url: receiver.url, operations: ['company.created'] }, { allowPrivate: true });
    // A heartbeat every 300 ms: the killed worker counts as dead after a second, not after 30 s.
    const env = { ...TEST_WORKER_ENV, WEBHOOKS_HEARTBEAT_MS: '300' };
    let api = await spawnApp('records-api', env);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await fetch(`${api.url}/rest/companies`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Stranded ${i}` }),
        });
        expect(res.status).toBe(201);
        ids.push(((await res.json()) as any).data.createCompany.id);
      }
      await waitUntil(
        () => receiver.hung >= 4,
        15_000,
        () => `4 POSTs held open, got ${receiver.hung}`,
      );
      api.child.kill('SIGKILL');
      expect((await api.exited).signal).toBe('SIGKILL');
      receiver.hang = false;

      api = await spawnApp('records-api', env);
      const restarted = Date.now();
      await waitUntil(
        () => new Set(receiver.receipts.map((r) => r.json?.data?.record?.id)).size >= ids.length,
        60_000,
        () => `${ids.length} events delivered after the restart, got ${receiver.receipts.length}: ${api.output()}`,
      );
      expect(Date.now() - restarted).toBeLessThan(60_000);
      const delivered = (receiver.verified(hook.secret) as any[]).map((e) => e.data.record.id);
      expect([...new Set(delivered)].sort()).toEqual([...ids].sort());
      const undelivered = async () =>
        (
          await ds.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE workspace_id = $1 AND status <> 'delivered'`, [
            workspace.id,
          ])
        )[0].n as number;
      await waitUntil(
        async () => (await undelivered()) === 0,
        10_000,
        () => 'every delivery recorded as delivered',
      );
    } finally {
      api.child.kill('SIGKILL');
      await api.exited;
      await receiver.close();
    }
  }, 120_000);

  it('two workers never deliver the same attempt twice, even with every job queued twice', async () => {
    const { workspace, key } = await workspaceWithKey('wh-two');
    const receiver = await new Receiver().start();
    const hook = await createWebhook(ds, workspace.id, { url: receiver.url, operations: ['*.*'] }, { allowPrivate: true });
    const writer = await recordsApi({ WEBHOOKS_WORKER: 'off' });
    let a: INestApplication | undefined;
    let b: INestApplication | undefined;
    try {
      await writer.listen(0, '127.0.0.1');
      const base = await writer.getUrl();
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${base.replace('[::1]', '127.0.0.1')}/rest/batch/people`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(Array.from({ length: 20 }, (_, j) => ({ name: { firstName: `P${i}-${j}` } }))),
        });
        expect(res.status).toBe(201);
      }
      // At-least-once queues may hand out a job twice: queue every delivery's job once more.
      const [{ n }] = await ds.query(
        `SELECT count(graphile_worker.add_job('webhook_deliver', json_build_object('workspaceId', workspace_id, 'deliveryId', id, 'attempt', 1))) AS n
           FROM webhook_deliveries WHERE workspace_id = $1`,
        [workspace.id],
      );
      expect(Number(n)).toBe(60);
      [a, b] = await Promise.all([
        recordsApi({ ...TEST_WORKER_ENV, WEBHOOKS_CONCURRENCY: '4' }),
        recordsApi({ ...TEST_WORKER_ENV, WEBHOOKS_CONCURRENCY: '4' }),
      ]);
      await receiver.waitFor(60);
      await sleep(2000);
      const ids = receiver.receipts.map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(60);
      expect(new Set(ids).size).toBe(60);
      receiver.verified(hook.secret);
      const [{ attempts }] = await ds.query('SELECT count(*)::int AS attempts FROM webhook_attempts WHERE workspace_id = $1', [
        workspace.id,
      ]);
      expect(attempts).toBe(60);
      // Jobs put back while the workspace was at its share run within 5 s of a free slot, find their delivery done, and leave.
      const jobsLeft = async () =>
        (
          await ds.query(
            `SELECT count(*)::int AS left FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
              WHERE t.identifier = 'webhook_deliver' AND j.payload->>'workspaceId' = $1`,
            [workspace.id],
          )
        )[0].left as number;
      await waitUntil(async () => (await jobsLeft()) === 0, 15_000).catch(() => undefined);
      expect(await jobsLeft()).toBe(0);
      expect(receiver.receipts).toHaveLength(60);
    } finally {
      await a?.close();
      await b?.close();
      await writer.close();
      await receiver.close();
    }
  }, 120_000);
});
