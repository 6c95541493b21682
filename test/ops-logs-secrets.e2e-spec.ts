import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { DataSource } from 'typeorm';
import { addMember, createUser, createWorkspace, findRole } from '#identity/accounts.js';
import { dataSourceOptions } from '#database/data-source.js';
import { FormBrowser } from '../bench/form-browser.js';
import { spawnApp, type AppProcess } from './processes.js';
import { freePort } from './public-origin.js';
import { settingsJson } from './settings-client.js';

/**
 * No log line of either process holds a secret that passed through it, in either log
 * format: the records API (the public origin) forwards /settings, /login and /oauth to the
 * auth server, so an invite link's path, say, is seen, and logged, by both.
 */
const REDIRECT = 'http://127.0.0.1:8765/callback';

interface Pair {
  api: AppProcess;
  auth: AppProcess;
}

async function spawnPair(logFormat: 'json' | 'text'): Promise<Pair> {
  const [apiPort, authPort] = [await freePort(), await freePort()];
  const env = {
    LOG_FORMAT: logFormat,
    LOG_LEVEL: 'verbose',
    PORT: String(apiPort),
    AUTH_PORT: String(authPort),
    PUBLIC_URL: `http://127.0.0.1:${apiPort}`,
    AUTH_PROXY: 'on',
    REGISTRATIONS_PER_MINUTE: '1000',
  };
  const auth = await spawnApp('auth-server', env);
  const api = await spawnApp('records-api', env);
  return { api, auth };
}

/** Signs in, creates every kind of secret there is and uses each; returns them all. */
async function makeAndUseSecrets(ds: DataSource, url: string): Promise<Record<string, string>> {
  const password = `pw-${randomUUID()}`;
  const email = `${randomUUID().slice(0, 8)}@logs.example`;
  const workspace = await createWorkspace(ds, `logs-${randomUUID().slice(0, 8)}`);
  const user = await createUser(ds, email, password);
  await addMember(ds, workspace.id, user.id, await findRole(ds, workspace.id, 'Admin'));

  const b = new FormBrowser();
  await b.go(`${url}/login`);
  await b.submit('Sign in', { email, password });
  expect(b.lastUrl).toBe(`${url}/settings`);
  const csrf = { 'x-csrf-token': b.cookie('wrs_csrf')! };

  const key = await settingsJson(url, b, 'POST', '/settings/api/api-keys', { name: 'logged?', role: 'Admin' }, csrf);
  expect(key.status).toBe(201);
  const apiKey: string = key.body.data.createApiKey.secret;
  expect((await fetch(`${url}/rest/companies`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200);
  // A secret where an id belongs: refused, and the path that held it is logged.
  expect((await fetch(`${url}/rest/companies/${apiKey}`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(400);

  const hook = await settingsJson(url, b, 'POST', '/settings/api/webhooks', { url: 'https://example.com/hook' }, csrf);
  expect(hook.status).toBe(201);
  const webhookSecret: string = hook.body.data.createWebhook.secret;
  const revealed = await settingsJson(
    url,
    b,
    'POST',
    `/settings/api/webhooks/${hook.body.data.createWebhook.id}/reveal-secret`,
    undefined,
    csrf,
  );
  expect(revealed.body.data.webhookSecret.secret).toBe(webhookSecret);

  await b.go(`${url}/settings/members/invites`, {
    method: 'POST',
    form: { _csrf: b.cookie('wrs_csrf')!, role: (await findRole(ds, workspace.id, 'Viewer')).id },
  });
  const link = /id="invite-link"[^>]*value="([^"]+)"/.exec(b.lastBody)![1];
  const inviteToken = link.slice(link.lastIndexOf('/') + 1);
  expect(inviteToken).toMatch(/^wrsi_/);
  const guest = new FormBrowser();
  await guest.go(link);
  expect(guest.lastStatus).toBe(200);
  const guestPassword = `pw-${randomUUID()}`;
  await guest.submit('Create account and join', { email: `${randomUUID().slice(0, 8)}@logs.example`, password: guestPassword });
  expect(guest.lastUrl).toBe(`${url}/settings?joined=${workspace.id}`);
  // An invite token without its prefix (a link cut short) is a secret too.
  const bare = `${randomUUID()}${randomUUID()}`.replace(/-/g, '');
  expect((await fetch(`${url}/settings/invites/${bare}`)).status).toBe(404);

  const insecure = { execute: [oidc.allowInsecureRequests] };
  const client = await oidc.dynamicClientRegistration(
    new URL(url),
    { redirect_uris: [REDIRECT], client_name: 'Logs' },
    undefined,
    insecure,
  );
  const verifier = oidc.randomPKCECodeVerifier();
  const state = `state-${randomUUID()}`;
  const authUrl = oidc.buildAuthorizationUrl(client, {
    redirect_uri: REDIRECT,
    scope: 'api',
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const browser = new FormBrowser(REDIRECT);
  await browser.go(authUrl.toString());
  await browser.submit('Sign in', { email, password });
  await browser.submit('Allow');
  const redirect = new URL(browser.lastUrl);
  const code = redirect.searchParams.get('code')!;
  const tokens = await oidc.authorizationCodeGrant(client, redirect, { pkceCodeVerifier: verifier, expectedState: state });
  const refreshed = await oidc.refreshTokenGrant(client, tokens.refresh_token!);
  expect((await fetch(`${url}/rest/companies`, { headers: { authorization: `Bearer ${refreshed.access_token}` } })).status).toBe(200);

  return {
    password,
    guestPassword,
    apiKey,
    webhookSecret,
    inviteToken,
    bareInviteToken: bare,
    code,
    verifier,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token!,
    rotatedRefreshToken: refreshed.refresh_token!,
    sessionCookie: b.cookie('wrs_session')!,
  };
}

describe('Secrets in the logs of both processes', () => {
  let ds: DataSource;
  const pairs: Partial<Record<'json' | 'text', Pair>> = {};

  beforeAll(async () => {
    ds = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 2)).initialize();
    [pairs.json, pairs.text] = await Promise.all([spawnPair('json'), spawnPair('text')]);
  }, 90_000);
  afterAll(async () => {
    for (const pair of Object.values(pairs)) {
      pair?.api.child.kill('SIGKILL');
      pair?.auth.child.kill('SIGKILL');
    }
    await ds?.destroy();
  });

  it.each(['json', 'text'] as const)(
    'LOG_FORMAT=%s: none of the secrets made and used is in either log',
    async (format) => {
      const { api, auth } = pairs[format]!;
      const secrets = await makeAndUseSecrets(ds, api.url);
      api.child.kill('SIGTERM');
      auth.child.kill('SIGTERM');
      await Promise.all([api.exited, auth.exited]);
      const logs = { api: api.output(), auth: auth.output() };
      if (format === 'json') {
        // The invite's page was logged by both processes, with its token redacted.
        const paths = (output: string) =>
          output
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l))
            .filter((l) => l.msg === 'request')
            .map((l) => l.path);
        for (const output of Object.values(logs)) {
          expect(paths(output)).toEqual(expect.arrayContaining(['/settings/invites/[redacted]', '/settings/invites/[redacted]/signup']));
        }
        expect(paths(logs.api)).toContain('/rest/companies/[redacted]');
      }
      const found = Object.entries(secrets).flatMap(([name, secret]) =>
        Object.entries(logs)
          .filter(([, output]) => output.includes(secret))
          .map(([process]) => `${name} in the ${process} log`),
      );
      expect(found).toEqual([]);
    },
    60_000,
  );
});
