import { BadInputError, ErrorCode } from '#errors/errors.js';
import type { Db } from './accounts.js';

/**
 * Every change made on the settings pages: who, what, when. Details describe the change
 * (names, roles, expiry) and never hold a secret.
 */
export type AuditAction =
  | 'api_key.create'
  | 'api_key.revoke'
  | 'role.create'
  | 'role.update'
  | 'role.delete'
  | 'server_app.create'
  | 'server_app.rotate_secret'
  | 'server_app.delete'
  | 'member.change_role'
  | 'member.remove'
  | 'invite.create'
  | 'invite.revoke'
  | 'invite.accept'
  | 'webhook.create'
  | 'webhook.update'
  | 'webhook.delete'
  | 'webhook.reveal_secret'
  | 'webhook.redeliver'
  | 'field.create'
  | 'field.update'
  | 'field.delete'
  | 'field.unique'
  | 'object.create'
  | 'object.update'
  | 'object.delete'
  | 'vault.create'
  | 'vault.rotate'
  | 'vault.update'
  | 'vault.delete'
  | 'vault.reveal';

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

export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
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

/** Newest first, a page at a time; `before` is the `next` of the previous page. */
export async function listAudit(
  db: Db,
  workspaceId: string,
  options: { before?: string; limit?: number } = {},
): Promise<{ entries: AuditRow[]; next?: string }> {
  const limit = Math.min(Math.max(options.limit ?? 50, 1), 200);
  let cursor: [string, string] | undefined;
  if (options.before) {
    const match = /^(\d{4}-\d\d-\d\dT[\d:.]+Z)_([0-9a-f-]{36})$/.exec(options.before);
    if (!match) throw new BadInputError(ErrorCode.INVALID_CURSOR, 'before is not a cursor from this page');
    cursor = [match[1], match[2]];
  }
  const rows = await db.query(
    `SELECT id, actor_email, action, target_type, target_id, target_label, details, created_at FROM audit_log
      WHERE workspace_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
      ORDER BY created_at DESC, id DESC LIMIT $4`,
    [workspaceId, cursor?.[0] ?? null, cursor?.[1] ?? null, limit + 1],
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
