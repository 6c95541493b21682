import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { DataSource } from 'typeorm';
import { createAuthServer } from '../apps/auth-server/src/bootstrap.js';
import { createRecordsApi } from '../apps/records-api/src/bootstrap.js';
import { addMember, createUser, createWorkspace, findRole } from '#identity/accounts.js';
import { createServerApp } from '#identity/server-apps.js';
import { rotateSigningKey } from '#identity/signing-keys.js';
import { FormBrowser } from '../bench/form-browser.js';
import { pkceAuthorizationUrl } from './oauth-flow.js';
import { freePort } from './public-origin.js';

process.env.LOG_LEVEL ??= 'error';

const REDIRECT = 'http://127.0.0.1:8765/callback';
const insecure = { execute: [oidc.allowInsecureRequests] };
/** Response bodies of known shape (fetch types them as unknown). */
const json = (res: Response): Promise<any> => res.json();

describe('OAuth 2.1 through the public origin', () => {
  const savedEnv = { ...process.env };
  let api: INestApplication;
  let auth: INestApplication;
  let authPort: number;
  let publicUrl: string;
  let ds: DataSource;

  async function startAuth(): Promise<INestApplication> {
    const app = await createAuthServer();
    await app.listen(authPort, '127.0.0.1');
    return app;
  }

  beforeAll(async () => {
    authPort = await freePort();
    const apiPort = await freePort();
    publicUrl = `http://127.0.0.1:${apiPort}`;
    Object.assign(process.env, {
      PORT: String(apiPort),
      AUTH_PORT: String(authPort),
      PUBLIC_URL: publicUrl,
      REGISTRATIONS_PER_MINUTE: '40',
    });
    auth = await startAuth();
    api = await createRecordsApi();
    await api.listen(apiPort, '127.0.0.1');
    ds = api.get(DataSource);
  });

  afterAll(async () => {
    await api?.close();
    await auth?.close();
    process.env = savedEnv;
  });

  /** A person with a password, member of the given workspaces with the given roles. */
  async function person(memberships: { workspace: string; role: string }[]) {
    const email = `p-${randomUUID().slice(0, 8)}@example.com`;
    const password = 'correct horse battery';
    const user = await createUser(ds, email, password);
    const workspaces = [];
    for (const m of memberships) {
      const ws = await createWorkspace(ds, `${m.workspace}-${randomUUID().slice(0, 6)}`);
      await addMember(ds, ws.id, user.id, await findRole(ds, ws.id, m.role));
      await ds.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, $2)`, [ws.id, `${ws.name} Inc`]);
      workspaces.push(ws);
    }
    return { user, email, password, workspaces };
  }

  async function registerClient(metadata: Partial<oidc.ClientMetadata> = {}) {
    return oidc.dynamicClientRegistration(
      new URL(publicUrl),
      { redirect_uris: [REDIRECT], client_name: 'Test CLI', ...metadata },
      undefined,
      insecure,
    );
  }

  /** The authorization code flow with PKCE, clicking through the real pages. */
  async function authorize(
    config: oidc.Configuration,
    browser: FormBrowser,
    steps: (b: FormBrowser) => Promise<void>,
    extra: Record<string, string> = {},
  ) {
    const { url, verifier } = await pkceAuthorizationUrl(config, REDIRECT, extra);
    await browser.go(url);
    await steps(browser);
    expect(browser.lastUrl.startsWith(REDIRECT)).toBe(true);
    return oidc.authorizationCodeGrant(config, new URL(browser.lastUrl), { pkceCodeVerifier: verifier });
  }

  const signIn = (email: string, password: string) => async (b: FormBrowser) => {
    expect(b.labels()).toEqual(expect.arrayContaining(['Email', 'Password']));
    await b.submit('Sign in', { email, password });
  };

  const rest = (token: string, path = '/rest/companies', init: RequestInit = {}) =>
    fetch(`${publicUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
    });

  it('publishes RFC 8414 metadata and both protected-resource documents on the public origin', async () => {
    const config = await oidc.discovery(new URL(publicUrl), 'unused', undefined, undefined, insecure);
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(publicUrl);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.registration_endpoint).toBe(`${publicUrl}/oauth/register`);
    expect(meta.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']));
    const rfc8414 = await json(await fetch(`${publicUrl}/.well-known/oauth-authorization-server`));
    expect(rfc8414.issuer).toBe(publicUrl);
    expect(rfc8414.token_endpoint).toBe(`${publicUrl}/oauth/token`);
    const root = await json(await fetch(`${publicUrl}/.well-known/oauth-protected-resource`));
    expect(root).toMatchObject({ resource: publicUrl, authorization_servers: [publicUrl], bearer_methods_supported: ['header'] });
    const mcp = await json(await fetch(`${publicUrl}/.well-known/oauth-protected-resource/mcp`));
    expect(mcp).toMatchObject({ resource: `${publicUrl}/mcp`, authorization_servers: [publicUrl] });
  });

  it('registers public clients only, with loopback and localhost redirect URIs, and never returns a secret', async () => {
    const config = await registerClient({ redirect_uris: ['http://127.0.0.1:8765/callback', 'http://localhost:9999/cb'] });
    const meta = config.clientMetadata();
    expect(meta.token_endpoint_auth_method).toBe('none');
    expect(meta.client_secret).toBeUndefined();
    expect(meta.grant_types).toEqual(['authorization_code', 'refresh_token']);

    for (const refused of [
      { token_endpoint_auth_method: 'client_secret_basic' },
      { token_endpoint_auth_method: 'client_secret_post' },
      { grant_types: ['client_credentials'] },
    ]) {
      const res = await fetch(`${publicUrl}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT], ...refused }),
      });
      expect(res.status).toBe(400);
      expect((await json(res)).error).toBe('invalid_client_metadata');
    }
  });

  it('runs authorization code + PKCE through sign-in, workspace choice and consent; the token reaches only that workspace', async () => {
    const p = await person([
      { workspace: 'alpha', role: 'Admin' },
      { workspace: 'beta', role: 'Viewer' },
    ]);
    const config = await registerClient();
    const browser = new FormBrowser(REDIRECT);
    const tokens = await authorize(config, browser, async (b) => {
      await signIn(p.email, p.password)(b);
      expect(b.labels()).toContain('Workspace');
      expect(b.lastBody).toContain('Continue');
      await b.submit('Continue', { workspace: p.workspaces[1].id });
      expect(b.lastBody).toContain('Test CLI');
      expect(b.lastBody).toContain(p.workspaces[1].name);
      expect(b.lastBody).toMatch(/Allow[\s\S]*Deny/);
      await b.submit('Allow');
    });
    expect(tokens.expires_in).toBe(1800);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.refresh_token).toBeTruthy();
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ aud: publicUrl, iss: publicUrl, sub: p.user.id, workspace_id: p.workspaces[1].id });

    const list = await rest(tokens.access_token);
    expect(list.status).toBe(200);
    const names = (await json(list)).data.companies.map((c: { name: string }) => c.name);
    expect(names).toEqual([`${p.workspaces[1].name} Inc`]);
    // Viewer in beta: no writes.
    const write = await rest(tokens.access_token, '/rest/companies', { method: 'POST', body: JSON.stringify({ name: 'Nope' }) });
    expect(write.status).toBe(403);
  });

  it('applies a role change and a removal to the next request', async () => {
    const p = await person([{ workspace: 'gamma', role: 'Admin' }]);
    const config = await registerClient();
    const tokens = await authorize(config, new FormBrowser(REDIRECT), async (b) => {
      await signIn(p.email, p.password)(b);
      await b.submit('Allow');
    });
    const ws = p.workspaces[0].id;
    expect((await rest(tokens.access_token, '/rest/companies', { method: 'POST', body: JSON.stringify({ name: 'Yes' }) })).status).toBe(
      201,
    );
    const viewer = await findRole(ds, ws, 'Viewer');
    await ds.query('UPDATE workspace_members SET role_id = $1 WHERE workspace_id = $2 AND user_id = $3', [viewer.id, ws, p.user.id]);
    expect((await rest(tokens.access_token, '/rest/companies', { method: 'POST', body: JSON.stringify({ name: 'No' }) })).status).toBe(403);
    await ds.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [ws, p.user.id]);
    const gone = await rest(tokens.access_token);
    expect(gone.status).toBe(401);
    expect(gone.headers.get('www-authenticate')).toContain('resource_metadata=');
  });

  it('rotates refresh tokens; reusing a rotated one revokes the grant', async () => {
    const p = await person([{ workspace: 'delta', role: 'Member' }]);
    const config = await registerClient();
    const first = await authorize(config, new FormBrowser(REDIRECT), async (b) => {
      await signIn(p.email, p.password)(b);
      await b.submit('Allow');
    });
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.expires_in).toBe(1800);
    expect((await rest(second.access_token)).status).toBe(200);

    await expect(oidc.refreshTokenGrant(config, first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // The whole grant is gone: the newest refresh token stops working too.
    await expect(oidc.refreshTokenGrant(config, second.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it("lets a client revoke its own refresh token (RFC 7009), but not another client's", async () => {
    const p = await person([{ workspace: 'kappa', role: 'Member' }]);
    const config = await registerClient();
    const other = await registerClient();
    const tokens = await authorize(config, new FormBrowser(REDIRECT), async (b) => {
      await signIn(p.email, p.password)(b);
      await b.submit('Allow');
    });
    await oidc.tokenRevocation(other, tokens.refresh_token!);
    const stillGood = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    await oidc.tokenRevocation(config, stillGood.refresh_token!);
    await expect(oidc.refreshTokenGrant(config, stillGood.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses an authorization request without PKCE or with plain PKCE', async () => {
    const config = await registerClient();
    const clientId = config.clientMetadata().client_id;
    const browser = new FormBrowser(REDIRECT);
    const base = `${publicUrl}/oauth/authorize?client_id=${clientId}&response_type=code&scope=api&redirect_uri=${encodeURIComponent(REDIRECT)}`;
    await browser.go(base);
    expect(new URL(browser.lastUrl).searchParams.get('error')).toBe('invalid_request');
    expect(new URL(browser.lastUrl).searchParams.get('error_description')).toMatch(/PKCE/);
    await browser.go(`${base}&code_challenge=${'a'.repeat(43)}&code_challenge_method=plain`);
    expect(new URL(browser.lastUrl).searchParams.get('error')).toBe('invalid_request');
  });

  it('returns access_denied when the person denies consent', async () => {
    const p = await person([{ workspace: 'epsilon', role: 'Admin' }]);
    const config = await registerClient();
    const browser = new FormBrowser(REDIRECT);
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'api',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    await browser.go(url.toString());
    await signIn(p.email, p.password)(browser);
    await browser.submit('Deny');
    expect(new URL(browser.lastUrl).searchParams.get('error')).toBe('access_denied');
  });

  it('issues MCP-only tokens that /rest and /graphql refuse', async () => {
    const p = await person([{ workspace: 'zeta', role: 'Admin' }]);
    const config = await registerClient();
    const tokens = await authorize(
      config,
      new FormBrowser(REDIRECT),
      async (b) => {
        await signIn(p.email, p.password)(b);
        await b.submit('Allow');
      },
      { resource: `${publicUrl}/mcp/` },
    );
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url').toString());
    expect(claims.aud).toBe(`${publicUrl}/mcp`);
    const res = await rest(tokens.access_token);
    expect(res.status).toBe(401);
    expect((await json(res)).messages[0]).toMatch(/audience/);
  });

  it('gives a server app client_credentials tokens that act with its role in its workspace', async () => {
    const ws = await createWorkspace(ds, `apps-${randomUUID().slice(0, 6)}`);
    await ds.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, 'Only here')`, [ws.id]);
    const app = await createServerApp(ds, { workspaceId: ws.id, role: await findRole(ds, ws.id, 'Viewer'), name: 'sync job' });
    const stored = await ds.query(`SELECT payload FROM oidc_models WHERE model = 'Client' AND id = $1`, [app.clientId]);
    expect(stored[0].payload.client_secret).not.toBe(app.clientSecret);

    const config = await oidc.discovery(new URL(publicUrl), app.clientId, undefined, oidc.ClientSecretBasic(app.clientSecret), insecure);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'api' });
    expect(tokens.expires_in).toBe(1800);
    const list = await rest(tokens.access_token);
    expect((await json(list)).data.companies.map((c: { name: string }) => c.name)).toEqual(['Only here']);
    expect((await rest(tokens.access_token, '/rest/companies', { method: 'POST', body: JSON.stringify({ name: 'x' }) })).status).toBe(403);

    const wrong = await fetch(`${publicUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${app.clientId}:wrong`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=api',
    });
    expect(wrong.status).toBe(401);
    expect((await json(wrong)).error).toBe('invalid_client');
  });

  it('keeps refresh tokens working across an auth server restart and a second instance', async () => {
    const p = await person([{ workspace: 'eta', role: 'Admin' }]);
    const config = await registerClient();
    const tokens = await authorize(config, new FormBrowser(REDIRECT), async (b) => {
      await signIn(p.email, p.password)(b);
      await b.submit('Allow');
    });
    await auth.close();
    auth = await startAuth();
    const afterRestart = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect((await rest(afterRestart.access_token)).status).toBe(200);

    // A second instance on the same database serves the same client and tokens.
    const secondPort = await freePort();
    const second = await createAuthServer();
    await second.listen(secondPort, '127.0.0.1');
    try {
      const res = await fetch(`http://127.0.0.1:${secondPort}/oauth/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-forwarded-host': new URL(publicUrl).host,
          'x-forwarded-proto': 'http',
        },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: afterRestart.refresh_token!,
          client_id: config.clientMetadata().client_id,
        }),
      });
      expect(res.status).toBe(200);
      const body = await json(res);
      expect((await rest(body.access_token)).status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('verifies tokens signed with a rotated key without restarting the records API (JWKS re-read on an unknown kid)', async () => {
    const ws = await createWorkspace(ds, `rotate-${randomUUID().slice(0, 6)}`);
    const app = await createServerApp(ds, { workspaceId: ws.id, role: await findRole(ds, ws.id, 'Viewer'), name: 'rotation' });
    const config = await oidc.discovery(new URL(publicUrl), app.clientId, undefined, oidc.ClientSecretBasic(app.clientSecret), insecure);
    const before = await oidc.clientCredentialsGrant(config, { scope: 'api' });
    expect((await rest(before.access_token)).status).toBe(200);
    const kid = await rotateSigningKey(ds);
    await auth.close();
    auth = await startAuth();
    const after = await oidc.clientCredentialsGrant(config, { scope: 'api' });
    expect(JSON.parse(Buffer.from(after.access_token.split('.')[0], 'base64url').toString()).kid).toBe(kid);
    expect((await rest(after.access_token)).status).toBe(200);
    expect((await rest(before.access_token)).status).toBe(200);
    const jwks = await json(await fetch(`${publicUrl}/oauth/jwks`));
    expect(jwks.keys.map((k: { kid: string }) => k.kid)).toContain(kid);
    expect(jwks.keys.every((k: Record<string, unknown>) => k.d === undefined)).toBe(true);
  });

  it('skips the pages on a repeat authorization with a live session, and asks again after sign-out', async () => {
    const p = await person([{ workspace: 'theta', role: 'Admin' }]);
    const config = await registerClient();
    const browser = new FormBrowser(REDIRECT);
    await authorize(config, browser, async (b) => {
      await signIn(p.email, p.password)(b);
      await b.submit('Allow');
    });
    await authorize(config, browser, async () => undefined);
    await browser.go(`${publicUrl}/logout`);
    await browser.submit('Sign out');
    expect(browser.lastBody).toContain('signed out');
    const verifier = oidc.randomPKCECodeVerifier();
    await browser.go(
      oidc
        .buildAuthorizationUrl(config, {
          redirect_uri: REDIRECT,
          scope: 'api',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        })
        .toString(),
    );
    expect(browser.labels()).toContain('Password');
  });

  it('refuses a sign-in form posted without its CSRF token, and wrong passwords', async () => {
    const p = await person([{ workspace: 'iota', role: 'Admin' }]);
    const browser = new FormBrowser();
    await browser.go(`${publicUrl}/login`);
    await browser.go(`${publicUrl}/login`, { method: 'POST', form: { email: p.email, password: p.password } });
    expect(browser.lastStatus).toBe(403);
    await browser.submit('Sign in', { email: p.email, password: 'wrong password' });
    expect(browser.lastStatus).toBe(401);
    await browser.submit('Sign in', { email: p.email, password: p.password });
    expect(browser.lastUrl).toBe(`${publicUrl}/settings`);
    expect(browser.lastBody).toContain(p.email);
    const setCookie = await fetch(`${publicUrl}/login`);
    expect(setCookie.headers.getSetCookie().join(';')).toMatch(/HttpOnly/i);
    expect(setCookie.headers.getSetCookie().join(';')).toMatch(/SameSite=Lax/i);
  });

  it('signs up a new user with a new workspace, as Admin, inside an authorization request', async () => {
    const config = await registerClient();
    const email = `new-${randomUUID().slice(0, 8)}@example.com`;
    const tokens = await authorize(config, new FormBrowser(REDIRECT), async (b) => {
      const signup = /href="([^"]*signup[^"]*)"/.exec(b.lastBody)![1].replace(/&amp;/g, '&');
      await b.go(new URL(signup, b.lastUrl).toString());
      await b.submit('Sign up', { email, password: 'a long password', workspace: `Signup ${email}` });
      // Sign-up signs no one in (it answers a taken e-mail the same way): the page asks to sign in.
      await b.submit('Sign in', { email, password: 'a long password' });
      await b.submit('Allow');
    });
    const created = await rest(tokens.access_token, '/rest/companies', { method: 'POST', body: JSON.stringify({ name: 'Mine' }) });
    expect(await json(created)).toMatchObject({ data: { createCompany: { name: 'Mine' } } });
    expect(created.status).toBe(201);
  });

  it('rate limits dynamic registration per client address', async () => {
    let status = 0;
    for (let i = 0; i < 60 && status !== 429; i++) {
      const res = await fetch(`${publicUrl}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      });
      status = res.status;
    }
    expect(status).toBe(429);
  });
});
