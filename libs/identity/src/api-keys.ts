import { isUUID } from 'class-validator';
import type { Db } from './accounts.js';

export type ApiKeyStatus = 'active' | 'expired' | 'revoked';

/** An API key as the settings pages list it: never its secret or hash. */
export interface ApiKeySummary {
  id: string;
  name: string;
  role: { id: string; name: string };
  createdAt: Date;
  createdByEmail: string | null;
  expiresAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  status: ApiKeyStatus;
}

/** Every key of the workspace, or with `revoked: false` only those not revoked (the settings' default list). */
export function listApiKeys(db: Db, workspaceId: string, o: { revoked?: boolean } = {}): Promise<ApiKeySummary[]> {
  return select(db, workspaceId, undefined, o.revoked ?? true);
}

/** How many revoked keys the default list leaves out. */
export async function countRevokedApiKeys(db: Db, workspaceId: string): Promise<number> {
  const [row] = await db.query('SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NOT NULL', [workspaceId]);
  return row.n;
}

export async function findApiKeySummary(db: Db, workspaceId: string, id: string): Promise<ApiKeySummary | undefined> {
  return isUUID(id) ? (await select(db, workspaceId, id))[0] : undefined;
}

async function select(db: Db, workspaceId: string, id?: string, revoked = true): Promise<ApiKeySummary[]> {
  const rows = await db.query(
    `SELECT k.id, k.name, r.id AS role_id, r.name AS role_name, k.created_at, u.email AS created_by_email,
            k.expires_at, k.last_used_at, k.revoked_at,
            CASE WHEN k.revoked_at IS NOT NULL THEN 'revoked' WHEN k.expires_at <= now() THEN 'expired' ELSE 'active' END AS status
       FROM api_keys k
       JOIN roles r ON r.workspace_id = k.workspace_id AND r.id = k.role_id
       LEFT JOIN users u ON u.id = k.created_by_user_id
      WHERE k.workspace_id = $1 AND ($2::uuid IS NULL OR k.id = $2) AND ($3 OR k.revoked_at IS NULL)
      ORDER BY (k.revoked_at IS NULL AND k.expires_at > now()) DESC, k.created_at DESC, k.id`,
    [workspaceId, id ?? null, revoked],
  );
  return rows.map((r: Record<string, never>) => ({
    id: r.id,
    name: r.name,
    role: { id: r.role_id, name: r.role_name },
    createdAt: r.created_at,
    createdByEmail: r.created_by_email,
    expiresAt: r.expires_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
    status: r.status,
  }));
}
