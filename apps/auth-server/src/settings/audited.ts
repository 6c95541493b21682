import type { DataSource, EntityManager } from 'typeorm';
import { recordAudit, type AuditEntry } from '#identity/audit-log.js';
import type { SettingsContext } from './settings-context.js';

export type AuditNote = Omit<AuditEntry, 'workspaceId' | 'actor'>;

/**
 * A settings change and its audit log entry, in one transaction: both or neither. Given
 * the manager of a running transaction, it runs inside it (a savepoint).
 */
export function audited<T>(
  db: DataSource | EntityManager,
  ctx: Pick<SettingsContext, 'userId' | 'email' | 'workspace'>,
  change: (tx: EntityManager) => Promise<{ result: T; audit?: AuditNote }>,
): Promise<T> {
  const manager = 'manager' in db ? db.manager : db;
  return manager.transaction(async (tx) => {
    const { result, audit } = await change(tx);
    if (audit) await recordAudit(tx, { ...audit, workspaceId: ctx.workspace.id, actor: { userId: ctx.userId, email: ctx.email } });
    return result;
  });
}
