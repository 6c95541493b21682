import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { RoleEntity } from '../../database/src/entities/index.js';
import { BadInputError, ErrorCode } from '../../records/src/errors.js';
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
  ds: DataSource,
  input: { workspaceId: string; role: RoleEntity; name: string; createdByUserId?: string },
): Promise<CreatedServerApp> {
  const name = input.name?.trim();
  if (!name || name.length > 100) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'name must be 1 to 100 characters');
  if (!input.role.assignableToApiKeys) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `role "${input.role.name}" cannot be assigned to apps or API keys`);
  }
  const clientId = `app_${randomBytes(12).toString('base64url')}`;
  const clientSecret = `wrsa_${randomBytes(32).toString('base64url')}`;
  return ds.transaction(async (tx) => {
    const [app] = await tx.query(
      `INSERT INTO server_apps (workspace_id, client_id, name, role_id, created_by_user_id) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [input.workspaceId, clientId, name, input.role.id, input.createdByUserId ?? null],
    );
    await tx.query(`INSERT INTO oidc_models (model, id, payload) VALUES ('Client', $1, $2)`, [clientId, JSON.stringify(clientMetadata(clientId, hashSecret(clientSecret), name))]);
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
