import { Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { Sql } from '#database/sql.js';
import { DataSource } from 'typeorm';
import { loadConfig } from '#config/config.js';
import { UnauthenticatedError } from '#errors/errors.js';
import { AccessTokenVerifier } from './access-token-verifier.js';
import { CredentialCache, type CachedCredential } from './credential-cache.js';
import type { Principal } from './principal.js';
import { API_SCOPE, RESOURCE_SCOPES, noResourceScope, roleThroughScopes, scopesOf } from './scopes.js';
import { API_KEY_PREFIX, hashSecret } from '#identity/secrets.js';

interface ApiKeyRow {
  workspace_id: string;
  id: string;
  revoked: boolean;
  expired: boolean;
  /** expires_at in epoch ms. */
  expires_ms: string;
  /** last_used_at is older than a minute (or unset): worth writing again. */
  use_stale: boolean;
  role_id: string;
  role_name: string;
  object_permissions: Principal['role']['objectPermissions'];
  settings_permissions: Principal['role']['settingsPermissions'];
  field_permissions: Principal['role']['fieldPermissions'];
  data_model_version: string;
}

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/;
/** RFC 6750 §2.1: `Bearer` is case-insensitive, the token is b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i;

/** A cached principal not yet checked against the credential version (BearerAuthService.cached). */
export interface UnconfirmedPrincipal {
  principal: Principal;
  /** The credential version it holds for: the write's statement carries `credentialGuard(version)`. */
  version: string;
  /** Call once the write succeeded: the key counts as used. */
  used(): void;
}

/** Which resource is being called: the whole API, or MCP (which also takes whole-API tokens). */
export type Resource = 'api' | 'mcp';

interface RoleRow {
  /** Person tokens: the grant is still there (not revoked, not expired). */
  granted?: boolean;
  /** Person tokens: the grant's expires_at in epoch ms (null: none). */
  grant_expires_ms?: string | null;
  role_id: string;
  role_name: string;
  object_permissions: Principal['role']['objectPermissions'];
  settings_permissions: Principal['role']['settingsPermissions'];
  field_permissions: Principal['role']['fieldPermissions'];
  data_model_version: string;
}

/** A once-a-minute `last_used_at` keeps a busy key from turning every read into a write (cached or read from the database). */
const KEY_USE_RESOLUTION_MS = 60_000;

/**
 * Turns the `Authorization: Bearer` header, and nothing else, into a Principal.
 * Resolved principals are kept in the CredentialCache, which uses one only after reading
 * the credential version that every change to keys, roles, members, apps or grants
 * moves; each entry also stops at its credential's own expiry. So revocation, expiry and
 * role changes still apply to the next request on every instance.
 */
@Injectable()
export class BearerAuthService {
  private readonly logger = new Logger(BearerAuthService.name);
  private readonly publicUrl = loadConfig().publicUrl;
  private readonly tokens: AccessTokenVerifier;

  constructor(
    dataSource: DataSource,
    private readonly sql: Sql,
    private readonly cache: CredentialCache,
  ) {
    this.tokens = new AccessTokenVerifier(dataSource, this.publicUrl);
  }

  async authenticate(authorization: string | string[] | undefined, resource: Resource = 'api'): Promise<Principal> {
    const token = bearerToken(authorization);
    const credential = cacheKeyOf(token, resource);
    if (!credential) throw new UnauthenticatedError('The bearer token is not a valid API key or access token');
    if (credential.apiKey) {
      const cached = await this.cache.lookup(credential.key);
      if (!cached) return this.fromApiKey(credential.key);
      this.used(cached);
      return cached.principal;
    }
    return (await this.cache.lookup(credential.key))?.principal ?? this.fromAccessToken(token, resource, credential.key);
  }

  /**
   * The principal the cache keeps for this credential, without the version read
   * `authenticate` makes, and the credential version it holds for (CredentialCache.peek);
   * undefined when nothing is kept or the header is not a bearer credential. Only for a write
   * whose statement carries `credentialGuard(version)` and that authenticates in full
   * before it answers anything but its success; `used` then counts the key as used.
   */
  cached(authorization: string | string[] | undefined, resource: Resource): UnconfirmedPrincipal | undefined {
    const token = BEARER.exec(typeof authorization === 'string' ? authorization : '')?.[1];
    const credential = token === undefined ? undefined : cacheKeyOf(token, resource);
    const peeked = credential && this.cache.peek(credential.key);
    if (!peeked) return undefined;
    return { principal: peeked.entry.principal, version: peeked.version, used: () => credential.apiKey && this.used(peeked.entry) };
  }

  /** An API key's `last_used_at`, written at most once a minute (KEY_USE_RESOLUTION_MS). */
  private used(entry: CachedCredential): void {
    if (Date.now() - entry.touched < KEY_USE_RESOLUTION_MS) return;
    entry.touched = Date.now();
    this.touchKey(entry.principal);
  }

  /**
   * An OAuth access token acts with the role its subject holds now: the person's role in
   * the token's workspace, or the server app's role. Read whenever the cache has no entry
   * still good, and every change to members, roles, apps or grants invalidates them all, so
   * removing a member or changing a role applies to the next request.
   */
  private async fromAccessToken(token: string, resource: Resource, cacheKey: string): Promise<Principal> {
    const ticket = this.cache.ticket();
    const audiences = resource === 'mcp' ? [`${this.publicUrl}/mcp`, this.publicUrl] : [this.publicUrl];
    const claims = await this.tokens.verify(token, audiences);
    const workspaceId = claims.workspace_id;
    if (!workspaceId || !isUUID(workspaceId) || !claims.sub) throw new UnauthenticatedError('The access token names no workspace');
    // The token acts with its subject's role as its scopes narrow it (scopes.ts); one holding
    // none that reaches records (a refresh narrowed to `profile`) reaches nothing here.
    const scopes = scopesOf(claims.scope);
    if (!RESOURCE_SCOPES.some((s) => scopes.has(s))) throw noResourceScope(scopes);
    const isApp = claims.client_id !== undefined && claims.sub === claims.client_id;
    const rows = isApp
      ? await this.sql.rows<RoleRow>(
          `SELECT r.id AS role_id, r.name AS role_name, r.object_permissions, r.settings_permissions, r.field_permissions,
              (SELECT w.data_model_version FROM workspaces w WHERE w.id = r.workspace_id) AS data_model_version
             FROM server_apps a JOIN roles r ON r.workspace_id = a.workspace_id AND r.id = a.role_id
            WHERE a.client_id = $1 AND a.workspace_id = $2`,
          [claims.client_id, workspaceId],
          { prepared: true },
        )
      : await this.sql.rows<RoleRow>(
          `SELECT r.id AS role_id, r.name AS role_name, r.object_permissions, r.settings_permissions, r.field_permissions,
              (SELECT w.data_model_version FROM workspaces w WHERE w.id = r.workspace_id) AS data_model_version,
                  g.id IS NOT NULL AS granted, (extract(epoch FROM g.expires_at) * 1000)::bigint AS grant_expires_ms
             FROM workspace_members m JOIN roles r ON r.workspace_id = m.workspace_id AND r.id = m.role_id
                  LEFT JOIN oidc_models g ON g.model = 'Grant' AND g.id = $3 AND (g.expires_at IS NULL OR g.expires_at > now())
            WHERE m.user_id::text = $1 AND m.workspace_id = $2`,
          [claims.sub, workspaceId, claims.grant ?? ''],
          { prepared: true },
        );
    if (!rows.length) {
      throw new UnauthenticatedError(isApp ? 'The server app no longer exists' : 'The person is no longer a member of this workspace');
    }
    // Refresh-token or code reuse, revocation (RFC 7009) and sign-out revoke the grant:
    // its access tokens stop at once, not when they expire (docs/security.md).
    if (!isApp && !rows[0].granted) throw new UnauthenticatedError("The access token's grant has been revoked; authorize again");
    const principal: Principal = {
      kind: isApp ? 'app' : 'user',
      subjectId: claims.sub,
      workspaceId,
      dataModelVersion: Number(rows[0].data_model_version),
      ...(scopes.has(API_SCOPE) ? {} : { scopes: [...scopes] }),
      role: roleThroughScopes(
        {
          id: rows[0].role_id,
          name: rows[0].role_name,
          objectPermissions: rows[0].object_permissions,
          settingsPermissions: rows[0].settings_permissions,
          fieldPermissions: rows[0].field_permissions,
        },
        scopes,
      ),
    };
    const grantExpires = rows[0].grant_expires_ms ? Number(rows[0].grant_expires_ms) : Infinity;
    this.cache.set(cacheKey, ticket, principal, Math.min((claims.exp ?? 0) * 1000, grantExpires));
    return principal;
  }

  private async fromApiKey(hash: string): Promise<Principal> {
    const ticket = this.cache.ticket();
    const rows = await this.sql.rows<ApiKeyRow>(
      `SELECT k.workspace_id, k.id, k.revoked_at IS NOT NULL AS revoked, k.expires_at <= now() AS expired,
              (extract(epoch FROM k.expires_at) * 1000)::bigint AS expires_ms,
              (k.last_used_at IS NULL OR k.last_used_at < now() - interval '${KEY_USE_RESOLUTION_MS} milliseconds') AS use_stale,
              r.id AS role_id, r.name AS role_name, r.object_permissions, r.settings_permissions, r.field_permissions,
              (SELECT w.data_model_version FROM workspaces w WHERE w.id = r.workspace_id) AS data_model_version
         FROM api_keys k JOIN roles r ON r.workspace_id = k.workspace_id AND r.id = k.role_id
        WHERE k.secret_hash = $1`,
      [hash],
      { prepared: true },
    );
    const key = rows[0];
    if (!key) throw new UnauthenticatedError('The API key is not valid');
    if (key.revoked) throw new UnauthenticatedError('The API key has been revoked');
    if (key.expired) throw new UnauthenticatedError('The API key has expired');
    const principal: Principal = {
      kind: 'apiKey',
      subjectId: key.id,
      workspaceId: key.workspace_id,
      dataModelVersion: Number(key.data_model_version),
      role: {
        id: key.role_id,
        name: key.role_name,
        objectPermissions: key.object_permissions,
        settingsPermissions: key.settings_permissions,
        fieldPermissions: key.field_permissions,
      },
    };
    if (key.use_stale) this.touchKey(principal);
    this.cache.set(hash, ticket, principal, Number(key.expires_ms));
    return principal;
  }

  private touchKey(key: Principal): void {
    this.sql
      .rows('UPDATE api_keys SET last_used_at = now() WHERE workspace_id = $1 AND id = $2', [key.workspaceId, key.subjectId])
      .catch((err) => this.logger.warn(`last_used_at not updated: ${err.message}`));
  }
}

/**
 * Where the credential cache keeps a bearer token's principal: an API key under its hash
 * (the hash `api_keys.secret_hash` holds), an access token under its hash per resource;
 * undefined for a token of neither shape.
 */
function cacheKeyOf(token: string, resource: Resource): { key: string; apiKey: boolean } | undefined {
  if (token.startsWith(API_KEY_PREFIX)) return { key: hashSecret(token), apiKey: true };
  if (JWT_SHAPE.test(token)) return { key: `${resource}:${hashSecret(token)}`, apiKey: false };
  return undefined;
}

/** The token of an `Authorization: Bearer` header (BEARER), or a 401 naming what is wrong. */
export function bearerToken(authorization: string | string[] | undefined): string {
  if (authorization === undefined || authorization === '') {
    throw new UnauthenticatedError('Missing credentials: send Authorization: Bearer <API key or access token>');
  }
  const value = Array.isArray(authorization) ? authorization[0] : authorization;
  const match = BEARER.exec(value ?? '');
  if (!match) throw new UnauthenticatedError('The Authorization header must be "Bearer <token>"');
  return match[1];
}
