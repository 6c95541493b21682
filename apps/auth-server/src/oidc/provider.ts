import Provider from 'oidc-provider';
import type { DataSource } from 'typeorm';
import { loadConfig } from '#config/config.js';
import { hashSecret } from '#identity/secrets.js';
import { ensureOidcKeys } from '#identity/signing-keys.js';
import { isDatabaseUnavailable, isStatementTimeout, RETRY_AFTER_SECONDS } from '#ops/database-unavailable.js';
import { postgresAdapter } from '../adapter/postgres-adapter.js';
import { buildConfiguration } from './configuration.js';

export type OidcProvider = InstanceType<typeof Provider>;

/** The authorization server: oidc-provider over our Postgres storage, keys and accounts. */
export async function createProvider(ds: DataSource, publicUrl: string): Promise<OidcProvider> {
  const keys = await ensureOidcKeys(ds);
  const provider = new Provider(
    publicUrl,
    buildConfiguration({
      publicUrl,
      adapter: postgresAdapter(ds),
      signingKeys: keys.signing,
      cookieKeys: keys.cookies,
      allowPrivateFetch: process.env.CIMD_ALLOW_PRIVATE === '1',
      fetchTimeoutMs: loadConfig().cimdFetchTimeoutMs,
      findAccount: async (_ctx, sub) => {
        const rows = await ds.query('SELECT id, email FROM users WHERE id::text = $1', [sub]);
        if (!rows.length) return undefined;
        return { accountId: sub, claims: async () => ({ sub, email: rows[0].email }) };
      },
      workspaceClaims: async (token) => {
        if (token.kind === 'ClientCredentials' && token.clientId) {
          const apps = await ds.query('SELECT workspace_id FROM server_apps WHERE client_id = $1', [token.clientId]);
          return apps.length ? { workspace_id: apps[0].workspace_id } : undefined;
        }
        if (token.grantId) {
          const grants = await ds.query('SELECT workspace_id FROM oauth_grant_workspaces WHERE grant_id = $1', [token.grantId]);
          // `grant`: the stored key of the grant (its id's SHA-256), so the API can refuse the
          // token once the grant is revoked (docs/security.md) with one indexed lookup.
          return grants.length ? { workspace_id: grants[0].workspace_id, grant: hashSecret(token.grantId) } : undefined;
        }
        return undefined;
      },
    }),
  );
  // X-Forwarded-Host/Proto are set from PUBLIC_URL by bootstrap.ts before the provider sees
  // a request (never the client's), so the issuer's URLs are always the public ones.
  provider.proxy = true;
  // Server app secrets are stored as SHA-256 only: compare the hash of what the client sent.
  const compare = provider.Client.prototype.compareClientSecret;
  provider.Client.prototype.compareClientSecret = function (this: unknown, actual: string) {
    return compare.call(this, hashSecret(actual));
  };
  answer503WhileDatabaseIsAway(provider);
  explainRefreshTokenReuse(provider);
  return provider;
}

/**
 * README.md, Operations: a token request (a refresh, say) while Postgres is away is not the server's
 * fault to report as 500 `server_error`: it is 503 with `Retry-After`, and in JSON
 * replies RFC 6749's `temporarily_unavailable`, so clients retry instead of giving up.
 */
function answer503WhileDatabaseIsAway(provider: OidcProvider): void {
  provider.on('server_error', (ctx, err) => {
    if (isDatabaseUnavailable(err) || isStatementTimeout(err)) ctx.state.databaseUnavailable = true;
  });
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.status !== 500 || !ctx.state.databaseUnavailable) return;
    ctx.status = 503;
    ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
    if (ctx.body && typeof ctx.body === 'object') {
      ctx.body = {
        error: 'temporarily_unavailable',
        error_description: `The database is unavailable; retry after ${RETRY_AFTER_SECONDS} s`,
      };
    }
  });
}

/**
 * A rotated refresh token used again (RFC 9700 §4.14.2) revokes its whole grant, and
 * oidc-provider answers only "grant request is invalid": say what happened, so the
 * client's developer knows to sign in again and to keep the newest refresh token.
 */
export const REFRESH_TOKEN_REUSED =
  'This refresh token was already used, so the grant was revoked: an old refresh token was reused (each refresh returns a new one; keep only the newest). Sign in again.';

function explainRefreshTokenReuse(provider: OidcProvider): void {
  provider.on('grant.error', (ctx, err) => {
    if ((err as { error_detail?: string }).error_detail === 'refresh token already used') ctx.state.refreshTokenReused = true;
  });
  provider.use(async (ctx, next) => {
    await next();
    if (!ctx.state.refreshTokenReused || !ctx.body || typeof ctx.body !== 'object') return;
    ctx.body = { ...(ctx.body as object), error_description: REFRESH_TOKEN_REUSED };
  });
}
