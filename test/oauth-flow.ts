import * as oidc from 'openid-client';

/** An authorization request with a fresh PKCE S256 pair (RFC 7636), as a public client sends it. */
export async function pkceAuthorizationUrl(config: oidc.Configuration, redirectUri: string, params: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'api profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...params,
  });
  return { url: url.toString(), verifier };
}
