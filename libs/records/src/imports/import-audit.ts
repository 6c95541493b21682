import type { Principal } from '#auth/principal.js';
import type { Sql, SqlTx } from '#database/sql.js';
import { recordAudit, type AuditAction, type AuditEntry } from '#identity/audit-log.js';
import { actorOf } from '#identity/actor.js';
import type { ImportRow } from './import-summary.js';

type Actor = AuditEntry['actor'];

const KINDS = new Set<string>(['user', 'apiKey', 'app']);

/**
 * Who the audit log names for an import, from its `created_by` (`kind:subject` of the
 * credential, or a name such as "operator (CLI)"): the person, or the key's or app's name,
 * as for every other change made through the APIs. Read again when the import ends, so an
 * import that outlives its key is still logged by name.
 */
export async function importActor(sql: Sql, workspaceId: string, createdBy: string | null | undefined): Promise<Actor> {
  const colon = (createdBy ?? '').indexOf(':');
  const kind = colon > 0 ? createdBy!.slice(0, colon) : '';
  if (!KINDS.has(kind)) return { userId: null, email: createdBy || 'unknown' };
  return actorOf(sql, { kind, subjectId: createdBy!.slice(colon + 1), workspaceId } as Principal);
}

/**
 * One audit entry of an import, in the transaction that changes it (queued, ended, cancelled):
 * `import.start` with what was sent (object, mode, format, size), `import.end` and
 * `import.cancel` with what it did.
 */
export function auditImport(tx: SqlTx, actor: Actor, action: Extract<AuditAction, `import.${string}`>, row: ImportRow): Promise<void> {
  const counts = {
    rowsRead: Number(row.rows_done),
    created: Number(row.created),
    updated: Number(row.updated),
    unchanged: Number(row.unchanged),
    failed: Number(row.failed),
  };
  const details =
    action === 'import.start'
      ? {
          object: row.object,
          mode: row.mode,
          ...(row.match ? { match: row.match } : {}),
          format: row.format,
          bytes: Number(row.bytes),
          ...(row.record_events ? { events: 'records' } : {}),
        }
      : { status: row.status, ...counts, ...(row.error ? { error: row.error } : {}) };
  return recordAudit(
    { query: (text: string, params?: unknown[]) => tx.rows(text, params) },
    { workspaceId: row.workspace_id, actor, action, target: { type: 'import', id: row.id, label: row.object }, details },
  );
}
