import { createHash, randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { createApiKey, findRole } from '#identity/accounts.js';
import { FormBrowser } from '../bench/form-browser.js';
import { authorizationCode, pkceAuthorizationUrl } from './oauth-flow.js';
import { PASSWORD, startPublicOrigin, unique, workspaceWith, type PublicOrigin } from './public-origin.js';
import { expectThrottled, formFor, send, tryLogin, type Answer } from './sign-in-attempts.js';

/**
 * The attacks of the security review (docs/security.md), each over real HTTP against both apps on
 * the public origin. Every test here passed as an attack before the fix.
 */
const REDIRECT = 'http://127.0.0.1:8765/callback';
const insecure = { execute: [oidc.allowInsecureRequests] };
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

let addressSeq = 0;
/** A loopback address no other test uses. */
const newAddress = () => `127.${(process.pid >> 8) & 0xff}.${process.pid & 0xff}.${++addressSeq + 1}`;

describe('Security (docs/security.md)', () => {
  let origin: PublicOrigin;
  let url: string;

  beforeAll(async () => {
    origin = await startPublicOrigin({ REGISTRATIONS_PER_MINUTE: '1000' });
    url = origin.url;
  });
  afterAll(async () => {
    await origin?.close();
  });

  async function registerClient(metadata: Partial<oidc.ClientMetadata> = {}) {
    return oidc.dynamicClientRegistration(
      new URL(url),
      { redirect_uris: [REDIRECT], client_name: 'Sec CLI', ...metadata },
      undefined,
      insecure,
    );
  }

  /** The CSRF token the settings JSON API gives a signed-in browser. */
  async function sessionCsrf(b: FormBrowser): Promise<{ csrfToken: string }> {
    const res = await fetch(`${url}/settings/api/session`, { headers: { cookie: b.cookieHeader() } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: { session: { csrfToken: string } } }).data.session;
  }

  /** Signs in on /login in a FormBrowser; returns it on /settings. */
  async function signedIn(email: string): Promise<FormBrowser> {
    const b = new FormBrowser();
    await b.go(`${url}/login`);
    await b.submit('Sign in', { email, password: PASSWORD });
    expect(b.lastUrl).toBe(`${url}/settings`);
    return b;
  }

  /** Runs the authorization-code flow up to the redirect; returns the code and verifier (not exchanged). */
  const codeFor = (config: oidc.Configuration, email: string, browser?: FormBrowser, extra: Record<string, string> = {}) =>
    authorizationCode(config, REDIRECT, email, browser, extra);

  describe('sign-in and sign-up throttling', () => {
    it('blocks an account after a few wrong passwords, from any address, before checking the password again', async () => {
      const { people } = await workspaceWith(origin.ds, ['Member'], 'brute');
      const email = people[0].email;
      const answers: number[] = [];
      for (let i = 0; i < 12; i++) answers.push((await tryLogin(url, email, `wrong ${i}`, newAddress())).status);
      expect(answers.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(answers.slice(-2)).toEqual([429, 429]);
      // The right password does not get through while the account is blocked.
      const right = await tryLogin(url, email, PASSWORD, newAddress());
      expectThrottled(right);
    });

    it('lets no more concurrent wrong passwords reach argon2 than the account limit', async () => {
      const { people } = await workspaceWith(origin.ds, ['Member'], 'race');
      const email = people[0].email;
      // Forms first, so the 30 posts leave together; each from its own address (only the account limit applies).
      const forms = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const from = newAddress();
          return { from, i, ...(await formFor(`${url}/login`, from)) };
        }),
      );
      const answers = await Promise.all(
        forms.map(({ from, i, csrf, cookie }) =>
          send(`${url}/login`, { form: { _csrf: csrf, email, password: `wrong ${i}` }, headers: { cookie }, from }),
        ),
      );
      const checked = answers.filter((a) => a.status !== 429);
      // SIGNIN_FAILURES_PER_ACCOUNT's default: each answer other than 429 was a password checked.
      expect(checked.length).toBeLessThanOrEqual(10);
      expect(checked.map((a) => a.status)).toEqual(checked.map(() => 401));
      expect(answers.length - checked.length).toBeGreaterThanOrEqual(20);
    });

    it('gives a successful sign-in its points back, so the address is not blocked by its own sign-ins', async () => {
      const { people } = await workspaceWith(origin.ds, ['Member'], 'give-back');
      const from = newAddress();
      // More successful sign-ins than the per-address failure limit (30), from one address.
      for (let i = 0; i < 32; i++) expect((await tryLogin(url, people[0].email, PASSWORD, from)).status).toBe(303);
    });

    it('blocks a client address that tries many accounts', async () => {
      const from = newAddress();
      let last: Answer | undefined;
      for (let i = 0; i < 40 && last?.status !== 429; i++)
        last = await tryLogin(url, `nobody-${randomUUID()}@example.com`, 'whatever', from);
      expectThrottled(last!);
      // Another address is not affected.
      const { people } = await workspaceWith(origin.ds, ['Member'], 'other-address');
      const ok = await tryLogin(url, people[0].email, PASSWORD, newAddress());
      expect(ok.status).toBe(303);
    });

    it('throttles the OAuth sign-in page the same way', async () => {
      const { people } = await workspaceWith(origin.ds, ['Member'], 'oauth-brute');
      const config = await registerClient();
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        const b = new FormBrowser(REDIRECT);
        await b.go((await pkceAuthorizationUrl(config, REDIRECT, { scope: 'api' })).url);
        await b.submit('Sign in', { email: people[0].email, password: `wrong ${i}` });
        statuses.push(b.lastStatus);
        if (i === 11) {
          expect(b.lastBody).toMatch(/Too many attempts/);
        }
      }
      expect(statuses[0]).toBe(401);
      expect(statuses.slice(-2)).toEqual([429, 429]);
    });

    it('limits sign-ups per client address', async () => {
      const from = newAddress();
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        const { csrf, cookie } = await formFor(`${url}/signup`, from);
        const res = await send(`${url}/signup`, {
          form: { _csrf: csrf, email: `${unique('signup')}@example.com`, password: 'a long password', workspace: unique('Flood') },
          headers: { cookie },
          from,
        });
        statuses.push(res.status);
        if (res.status === 429) expectThrottled(res);
      }
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      expect(statuses.at(-1)).toBe(429);
    });
  });

  describe('sign-up without account enumeration', () => {
    async function signUp(email: string, password: string, workspace: string): Promise<Answer> {
      const from = newAddress();
      const { csrf, cookie } = await formFor(`${url}/signup`, from);
      return send(`${url}/signup`, { form: { _csrf: csrf, email, password, workspace }, headers: { cookie }, from });
    }
    /** The page without what the request itself put there (the e-mail typed, the form's CSRF token). */
    const normalised = (a: Answer, email: string) => a.body.replaceAll(email, 'EMAIL').replace(/name="_csrf" value="[^"]+"/g, 'CSRF');
    const cookieNames = (a: Answer) => ((a.headers['set-cookie'] as string[] | undefined) ?? []).map((c) => c.split('=')[0]).sort();

    it('answers an existing e-mail exactly as a new one, changes nothing of the account, and tells its owner', async () => {
      const { people } = await workspaceWith(origin.ds, ['Member'], 'enum');
      const existing = people[0].email;
      const fresh = `${unique('fresh')}@example.com`;
      const [taken, created] = [
        await signUp(existing, 'attacker password', unique('Enum A')),
        await signUp(fresh, 'a long password', unique('Enum B')),
      ];
      expect(taken.status).toBe(created.status);
      expect(created.status).toBe(200);
      expect(normalised(taken, existing)).toBe(normalised(created, fresh));
      expect(cookieNames(taken)).toEqual(cookieNames(created));
      // Neither answer signs anyone in: the page asks to sign in.
      expect(created.body).toMatch(/Sign in/);

      // The new account works; the existing one kept its password and got no workspace.
      expect((await tryLogin(url, fresh, 'a long password', newAddress())).status).toBe(303);
      expect((await tryLogin(url, existing, 'attacker password', newAddress())).status).toBe(401);
      const from = newAddress();
      const signIn = await tryLogin(url, existing, PASSWORD, from);
      expect(signIn.status).toBe(303);
      const session = ((signIn.headers['set-cookie'] as string[]) ?? []).map((c) => c.split(';')[0]).join('; ');
      const home = await send(`${url}/settings`, { headers: { cookie: session }, from });
      expect(home.status).toBe(200);
      expect(home.body).toMatch(/Someone tried to create an account with your e-mail address/);
      expect(
        await origin.ds.query('SELECT count(*)::int AS n FROM workspace_members m JOIN users u ON u.id = m.user_id WHERE u.email = $1', [
          existing,
        ]),
      ).toEqual([{ n: 1 }]);
    });

    it('still says when the form is wrong, the same for a new and an existing e-mail', async () => {
      const { people } = await workspaceWith(origin.ds, ['Member'], 'enum-bad');
      for (const email of [people[0].email, `${unique('fresh')}@example.com`]) {
        const short = await signUp(email, 'short', unique('Enum C'));
        expect(short.status).toBe(400);
        expect(short.body).toMatch(/at least 8 characters/);
      }
    });
  });

  describe('CSRF tokens bound to the session', () => {
    it('refuses a settings form whose token matches a planted wrs_csrf cookie but not the session', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin', 'Viewer'], 'csrf-plant');
      const [admin, viewer] = people;
      const b = await signedIn(admin.email);
      b.setCookie('wrs_csrf', 'planted-by-a-page-on-another-port-0123456789');
      await b.go(`${url}/settings/members/${viewer.id}/role`, {
        method: 'POST',
        form: { _csrf: 'planted-by-a-page-on-another-port-0123456789', role: (await findRole(origin.ds, workspace.id, 'Admin')).id },
      });
      expect(b.lastStatus).toBe(403);
      const role = await origin.ds.query(
        'SELECT r.name FROM workspace_members m JOIN roles r ON r.id = m.role_id WHERE m.workspace_id = $1 AND m.user_id = $2',
        [workspace.id, viewer.id],
      );
      expect(role[0].name).toBe('Viewer');
    });

    it('refuses the settings JSON API with a planted cookie and header, and takes the session token', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'csrf-api');
      const b = await signedIn(people[0].email);
      const planted = 'x'.repeat(40);
      b.setCookie('wrs_csrf', planted);
      const attack = await fetch(`${url}/settings/api/api-keys`, {
        method: 'POST',
        headers: { cookie: b.cookieHeader(), 'content-type': 'application/json', 'x-csrf-token': planted },
        body: JSON.stringify({ name: 'minted', role: 'Admin' }),
      });
      expect(attack.status).toBe(403);
      expect(await origin.ds.query('SELECT 1 FROM api_keys WHERE workspace_id = $1', [workspace.id])).toHaveLength(0);

      const session = await sessionCsrf(b);
      expect(session.csrfToken).toMatch(/^[\w-]{40,}$/);
      expect(session.csrfToken).not.toBe(planted);
      const ok = await fetch(`${url}/settings/api/api-keys`, {
        method: 'POST',
        headers: { cookie: b.cookieHeader(), 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
        body: JSON.stringify({ name: 'legit', role: 'Viewer' }),
      });
      expect(ok.status).toBe(201);
    });

    it('refuses a consent form posted with a planted token', async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'csrf-consent');
      const config = await registerClient();
      const b = new FormBrowser(REDIRECT);
      await b.go((await pkceAuthorizationUrl(config, REDIRECT, { scope: 'api' })).url);
      await b.submit('Sign in', { email: people[0].email, password: PASSWORD });
      const action = /<form method="post" action="([^"]+\/consent)"/.exec(b.lastBody)![1];
      b.setCookie('wrs_csrf', 'p'.repeat(40));
      await b.go(new URL(action, url).toString(), { method: 'POST', form: { _csrf: 'p'.repeat(40), decision: 'allow' } });
      expect(b.lastStatus).toBe(403);
      expect(b.lastUrl.startsWith(REDIRECT)).toBe(false);
    });

    it('rotates the token at sign-in', async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'csrf-rotate');
      const tokens: string[] = [];
      for (let i = 0; i < 2; i++) {
        const b = await signedIn(people[0].email);
        tokens.push((await sessionCsrf(b)).csrfToken);
      }
      expect(tokens[0]).not.toBe(tokens[1]);
      const before = await formFor(`${url}/login`);
      expect(tokens).not.toContain(before.csrf);
    });

    it('refuses a cross-origin form post (Origin or Sec-Fetch-Site from another site) even with the right token', async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'csrf-origin');
      const b = await signedIn(people[0].email);
      const session = await sessionCsrf(b);
      for (const headers of [{ origin: 'http://127.0.0.1:1' }, { 'sec-fetch-site': 'same-site' }] as Record<string, string>[]) {
        const res = await fetch(`${url}/settings/api/api-keys`, {
          method: 'POST',
          headers: { cookie: b.cookieHeader(), 'content-type': 'application/json', 'x-csrf-token': session.csrfToken, ...headers },
          body: JSON.stringify({ name: 'cross', role: 'Viewer' }),
        });
        expect(res.status).toBe(403);
      }
    });
  });

  describe('URLs come from PUBLIC_URL, client addresses from TRUST_PROXY', () => {
    it('ignores X-Forwarded-Host/Proto sent by a client in every discovery document and registration', async () => {
      const evil = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', forwarded: 'host=evil.example;proto=https' };
      for (const path of [
        '/.well-known/oauth-authorization-server',
        '/.well-known/openid-configuration',
        '/.well-known/oauth-protected-resource',
      ]) {
        const res = await send(`${url}${path}`, { headers: evil });
        expect(res.status).toBe(200);
        expect(res.body).not.toContain('evil.example');
        const meta = JSON.parse(res.body);
        for (const key of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'jwks_uri']) {
          if (meta[key]) expect(meta[key].startsWith(`${url}/`)).toBe(true);
        }
      }
      const reg = await send(`${url}/oauth/register`, {
        method: 'POST',
        headers: { ...evil, 'content-type': 'application/json' },
      }).catch(() => undefined);
      expect(reg?.status).toBe(400); // no body: refused, but never with an evil URL
      const registered = await fetch(`${url}/oauth/register`, {
        method: 'POST',
        headers: { ...evil, 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      });
      const body = (await registered.json()) as { registration_client_uri: string };
      expect(body.registration_client_uri.startsWith(`${url}/oauth/`)).toBe(true);
    });

    it('does not take the client address from X-Forwarded-For unless TRUST_PROXY says so', async () => {
      const from = newAddress();
      let last: Answer | undefined;
      for (let i = 0; i < 40 && last?.status !== 429; i++) {
        // Each attempt claims another address: without a trusted proxy they all count for `from`.
        last = await tryLogin(url, `nobody-${randomUUID()}@example.com`, 'whatever', from, { 'x-forwarded-for': `203.0.113.${i + 1}` });
      }
      expectThrottled(last!);
    });

    it('takes the address the trusted proxy saw with TRUST_PROXY', async () => {
      const trusting = await startPublicOrigin({ TRUST_PROXY: 'loopback' });
      try {
        const statuses = new Set<number>();
        for (let i = 0; i < 35; i++) {
          const res = await tryLogin(trusting.url, `nobody-${randomUUID()}@example.com`, 'whatever', newAddress(), {
            'x-forwarded-for': `198.51.100.${(process.pid % 200) + 1}, 10.9.${i}.1`,
          });
          statuses.add(res.status);
        }
        // 35 different client addresses (the rightmost, added by the trusted proxy): none is blocked.
        expect([...statuses]).toEqual([401]);
      } finally {
        await trusting.close();
      }
    });
  });

  describe('dynamic registration redirect URIs (RFC 8252)', () => {
    it('refuses http redirect URIs off loopback, and other unsafe schemes', async () => {
      for (const uri of [
        'http://evil.example/cb',
        'http://10.0.0.8/cb',
        'javascript:alert(1)',
        'data:text/html,hi',
        'file:///etc/passwd',
        'http://localhost.evil.example/cb',
      ]) {
        const res = await fetch(`${url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ redirect_uris: [uri] }),
        });
        expect({ uri, status: res.status }).toEqual({ uri, status: 400 });
        expect(((await res.json()) as { error: string }).error).toMatch(/^invalid_(redirect_uri|client_metadata)$/);
      }
      for (const uri of ['https://app.example.com/cb', 'http://127.0.0.1:8765/cb', 'http://localhost/cb', 'http://[::1]:9000/cb']) {
        const res = await fetch(`${url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ redirect_uris: [uri] }),
        });
        expect({ uri, status: res.status }).toEqual({ uri, status: 201 });
      }
      // Native apps (OIDC Registration application_type) may use a private-use scheme; a bare word is not one.
      for (const [uri, status] of [
        ['com.example.app:/oauth2redirect', 201],
        ['myapp:/cb', 400],
      ] as const) {
        const res = await fetch(`${url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ redirect_uris: [uri], application_type: 'native' }),
        });
        expect({ uri, status: res.status }).toEqual({ uri, status });
      }
    });

    it('never redirects to an off-origin http URI of a client stored before the policy', async () => {
      const clientId = `legacy-${randomUUID()}`;
      await origin.ds.query(`INSERT INTO oidc_models (model, id, payload) VALUES ('Client', $1, $2)`, [
        clientId,
        JSON.stringify({
          client_id: clientId,
          redirect_uris: ['http://evil.example/cb'],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        }),
      ]);
      // No PKCE: an error the provider would send back to the redirect URI.
      const res = await fetch(
        `${url}/oauth/authorize?client_id=${clientId}&response_type=code&scope=api&redirect_uri=${encodeURIComponent('http://evil.example/cb')}`,
        { redirect: 'manual' },
      );
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers.get('location')).toBeNull();
    });

    it('shows the redirect host on the consent page', async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'consent-host');
      const config = await registerClient();
      const { consent } = await codeFor(config, people[0].email);
      expect(consent).toContain('127.0.0.1:8765');
    });
  });

  describe('OAuth artefacts at rest and revoked grants', () => {
    it('stores codes, refresh tokens, sessions and registration tokens only as hashes', async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'hashed');
      const reg = (await (
        await fetch(`${url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'hash' }),
        })
      ).json()) as { client_id: string; registration_access_token: string };
      const config = new oidc.Configuration(
        (await registerClient()).serverMetadata(),
        reg.client_id,
        { token_endpoint_auth_method: 'none' },
        oidc.None(),
      );
      oidc.allowInsecureRequests(config);
      const { redirect, verifier, browser } = await codeFor(config, people[0].email);
      const code = redirect.searchParams.get('code')!;
      // Before the exchange: the live code is not stored verbatim.
      const secrets = [code, reg.registration_access_token, browser.cookie('_session')!];
      const tokens = await oidc.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: verifier });
      secrets.push(tokens.refresh_token!);
      const rows = (await origin.ds.query(`SELECT id, payload::text AS payload FROM oidc_models`)) as { id: string; payload: string }[];
      for (const secret of secrets) {
        expect(secret && secret.length > 10).toBe(true);
        expect(rows.filter((r) => r.id === secret || r.payload.includes(secret))).toEqual([]);
      }
      expect(rows.some((r) => r.id === sha256(tokens.refresh_token!))).toBe(true);
      // And they all still work.
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      expect(refreshed.access_token).toBeTruthy();
    });

    it('refuses access tokens of a grant revoked by refresh-token reuse or by revocation', async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'revoked');
      const rest = (token: string) => fetch(`${url}/rest/companies`, { headers: { authorization: `Bearer ${token}` } });
      const config = await registerClient();

      const first = await codeFor(config, people[0].email);
      const tokens = await oidc.authorizationCodeGrant(config, first.redirect, { pkceCodeVerifier: first.verifier });
      const rotated = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      expect((await rest(tokens.access_token)).status).toBe(200);
      expect((await rest(rotated.access_token)).status).toBe(200);
      // The answer says why (oidc-provider alone said only "grant request is invalid").
      await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
        error: 'invalid_grant',
        error_description: expect.stringMatching(/grant was revoked: an old refresh token was reused/),
      });
      for (const token of [tokens.access_token, rotated.access_token]) {
        const res = await rest(token);
        expect(res.status).toBe(401);
        expect(((await res.json()) as { messages: string[] }).messages[0]).toMatch(/revoked/);
      }

      const second = await codeFor(config, people[0].email, first.browser);
      const more = await oidc.authorizationCodeGrant(config, second.redirect, { pkceCodeVerifier: second.verifier });
      expect((await rest(more.access_token)).status).toBe(200);
      await oidc.tokenRevocation(config, more.refresh_token!);
      expect((await rest(more.access_token)).status).toBe(401);
    });

    it('refuses access tokens after the code is used twice', async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'code-reuse');
      const config = await registerClient();
      const { redirect, verifier } = await codeFor(config, people[0].email);
      const tokens = await oidc.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: verifier });
      expect((await fetch(`${url}/rest/companies`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);
      await expect(oidc.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: verifier })).rejects.toMatchObject({
        error: 'invalid_grant',
      });
      expect((await fetch(`${url}/rest/companies`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    });
  });

  it('forbids framing every HTML page', async () => {
    const { people } = await workspaceWith(origin.ds, ['Admin'], 'frames');
    const b = await signedIn(people[0].email);
    const config = await registerClient();
    const flow = new FormBrowser(REDIRECT);
    await flow.go((await pkceAuthorizationUrl(config, REDIRECT, { scope: 'api', prompt: 'consent' })).url);
    const interaction = flow.lastUrl;
    const pages: [string, Record<string, string>][] = [
      [`${url}/login`, {}],
      [`${url}/signup`, {}],
      [`${url}/logout`, { cookie: b.cookieHeader() }],
      [`${url}/settings`, { cookie: b.cookieHeader() }],
      [interaction, { cookie: flow.cookieHeader() }],
      [`${url}/oauth/authorize?client_id=nope`, {}],
      [`${url}/docs/rest`, {}],
      [`${url}/docs/api-reference`, {}],
    ];
    for (const [page, headers] of pages) {
      const res = await fetch(page, { headers, redirect: 'manual' });
      expect({ page, type: res.headers.get('content-type') }).toEqual({ page, type: expect.stringMatching(/^text\/html/) });
      expect({ page, csp: res.headers.get('content-security-policy') }).toEqual({
        page,
        csp: expect.stringMatching(/frame-ancestors 'none'/),
      });
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    }
  });

  it('uses __Host- cookie names when the public origin is https', async () => {
    const https = await startPublicOrigin({ PUBLIC_URL: 'https://records.example' });
    try {
      const port = new URL(https.url).port;
      const res = await send(`http://127.0.0.1:${port}/login`);
      const cookies = (res.headers['set-cookie'] as string[] | undefined) ?? [];
      expect(cookies.length).toBeGreaterThan(0);
      for (const c of cookies) {
        expect(c).toMatch(/^__Host-/);
        expect(c).toMatch(/; Secure/i);
        expect(c).toMatch(/; Path=\//i);
        expect(c).not.toMatch(/; Domain=/i);
      }
    } finally {
      await https.close();
    }
  });

  it('refuses JSON-RPC batches on /mcp', async () => {
    const { workspace } = await workspaceWith(origin.ds, [], 'mcp-batch');
    const key = await createApiKey(origin.ds, {
      workspaceId: workspace.id,
      role: await findRole(origin.ds, workspace.id, 'Viewer'),
      name: 'k',
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const call = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'list_people', arguments: { limit: 200, depth: 1 } },
    });
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(Array.from({ length: 100 }, (_, i) => call(i + 1))),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { jsonrpc: string; id: null; error: { code: number; message: string } };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(body.error.message).toMatch(/batch/i);
  });

  describe('smaller holes', () => {
    it('answers invalid_scope to an unknown scope', async () => {
      const config = await registerClient();
      const b = new FormBrowser(REDIRECT);
      await b.go((await pkceAuthorizationUrl(config, REDIRECT, { scope: 'api admin' })).url);
      expect(b.lastUrl.startsWith(REDIRECT)).toBe(true);
      expect(new URL(b.lastUrl).searchParams.get('error')).toBe('invalid_scope');
    });

    it('advertises no userinfo endpoint that would refuse our tokens', async () => {
      const meta = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      expect(meta.userinfo_endpoint).toBeUndefined();
      expect((await fetch(`${url}/oauth/userinfo`)).status).toBe(404);
    });

    it('answers a mutation with more than 50 bad variables as bad input, not an internal error', async () => {
      const { workspace } = await workspaceWith(origin.ds, [], 'gql-vars');
      const key = await createApiKey(origin.ds, {
        workspaceId: workspace.id,
        role: await findRole(origin.ds, workspace.id, 'Admin'),
        name: 'k',
        expiresAt: new Date(Date.now() + 86_400_000),
      });
      // 60 rows whose name is not a string: graphql-js stops at 50 variable errors.
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          query: 'mutation ($rows: [CompanyCreateInput!]!) { createCompanies(data: $rows) { id } }',
          variables: { rows: Array.from({ length: 60 }, (_, i) => ({ name: i })) },
        }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors.length).toBeGreaterThan(50);
      expect(body.errors.map((e) => e.extensions.code).filter((c) => c !== 'BAD_USER_INPUT')).toEqual([]);
      expect(await origin.ds.query('SELECT 1 FROM companies WHERE workspace_id = $1', [workspace.id])).toHaveLength(0);
    });
  });
});
