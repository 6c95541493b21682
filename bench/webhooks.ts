import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import os from 'node:os';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { createWebhook } from '#webhooks/webhooks.js';
import { startChild } from './children.js';

/**
 * `npm run bench -- --webhooks`: webhook delivery latency under write load. The records API
 * (worker on, in its own process) takes POST /rest/companies from autocannon at 16
 * connections; every create is an event delivered to a receiver in a third process. The
 * latency of an event is its arrival at the receiver minus its `occurredAt` (taken by the
 * records API as the create's one statement is sent), and its arrival minus the create's answer.
 * BENCH_SEPARATE_WORKER=1 delivers from a second records API process instead (the one under
 * load has WEBHOOKS_WORKER=off). Database: records_bench_webhooks.
 */
/** BENCH_CONNECTIONS=<n> writers (default 16). */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS) || 16;
const DURATION_S = Number(process.env.BENCH_DURATION) || 10;
/**
 * `BENCH_WARMUP=<s>` (default 2; 0 for none): the same load first, unmeasured, until its events
 * are delivered. Without it a paced run's p99 (its 4th-slowest of ~350 events) was the first
 * burst's, in a process whose code had not been compiled yet.
 */
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 2);
/** `BENCH_RATE=<creates per second>` paces the writers (autocannon's overallRate); unset: as fast as they go. */
const RATE = Number(process.env.BENCH_RATE) || undefined;
/** BENCH_WEBHOOKS_DB=<name> for another (two checkouts whose migrations differ). */
const DB = process.env.BENCH_WEBHOOKS_DB || 'records_bench_webhooks';
const log = (m: string) => console.log(m);

const ms = (x: number) => `${Math.round(x)} ms`;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

export async function webhookBench(): Promise<void> {
  const { url, embedded } = await resolveDatabaseUrl(log);
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${DB}`;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  // Emptied below rather than dropped: DROP DATABASE waits for every backend of the server to
  // answer a barrier, which one stuck on a slow client never does.
  if (!/^[a-z_][a-z0-9_]*$/.test(DB)) throw new Error(`unexpected database name "${DB}"`);
  const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB]);
  if (!found.rowCount) await client.query(`CREATE DATABASE ${DB}`);
  await client.end();

  const ds = new DataSource(dataSourceOptions(dbUrl.toString(), 2));
  await ds.initialize();
  await runMigrations(ds);
  await ds.query('TRUNCATE workspaces, users CASCADE');
  await ds.query('TRUNCATE graphile_worker._private_jobs CASCADE');
  const workspace = await createWorkspace(ds, 'Bench Webhooks');
  const role = await findRole(ds, workspace.id, 'Admin');
  const key = await createApiKey(ds, { workspaceId: workspace.id, role, name: 'bench', expiresAt: new Date(Date.now() + 86_400_000) });

  const children: ChildProcess[] = [];
  try {
    const receiver = await startChild<{ port: number }>('./webhook-receiver.js', {});
    children.push(receiver.child);
    await createWebhook(
      ds,
      workspace.id,
      { url: `http://127.0.0.1:${receiver.message.port}/hook`, operations: ['company.created'] },
      { allowPrivate: true },
    );
    // BENCH_SEPARATE_WORKER=1: the records API under load only writes (WEBHOOKS_WORKER=off) and a
    // second records API process, which takes no requests, delivers.
    const separate = process.env.BENCH_SEPARATE_WORKER === '1';
    const apiEnv = { DATABASE_URL: dbUrl.toString(), WEBHOOKS_ALLOW_PRIVATE: '1', LOG_LEVEL: 'warn' };
    const api = await startChild<{ port: number }>('./api-server.js', { ...apiEnv, ...(separate ? { WEBHOOKS_WORKER: 'off' } : {}) });
    children.push(api.child);
    if (separate) children.push((await startChild<{ port: number }>('./api-server.js', apiEnv)).child);
    log(
      `Webhook latency bench: POST /rest/companies at ${CONNECTIONS} connections${RATE ? `, ${RATE} per second in all,` : ''} for ${DURATION_S} s; one webhook on company.created; ` +
        `delivered by ${separate ? 'another records API process (BENCH_SEPARATE_WORKER=1)' : 'the same process'}; database ${DB}${embedded ? ' (embedded PostgreSQL)' : ''}.`,
    );
    const load = (duration: number) => ({
      url: `http://127.0.0.1:${api.message.port}/rest/companies`,
      method: 'POST' as const,
      connections: CONNECTIONS,
      duration,
      ...(RATE ? { overallRate: RATE } : {}),
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench Hooks' }),
    });
    // What the receiver holds ('report'), or holds after forgetting it all ('reset').
    const report = (message: 'report' | 'reset' = 'report') =>
      new Promise<{ receivedAt: number; occurredAt: string; headers: Record<string, unknown>; body: string }[]>((resolve) => {
        receiver.child.once('message', (m: any) => resolve(m.receipts));
        receiver.child.send(message);
      });
    const eventCount = async () =>
      ((await ds.query('SELECT count(*)::int AS n FROM webhook_events WHERE workspace_id = $1', [workspace.id])) as { n: number }[])[0].n;
    // Waits (at most 60 s) until the receiver holds `n` events, and returns them.
    const delivered = async (n: number) => {
      let receipts = await report();
      for (let i = 0; i < 600 && receipts.length < n; i++) {
        await new Promise((r) => setTimeout(r, 100));
        receipts = await report();
      }
      return receipts;
    };
    let warmupEvents = 0;
    if (WARMUP_S > 0) {
      await autocannon(load(WARMUP_S));
      await new Promise((r) => setTimeout(r, 1000));
      warmupEvents = await eventCount();
      await delivered(warmupEvents);
      await report('reset');
      log(`Warm-up: ${WARMUP_S} s of the same load first, ${warmupEvents} events, not counted below.`);
    }
    const loadBefore = os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ');
    const answeredAt = new Map<string, number>();
    // …and when its request was sent: the answer's time less autocannon's response time, which
    // autocannon reports (its 'response' event) just after the body (onResponse), in the same tick.
    const sentAt = new Map<string, number>();
    let answered: string | undefined;
    const run = autocannon({
      ...load(DURATION_S),
      requests: [
        {
          // When each create's answer arrived, by record id: its transaction had committed by then.
          onResponse: (status, body) => {
            if (status !== 201) return;
            answered = JSON.parse(body).data.createCompany.id as string;
            answeredAt.set(answered, Date.now());
          },
        },
      ],
    });
    // autocannon's result is also its event emitter, which its types leave out.
    (run as unknown as EventEmitter).on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
      if (answered !== undefined) sentAt.set(answered, answeredAt.get(answered)! - responseTime);
      answered = undefined;
    });
    const result = await run;
    // Requests still in flight when autocannon stops commit a moment later: count after a pause.
    await new Promise((r) => setTimeout(r, 1000));
    const n = (await eventCount()) - warmupEvents;
    // Wait for the queue to drain (at most 60 s).
    const receipts = await delivered(n);
    const summary = (xs: number[]) => {
      xs.sort((a, b) => a - b);
      return `p50 ${ms(percentile(xs, 50))}, p90 ${ms(percentile(xs, 90))}, p99 ${ms(percentile(xs, 99))}, max ${ms(xs[xs.length - 1])}`;
    };
    const latencies = receipts.map((r) => r.receivedAt - Date.parse(r.occurredAt));
    log(
      `Load average before the run: ${loadBefore}; after: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(', ')} (${os.availableParallelism()} cores).`,
    );
    log(
      `Writes: ${result.requests.total} requests, ${result.requests.total - result.non2xx} created, ${Math.round(result.requests.average)} req/s (p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms).`,
    );
    log(
      `Events committed: ${n}; delivered: ${receipts.length}; unique ids: ${new Set(receipts.map((r) => r.headers['webhook-id'])).size}.`,
    );
    log(`Delivery latency, commit → receipt: ${summary(latencies)}.`);
    const recordIds: string[] = receipts.map((r) => JSON.parse(r.body).data.record.id);
    const sinceEach = (label: string, startedAt: Map<string, number>) => {
      const xs = receipts.map((r, i) => r.receivedAt - (startedAt.get(recordIds[i]) ?? NaN)).filter((x) => !Number.isNaN(x));
      if (xs.length) log(`Delivery latency, ${label} → receipt (${xs.length} events): ${summary(xs)}.`);
    };
    // From the create's answer instead, without the time between occurredAt (taken as the
    // statement is sent) and the COMMIT, which includes waiting for other writers' commits.
    sinceEach("the create's answer", answeredAt);
    // What a client sees end to end: from sending the create to the event's receipt.
    sinceEach("the create's request sent", sentAt);
    // Where the time after the answer goes: from the answer to the POST's start (the job's fetch and claim;
    // `webhook_attempts.attempted_at` is taken by the worker just before it sends), and from
    // there to the receipt (the POST itself, and the receiver's turn).
    const attempts: { event_id: string; attempted_at: Date; record_id: string }[] = await ds.query(
      `SELECT d.event_id, a.attempted_at, e.payload->'data'->'record'->>'id' AS record_id
         FROM webhook_attempts a
         JOIN webhook_deliveries d ON d.workspace_id = a.workspace_id AND d.id = a.delivery_id
         JOIN webhook_events e ON e.workspace_id = d.workspace_id AND e.id = d.event_id
        WHERE a.workspace_id = $1 AND a.attempt = 1`,
      [workspace.id],
    );
    const receivedAt = new Map(receipts.map((r) => [String(r.headers['webhook-id']), r.receivedAt]));
    const toPost: number[] = [];
    const posting: number[] = [];
    for (const a of attempts) {
      const answer = answeredAt.get(a.record_id);
      const received = receivedAt.get(a.event_id);
      if (answer === undefined || received === undefined) continue;
      toPost.push(a.attempted_at.getTime() - answer);
      posting.push(received - a.attempted_at.getTime());
    }
    if (toPost.length) {
      log(`  of which the answer → the POST's start: ${summary(toPost)};`);
      log(`  and the POST's start → receipt: ${summary(posting)}.`);
    }
    const sample = receipts[receipts.length - 1];
    if (sample) {
      const h = sample.headers;
      log('A delivery as received:');
      for (const name of ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent'])
        log(`  ${name}: ${h[name]}`);
      log(`  ${sample.body}`);
    }
  } finally {
    for (const child of children) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    }
    await ds.destroy();
    await embedded?.stop();
  }
}
