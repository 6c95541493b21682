import type { Principal } from '#auth/principal.js';
import type { Sql } from '#database/sql.js';
import type { Actor } from './data-model.js';

/** Who the audit log names for a bearer credential: the person, or the key's or app's name. */
export async function actorOf(sql: Sql, principal: Principal): Promise<Actor> {
  if (principal.kind === 'user') {
    const [row] = await sql.rows<{ email: string }>('SELECT email FROM users WHERE id::text = $1', [principal.subjectId]);
    // A person deleted meanwhile is no user id to point at (audit_log.actor_user_id references users).
    return row ? { userId: principal.subjectId, email: row.email } : { userId: null, email: 'unknown user' };
  }
  if (principal.kind === 'apiKey') {
    const [row] = await sql.rows<{ name: string }>('SELECT name FROM api_keys WHERE workspace_id = $1 AND id = $2', [
      principal.workspaceId,
      principal.subjectId,
    ]);
    return { userId: null, email: `API key "${row?.name ?? principal.subjectId}"` };
  }
  const [row] = await sql.rows<{ name: string }>('SELECT name FROM server_apps WHERE workspace_id = $1 AND client_id = $2', [
    principal.workspaceId,
    principal.subjectId,
  ]);
  return { userId: null, email: `server app "${row?.name ?? principal.subjectId}"` };
}
