import { isUUID } from 'class-validator';
import { randomBytes, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { DataSource, EntityManager } from 'typeorm';
import { KEY_PURPOSES, open, seal, subkey } from '#database/master-key.js';
import { MAX_WEBHOOKS_PER_WORKSPACE } from '#database/migrations/1764500000100-webhook-fair-delivery.js';
import { assertNotLiteralSpecialUse, hostOf } from '#net/public-address.js';
import { BadInputError, ConflictError, ErrorCode, NotFoundError } from '#errors/errors.js';
import { lockExistingNames } from '#identity/vault.js';
import { parseHeaders, referencedNames, type WebhookHeader } from './headers.js';
import { TEST_EVENT_TYPE, parseOperations } from './operations.js';
import { DELIVER_TASK, queueFirstAttempt, type WebhookEventBody } from './webhook-outbox.js';

export type Db = DataSource | EntityManager;

export interface WebhookSummary {
  id: string;
  url: string;
  description: string;
  operations: string[];
  /** Custom headers as saved: `{{vault.NAME}}` references stay references (filled in only when sent). */
  headers: WebhookHeader[];
  enabled: boolean;
  /**
   * The role the webhook delivers as: each event carries what it may read, checked when sent
   * (docs/webhooks.md, "Who a webhook delivers as"). `name` null: the role was deleted, and
   * nothing is sent until the webhook is saved again.
   */
  role: { id: string | null; name: string | null };
  /** Why the webhook was switched off automatically (3 days of failures); null otherwise. */
  disabledReason: string | null;
  disabledAt: string | null;
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreatedWebhook extends WebhookSummary {
  secret: string;
}

export interface WebhookInput {
  url?: unknown;
  description?: unknown;
  operations?: unknown;
  headers?: unknown;
  enabled?: unknown;
}

export interface WebhookAttempt {
  id: string;
  deliveryId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  attemptedAt: string;
  statusCode: number | null;
  durationMs: number;
  responseExcerpt: string;
  /** The attempt sent vault values, so nothing of the answer was kept (docs/webhooks.md, "Custom headers"). */
  responseWithheld: boolean;
  error: string | null;
  deliveryStatus: string;
}

/**
 * Called when a save or a redelivery would send the vault secrets `names` somewhere not
 * approved before: a new webhook naming them, a new URL or new headers of one that does,
 * a redelivery of one. The settings layer refuses (403) unless the member holds VAULT and
 * typed the password lately (docs/decisions/0049-webhooks-vault-and-read-permissions.md).
 * It runs before the names are looked up, so a refusal says nothing of which exist.
 */
export type VaultUse = (names: string[]) => Promise<void>;

const MAX_URL = 2048;
const MAX_DESCRIPTION = 500;

/** TypeORM answers an UPDATE … RETURNING with [rows, count]. */
async function query<T = Record<string, unknown>>(db: Db, sql: string, params: unknown[] = []): Promise<T[]> {
  const result = await db.query(sql, params);
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}

function iso(value: unknown): string | null {
  return value == null ? null : value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
}

function summary(row: Record<string, unknown>): WebhookSummary {
  return {
    id: row.id as string,
    url: row.url as string,
    description: row.description as string,
    operations: row.operations as string[],
    headers: (row.headers as WebhookHeader[] | undefined) ?? [],
    enabled: row.enabled as boolean,
    role: { id: (row.role_id as string | null) ?? null, name: (row.role_name as string | null) ?? null },
    disabledReason: (row.disabled_reason as string | null) ?? null,
    disabledAt: iso(row.disabled_at),
    failingSince: iso(row.failing_since),
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}

/** The webhook's columns and its role's name (null: the role was deleted); `webhooks` unaliased, so RETURNING can use it too. */
const COLUMNS = `id, url, description, operations, headers, enabled, disabled_reason, disabled_at, failing_since, created_at, updated_at, role_id,
  (SELECT r.name FROM roles r WHERE r.workspace_id = webhooks.workspace_id AND r.id = webhooks.role_id) AS role_name`;

/** The built-in Admin of workspace `$1`: whom a webhook made without a role (the CLI's default) delivers as. */
const ADMIN_ROLE = '(SELECT r.id FROM roles r WHERE r.workspace_id = $1 AND NOT r.is_editable ORDER BY r.created_at LIMIT 1)';

/**
 * A target URL: https (http too with `allowPrivate`), no user-info, no fragment, at most
 * 2048 characters; without `allowPrivate` a literal private address or `localhost` is
 * refused here, and every name is checked again on the address actually connected to.
 */
export function parseTargetUrl(value: unknown, allowPrivate: boolean): string {
  if (typeof value !== 'string' || !value.trim())
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'url is required: the https URL that receives the events');
  if (value.length > MAX_URL) throw new BadInputError(ErrorCode.VALIDATION_FAILED, `url must be at most ${MAX_URL} characters`);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `url must be an absolute https URL; got "${value.slice(0, 100)}"`);
  }
  const allowed = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(url.protocol)) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      allowPrivate
        ? `url must be http or https; got "${url.protocol}"`
        : `url must be https; got "${url.protocol}" (http targets need WEBHOOKS_ALLOW_PRIVATE=1)`,
    );
  }
  if (url.username || url.password) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'url must not carry a user name or password');
  if (url.hash) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'url must not have a fragment (#…)');
  if (!allowPrivate) {
    const host = hostOf(url).toLowerCase();
    if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) && isPrivate(url))) {
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        `url must reach a public address; ${host} is private, loopback or special-use (allowed only with WEBHOOKS_ALLOW_PRIVATE=1)`,
      );
    }
  }
  return url.toString();
}

function isPrivate(url: URL): boolean {
  try {
    assertNotLiteralSpecialUse(url);
    return false;
  } catch {
    return true;
  }
}

function parseDescription(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'description must be a string');
  if (value.length > MAX_DESCRIPTION)
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `description must be at most ${MAX_DESCRIPTION} characters; got ${value.length}`);
  return value;
}

/**
 * Every `{{vault.NAME}}` must name a secret of this workspace's vault (another workspace's
 * behaves as missing); the names are locked until the save commits, so a delete of one
 * waits and then sees the webhook using it.
 */
async function assertReferencesExist(db: Db, workspaceId: string, headers: WebhookHeader[]): Promise<void> {
  const names = referencedNames(headers);
  const existing = await lockExistingNames(db, workspaceId, names);
  const missing = names.filter((n) => !existing.has(n));
  if (missing.length)
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      ...missing.map((n) => `headers: {{vault.${n}}} names no secret of this workspace's vault; add it on /settings/vault first`),
    );
}

/** The vault names `headers` refer to, passed to `vaultUse` first when there are any. */
async function approveVaultUse(headers: WebhookHeader[], vaultUse: VaultUse | undefined): Promise<string[]> {
  const names = referencedNames(headers);
  if (names.length && vaultUse) await vaultUse(names);
  return names;
}

function inTransaction<T>(db: Db, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  return 'transaction' in db && typeof db.transaction === 'function' && !('queryRunner' in db && db.queryRunner)
    ? db.transaction(work)
    : work(db as EntityManager);
}

function assertWebhookId(id: string): void {
  if (!isUUID(id)) throw new BadInputError(ErrorCode.INVALID_ID, `id must be a UUID; got "${id.slice(0, 100)}"`);
}

// ---- secrets: `whsec_` + base64 of 32 random bytes, sealed at rest under a key derived from VAULT_MASTER_KEY ----

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** AES-256-GCM under the webhook-secrets key derived from VAULT_MASTER_KEY (libs/database/src/master-key.ts). */
export function sealSecret(secret: string): string {
  return seal(subkey(KEY_PURPOSES.webhookSecrets), secret);
}

export function openSecret(sealed: string): string {
  return open(subkey(KEY_PURPOSES.webhookSecrets), sealed);
}

// ---- subscriptions ----

export async function listWebhooks(db: Db, workspaceId: string): Promise<WebhookSummary[]> {
  const rows = await query(db, `SELECT ${COLUMNS} FROM webhooks WHERE workspace_id = $1 ORDER BY created_at, id`, [workspaceId]);
  return rows.map(summary);
}

/** Another workspace's webhook behaves as missing. */
export async function findWebhook(db: Db, workspaceId: string, id: string, o: { lock?: boolean } = {}): Promise<WebhookSummary> {
  assertWebhookId(id);
  const [row] = await query(db, `SELECT ${COLUMNS} FROM webhooks WHERE workspace_id = $1 AND id = $2${o.lock ? ' FOR UPDATE' : ''}`, [
    workspaceId,
    id,
  ]);
  if (!row) throw new NotFoundError(`No webhook with id ${id} in this workspace`);
  return summary(row);
}

/**
 * The singular names of the workspace's active objects, standard first: what its webhooks'
 * operations may name (a deactivated object's events are not offered; docs/webhooks.md).
 */
export async function eventObjectsOf(db: Db, workspaceId: string): Promise<string[]> {
  const rows = await query<{ name_singular: string }>(
    db,
    'SELECT name_singular FROM objects WHERE workspace_id = $1 AND is_active ORDER BY is_custom, created_at, id',
    [workspaceId],
  );
  return rows.map((r) => r.name_singular);
}

export async function createWebhook(
  db: Db,
  workspaceId: string,
  input: WebhookInput,
  o: { allowPrivate: boolean; createdByUserId?: string; roleId?: string; vaultUse?: VaultUse },
): Promise<CreatedWebhook> {
  const problems: string[] = [];
  const attempt = <T>(parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (err) {
      if (err instanceof BadInputError) problems.push(...err.messages);
      else throw err;
      return undefined;
    }
  };
  const url = attempt(() => parseTargetUrl(input.url, o.allowPrivate));
  const description = attempt(() => parseDescription(input.description));
  const objects = await eventObjectsOf(db, workspaceId);
  const operations = attempt(() => parseOperations(input.operations ?? ['*.*'], 'operations', objects));
  const headers = attempt(() => parseHeaders(input.headers));
  if (input.enabled !== undefined && typeof input.enabled !== 'boolean') problems.push('enabled must be true or false');
  if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
  const secret = newWebhookSecret();
  const [row] = await inTransaction(db, async (tx) => {
    await approveVaultUse(headers!, o.vaultUse);
    await assertReferencesExist(tx, workspaceId, headers!);
    return query(
      tx,
      `INSERT INTO webhooks (workspace_id, url, description, operations, headers, enabled, secret_sealed, created_by_user_id, role_id)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, coalesce($9::uuid, ${ADMIN_ROLE})) RETURNING ${COLUMNS}`,
      [
        workspaceId,
        url,
        description,
        operations,
        JSON.stringify(headers),
        input.enabled ?? true,
        sealSecret(secret),
        o.createdByUserId ?? null,
        o.roleId ?? null,
      ],
    );
  }).catch((err: { driverError?: { code?: string }; code?: string }) => {
    // The cap is kept by a trigger (migration 1764500000100), so two creates at once cannot both pass it.
    if ((err.driverError?.code ?? err.code) === 'WH001') {
      throw new ConflictError(`A workspace has at most ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks; delete one before adding another`);
    }
    throw err;
  });
  return { ...summary(row), secret };
}

/**
 * A partial change; turning a webhook on again clears the reason it was switched off. A
 * change delivers as `roleId` from then on (whoever edits a webhook answers for what it
 * sends). A new URL or new headers of a webhook whose headers name vault secrets go through
 * `vaultUse` first, on the row locked, so a concurrent save cannot slip a reference in
 * between the check and the write.
 */
export async function updateWebhook(
  db: Db,
  workspaceId: string,
  id: string,
  input: WebhookInput,
  o: { allowPrivate: boolean; roleId?: string; vaultUse?: VaultUse },
): Promise<{ before: WebhookSummary; after: WebhookSummary; vaultSecrets: string[] }> {
  assertWebhookId(id);
  const sets: string[] = [];
  const params: unknown[] = [workspaceId, id];
  const problems: string[] = [];
  const take = <T>(column: string, parse: () => T, stored: (value: T) => unknown = (v) => v): T | undefined => {
    try {
      const value = parse();
      sets.push(`${column} = $${params.push(stored(value))}`);
      return value;
    } catch (err) {
      if (err instanceof BadInputError) problems.push(...err.messages);
      else throw err;
      return undefined;
    }
  };
  const url = input.url !== undefined ? take('url', () => parseTargetUrl(input.url, o.allowPrivate)) : undefined;
  if (input.description !== undefined) take('description', () => parseDescription(input.description));
  if (input.operations !== undefined) {
    const objects = await eventObjectsOf(db, workspaceId);
    take('operations', () => parseOperations(input.operations, 'operations', objects));
  }
  const headers =
    input.headers !== undefined
      ? take(
          'headers',
          () => parseHeaders(input.headers),
          (h) => JSON.stringify(h),
        )
      : undefined;
  if (input.enabled !== undefined) {
    if (typeof input.enabled !== 'boolean') problems.push('enabled must be true or false');
    else {
      sets.push(`enabled = $${params.push(input.enabled)}`);
      if (input.enabled) sets.push('disabled_reason = NULL, disabled_at = NULL, failing_since = NULL');
    }
  }
  if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
  return inTransaction(db, async (tx) => {
    const before = await findWebhook(tx, workspaceId, id, { lock: true });
    if (!sets.length) return { before, after: before, vaultSecrets: [] };
    const sendsElsewhere =
      (url !== undefined && url !== before.url) || (headers !== undefined && JSON.stringify(headers) !== JSON.stringify(before.headers));
    const vaultSecrets = sendsElsewhere ? await approveVaultUse(headers ?? before.headers, o.vaultUse) : [];
    if (headers) await assertReferencesExist(tx, workspaceId, headers);
    if (o.roleId) sets.push(`role_id = $${params.push(o.roleId)}`);
    const [row] = await query(
      tx,
      `UPDATE webhooks SET ${sets.join(', ')}, updated_at = now() WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      params,
    );
    return { before, after: summary(row), vaultSecrets };
  });
}

export async function deleteWebhook(db: Db, workspaceId: string, id: string): Promise<WebhookSummary> {
  const webhook = await findWebhook(db, workspaceId, id);
  await query(db, 'DELETE FROM webhooks WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  return webhook;
}

/** For the CLI, which has no workspace context: the webhook's workspace with it. */
export async function deleteWebhookById(db: Db, id: string): Promise<{ id: string; workspaceId: string; url: string }> {
  assertWebhookId(id);
  const [row] = await query<{ id: string; workspace_id: string; url: string }>(
    db,
    'DELETE FROM webhooks WHERE id = $1 RETURNING id, workspace_id, url',
    [id],
  );
  if (!row) throw new NotFoundError(`No webhook with id ${id}`);
  return { id: row.id, workspaceId: row.workspace_id, url: row.url };
}

export async function revealWebhookSecret(db: Db, workspaceId: string, id: string): Promise<string> {
  assertWebhookId(id);
  const [row] = await query<{ secret_sealed: string }>(db, 'SELECT secret_sealed FROM webhooks WHERE workspace_id = $1 AND id = $2', [
    workspaceId,
    id,
  ]);
  if (!row) throw new NotFoundError(`No webhook with id ${id} in this workspace`);
  return openSecret(row.secret_sealed);
}

/** The latest attempts of one webhook, newest first. */
export async function listAttempts(db: Db, workspaceId: string, webhookId: string, limit = 50): Promise<WebhookAttempt[]> {
  await findWebhook(db, workspaceId, webhookId);
  const rows = await query(
    db,
    `SELECT a.id, a.delivery_id, d.event_id, e.type, a.attempt, a.attempted_at, a.status_code, a.duration_ms, a.response_excerpt, a.error, d.status
       FROM webhook_attempts a
       JOIN webhook_deliveries d ON d.workspace_id = a.workspace_id AND d.id = a.delivery_id
       JOIN webhook_events e ON e.workspace_id = d.workspace_id AND e.id = d.event_id
      WHERE a.workspace_id = $1 AND a.webhook_id = $2
      ORDER BY a.attempted_at DESC, a.id DESC LIMIT $3`,
    [workspaceId, webhookId, limit],
  );
  return rows.map((r) => ({
    id: r.id as string,
    deliveryId: r.delivery_id as string,
    eventId: r.event_id as string,
    eventType: r.type as string,
    attempt: Number(r.attempt),
    attemptedAt: iso(r.attempted_at)!,
    statusCode: (r.status_code as number | null) ?? null,
    durationMs: Number(r.duration_ms),
    responseExcerpt: (r.response_excerpt as string | null) ?? '',
    responseWithheld: r.response_excerpt === null,
    error: (r.error as string | null) ?? null,
    deliveryStatus: r.status as string,
  }));
}

/**
 * Sends a delivered or failed event again: a new delivery of the same event (same
 * `Webhook-Id`, so a receiver that deduplicates skips it) with one attempt, queued now. A
 * webhook whose headers name vault secrets sends them again: `vaultUse` approves that first.
 */
export async function redeliver(
  db: Db,
  workspaceId: string,
  webhookId: string,
  deliveryId: string,
  o: { vaultUse?: VaultUse } = {},
): Promise<{ deliveryId: string; eventId: string; vaultSecrets: string[] }> {
  const webhook = await findWebhook(db, workspaceId, webhookId);
  if (!isUUID(deliveryId)) throw new BadInputError(ErrorCode.INVALID_ID, `deliveryId must be a UUID; got "${deliveryId.slice(0, 100)}"`);
  const [source] = await query<{ event_id: string }>(
    db,
    'SELECT event_id FROM webhook_deliveries WHERE workspace_id = $1 AND webhook_id = $2 AND id = $3',
    [workspaceId, webhookId, deliveryId],
  );
  if (!source) throw new NotFoundError(`No delivery with id ${deliveryId} for this webhook`);
  const vaultSecrets = await approveVaultUse(webhook.headers, o.vaultUse);
  const [row] = await query<{ id: string }>(
    db,
    `WITH q AS MATERIALIZED (
       SELECT q.id, ${queueFirstAttempt('$4', '$1', 'q.id')} AS job_id FROM (SELECT gen_random_uuid() AS id) q
     )
     INSERT INTO webhook_deliveries (workspace_id, id, webhook_id, event_id, manual, job_id)
     SELECT $1, q.id, $2, $3, true, q.job_id FROM q RETURNING id`,
    [workspaceId, webhookId, source.event_id, DELIVER_TASK],
  );
  return { deliveryId: row.id, eventId: source.event_id, vaultSecrets };
}

/**
 * A `webhook.test` event for this webhook only (whatever its operations), with one attempt,
 * queued now: the same signed POST, custom headers and attempt log as any event, with no
 * retry, as a redelivery. A webhook whose headers name vault secrets sends them: `vaultUse`
 * approves that first. A disabled webhook sends nothing, so it is refused (409).
 */
export async function sendTestEvent(
  db: Db,
  workspaceId: string,
  webhookId: string,
  o: { vaultUse?: VaultUse } = {},
): Promise<{ deliveryId: string; eventId: string; vaultSecrets: string[]; url: string }> {
  const webhook = await findWebhook(db, workspaceId, webhookId);
  if (!webhook.enabled) throw new ConflictError('The webhook is disabled: enable it, then send the test event');
  const vaultSecrets = await approveVaultUse(webhook.headers, o.vaultUse);
  const event: WebhookEventBody = {
    id: randomUUID(),
    type: TEST_EVENT_TYPE,
    workspaceId,
    occurredAt: new Date().toISOString(),
    data: { webhook: { id: webhook.id, url: webhook.url } },
  };
  const [row] = await query<{ id: string }>(
    db,
    `WITH event AS (
       INSERT INTO webhook_events (workspace_id, id, type, payload) VALUES ($1, $3, $5, $6::json)
     ), q AS MATERIALIZED (
       SELECT q.id, ${queueFirstAttempt('$4', '$1', 'q.id')} AS job_id FROM (SELECT gen_random_uuid() AS id) q
     )
     INSERT INTO webhook_deliveries (workspace_id, id, webhook_id, event_id, manual, job_id)
     SELECT $1, q.id, $2, $3, true, q.job_id FROM q RETURNING id`,
    [workspaceId, webhookId, event.id, DELIVER_TASK, TEST_EVENT_TYPE, JSON.stringify(event)],
  );
  return { deliveryId: row.id, eventId: event.id, vaultSecrets, url: webhook.url };
}
