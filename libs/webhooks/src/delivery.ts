import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { AppError } from '#errors/errors.js';
import { valuesForDelivery } from '#identity/vault.js';
import { assertNotLiteralSpecialUse, publicOnlyLookup } from '#net/public-address.js';
import { referencedNames, resolveHeaders, type WebhookHeader } from './headers.js';
import { RoleViews, type DeliveryRole } from './role-view.js';
import type { WebhookSettings } from './settings.js';
import { DELIVER_TASK } from './webhook-outbox.js';
import { openSecret } from './webhooks.js';
import type { WorkspaceShares } from './workspace-shares.js';

const EXCERPT_BYTES = 1024;
/** The most POSTs one job sends at once: its own attempt and the waiting ones it takes along (BATCH_EXTRA_MAX). */
const MOST_POSTS_PER_JOB = 16;
/**
 * Connections to webhook targets are kept for the next POST to the same host and port: a
 * burst of events costs one connection per target and POST of a job instead of one per
 * event. An idle one is closed after 1 s, before any usual server-side keep-alive timeout
 * (Node's 5 s, nginx's 75 s), and as many idle ones are kept per target as one job sends
 * POSTs at once, so the next job's reuse them all (with 4 kept, each burst of 16 opened 12
 * new connections: docs/benchmark.md). The address check (`publicOnlyLookup`) runs on every
 * new connection, so a kept one was checked when made.
 */
const KEEP_ALIVE = { keepAlive: true, maxFreeSockets: MOST_POSTS_PER_JOB, timeout: 1000 };
/** By protocol, and apart for public-only and private-allowed POSTs, so a connection made under one rule never serves the other. */
const AGENTS = {
  public: { 'http:': new HttpAgent(KEEP_ALIVE), 'https:': new HttpsAgent(KEEP_ALIVE) },
  private: { 'http:': new HttpAgent(KEEP_ALIVE), 'https:': new HttpsAgent(KEEP_ALIVE) },
};
/** What a kept connection closed by the target gives when it is written to. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE']);

export interface PostResult {
  statusCode: number | null;
  durationMs: number;
  /** The first KB of the answer; null when none was kept (`keepAnswer: false`). */
  excerpt: string | null;
  error: string | null;
}

/**
 * One POST of a signed event (Standard Webhooks: `Webhook-Id`, `Webhook-Timestamp`,
 * `Webhook-Signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`). No redirect
 * is followed (a 3xx is a failure); `timeoutMs` bounds the whole exchange; only the first
 * KB of the answer is kept. Without `allowPrivate` the target must be https and every
 * address connected to public (checked in the socket's lookup, so DNS rebinding fails).
 * `headers` (custom, vault values filled in) go first, so ours win. With `keepAnswer: false`
 * (the POST carried vault values) nothing of the answer is kept: a receiver can echo a
 * secret in any encoding, so no redaction of the text could be trusted
 * (docs/decisions/0049-webhooks-vault-and-read-permissions.md).
 */
export function postEvent(
  url: string,
  o: {
    eventId: string;
    body: string;
    secret: string;
    timeoutMs: number;
    allowPrivate: boolean;
    now?: Date;
    headers?: Record<string, string>;
    keepAnswer?: boolean;
    /** Not a kept connection (the retry after one failed). */
    freshConnection?: boolean;
  },
): Promise<PostResult> {
  const started = performance.now();
  const done = (r: Omit<PostResult, 'durationMs'>): PostResult => ({ ...r, durationMs: Math.round(performance.now() - started) });
  const now = o.now ?? new Date();
  let target: URL;
  try {
    target = new URL(url);
    if (!o.allowPrivate) {
      if (target.protocol !== 'https:') throw new Error('only https targets are allowed (WEBHOOKS_ALLOW_PRIVATE=1 allows http)');
      assertNotLiteralSpecialUse(target);
    } else if (!['http:', 'https:'].includes(target.protocol)) throw new Error(`unsupported protocol ${target.protocol}`);
  } catch (err) {
    return Promise.resolve(done({ statusCode: null, excerpt: o.keepAnswer === false ? null : '', error: (err as Error).message }));
  }
  const headers = {
    ...o.headers,
    'content-type': 'application/json',
    'user-agent': 'workspace-records-webhooks/1',
    'webhook-id': o.eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(o.secret).sign(o.eventId, now, o.body),
    'content-length': String(Buffer.byteLength(o.body)),
  };
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    let answered = false;
    const finish = (r: Omit<PostResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      resolve(done(r));
    };
    const req = request(
      target,
      {
        method: 'POST',
        headers,
        signal: AbortSignal.timeout(o.timeoutMs),
        lookup: o.allowPrivate ? undefined : publicOnlyLookup,
        // A retry after a kept connection failed takes a new one (below).
        agent: o.freshConnection ? false : AGENTS[o.allowPrivate ? 'private' : 'public'][target.protocol as 'http:' | 'https:'],
      },
      (res: IncomingMessage) => {
        answered = true;
        const chunks: Buffer[] = [];
        const keep = o.keepAnswer === false ? 0 : EXCERPT_BYTES;
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < keep) chunks.push(chunk.subarray(0, keep - size));
          size += chunk.length;
        });
        const excerpt = () => (o.keepAnswer === false ? null : Buffer.concat(chunks).toString('utf8'));
        const end = () => finish({ statusCode: res.statusCode ?? null, excerpt: excerpt(), error: null });
        res.on('end', end);
        res.on('error', end);
        res.on('aborted', end);
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A kept connection the target closed as it was reused fails before any answer: the
      // POST is made once more on a new connection, within what is left of the timeout.
      const left = Math.floor(o.timeoutMs - (performance.now() - started));
      if (req.reusedSocket && !answered && !settled && STALE_CONNECTION.has(err.code ?? '') && left >= 1) {
        settled = true;
        void postEvent(url, { ...o, now, timeoutMs: left, freshConnection: true }).then((r) => resolve(done(r)));
        return;
      }
      finish({
        statusCode: null,
        excerpt: o.keepAnswer === false ? null : '',
        error: err.name === 'TimeoutError' || err.name === 'AbortError' ? `no answer within ${o.timeoutMs / 1000} s` : err.message,
      });
    });
    req.end(o.body);
  });
}

/** The wait before attempt `attempt + 1`: base × 2^(attempt−1), capped at 120 × base (1 h by default), ±20 % jitter. */
export function retryDelayMs(attempt: number, baseMs: number, random = Math.random): number {
  const plain = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), baseMs * 120);
  return Math.round(plain * (0.8 + 0.4 * random()));
}

interface Claimed {
  id: string;
  attempts: number;
  webhook_id: string;
  event_id: string;
  type: string;
  manual: boolean;
  created_at: Date;
  url: string;
  secret_sealed: string;
  headers: WebhookHeader[];
  enabled: boolean;
  failing_since: Date | null;
  body: string;
  role_id: string | null;
  role: DeliveryRole | null;
  /** The active object of the workspace the event type names (`company.created` → `companies`); null for other events. */
  object: string | null;
}

export interface DeliverJob {
  workspaceId: string;
  deliveryId: string;
  attempt: number;
  /** How often this attempt was put back because its workspace had its share of slots in flight. */
  deferrals?: number;
}

/** Statements on a pool: each takes a connection for itself only, so none is held across the POST. */
export type DeliveryPool = Pick<Pool, 'query' | 'connect'>;

/**
 * How long past the POST's timeout a claim holds at most: a claim whose job vanished without
 * an outcome (it cannot, short of a database restore) frees its delivery after this.
 */
const CLAIM_MARGIN_MS = 30_000;
/**
 * A deferred attempt is looked at again as soon as a slot of its workspace is given back in
 * this process, and otherwise after 100 ms, doubling up to 5 s (±20 %): a busy workspace's
 * backlog costs a job fetch per deferred attempt every 5 s at most while the share stays full.
 */
const DEFER_BASE_MS = 100;
const DEFER_MAX_MS = 5_000;
/**
 * At most this many other first attempts of its workspace one job sends with its own: a
 * slot holds at most 16 POSTs, and a job's outcomes wait for its slowest answer.
 */
const BATCH_EXTRA_MAX = MOST_POSTS_PER_JOB - 1;
/**
 * …and whose bodies come to at most this many bytes together: an event can be 2 MB (a
 * record of a 1 MB body and its previous values), and a job holds its bodies until its
 * POSTs are done, so a tenant's large records cost a slot about what they did one by one.
 */
const BATCH_EXTRA_BYTES = 1024 * 1024;

/**
 * A claim of delivery `d` taken with its webhook `w` and event `e`: what the attempt needs, as
 * the claims return it, with the role the webhook delivers as, read now (null: deleted), so
 * the attempt sends what the role reads at this moment (role-view.ts), and the plural name of
 * the event's object as the workspace's metadata says it now: a custom object's events are
 * cut by the permissions on that name, and an object deactivated or deleted since sends none.
 */
const CLAIMED = {
  from: 'webhooks w, webhook_events e',
  join: 'w.workspace_id = d.workspace_id AND w.id = d.webhook_id AND e.workspace_id = d.workspace_id AND e.id = d.event_id',
  columns: `d.id, d.attempts, d.job_id, d.webhook_id, d.event_id, e.type, d.manual, d.created_at, w.url, w.secret_sealed, w.headers, w.enabled, w.failing_since, e.payload::text AS body, w.role_id,
    (SELECT json_build_object('name', r.name, 'objects', r.object_permissions, 'fields', r.field_permissions)
       FROM roles r WHERE r.workspace_id = d.workspace_id AND r.id = w.role_id) AS role,
    (SELECT o.name_plural FROM objects o
      WHERE o.workspace_id = d.workspace_id AND o.name_singular = split_part(e.type, '.', 1) AND o.is_active) AS object`,
};

/** Delivery `d` is not claimed by another job whose claim is current; `job` is the parameter naming this job. */
const claimableBy = (job: string) => `(d.claimed_until IS NULL OR d.claimed_until < now() OR d.claim_job = ${job}::bigint)`;

/** A first attempt that waits: pending, never tried, claimable by this job ($3). */
const WAITING = `d.status = 'pending' AND d.attempts = 0 AND d.next_attempt_at IS NULL AND ${claimableBy('$3')}`;

/**
 * Step 1 below, one statement: the claim of the job's own attempt ($2, at attempt $4 + 1;
 * a disabled webhook's is cancelled instead), and of up to $6 other waiting first attempts
 * of the workspace (enabled webhooks only), oldest first, whose bodies come to $7 bytes at
 * most; their own jobs are taken off the queue (a job already running is left to find its
 * attempt claimed). The own attempt comes back first, with `own`. `unqueued` is named in the
 * last SELECT only so that Postgres runs it: a CTE that modifies nothing runs only when used.
 */
const CLAIM = `WITH mine AS (
    UPDATE webhook_deliveries d
       SET claim_job = CASE WHEN w.enabled THEN $3::bigint END,
           claimed_until = CASE WHEN w.enabled THEN now() + $5 * interval '1 millisecond' END,
           status = CASE WHEN w.enabled THEN d.status ELSE 'cancelled' END,
           next_attempt_at = CASE WHEN w.enabled THEN d.next_attempt_at END
      FROM ${CLAIMED.from}
     WHERE d.workspace_id = $1 AND d.id = $2 AND d.status = 'pending' AND d.attempts = $4 AND ${claimableBy('$3')}
       AND ${CLAIMED.join}
    RETURNING ${CLAIMED.columns}
  ), oldest AS MATERIALIZED (
    SELECT x.id, sum(octet_length(e.payload::text)) OVER (ORDER BY x.created_at, x.id) AS bytes
      FROM (SELECT d.id, d.created_at, d.webhook_id, d.event_id FROM webhook_deliveries d
             WHERE d.workspace_id = $1 AND d.id <> $2 AND ${WAITING}
             ORDER BY d.created_at
             LIMIT $6) x
      JOIN webhooks w ON w.workspace_id = $1 AND w.id = x.webhook_id AND w.enabled
      JOIN webhook_events e ON e.workspace_id = $1 AND e.id = x.event_id
  ), picked AS (
    SELECT d.id FROM oldest o JOIN webhook_deliveries d ON d.workspace_id = $1 AND d.id = o.id
     WHERE o.bytes <= $7 AND ${WAITING}
     FOR UPDATE OF d SKIP LOCKED
  ), along AS (
    UPDATE webhook_deliveries d SET claim_job = $3::bigint, claimed_until = now() + $5 * interval '1 millisecond'
      FROM picked p, ${CLAIMED.from}
     WHERE d.workspace_id = $1 AND d.id = p.id AND ${CLAIMED.join}
    RETURNING ${CLAIMED.columns}
  ), unqueued AS (
    SELECT count(*) AS n FROM graphile_worker.complete_jobs(ARRAY(SELECT a.job_id FROM along a WHERE a.job_id IS NOT NULL))
  )
  SELECT true AS own, m.* FROM mine m
  UNION ALL
  SELECT false, a.* FROM along a WHERE (SELECT n FROM unqueued) IS NOT NULL`;

/**
 * The final outcome of every attempt of one job that ended its delivery: `delivered` (a
 * 2xx), or `skipped` (nothing the webhook's role may read, so nothing sent; its reason in
 * the log, and the failure streak left as it is). Deliveries, attempt log, failure streaks.
 */
const RECORD_ENDED = `WITH input AS (
    SELECT * FROM unnest($3::uuid[], $4::int[], $5::timestamptz[], $6::int[], $7::int[], $8::text[], $9::text[], $10::text[])
      AS i(id, attempt, attempted_at, status_code, duration_ms, excerpt, status, error)
  ), d AS (
    UPDATE webhook_deliveries x
       SET status = i.status, attempts = i.attempt, delivered_at = CASE WHEN i.status = 'delivered' THEN now() END,
           next_attempt_at = NULL, claim_job = NULL, claimed_until = NULL
      FROM input i
     WHERE x.workspace_id = $1 AND x.id = i.id AND x.claim_job = $2::bigint AND x.attempts = i.attempt - 1
    RETURNING x.workspace_id, x.id, x.webhook_id, i.attempt, i.attempted_at, i.status_code, i.duration_ms, i.excerpt, i.status, i.error
  ), logged AS (
    INSERT INTO webhook_attempts (workspace_id, webhook_id, delivery_id, attempt, attempted_at, status_code, duration_ms, response_excerpt, error)
    SELECT d.workspace_id, d.webhook_id, d.id, d.attempt, d.attempted_at, d.status_code, d.duration_ms, d.excerpt, d.error FROM d
    ON CONFLICT DO NOTHING
  )
  UPDATE webhooks w SET failing_since = NULL
   WHERE w.workspace_id = $1 AND w.id IN (SELECT webhook_id FROM d WHERE d.status = 'delivered') AND w.failing_since IS NOT NULL`;

interface Attempt {
  d: Claimed;
  attempt: number;
  attemptedAt: Date;
  result: PostResult;
  /** Why nothing was sent (role-view.ts); the delivery ends `skipped`. */
  skipped?: string;
}

/**
 * One attempt of one delivery, with the other first attempts of its workspace that wait
 * sent alongside, in three short steps with nothing held in between:
 *
 * 1. Claim (one autocommitted UPDATE): the delivery must still be pending at the attempt
 *    the job names and not claimed by another job whose claim is current. A duplicate
 *    job or a second worker finds it claimed and stops, since the claiming job either
 *    records an outcome or, when its worker died, is released by the heartbeat sweep and
 *    runs again, taking over its own claims (`claim_job`). So an attempt is sent once, short
 *    of a worker losing its claim while its POST is still out (at-least-once, as Standard
 *    Webhooks receivers expect: they deduplicate on `webhook-id`). The same statement claims
 *    the workspace's other first attempts that wait (up to 15, 1 MiB of bodies) for this
 *    job and takes their jobs off the queue, so a burst of events costs a few statements,
 *    not four per event.
 * 2. POST, with no transaction and no connection held, all of the job's attempts at once,
 *    within the workspace's share of this process's slots (`WorkspaceShares`; a job is one
 *    slot, however many attempts it sends): over its share, the job's attempt is put back
 *    on the queue for a moment instead, so one tenant's slow targets never hold every slot.
 * 3. Outcome: the successes are one statement (deliveries, attempt log, failure streaks);
 *    a failure is one short transaction that also queues the next attempt.
 */
export async function deliverOnce(
  pool: DeliveryPool,
  job: DeliverJob,
  o: { jobId: string; settings: WebhookSettings; shares: WorkspaceShares; onDelivered?: (eventId: string) => void },
): Promise<void> {
  const release = o.shares.take(job.workspaceId);
  if (!release) return defer(pool, job, o.jobId, o.shares);
  try {
    const { settings } = o;
    const { rows } = await pool.query<Claimed & { own: boolean }>({
      name: 'webhook-claim',
      text: CLAIM,
      values: [
        job.workspaceId,
        job.deliveryId,
        o.jobId,
        job.attempt - 1,
        settings.timeoutMs + CLAIM_MARGIN_MS,
        BATCH_EXTRA_MAX,
        BATCH_EXTRA_BYTES,
      ],
    });
    const views = new RoleViews();
    const attempts = await Promise.all(
      rows
        .filter((d) => d.enabled)
        .map((d) => {
          const c = { d: d as Claimed, attempt: d.own ? job.attempt : d.attempts + 1 };
          const shaped = views.shape(d.role_id, d.role, d.type, d.body, d.object);
          return shaped.skipped !== undefined
            ? skippedAttempt(c, shaped.skipped)
            : attemptOnce(pool, job.workspaceId, c, shaped.body, settings);
        }),
    );
    const ended = attempts.filter((a) => a.skipped !== undefined || succeeded(a));
    if (ended.length) {
      await pool.query({
        name: 'webhook-ended',
        text: RECORD_ENDED,
        values: [
          job.workspaceId,
          o.jobId,
          ended.map((a) => a.d.id),
          ended.map((a) => a.attempt),
          ended.map((a) => a.attemptedAt),
          ended.map((a) => a.result.statusCode),
          ended.map((a) => a.result.durationMs),
          ended.map((a) => cleanExcerpt(a.result.excerpt)),
          ended.map((a) => (a.skipped !== undefined ? 'skipped' : 'delivered')),
          ended.map((a) => a.skipped ?? null),
        ],
      });
      for (const a of ended) if (a.skipped === undefined) o.onDelivered?.(a.d.event_id);
    }
    for (const a of attempts) if (!ended.includes(a)) await recordFailure(pool, job.workspaceId, o.jobId, a, settings);
  } finally {
    release();
  }
}

const succeeded = ({ result: { statusCode } }: Attempt) => statusCode !== null && statusCode >= 200 && statusCode < 300;
const cleanExcerpt = (excerpt: string | null) => excerpt?.replaceAll('\u0000', '') ?? null;

/** An attempt that sends nothing: the webhook's role may read nothing of its event. */
function skippedAttempt(c: { d: Claimed; attempt: number }, reason: string): Attempt {
  return { ...c, attemptedAt: new Date(), result: { statusCode: null, durationMs: 0, excerpt: '', error: null }, skipped: reason };
}

/** The POST of one claimed attempt, with `body` (the event as the webhook's role may read it). */
async function attemptOnce(
  pool: DeliveryPool,
  workspaceId: string,
  c: { d: Claimed; attempt: number },
  body: string,
  settings: WebhookSettings,
): Promise<Attempt> {
  const attemptedAt = new Date();
  const custom = await customHeaders(pool, workspaceId, c.d.headers);
  const result =
    'error' in custom
      ? { statusCode: null, durationMs: 0, excerpt: '', error: custom.error }
      : await postEvent(c.d.url, {
          eventId: c.d.event_id,
          body,
          secret: openSecret(c.d.secret_sealed),
          timeoutMs: settings.timeoutMs,
          allowPrivate: settings.allowPrivate,
          now: attemptedAt,
          headers: custom.headers,
          keepAnswer: !custom.values.length,
        });
  return { ...c, attemptedAt, result };
}

/**
 * The webhook's custom headers with the vault's values filled in now, at the last moment
 * (docs/webhooks.md, "Custom headers"); the values also come back, so an attempt that sends
 * any keeps nothing of the answer. A reference that cannot be filled fails the attempt, saying why.
 */
async function customHeaders(
  pool: DeliveryPool,
  workspaceId: string,
  headers: WebhookHeader[] | null,
): Promise<{ headers: Record<string, string>; values: string[] } | { error: string }> {
  if (!headers?.length) return { headers: {}, values: [] };
  const names = referencedNames(headers);
  let values: Map<string, string>;
  try {
    values = await valuesForDelivery(pool, workspaceId, names);
  } catch (err) {
    if (err instanceof AppError) return { error: `custom headers: ${err.messages.join('; ')}` };
    throw err;
  }
  const resolved = resolveHeaders(headers, values);
  return resolved.error !== undefined ? { error: resolved.error } : { headers: resolved.headers, values: [...values.values()] };
}

/** The outcome of a failed attempt, and its next attempt queued when there is one: one short transaction. */
async function recordFailure(
  pool: DeliveryPool,
  workspaceId: string,
  jobId: string,
  { d, attempt, result, attemptedAt }: Attempt,
  settings: WebhookSettings,
): Promise<void> {
  const attemptRow = [attempt, attemptedAt, result.statusCode, result.durationMs, cleanExcerpt(result.excerpt), result.error];
  const failingSince = d.failing_since ?? attemptedAt;
  const why = result.statusCode !== null ? `HTTP ${result.statusCode}` : (result.error ?? 'no answer');
  const nextAt = new Date(attemptedAt.getTime() + retryDelayMs(attempt, settings.retryBaseMs));
  const retry =
    !d.manual &&
    attemptedAt.getTime() - new Date(d.created_at).getTime() < settings.retryForMs &&
    attemptedAt.getTime() - failingSince.getTime() < settings.disableAfterMs;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const claimed = await client.query(
      `UPDATE webhook_deliveries SET attempts = $4, status = $5, next_attempt_at = $6, claim_job = NULL, claimed_until = NULL
        WHERE workspace_id = $1 AND id = $2 AND claim_job = $3::bigint AND attempts = $4 - 1`,
      [workspaceId, d.id, jobId, attempt, retry ? 'pending' : 'failed', retry ? nextAt : null],
    );
    // The claim was taken over (this worker was presumed dead): the attempt that took it records its own outcome.
    if (!claimed.rowCount) return void (await client.query('ROLLBACK'));
    await client.query(
      `INSERT INTO webhook_attempts (workspace_id, webhook_id, delivery_id, attempt, attempted_at, status_code, duration_ms, response_excerpt, error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
      [workspaceId, d.webhook_id, d.id, ...attemptRow],
    );
    if (attemptedAt.getTime() - failingSince.getTime() >= settings.disableAfterMs) {
      const reason = `Disabled automatically on ${attemptedAt.toISOString()}: every delivery failed since ${failingSince.toISOString()} (last: ${why}). Fix the endpoint, then enable the webhook again.`;
      await client.query(
        `UPDATE webhooks SET enabled = false, disabled_reason = $3, disabled_at = now(), failing_since = $4, updated_at = now() WHERE workspace_id = $1 AND id = $2`,
        [workspaceId, d.webhook_id, reason.slice(0, 1000), failingSince],
      );
    } else {
      await client.query('UPDATE webhooks SET failing_since = $3 WHERE workspace_id = $1 AND id = $2 AND failing_since IS NULL', [
        workspaceId,
        d.webhook_id,
        failingSince,
      ]);
    }
    if (retry) {
      await client.query(`SELECT graphile_worker.add_job($1, $2::json, run_at => $3)`, [
        DELIVER_TASK,
        JSON.stringify({ workspaceId, deliveryId: d.id, attempt: attempt + 1 }),
        nextAt,
      ]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Puts the attempt back on the queue, a little later each time it finds its workspace at
 * its share, and behind every job that was never deferred (graphile-worker takes the lowest
 * `priority` first): another workspace's new event starts before this backlog is looked at
 * again, however long the backlog. An attempt another job holds a current claim on, or that
 * is no longer pending (another job sent it with its own), is not put back: that job
 * records its outcome.
 *
 * In the same statement, the claims this job holds are let go, and each attempt it held
 * is put back too: a job released after its process died runs again with its claims in
 * place, and if it is put back here, the new job could not take those claims over (they
 * name this job, which is done), and the attempts it had claimed with its own have no job
 * of their own left, so those events would never be sent. The workspace's pending
 * deliveries are searched for such claims only when the job holds its own attempt (a
 * first run holds none, and a put-back must stay cheap under a backlog); attempts taken
 * along by a run whose own attempt another job sent wait for their claim to lapse (40 s),
 * then the next job of the workspace takes them along, or the heartbeat's sweep queues them.
 * A delivery keeps the id of its first job, not of a job it is put back as: one such job
 * whose attempt another job takes along is not removed, finds its attempt sent and ends.
 */
async function defer(pool: DeliveryPool, job: DeliverJob, jobId: string, shares: WorkspaceShares): Promise<void> {
  const deferrals = (job.deferrals ?? 0) + 1;
  const waitMs = Math.round(Math.min(DEFER_MAX_MS, DEFER_BASE_MS * 2 ** (deferrals - 1)) * (0.8 + 0.4 * Math.random()));
  const { rows } = await pool.query<{ id: string }>(
    `WITH own AS (
       UPDATE webhook_deliveries SET claim_job = NULL, claimed_until = NULL
        WHERE workspace_id = $2 AND id = $3 AND claim_job = $4::bigint AND status = 'pending'
     ), along AS (
       UPDATE webhook_deliveries SET claim_job = NULL, claimed_until = NULL
        WHERE workspace_id = $2 AND claim_job = $4::bigint AND status = 'pending' AND id <> $3
          AND EXISTS (SELECT 1 FROM webhook_deliveries m WHERE m.workspace_id = $2 AND m.id = $3 AND m.claim_job = $4::bigint)
        RETURNING id, attempts
     ), mine AS (
       SELECT d.id, $5::int AS attempt FROM webhook_deliveries d
        WHERE d.workspace_id = $2 AND d.id = $3 AND d.status = 'pending' AND d.attempts = $5 - 1 AND ${claimableBy('$4')}
     ), back AS (
       SELECT id, attempt FROM mine
       UNION
       SELECT id, attempts + 1 FROM along
     )
     SELECT (graphile_worker.add_job($1, json_build_object('workspaceId', $2::uuid, 'deliveryId', b.id, 'attempt', b.attempt, 'deferrals', $6::int),
               run_at => now() + $7 * interval '1 millisecond', priority => $8)).id
       FROM back b`,
    [DELIVER_TASK, job.workspaceId, job.deliveryId, jobId, job.attempt, deferrals, waitMs, Math.min(deferrals, 100)],
  );
  if (!rows.length) return;
  // A job due later is seen by the queue only at its next poll (every 2 s): when a slot of the
  // workspace frees in this process (or the wait is over), the job is made due now and the
  // workers are told, as add_job tells them of a new job. A job another worker has taken
  // meanwhile is left alone (reschedule_jobs skips locked jobs).
  shares.whenFree(job.workspaceId, waitMs, () => {
    pool
      .query(
        `SELECT pg_notify('jobs:insert', '{"count":1}') FROM (SELECT count(*) FROM graphile_worker.reschedule_jobs($1::bigint[], run_at => now())) r`,
        [rows.map((r) => r.id)],
      )
      .catch(() => undefined);
  });
}

/** A pending delivery left alone this long (not claimed, not due for a retry, not new) is looked for a job. */
const STRANDED_AFTER_MS = 60_000;
/** At most this many deliveries are put back on the queue per sweep. */
const STRANDED_BATCH = 500;

/** The sweep's first statement, across workspaces by design (see MULTI_SHARD_BY_DESIGN in libs/database/src/tenant-scope.ts). */
export const STRANDED_CANDIDATES = `SELECT workspace_id, id, attempts FROM webhook_deliveries
  WHERE status = 'pending' AND created_at < now() - $1 * interval '1 millisecond'
    AND (claimed_until IS NULL OR claimed_until < now())
    AND (next_attempt_at IS NULL OR next_attempt_at < now() - $1 * interval '1 millisecond')
  ORDER BY created_at LIMIT $2`;

/**
 * A safety net of the webhook worker's heartbeat: a pending delivery that has no job on the
 * queue would never be sent, so it gets one, for its next attempt. Every path that leaves a
 * delivery pending also queues its job in the same transaction (the outbox, a failure's
 * retry, a put-back) or, for a create, in the statement just after its commit
 * (first-attempts.ts), so this finds what a process that died between those two, a failed
 * queueing statement, a defect or a restored backup left behind.
 * Two statements: the candidates (every workspace's, through the small pending index), then,
 * on the queue's own tables, a job for each one that has none. A delivery sent in between
 * gets a job that finds it delivered and does nothing; two instances sweeping at once queue
 * two jobs, of which the claim lets one send. Returns how many jobs it queued.
 */
export async function requeueStranded(pool: Pick<Pool, 'query'>, olderThanMs = STRANDED_AFTER_MS): Promise<number> {
  const { rows } = await pool.query<{ workspace_id: string; id: string; attempts: number }>(STRANDED_CANDIDATES, [
    olderThanMs,
    STRANDED_BATCH,
  ]);
  if (!rows.length) return 0;
  const queued = await pool.query(
    `SELECT graphile_worker.add_job($1, json_build_object('workspaceId', c.workspace_id, 'deliveryId', c.id, 'attempt', c.attempts + 1))
       FROM unnest($2::uuid[], $3::uuid[], $4::int[]) AS c(workspace_id, id, attempts)
      WHERE NOT EXISTS (SELECT 1 FROM graphile_worker._private_jobs j WHERE j.payload->>'deliveryId' = c.id::text)`,
    [DELIVER_TASK, rows.map((r) => r.workspace_id), rows.map((r) => r.id), rows.map((r) => r.attempts)],
  );
  return queued.rowCount ?? 0;
}
