import { isUUID } from 'class-validator';
import { randomBytes } from 'node:crypto';
import type { RoleEntity } from '#database/entities/index.js';
import { BadInputError, ErrorCode, NotFoundError } from '#errors/errors.js';
import type { Db } from './accounts.js';
import { hashSecret } from './secrets.js';

export interface CreatedServerApp {
  id: string;
  name: string;
  clientId: string;
  /** Shown once; only its SHA-256 is stored. */
  clientSecret: string;
  role: string;
}

/**
 * A server app: an OAuth client for the client_credentials grant (RFC 6749 §4.4) whose
 * tokens act with the app's role in its workspace. The provider's client record holds
 * only the hash of the secret (see apps/auth-server/src/oidc/provider.ts).
 */
export async function createServerApp(
  ds: Db,
  input: { workspaceId: string; role: RoleEntity; name: string; createdByUserId?: string },
): Promise<CreatedServerApp> {
  const name = input.name?.trim();
  if (!name || name.length > 100) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'name must be 1 to 100 characters');
  if (!input.role.assignableToApiKeys) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `role "${input.role.name}" cannot be assigned to apps or API keys`);
  }
  const clientId = `app_${randomBytes(12).toString('base64url')}`;
  const clientSecret = newClientSecret();
  const manager = 'manager' in ds ? ds.manager : ds;
  return manager.transaction(async (tx) => {
    const [app] = await tx.query(
      `INSERT INTO server_apps (workspace_id, client_id, name, role_id, created_by_user_id) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [input.workspaceId, clientId, name, input.role.id, input.createdByUserId ?? null],
    );
    await tx.query(`INSERT INTO oidc_models (model, id, payload) VALUES ('Client', $1, $2)`, [
      clientId,
      JSON.stringify(clientMetadata(clientId, hashSecret(clientSecret), name)),
    ]);
    return { id: app.id, name, clientId, clientSecret, role: input.role.name };
  });
}

export function clientMetadata(clientId: string, secretHash: string, name: string) {
  return {
    client_id: clientId,
    client_secret: secretHash,
    client_name: name,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    workspace_app: true,
  };
}

function newClientSecret(): string {
  return `wrsa_${randomBytes(32).toString('base64url')}`;
}

export interface ServerAppSummary {
  id: string;
  name: string;
  clientId: string;
  role: { id: string; name: string };
  createdAt: Date;
  createdByEmail: string | null;
}

export async function listServerApps(db: Db, workspaceId: string, id?: string): Promise<ServerAppSummary[]> {
  const rows = await db.query(
    `SELECT a.id, a.name, a.client_id, r.id AS role_id, r.name AS role_name, a.created_at, u.email AS created_by_email
       FROM server_apps a
       JOIN roles r ON r.workspace_id = a.workspace_id AND r.id = a.role_id
       LEFT JOIN users u ON u.id = a.created_by_user_id
      WHERE a.workspace_id = $1 AND ($2::uuid IS NULL OR a.id = $2)
      ORDER BY a.created_at DESC, a.id`,
    [workspaceId, id ?? null],
  );
  return rows.map((r: Record<string, never>) => ({
    id: r.id,
    name: r.name,
    clientId: r.client_id,
    role: { id: r.role_id, name: r.role_name },
    createdAt: r.created_at,
    createdByEmail: r.created_by_email,
  }));
}

export async function findServerApp(db: Db, workspaceId: string, id: string): Promise<ServerAppSummary> {
  const app = isUUID(id) ? (await listServerApps(db, workspaceId, id))[0] : undefined;
  if (!app) throw new NotFoundError(`No server app with id ${id} in this workspace`);
  return app;
}

/**
 * A new secret; the old one stops working at once (the provider reads the client record
 * on every token request). Tokens already issued run to their expiry (30 minutes at most).
 */
export async function rotateServerAppSecret(db: Db, workspaceId: string, id: string): Promise<ServerAppSummary & { clientSecret: string }> {
  const app = await findServerApp(db, workspaceId, id);
  const clientSecret = newClientSecret();
  await db.query(`UPDATE oidc_models SET payload = $2 WHERE model = 'Client' AND id = $1`, [
    app.clientId,
    JSON.stringify(clientMetadata(app.clientId, hashSecret(clientSecret), app.name)),
  ]);
  return { ...app, clientSecret };
}

/** The client is gone at once; its access tokens are refused on their next use (the app's role is read per request). */
export async function deleteServerApp(db: Db, workspaceId: string, id: string): Promise<ServerAppSummary> {
  const app = await findServerApp(db, workspaceId, id);
  await db.query(`DELETE FROM oidc_models WHERE model = 'Client' AND id = $1`, [app.clientId]);
  await db.query('DELETE FROM server_apps WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  return app;
}
