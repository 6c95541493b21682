import { randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { KEY_PURPOSES, open, seal, subkey } from '#database/master-key.js';
import { AppError, BadInputError, ConflictError, ErrorCode, ForbiddenError, NotFoundError } from '#errors/errors.js';
import type { Db } from './accounts.js';
import { recordAudit, type AuditEntry } from './audit-log.js';

/**
 * The workspace vault (docs/vault.md): named secrets a workspace keeps for its integrations
 * (a webhook header sends one as `{{vault.NAME}}`). Values are write-only for everyone but a
 * signed-in member who typed the password again (the settings page); API keys and tokens see
 * names and dates only.
 *
 * At rest: each workspace has one random data key (`vault_keys`), sealed with AES-256-GCM
 * under the `vault data keys` subkey of VAULT_MASTER_KEY (libs/database/src/master-key.ts);
 * each value is sealed under the data key, its workspace and name bound in as additional
 * authenticated data, so a sealed value copied to another row or workspace does not open.
 * Rotating the master key re-wraps the data keys only (master-key-rotation.ts).
 *
 * A value never leaves this module except as the result of `revealSecret` (audited) or
 * `valuesForDelivery`: errors name the secret, never its value.
 */

export const NAME_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;
export const MAX_VALUE_BYTES = 8192;
export const MAX_DESCRIPTION = 500;
/** How stale `lastUsedAt` may be: a delivery writes it at most once a minute per secret. */
const LAST_USED_GRANULARITY = "interval '1 minute'";

export type Actor = AuditEntry['actor'];

export interface VaultSecret {
  name: string;
  description: string;
  createdAt: string;
  rotatedAt: string | null;
  lastUsedAt: string | null;
}

export interface VaultSecretInput {
  name?: unknown;
  value?: unknown;
  description?: unknown;
}

/** The message every bearer credential gets when it asks for a value (REST, GraphQL, MCP). */
export const REVEAL_FORBIDDEN =
  'Vault values are never revealed to API keys or access tokens: a signed-in member reveals a value in the app, on /settings/vault, after typing the password again';

export class RevealForbidden extends ForbiddenError {
  constructor() {
    super(REVEAL_FORBIDDEN);
  }
}

/** The data key does not open with this process's master key: the key was rotated under it. */
export class VaultKeyMismatch extends AppError {
  constructor() {
    super(503, ErrorCode.SERVICE_UNAVAILABLE, [
      "The vault cannot be opened with this process's VAULT_MASTER_KEY; if the master key was rotated, restart this process with the new key",
    ]);
  }
}

const COLUMNS = 'name, description, created_at, rotated_at, last_used_at';

function iso(value: unknown): string | null {
  return value == null ? null : value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
}

function summary(row: Record<string, unknown>): VaultSecret {
  return {
    name: row.name as string,
    description: row.description as string,
    createdAt: iso(row.created_at)!,
    rotatedAt: iso(row.rotated_at),
    lastUsedAt: iso(row.last_used_at),
  };
}

/** TypeORM answers an UPDATE/DELETE … RETURNING with [rows, count]. */
async function query<T = Record<string, unknown>>(db: Db, sql: string, params: unknown[] = []): Promise<T[]> {
  const result = await db.query(sql, params);
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}

function inTransaction<T>(db: Db, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  return 'transaction' in db && typeof db.transaction === 'function' && !('queryRunner' in db && db.queryRunner)
    ? db.transaction(work)
    : work(db as EntityManager);
}

// ---- input rules ----

export function parseName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string' || !NAME_PATTERN.test(value)) {
    const got = typeof value === 'string' ? `"${value.slice(0, 80)}"` : value === undefined ? 'nothing' : typeof value;
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `${field} must be 1 to 64 capital letters, digits and _, starting with a letter (^[A-Z][A-Z0-9_]{0,63}$); got ${got}`,
    );
  }
  return value;
}

/** The value is never quoted back, only its size. */
export function parseValue(value: unknown): string {
  if (typeof value !== 'string') throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'value is required and must be a string');
  const bytes = Buffer.byteLength(value, 'utf8');
  if (!bytes) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'value must not be empty');
  if (bytes > MAX_VALUE_BYTES)
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `value must be at most ${MAX_VALUE_BYTES} bytes (UTF-8); got ${bytes}`);
  return value;
}

function parseDescription(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'description must be a string');
  if (value.length > MAX_DESCRIPTION)
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `description must be at most ${MAX_DESCRIPTION} characters; got ${value.length}`);
  return value.trim();
}

/** Runs every parser and reports every problem at once. */
function collect(parsers: (() => void)[]): void {
  const problems: string[] = [];
  for (const parse of parsers) {
    try {
      parse();
    } catch (err) {
      if (err instanceof BadInputError) problems.push(...err.messages);
      else throw err;
    }
  }
  if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
}

// ---- keys ----

const keyAad = (workspaceId: string) => `vault data key ${workspaceId}`;
/** What a value is bound to: its workspace and name. */
export const valueAad = (workspaceId: string, name: string) => `vault value ${workspaceId} ${name}`;

function openDataKey(workspaceId: string, sealed: string): Buffer {
  try {
    return Buffer.from(open(subkey(KEY_PURPOSES.vaultDataKeys), sealed, keyAad(workspaceId)), 'base64');
  } catch {
    throw new VaultKeyMismatch();
  }
}

/** Re-wraps one data key from one master key's subkey to another's (master-key-rotation.ts). */
export function rewrapDataKey(workspaceId: string, sealed: string, from: Buffer, to: Buffer): string {
  return seal(to, open(from, sealed, keyAad(workspaceId)), keyAad(workspaceId));
}

/** The workspace's data key, made on its first secret. */
async function dataKey(tx: EntityManager, workspaceId: string): Promise<Buffer> {
  const [row] = await query<{ data_key_sealed: string }>(tx, 'SELECT data_key_sealed FROM vault_keys WHERE workspace_id = $1', [
    workspaceId,
  ]);
  if (row) return openDataKey(workspaceId, row.data_key_sealed);
  const fresh = seal(subkey(KEY_PURPOSES.vaultDataKeys), randomBytes(32).toString('base64'), keyAad(workspaceId));
  // Two first secrets at once: one key wins, both use it.
  const [kept] = await query<{ data_key_sealed: string }>(
    tx,
    `INSERT INTO vault_keys (workspace_id, data_key_sealed) VALUES ($1, $2)
     ON CONFLICT (workspace_id) DO UPDATE SET data_key_sealed = vault_keys.data_key_sealed RETURNING data_key_sealed`,
    [workspaceId, fresh],
  );
  return openDataKey(workspaceId, kept.data_key_sealed);
}

function openValue(key: Buffer, workspaceId: string, name: string, sealed: string): string {
  try {
    return open(key, sealed, valueAad(workspaceId, name));
  } catch {
    throw new VaultKeyMismatch();
  }
}

// ---- secrets ----

export async function listSecrets(db: Db, workspaceId: string): Promise<VaultSecret[]> {
  const rows = await query(db, `SELECT ${COLUMNS} FROM vault_secrets WHERE workspace_id = $1 ORDER BY name`, [workspaceId]);
  return rows.map(summary);
}

/** Another workspace's secret behaves as missing. */
export async function getSecret(db: Db, workspaceId: string, name: string): Promise<VaultSecret> {
  const [row] = NAME_PATTERN.test(name)
    ? await query(db, `SELECT ${COLUMNS} FROM vault_secrets WHERE workspace_id = $1 AND name = $2`, [workspaceId, name])
    : [];
  if (!row) throw new NotFoundError(`No vault secret named ${name.slice(0, 80)} in this workspace`);
  return summary(row);
}

export async function createSecret(db: Db, workspaceId: string, actor: Actor, input: VaultSecretInput): Promise<VaultSecret> {
  let name = '';
  let value = '';
  let description = '';
  collect([
    () => (name = parseName(input.name)),
    () => (value = parseValue(input.value)),
    () => (description = parseDescription(input.description)),
  ]);
  return inTransaction(db, async (tx) => {
    const key = await dataKey(tx, workspaceId);
    const [row] = await query(
      tx,
      `INSERT INTO vault_secrets (workspace_id, name, value_sealed, description) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_id, name) DO NOTHING RETURNING ${COLUMNS}`,
      [workspaceId, name, seal(key, value, valueAad(workspaceId, name)), description],
    );
    if (!row) throw new ConflictError(`A vault secret named ${name} already exists; rotate it to change its value`);
    await recordAudit(tx, { workspaceId, actor, action: 'vault.create', target: { type: 'vault_secret', label: name } });
    return summary(row);
  });
}

/** A new value (a rotation: `rotatedAt` moves) and/or a new description. */
export async function updateSecret(db: Db, workspaceId: string, actor: Actor, name: string, input: VaultSecretInput): Promise<VaultSecret> {
  if (input.value === undefined && input.description === undefined)
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'Give value (to rotate the secret), description, or both');
  let value: string | undefined;
  let description: string | undefined;
  collect([
    () => (value = input.value === undefined ? undefined : parseValue(input.value)),
    () => (description = input.description === undefined ? undefined : parseDescription(input.description)),
  ]);
  return inTransaction(db, async (tx) => {
    await getSecret(tx, workspaceId, name);
    const key = value === undefined ? undefined : await dataKey(tx, workspaceId);
    const [row] = await query(
      tx,
      `UPDATE vault_secrets SET value_sealed = coalesce($3, value_sealed), description = coalesce($4, description),
              rotated_at = CASE WHEN $3::text IS NULL THEN rotated_at ELSE now() END
        WHERE workspace_id = $1 AND name = $2 RETURNING ${COLUMNS}`,
      [workspaceId, name, key ? seal(key, value!, valueAad(workspaceId, name)) : null, description ?? null],
    );
    if (!row) throw new NotFoundError(`No vault secret named ${name} in this workspace`);
    if (value !== undefined)
      await recordAudit(tx, { workspaceId, actor, action: 'vault.rotate', target: { type: 'vault_secret', label: name } });
    if (description !== undefined)
      await recordAudit(tx, {
        workspaceId,
        actor,
        action: 'vault.update',
        target: { type: 'vault_secret', label: name },
        details: { description },
      });
    return summary(row);
  });
}

/** Refused while a webhook header names it: a delivery would otherwise fail for a missing secret. */
export async function deleteSecret(db: Db, workspaceId: string, actor: Actor, name: string): Promise<VaultSecret> {
  return inTransaction(db, async (tx) => {
    const secret = await getSecret(tx, workspaceId, name);
    // The row lock first: a webhook saved meanwhile (it locks the names it uses) is seen below.
    await query(tx, 'DELETE FROM vault_secrets WHERE workspace_id = $1 AND name = $2', [workspaceId, name]);
    const users = await query<{ url: string }>(
      tx,
      `SELECT url FROM webhooks WHERE workspace_id = $1 AND strpos(headers::text, $2) > 0 ORDER BY created_at LIMIT 5`,
      [workspaceId, `{{vault.${name}}}`],
    );
    if (users.length)
      throw new ConflictError(
        `${name} is used by the webhook${users.length > 1 ? 's' : ''} ${users.map((u) => u.url).join(', ')}; remove the header that names it first`,
      );
    await recordAudit(tx, { workspaceId, actor, action: 'vault.delete', target: { type: 'vault_secret', label: name } });
    return secret;
  });
}

/**
 * The value, for a signed-in member who confirmed the password (the settings layer checks
 * that): audited with who, when and which secret, never the value.
 */
export async function revealSecret(
  db: Db,
  workspaceId: string,
  actor: Actor,
  name: string,
): Promise<{ secret: VaultSecret; value: string }> {
  return inTransaction(db, async (tx) => {
    const secret = await getSecret(tx, workspaceId, name);
    const [row] = await query<{ value_sealed: string; data_key_sealed: string }>(
      tx,
      `SELECT s.value_sealed, k.data_key_sealed FROM vault_secrets s JOIN vault_keys k ON k.workspace_id = s.workspace_id
        WHERE s.workspace_id = $1 AND s.name = $2`,
      [workspaceId, name],
    );
    const value = openValue(openDataKey(workspaceId, row.data_key_sealed), workspaceId, name, row.value_sealed);
    await recordAudit(tx, { workspaceId, actor, action: 'vault.reveal', target: { type: 'vault_secret', label: name } });
    return { secret, value };
  });
}

/**
 * Which of `names` the workspace's vault holds, each row locked against a delete until the
 * caller's transaction ends (a webhook being saved with references to them).
 */
export async function lockExistingNames(tx: Db, workspaceId: string, names: string[]): Promise<Set<string>> {
  if (!names.length) return new Set();
  const rows = await query<{ name: string }>(
    tx,
    'SELECT name FROM vault_secrets WHERE workspace_id = $1 AND name = ANY($2::text[]) FOR KEY SHARE',
    [workspaceId, names],
  );
  return new Set(rows.map((r) => r.name));
}

/** Anything with a pg-style `query` (the delivery pool) or a TypeORM manager. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

/**
 * The values of `names` for one webhook delivery, at the moment it is sent; a name the
 * vault no longer holds is left out (the caller fails the attempt). Marks them used, at most
 * once a minute each, in the same statement.
 */
export async function valuesForDelivery(db: Queryable, workspaceId: string, names: string[]): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  if (!names.length) return values;
  const result = (await db.query(
    `WITH used AS (
       UPDATE vault_secrets SET last_used_at = now()
        WHERE workspace_id = $1 AND name = ANY($2::text[]) AND (last_used_at IS NULL OR last_used_at < now() - ${LAST_USED_GRANULARITY})
     )
     SELECT s.name, s.value_sealed, k.data_key_sealed FROM vault_secrets s JOIN vault_keys k ON k.workspace_id = s.workspace_id
      WHERE s.workspace_id = $1 AND s.name = ANY($2::text[])`,
    [workspaceId, names],
  )) as { rows?: unknown[] } | unknown[];
  const rows = (Array.isArray(result) ? result : (result.rows ?? [])) as { name: string; value_sealed: string; data_key_sealed: string }[];
  if (!rows.length) return values;
  const key = openDataKey(workspaceId, rows[0].data_key_sealed);
  for (const row of rows) values.set(row.name, openValue(key, workspaceId, row.name, row.value_sealed));
  return values;
}
