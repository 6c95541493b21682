import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import type { PoolClient } from 'pg';
import { Webhook } from 'standardwebhooks';
import { assertNotLiteralSpecialUse, publicOnlyLookup } from '#net/public-address.js';
import type { WebhookSettings } from './settings.js';
import { DELIVER_TASK } from './webhook-outbox.js';
import { openSecret } from './webhooks.js';

const EXCERPT_BYTES = 1024;

export interface PostResult {
  statusCode: number | null;
  durationMs: number;
  excerpt: string;
  error: string | null;
}

/**
 * One POST of a signed event (Standard Webhooks: `Webhook-Id`, `Webhook-Timestamp`,
 * `Webhook-Signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`). No redirect
 * is followed (a 3xx is a failure); `timeoutMs` bounds the whole exchange; only the first
 * KB of the answer is kept. Without `allowPrivate` the target must be https and every
 * address connected to public (checked in the socket's lookup, so DNS rebinding fails).
 */
export function postEvent(url: string, o: { eventId: string; body: string; secret: string; timeoutMs: number; allowPrivate: boolean; now?: Date }): Promise<PostResult> {
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
    return Promise.resolve(done({ statusCode: null, excerpt: '', error: (err as Error).message }));
  }
  const headers = {
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
    const finish = (r: Omit<PostResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      resolve(done(r));
    };
    const req = request(
      target,
      { method: 'POST', headers, signal: AbortSignal.timeout(o.timeoutMs), lookup: o.allowPrivate ? undefined : publicOnlyLookup, agent: false },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < EXCERPT_BYTES) chunks.push(chunk.subarray(0, EXCERPT_BYTES - size));
          size += chunk.length;
        });
        const end = () => finish({ statusCode: res.statusCode ?? null, excerpt: Buffer.concat(chunks).toString('utf8'), error: null });
        res.on('end', end);
        res.on('error', end);
        res.on('aborted', end);
      },
    );
    req.on('error', (err: Error) => finish({ statusCode: null, excerpt: '', error: err.name === 'TimeoutError' || err.name === 'AbortError' ? `no answer within ${o.timeoutMs / 1000} s` : err.message }));
    req.end(o.body);
  });
}

/** The wait before attempt `attempt + 1`: base × 2^(attempt−1), capped at 120 × base (1 h by default), ±20 % jitter. */
export function retryDelayMs(attempt: number, baseMs: number, random = Math.random): number {
  const plain = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), baseMs * 120);
  return Math.round(plain * (0.8 + 0.4 * random()));
}

interface Claimed {
  workspace_id: string;
  id: string;
  webhook_id: string;
  event_id: string;
  attempts: number;
  manual: boolean;
  created_at: Date;
  url: string;
  secret_sealed: string;
  enabled: boolean;
  failing_since: Date | null;
  payload: unknown;
}

export interface DeliverJob {
  workspaceId: string;
  deliveryId: string;
  attempt: number;
}

/**
 * Runs one attempt of one delivery, in one transaction that holds the delivery's row lock:
 * a second worker (or a duplicate job) finds it locked or already past this attempt and
 * does nothing, so no attempt is ever sent twice by us. The outcome, the attempt's log row,
 * the webhook's failure streak and the next attempt's job are committed together.
 */
export async function deliverOnce(client: PoolClient, job: DeliverJob, settings: WebhookSettings, onDelivered?: (eventId: string) => void): Promise<void> {
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<Claimed>(
      `SELECT d.workspace_id, d.id, d.webhook_id, d.event_id, d.attempts, d.manual, d.created_at,
              w.url, w.secret_sealed, w.enabled, w.failing_since, e.payload
         FROM webhook_deliveries d
         JOIN webhooks w ON w.workspace_id = d.workspace_id AND w.id = d.webhook_id
         JOIN webhook_events e ON e.workspace_id = d.workspace_id AND e.id = d.event_id
        WHERE d.workspace_id = $1 AND d.id = $2 AND d.status = 'pending' AND d.attempts = $3
        FOR UPDATE OF d SKIP LOCKED`,
      [job.workspaceId, job.deliveryId, job.attempt - 1],
    );
    const d = rows[0];
    if (!d) return void (await client.query('COMMIT'));
    if (!d.enabled) {
      await client.query(`UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL WHERE workspace_id = $1 AND id = $2`, [d.workspace_id, d.id]);
      return void (await client.query('COMMIT'));
    }
    const secret = await openSecret({ query: (sql: string, params?: unknown[]) => client.query(sql, params).then((r) => r.rows) } as never, d.secret_sealed);
    const attemptedAt = new Date();
    const result = await postEvent(d.url, { eventId: d.event_id, body: JSON.stringify(d.payload), secret, timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivate, now: attemptedAt });
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    await client.query(
      `INSERT INTO webhook_attempts (workspace_id, webhook_id, delivery_id, attempt, attempted_at, status_code, duration_ms, response_excerpt, error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [d.workspace_id, d.webhook_id, d.id, job.attempt, attemptedAt, result.statusCode, result.durationMs, result.excerpt.replace(/\u0000/g, ''), result.error],
    );
    if (ok) {
      await client.query(`UPDATE webhook_deliveries SET status = 'delivered', attempts = $3, delivered_at = now(), next_attempt_at = NULL WHERE workspace_id = $1 AND id = $2`, [d.workspace_id, d.id, job.attempt]);
      await client.query('UPDATE webhooks SET failing_since = NULL WHERE workspace_id = $1 AND id = $2 AND failing_since IS NOT NULL', [d.workspace_id, d.webhook_id]);
    } else {
      const failingSince = d.failing_since ?? attemptedAt;
      const why = result.statusCode !== null ? `HTTP ${result.statusCode}` : (result.error ?? 'no answer');
      if (attemptedAt.getTime() - failingSince.getTime() >= settings.disableAfterMs) {
        const reason = `Disabled automatically on ${attemptedAt.toISOString()}: every delivery failed since ${failingSince.toISOString()} (last: ${why}). Fix the endpoint, then enable the webhook again.`;
        await client.query(
          `UPDATE webhooks SET enabled = false, disabled_reason = $3, disabled_at = now(), failing_since = $4, updated_at = now() WHERE workspace_id = $1 AND id = $2`,
          [d.workspace_id, d.webhook_id, reason.slice(0, 1000), failingSince],
        );
      } else {
        await client.query('UPDATE webhooks SET failing_since = $3 WHERE workspace_id = $1 AND id = $2 AND failing_since IS NULL', [d.workspace_id, d.webhook_id, failingSince]);
      }
      const nextAt = new Date(attemptedAt.getTime() + retryDelayMs(job.attempt, settings.retryBaseMs));
      const retry = !d.manual && attemptedAt.getTime() - new Date(d.created_at).getTime() < settings.retryForMs && attemptedAt.getTime() - failingSince.getTime() < settings.disableAfterMs;
      await client.query(
        `UPDATE webhook_deliveries SET attempts = $3, status = $4, next_attempt_at = $5 WHERE workspace_id = $1 AND id = $2`,
        [d.workspace_id, d.id, job.attempt, retry ? 'pending' : 'failed', retry ? nextAt : null],
      );
      if (retry) {
        await client.query(`SELECT graphile_worker.add_job($1, $2::json, run_at => $3)`, [
          DELIVER_TASK,
          JSON.stringify({ workspaceId: d.workspace_id, deliveryId: d.id, attempt: job.attempt + 1 }),
          nextAt,
        ]);
      }
    }
    await client.query('COMMIT');
    if (ok) onDelivered?.(d.event_id);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
