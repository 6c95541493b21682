import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { JWK } from 'jose';
import { isLoopbackHost } from '#net/loopback.js';
import { keptFetch } from './fetch-document.js';
import { knownResources, normaliseResource } from './resources.js';
import { API_SCOPE, RESOURCE_SCOPES } from '#auth/scopes.js';

export const ACCESS_TOKEN_TTL = 1800;
/** Refresh tokens: 30 days, renewed by rotation on each use; an idle grant dies after 30 days. */
export const REFRESH_TOKEN_TTL = 30 * 24 * 3600;
/** Scopes a token for the API (either resource) can carry: what reaches records, and `profile`. */
const RESOURCE_SERVER_SCOPES = [...RESOURCE_SCOPES, 'profile'];
export const SCOPES = ['openid', 'offline_access', ...RESOURCE_SERVER_SCOPES];
const PUBLIC_CLIENT_GRANTS = new Set(['authorization_code', 'refresh_token']);

export interface ConfigurationDeps {
  publicUrl: string;
  adapter: Configuration['adapter'];
  signingKeys: JWK[];
  cookieKeys: string[];
  /** CIMD_ALLOW_PRIVATE=1: client metadata documents may live on private and loopback addresses (development, tests). */
  allowPrivateFetch: boolean;
  /** CIMD_FETCH_TIMEOUT_MS: how long one client metadata document may take to arrive. */
  fetchTimeoutMs: number;
  findAccount: Configuration['findAccount'];
  /** The workspace a token acts in: from the grant (person) or the server app. */
  workspaceClaims: (token: { kind: string; grantId?: string; clientId?: string }) => Promise<Record<string, unknown> | undefined>;
}

/** Client metadata documents: at most 5 KB (draft-ietf-oauth-client-id-metadata-document §4 recommends a limit). */
const CIMD_MAX_BYTES = 5 * 1024;
/**
 * How long a document URL's outcome is kept, a failure as much as a document: long enough
 * that naming one URL over and over fetches it once a minute at most, short enough that a
 * client whose document was fixed is not refused for long.
 */
export const CIMD_KEEP_MS = 60_000;
/** URLs whose outcome is kept at once (each at most 5 KB). */
const CIMD_KEPT_URLS = 1000;

/**
 * Why a redirect URI is refused, or undefined (docs/security.md; RFC 8252 §7; OAuth 2.1 §2.3.1):
 * https anywhere, http on loopback only, and a private-use scheme (reverse domain name,
 * `com.example.app:/cb`) for native apps; never a fragment.
 */
export function unsafeRedirectUri(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `redirect_uri ${uri} is not a URL`;
  }
  if (url.hash) return 'redirect_uris must not have a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') {
    return isLoopbackHost(url.hostname)
      ? undefined
      : `http redirect_uris are for loopback only (127.0.0.1, [::1], localhost); use https for ${url.host}`;
  }
  // A private-use scheme names a domain the app's owner controls, reversed: at least one dot.
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(url.protocol)) return undefined;
  return `redirect_uri scheme ${url.protocol} is not allowed; use https, http on loopback, or a private-use scheme such as com.example.app:/callback`;
}

/**
 * RFC 6749 §3.3: a request that names no scope reaching records (none at all, or only
 * `openid`, `profile`, `offline_access`) is given the default: the client's registered
 * ones of them if it registered a `scope`, else `api`, as tokens always had. It is added
 * to the request itself, before consent, so the consent page shows it, the grant records
 * it (a grant for less does not cover it: the page is shown again) and the token carries
 * it (docs/decisions/0063-oauth-scopes-for-agents.md). Only where scopes are first asked
 * for: authorization requests and client credentials; a refresh keeps the grant's, and
 * may only ask for fewer.
 */
function withDefaultScope(ctx: KoaContextWithOIDC): void {
  const { params, route, client } = ctx.oidc;
  const asking = route === 'authorization' || route === 'pushed_authorization_request' || params?.grant_type === 'client_credentials';
  if (!params || !asking) return;
  const requested = String(params.scope ?? '')
    .split(' ')
    .filter(Boolean);
  if (requested.some((s) => RESOURCE_SCOPES.includes(s))) return;
  const registered = client?.scope?.split(' ').filter((s) => RESOURCE_SCOPES.includes(s));
  const defaults = registered ?? [API_SCOPE];
  if (defaults.length) params.scope = [...requested, ...defaults].join(' ');
}

/** Each option with the reason for it and the rule it follows. */
export function buildConfiguration(deps: ConfigurationDeps): Configuration {
  const https = deps.publicUrl.startsWith('https:');
  const resources = knownResources(deps.publicUrl);
  const fetchKept = keptFetch({
    timeoutMs: deps.fetchTimeoutMs,
    maxBytes: CIMD_MAX_BYTES,
    allowPrivate: deps.allowPrivateFetch,
    keepMs: CIMD_KEEP_MS,
    maxEntries: CIMD_KEPT_URLS,
  });
  return {
    adapter: deps.adapter,
    findAccount: deps.findAccount,
    // Signing keys live in the database (see libs/auth/src/signing-keys.ts), published at the JWKS endpoint (RFC 7517).
    jwks: { keys: deps.signingKeys as never },
    // Cookies: HttpOnly and SameSite=Lax always, Secure when the issuer is https (RFC 6265bis §4.1.2.7).
    cookies: {
      keys: deps.cookieKeys,
      // `__Host-` on https for the long-lived session cookie (path /; RFC 6265bis §4.1.3.2).
      // The interaction cookies are scoped to their interaction's path, which `__Host-` forbids.
      names: { session: https ? '__Host-wrs_op_session' : '_session', interaction: '_interaction', resume: '_interaction_resume' },
      long: { httpOnly: true, sameSite: 'lax', secure: https, signed: true },
      short: { httpOnly: true, sameSite: 'lax', secure: https, signed: true },
    },
    // Authorization code flow only: the implicit and hybrid flows are gone in OAuth 2.1 (draft-ietf-oauth-v2-1 §10.1).
    responseTypes: ['code'],
    // PKCE with S256 for every client, public or confidential (OAuth 2.1 §4.1.1; RFC 7636 §4.2). v9 knows only S256.
    pkce: { required: () => true },
    // `api` is the whole role; records:* and data_model:write narrow it, never widen it;
    // `profile` is the e-mail (docs/authentication.md "Scopes"). `openid` and
    // `offline_access` are the provider's own.
    scopes: SCOPES,
    claims: { openid: ['sub'], profile: ['email'] },
    // Dynamically registered clients are public: no secret, code + refresh token only (RFC 7591 §2; docs/authentication.md).
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    // Declaring one extra property makes the validator see the whole metadata (oidc-provider extraClientMetadata).
    extraClientMetadata: {
      properties: ['workspace_app'],
      validator(ctx: KoaContextWithOIDC | undefined, key: string, value: unknown, metadata: Record<string, unknown>) {
        // Every client, stored before this rule or not: no redirect ever leaves for an unsafe URI.
        for (const uri of (metadata.redirect_uris as string[] | undefined) ?? []) {
          const refused = unsafeRedirectUri(uri);
          if (refused) throw new errors.InvalidRedirectUri(refused);
        }
        if (ctx?.oidc?.route !== 'registration') return;
        if (key === 'workspace_app' && value !== undefined) {
          throw new errors.InvalidClientMetadata('workspace_app cannot be registered dynamically');
        }
        if (metadata.token_endpoint_auth_method !== 'none') {
          // RFC 7591 §3.2.2: refuse, never silently change, what the client asked for.
          throw new errors.InvalidClientMetadata('only public clients may register: token_endpoint_auth_method must be "none"');
        }
        const grants = (metadata.grant_types as string[] | undefined) ?? [];
        const refused = grants.filter((g) => !PUBLIC_CLIENT_GRANTS.has(g));
        if (refused.length) {
          throw new errors.InvalidClientMetadata(
            `grant_types ${refused.join(', ')} not allowed; registered clients use authorization_code and refresh_token`,
          );
        }
        delete metadata.client_secret;
      },
    },
    features: {
      // Our own pages do sign-in, workspace choice and consent.
      devInteractions: { enabled: false },
      // Open dynamic client registration, as MCP clients expect (RFC 7591; MCP authorization spec).
      registration: { enabled: true, initialAccessToken: false },
      // Server apps registered by a workspace admin (RFC 6749 §4.4).
      clientCredentials: { enabled: true },
      // Let clients revoke their own tokens, and only those (RFC 7009 §2.1); another client's
      // token is left alone without saying so, as the RFC asks for unknown tokens.
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      // Tokens are for a resource; its URL is the JWT audience (RFC 8707; RFC 9068 §2.2).
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => (oneOf ? oneOf : deps.publicUrl),
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, resourceIndicator) => {
          // RFC 6749 §3.3 / §5.2: a scope we do not know is refused, not silently dropped.
          const unknown = String(ctx.oidc.params?.scope ?? '')
            .split(' ')
            .filter((s) => s && !SCOPES.includes(s));
          if (unknown.length)
            throw new errors.InvalidScope(`unknown scope: ${unknown.join(' ')}; use ${SCOPES.join(', ')}`, unknown.join(' '));
          const audience = normaliseResource(resourceIndicator);
          if (!resources.includes(audience)) throw new errors.InvalidTarget(`unknown resource; use ${resources.join(' or ')}`);
          withDefaultScope(ctx);
          return {
            scope: RESOURCE_SERVER_SCOPES.join(' '),
            audience,
            accessTokenTTL: ACCESS_TOKEN_TTL,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
      // OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; the
      // registration MCP 2025-11-25 recommends): an https client_id URL is fetched, checked
      // (its client_id equals the URL, no secrets) and used as a public client. oidc-provider
      // refuses special-use addresses on the connected socket (no DNS-rebinding bypass) and
      // bodies over 5 KB; `fetch` below sets the timeout and CIMD_ALLOW_PRIVATE.
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        cacheDuration: { min: 300, max: 86400 },
        allowClient: async (_ctx, client) => {
          const uris = client.redirectUris ?? [];
          if (!uris.length) throw new errors.InvalidClientMetadata('the client metadata document lists no redirect_uris');
          return true;
        },
      },
      // Sign-out is our /logout page.
      rpInitiatedLogout: { enabled: false },
      // Our access tokens are for the API (RFC 8707 audience), not for userinfo, which would
      // refuse them; the e-mail is not worth a second token. Not advertised, not served.
      userinfo: { enabled: false },
    },
    // The workspace the person chose rides in the access token (RFC 9068 §2.2.3.1 allows extra claims).
    extraTokenClaims: async (_ctx, token) => deps.workspaceClaims(token as never),
    // A refresh token for every authorization-code grant (no need for offline_access), rotated on every use;
    // reuse of a rotated one revokes the grant (OAuth 2.1 §4.3.1; RFC 9700 §4.14.2).
    issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.kind === 'AuthorizationCode',
    rotateRefreshToken: () => true,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL,
      ClientCredentials: ACCESS_TOKEN_TTL,
      AuthorizationCode: 60, // RFC 6749 §4.1.2: short lived, 10 minutes at most
      RefreshToken: REFRESH_TOKEN_TTL,
      Grant: REFRESH_TOKEN_TTL,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
    },
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    routes: {
      authorization: '/oauth/authorize',
      token: '/oauth/token',
      jwks: '/oauth/jwks',
      registration: '/oauth/register',
      revocation: '/oauth/revoke',
      pushed_authorization_request: '/oauth/par',
    },
    // Public clients use none; server apps a client secret (RFC 6749 §2.3.1). No shared-key JWT methods.
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    // Outgoing requests (client metadata documents): https, CIMD_FETCH_TIMEOUT_MS, 5 KB, no
    // redirects, public addresses only unless CIMD_ALLOW_PRIVATE=1, each URL at most once a
    // minute (fetch-document.ts). Every failure is a rejection, which the provider answers
    // as invalid_client.
    fetch: (url) => fetchKept(String(url)),
    fetchResponseBodyLimits: { 'client_id metadata document': CIMD_MAX_BYTES },
    // Errors in the provider's own responses never show internals.
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      const text = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
      ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in error</title><link rel="stylesheet" href="/oauth/assets/style.css"></head><body><main class="card"><h1>Something went wrong</h1><p><strong>${text(out.error)}</strong></p><p>${text(out.error_description)}</p></main></body></html>`;
    },
  };
}
