import { BadInputError, ErrorCode } from '#errors/errors.js';
import type { Db } from './accounts.js';

/**
 * Every change made on the settings pages (and the same changes through the APIs), and every
 * import: who, what, when. Details describe the change (names, roles, expiry, counts) and
 * never hold a secret.
 */
export const AUDIT_ACTIONS = [
  'api_key.create',
  'api_key.revoke',
  'role.create',
  'role.update',
  'role.delete',
  'server_app.create',
  'server_app.rotate_secret',
  'server_app.delete',
  'member.change_role',
  'member.remove',
  'invite.create',
  'invite.revoke',
  'invite.accept',
  'webhook.create',
  'webhook.update',
  'webhook.delete',
  'webhook.reveal_secret',
  'webhook.redeliver',
  'webhook.test',
  'field.create',
  'field.update',
  'field.delete',
  'field.unique',
  'object.create',
  'object.update',
  'object.delete',
  'vault.create',
  'vault.rotate',
  'vault.update',
  'vault.delete',
  'vault.reveal',
  'import.start',
  'import.end',
  'import.cancel',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** `webhook` of `webhook.create`: the part a filter's `webhook.*` names. */
export const auditGroupOf = (action: string) => action.slice(0, action.indexOf('.'));

export interface AuditEntry {
  workspaceId: string;
  /** `userId` null for an API key or a server app (its name is in `email`). */
  actor: { userId: string | null; email: string };
  action: AuditAction;
  target: { type: string; id?: string; label?: string };
  details?: Record<string, unknown>;
}

export interface AuditRow {
  id: string;
  actorEmail: string;
  action: AuditAction;
  targetType: string;
  targetId: string | null;
  targetLabel: string;
  details: Record<string, unknown>;
  createdAt: Date;
}

/** Anything that runs a statement: a DataSource, an EntityManager, or a transaction of the plain SQL layer adapted to `query`. */
export interface AuditDb {
  query(sql: string, params: unknown[]): Promise<unknown>;
}

export async function recordAudit(db: AuditDb, entry: AuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (workspace_id, actor_user_id, actor_email, action, target_type, target_id, target_label, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      entry.workspaceId,
      entry.actor.userId,
      entry.actor.email,
      entry.action,
      entry.target.type,
      entry.target.id ?? null,
      entry.target.label ?? '',
      JSON.stringify(entry.details ?? {}),
    ],
  );
}

export interface AuditFilter {
  /** Whose entries: the e-mail (or `API key "name"`, …) as the log shows it, any case. */
  actor?: string;
  /** One action, or `group.*` for every action of a group (`webhook.*`). */
  action?: string;
}

const MAX_ACTOR = 320;
const CURSOR = /^(\d{4}-\d\d-\d\dT[\d:.]+Z)_([0-9a-f-]{36})$/;

/** The actions a filter names: one, or every one of a group; a 400 for anything else. */
export function auditActionsOf(action: string): AuditAction[] {
  const group = action.endsWith('.*') ? action.slice(0, -2) : undefined;
  const found = AUDIT_ACTIONS.filter((a) => (group === undefined ? a === action : auditGroupOf(a) === group));
  if (!found.length)
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `action must be one of the audit actions (${AUDIT_ACTIONS.join(', ')}) or a group such as webhook.*; got "${action.slice(0, 100)}"`,
    );
  return found;
}

/** The actor filter, checked: 1 to 320 characters. */
export function auditActor(actor: string): string {
  if (!actor.length || actor.length > MAX_ACTOR)
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `actor must be 1 to ${MAX_ACTOR} characters`);
  return actor;
}

/**
 * Newest first, a page at a time; `before` is the `next` of the previous page (the same
 * filter applies; `cursorName` is what the caller calls it, for the message).
 */
export async function listAudit(
  db: Db,
  workspaceId: string,
  options: { before?: string; limit?: number; cursorName?: string } & AuditFilter = {},
): Promise<{ entries: AuditRow[]; next?: string }> {
  const limit = Math.min(Math.max(options.limit ?? 50, 1), 200);
  let cursor: [string, string] | undefined;
  if (options.before) {
    const match = CURSOR.exec(options.before);
    if (!match) throw new BadInputError(ErrorCode.INVALID_CURSOR, `${options.cursorName ?? 'before'} is not a cursor from this page`);
    cursor = [match[1], match[2]];
  }
  const actions = options.action === undefined ? null : auditActionsOf(options.action);
  const actor = options.actor === undefined ? null : auditActor(options.actor);
  const rows = await db.query(
    `SELECT id, actor_email, action, target_type, target_id, target_label, details, created_at FROM audit_log
      WHERE workspace_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
        AND ($5::text[] IS NULL OR action = ANY($5::text[])) AND ($6::text IS NULL OR lower(actor_email) = lower($6::text))
      ORDER BY created_at DESC, id DESC LIMIT $4`,
    [workspaceId, cursor?.[0] ?? null, cursor?.[1] ?? null, limit + 1, actions, actor],
  );
  const entries: AuditRow[] = rows.slice(0, limit).map((r: Record<string, never>) => ({
    id: r.id,
    actorEmail: r.actor_email,
    action: r.action,
    targetType: r.target_type,
    targetId: r.target_id,
    targetLabel: r.target_label,
    details: r.details,
    createdAt: r.created_at,
  }));
  const last = entries[entries.length - 1];
  return { entries, next: rows.length > limit && last ? `${last.createdAt.toISOString()}_${last.id}` : undefined };
}
