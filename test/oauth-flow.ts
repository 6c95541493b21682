import * as oidc from 'openid-client';
import { FormBrowser } from '../bench/form-browser.js';
import { PASSWORD } from './public-origin.js';

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

/**
 * The authorization-code flow in a FormBrowser up to the redirect: signs in as `email`
 * (PASSWORD) when asked, allows on the consent page; returns the code's redirect and the
 * verifier (not exchanged), the consent page, and the browser (signed in, for a next flow).
 */
export async function authorizationCode(
  config: oidc.Configuration,
  redirectUri: string,
  email: string,
  browser = new FormBrowser(redirectUri),
  params: Record<string, string> = {},
) {
  const { url: authUrl, verifier } = await pkceAuthorizationUrl(config, redirectUri, params);
  await browser.go(authUrl);
  if (browser.labels().includes('Password')) await browser.submit('Sign in', { email, password: PASSWORD });
  const consent = browser.lastBody;
  await browser.submit('Allow');
  if (!browser.lastUrl.startsWith(redirectUri)) throw new Error(`the flow ended on ${browser.lastUrl}, not the redirect`);
  return { redirect: new URL(browser.lastUrl), verifier, consent, browser };
}
