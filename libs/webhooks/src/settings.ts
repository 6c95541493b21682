/** Webhook settings from the environment (README "Configuration"). */
export interface WebhookSettings {
  /** `WEBHOOKS_ALLOW_PRIVATE=1`: http and private/loopback targets (development, tests). */
  allowPrivate: boolean;
  /** Wait before the first retry; each next one doubles, capped at 120× this (1 h by default). */
  retryBaseMs: number;
  /** How long one delivery is retried (24 h by default). */
  retryForMs: number;
  /** A webhook whose deliveries all failed for this long is disabled (3 days by default). */
  disableAfterMs: number;
  /** `WEBHOOKS_WORKER=off` keeps this process from delivering (another instance does). */
  worker: boolean;
  concurrency: number;
  timeoutMs: number;
  /**
   * `WEBHOOKS_HEARTBEAT_MS`: how often a worker process records that it is alive and
   * releases the jobs of workers that stopped doing so (silent for 3 intervals).
   */
  heartbeatMs: number;
  /** `WEBHOOKS_STRANDED_AFTER_MS`: a pending delivery left this long without a job is given one at the next heartbeat. */
  strandedAfterMs: number;
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number; got "${raw}"`);
  return value;
}

export function webhookSettings(): WebhookSettings {
  const worker = (process.env.WEBHOOKS_WORKER ?? 'on').toLowerCase();
  if (!['on', 'off'].includes(worker)) throw new Error(`WEBHOOKS_WORKER must be on or off; got "${process.env.WEBHOOKS_WORKER}"`);
  return {
    allowPrivate: process.env.WEBHOOKS_ALLOW_PRIVATE === '1',
    retryBaseMs: positive('WEBHOOK_RETRY_BASE_MS', 30_000),
    retryForMs: positive('WEBHOOK_RETRY_FOR_MS', 24 * 3600_000),
    disableAfterMs: positive('WEBHOOK_DISABLE_AFTER_MS', 3 * 24 * 3600_000),
    worker: worker === 'on',
    concurrency: positive('WEBHOOKS_CONCURRENCY', 10),
    timeoutMs: 10_000,
    heartbeatMs: positive('WEBHOOKS_HEARTBEAT_MS', 10_000),
    strandedAfterMs: positive('WEBHOOKS_STRANDED_AFTER_MS', 60_000),
  };
}
