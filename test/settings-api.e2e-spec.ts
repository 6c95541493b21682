import { addMember, createApiKey, createUser, findRole } from '#identity/accounts.js';
import { createServerApp } from '#identity/server-apps.js';
import { FormBrowser } from '../bench/form-browser.js';
import { settingsJson, signInAt } from './settings-client.js';
import { PASSWORD, startPublicOrigin, unique, workspaceWith, type PublicOrigin } from './public-origin.js';

/**
 * The settings routes over plain HTTP: the JSON API's contract (session + CSRF, never a
 * bearer token), permissions, roles, server apps, members and invites, and the audit log.
 * The browser suite (settings-browser.e2e-spec.ts) walks the same pages in Chromium.
 */
describe('Workspace settings over HTTP', () => {
  let origin: PublicOrigin;
  let url: string;
  const DAY = 86_400_000;

  beforeAll(async () => {
    origin = await startPublicOrigin();
    url = origin.url;
  });

  afterAll(async () => {
    await origin?.close();
  });

  const signIn = (email: string) => signInAt(url, email);
  const json = (b: FormBrowser | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    settingsJson(url, b, method, path, body, headers);

  const csrf = (b: FormBrowser) => ({ 'x-csrf-token': b.cookie('wrs_csrf')! });
  const post = (b: FormBrowser, path: string, form: Record<string, string | string[]> = {}) =>
    b.go(`${url}${path}`, { method: 'POST', form: { _csrf: b.cookie('wrs_csrf')!, ...form } });
  const rest = (secret: string, init: RequestInit = {}) =>
    fetch(`${url}/rest/companies`, { ...init, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } });
  const audit = async (workspaceId: string) =>
    (await origin.ds.query('SELECT action, actor_email, target_label, details FROM audit_log WHERE workspace_id = $1 ORDER BY created_at', [
      workspaceId,
    ])) as {
      action: string;
      actor_email: string;
      target_label: string;
      details: Record<string, unknown>;
    }[];

  describe('the settings JSON API', () => {
    it('never takes a bearer token: an API key or an OAuth token gets 401, and the pages send it to sign-in', async () => {
      const { workspace } = await workspaceWith(origin.ds, ['Admin'], 'bearer');
      const admin = await findRole(origin.ds, workspace.id, 'Admin');
      const key = await createApiKey(origin.ds, {
        workspaceId: workspace.id,
        role: admin,
        name: 'k',
        expiresAt: new Date(Date.now() + DAY),
      });
      const app = await createServerApp(origin.ds, { workspaceId: workspace.id, role: admin, name: 'app' });
      const token = (await (
        await fetch(`${url}/oauth/token`, {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: 'grant_type=client_credentials&scope=api',
        })
      ).json()) as { access_token: string };
      expect(token.access_token).toBeTruthy();
      expect((await rest(token.access_token)).status).toBe(200);

      for (const bearer of [key.secret, token.access_token]) {
        const auth = { authorization: `Bearer ${bearer}` };
        const list = await json(undefined, 'GET', '/settings/api/api-keys', undefined, auth);
        expect(list.status).toBe(401);
        expect(list.body).toMatchObject({
          statusCode: 401,
          error: 'Unauthorized',
          code: 'UNAUTHENTICATED',
          messages: [expect.stringMatching(/bearer/i)],
        });
        // The id the public origin gave the request is the one the auth server reports.
        expect(list.body.requestId).toBe(list.headers.get('x-request-id'));
        const create = await json(undefined, 'POST', '/settings/api/api-keys', { name: 'x', role: 'Admin' }, auth);
        expect(create.status).toBe(401);
        const revoke = await json(undefined, 'POST', `/settings/api/api-keys/${key.id}/revoke`, undefined, auth);
        expect(revoke.status).toBe(401);
        const page = await fetch(`${url}/settings/api-keys`, { headers: auth, redirect: 'manual' });
        expect(page.status).toBe(303);
        expect(page.headers.get('location')).toBe('/login?return=%2Fsettings%2Fapi-keys');
      }
      expect((await rest(key.secret)).status).toBe(200);
      expect(await origin.ds.query('SELECT 1 FROM api_keys WHERE workspace_id = $1', [workspace.id])).toHaveLength(1);
    });

    it('needs the CSRF token on writes (403 without it), and gives it on /settings/api/session', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'csrf');
      const b = await signIn(people[0].email);
      const session = await json(b, 'GET', '/settings/api/session');
      expect(session.status).toBe(200);
      expect(session.body.data.session).toMatchObject({
        user: { email: people[0].email },
        workspace: { id: workspace.id, name: workspace.name },
        role: { name: 'Admin', settingsPermissions: ['API_KEYS_AND_WEBHOOKS', 'WORKSPACE_MEMBERS', 'ROLES', 'DATA_MODEL', 'VAULT'] },
        csrfToken: b.cookie('wrs_csrf'),
      });
      const body = { name: 'ci', role: 'Admin' };
      const none = await json(b, 'POST', '/settings/api/api-keys', body);
      expect(none.status).toBe(403);
      expect(none.body).toMatchObject({ code: 'FORBIDDEN', messages: [expect.stringMatching(/CSRF/)] });
      const wrong = await json(b, 'POST', '/settings/api/api-keys', body, { 'x-csrf-token': 'x'.repeat(32) });
      expect(wrong.status).toBe(403);
      const ok = await json(b, 'POST', '/settings/api/api-keys', body, csrf(b));
      expect(ok.status).toBe(201);
    });

    it('creates keys (expiry cut to one year, default 90 days), lists them without secrets, revokes them', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'keys-api');
      const b = await signIn(people[0].email);
      const viewer = await findRole(origin.ds, workspace.id, 'Viewer');

      const threeYears = new Date(Date.now() + 3 * 365 * DAY).toISOString();
      const long = await json(b, 'POST', '/settings/api/api-keys', { name: 'long', roleId: viewer.id, expiresAt: threeYears }, csrf(b));
      expect(long.status).toBe(201);
      const created = long.body.data.createApiKey;
      expect(created).toMatchObject({ id: expect.any(String), name: 'long', role: 'Viewer', secret: expect.stringMatching(/^wrs_/) });
      expect(Math.abs(new Date(created.expiresAt).getTime() - (Date.now() + 365 * DAY))).toBeLessThan(60_000);
      const [stored] = await origin.ds.query('SELECT expires_at, secret_hash FROM api_keys WHERE id = $1', [created.id]);
      expect(stored.expires_at.toISOString()).toBe(created.expiresAt);
      expect(stored.secret_hash).not.toContain(created.secret);

      const byChoice = await json(b, 'POST', '/settings/api/api-keys', { name: 'month', role: 'viewer', expiresIn: '30d' }, csrf(b));
      expect(byChoice.status).toBe(201);
      expect(Math.abs(new Date(byChoice.body.data.createApiKey.expiresAt).getTime() - (Date.now() + 30 * DAY))).toBeLessThan(60_000);
      const byDefault = await json(b, 'POST', '/settings/api/api-keys', { name: 'default', role: 'Admin' }, csrf(b));
      expect(Math.abs(new Date(byDefault.body.data.createApiKey.expiresAt).getTime() - (Date.now() + 90 * DAY))).toBeLessThan(60_000);

      const list = await json(b, 'GET', '/settings/api/api-keys');
      expect(list.status).toBe(200);
      expect(list.body.totalCount).toBe(3);
      expect(list.body.data.apiKeys.map((k: { name: string }) => k.name).sort()).toEqual(['default', 'long', 'month']);
      expect(JSON.stringify(list.body)).not.toMatch(/wrs_|secret|hash/i);
      expect(list.body.data.apiKeys[0]).toMatchObject({
        status: 'active',
        role: { name: expect.any(String) },
        lastUsedAt: null,
        revokedAt: null,
      });

      expect((await rest(created.secret)).status).toBe(200);
      const revoked = await json(b, 'POST', `/settings/api/api-keys/${created.id}/revoke`, undefined, csrf(b));
      expect(revoked.status).toBe(200);
      expect(revoked.body.data.revokeApiKey).toEqual({ id: created.id, revokedAt: expect.any(String) });
      const res = await rest(created.secret);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { messages: string[] }).messages[0]).toMatch(/revoked/);
      const again = await json(b, 'POST', `/settings/api/api-keys/${created.id}/revoke`, undefined, csrf(b));
      expect(again.body.data.revokeApiKey.revokedAt).toBe(revoked.body.data.revokeApiKey.revokedAt);

      const log = await audit(workspace.id);
      expect(log.map((e) => e.action)).toEqual(['api_key.create', 'api_key.create', 'api_key.create', 'api_key.revoke']);
      expect(log[0]).toMatchObject({
        actor_email: people[0].email,
        target_label: 'long',
        details: { role: 'Viewer', expiresAt: created.expiresAt },
      });
      expect(JSON.stringify(log)).not.toContain(created.secret);
    });

    it('refuses bad input with the REST error shape', async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'keys-bad');
      const b = await signIn(people[0].email);
      const create = (body: unknown, headers: Record<string, string> = {}) =>
        json(b, 'POST', '/settings/api/api-keys', body, { ...csrf(b), ...headers });

      const cases: [unknown, RegExp][] = [
        [{ name: 'x', role: 'Admin', scopes: ['all'] }, /unknown field scopes/],
        [{ name: 'x' }, /roleId .* or role .* is required/],
        [{ name: 'x', role: 'Member' }, /cannot be assigned to API keys/],
        [{ name: 'x', role: 'Nope' }, /role: No role "Nope"/],
        [{ name: 'x', role: 'Admin', expiresAt: '2001-01-01T00:00:00Z' }, /expiresAt must be in the future/],
        [{ name: 'x', role: 'Admin', expiresAt: 'tomorrow' }, /expiresAt must be an ISO 8601/],
        [{ name: 'x', role: 'Admin', expiresIn: '2y' }, /expiresIn must be one of 15d, 30d, 90d, 1y/],
        [{ name: '', role: 'Admin' }, /name must be 1 to 100/],
      ];
      for (const [body, message] of cases) {
        const res = await create(body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'VALIDATION_FAILED' });
        expect(res.body.messages.join(' ')).toMatch(message);
      }
      const broken = await create('{"name":');
      expect(broken.status).toBe(400);
      expect(broken.body.code).toBe('INVALID_JSON');
      const form = await create('name=x', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(form.status).toBe(415);
      expect(form.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      const missing = await json(b, 'GET', '/settings/api/nowhere');
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
      await b.go(`${url}/settings/nowhere`);
      expect(b.lastStatus).toBe(404);
      expect(b.lastBody).toContain('There is no settings page at this address');
      const badId = await json(b, 'POST', '/settings/api/api-keys/nope/revoke', undefined, csrf(b));
      expect(badId.status).toBe(400);
      expect(badId.body.code).toBe('INVALID_ID');
    });

    it('keeps each workspace to itself: a key of another workspace is 404', async () => {
      const other = await workspaceWith(origin.ds, ['Admin'], 'other');
      const key = await createApiKey(origin.ds, {
        workspaceId: other.workspace.id,
        role: await findRole(origin.ds, other.workspace.id, 'Admin'),
        name: 'theirs',
        expiresAt: new Date(Date.now() + DAY),
      });
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'mine');
      const b = await signIn(people[0].email);
      const res = await json(b, 'POST', `/settings/api/api-keys/${key.id}/revoke`, undefined, csrf(b));
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
      expect((await rest(key.secret)).status).toBe(200);
      expect((await json(b, 'GET', '/settings/api/api-keys')).body.data.apiKeys).toEqual([]);
    });
  });

  describe('permissions', () => {
    it('gives a Viewer or a Member none of the settings pages or the keys API (403), only the overview', async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin', 'Viewer', 'Member'], 'perm');
      for (const person of people.slice(1)) {
        const b = await signIn(person.email);
        expect(b.lastBody).not.toContain('href="/settings/api-keys"');
        expect(b.lastBody).not.toContain('href="/settings/roles"');
        for (const path of ['/settings/api-keys', '/settings/apps', '/settings/roles', '/settings/members', '/settings/audit']) {
          await b.go(`${url}${path}`);
          expect([path, b.lastStatus]).toEqual([path, 403]);
          expect(b.lastBody).toMatch(/does not include the/);
        }
        expect((await json(b, 'GET', '/settings/api/api-keys')).status).toBe(403);
        const create = await json(b, 'POST', '/settings/api/api-keys', { name: 'x', role: 'Viewer' }, csrf(b));
        expect(create.status).toBe(403);
        expect(create.body.messages[0]).toMatch(/"API keys and webhooks" permission/);
        await post(b, '/settings/api-keys', { name: 'x', role: 'Viewer', expiration: '90d' });
        expect(b.lastStatus).toBe(403);
      }
    });

    it('sends every page, with no-store and a strict CSP, and a signed-out visit to sign-in', async () => {
      const res = await fetch(`${url}/settings/roles`, { redirect: 'manual' });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/login?return=%2Fsettings%2Froles');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'headers');
      const b = await signIn(people[0].email);
      const page = await fetch(`${url}/settings/api-keys`, { headers: { cookie: b.cookieHeader() } });
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    });

    it('lets nobody hand out more than their own role allows', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'escalate');
      const adminBrowser = await signIn(people[0].email);
      // A role that manages keys, roles and members but only reads records.
      await post(adminBrowser, '/settings/roles', {
        name: 'Key keeper',
        permissions: 'companies.read',
        settings: 'API_KEYS_AND_WEBHOOKS',
        assignableToUsers: 'on',
      });
      expect(adminBrowser.lastStatus).toBe(200);
      await origin.ds.query(
        `INSERT INTO roles (workspace_id, name, object_permissions, settings_permissions) VALUES ($1, 'Manager', $2, '{API_KEYS_AND_WEBHOOKS,WORKSPACE_MEMBERS,ROLES}')`,
        [
          workspace.id,
          JSON.stringify({
            companies: { read: true, create: false, update: false, delete: false },
            people: { read: true, create: false, update: false, delete: false },
          }),
        ],
      );
      const email = `${unique('manager')}@example.com`;
      const managerUser = await createUser(origin.ds, email, PASSWORD);
      const managerRole = await findRole(origin.ds, workspace.id, 'Manager');
      await addMember(origin.ds, workspace.id, managerUser.id, managerRole);
      const b = await signIn(email);

      const key = await json(b, 'POST', '/settings/api/api-keys', { name: 'admin key', role: 'Admin' }, csrf(b));
      expect(key.status).toBe(403);
      expect(key.body.messages[0]).toMatch(/cannot hand out "Admin".*companies\.create/);
      expect((await json(b, 'POST', '/settings/api/api-keys', { name: 'viewer key', role: 'Viewer' }, csrf(b))).status).toBe(201);

      await post(b, '/settings/roles', { name: 'Writer', permissions: ['companies.read', 'companies.create'], assignableToUsers: 'on' });
      expect(b.lastStatus).toBe(403);
      expect(b.lastBody).toMatch(/cannot hand out &quot;Writer&quot;/);

      await post(b, `/settings/members/${people[0].id}/role`, { role: managerRole.id });
      expect(b.lastStatus).toBe(403);
      expect(b.lastBody).toMatch(/allows more than your role/);
      await post(b, '/settings/members/invites', { role: (await findRole(origin.ds, workspace.id, 'Admin')).id });
      expect(b.lastStatus).toBe(403);
    });
  });

  describe('roles', () => {
    it('creates and edits custom roles; Admin stays as it is; a role in use cannot be deleted', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'roles');
      const b = await signIn(people[0].email);
      await b.go(`${url}/settings/roles`);
      expect(b.lastStatus).toBe(200);
      expect(b.lastBody).toMatch(/Admin[\s\S]*Built in/);
      const admin = await findRole(origin.ds, workspace.id, 'Admin');
      expect(b.lastBody).not.toContain(`/settings/roles/${admin.id}/delete`);

      await post(b, '/settings/roles', {
        name: 'Importer',
        description: 'Loads companies',
        permissions: 'companies.read',
        assignableToApiKeys: 'on',
      });
      expect(b.lastUrl).toMatch(/\/settings\/roles\?saved=/);
      expect(b.lastBody).toContain('Role &quot;Importer&quot; saved.');
      const importer = await findRole(origin.ds, workspace.id, 'Importer');
      expect(importer).toMatchObject({ assignableToApiKeys: true, assignableToUsers: false, settingsPermissions: [] });
      expect(importer.objectPermissions.companies).toEqual({ read: true, create: false, update: false, delete: false });
      expect(importer.objectPermissions.people.read).toBe(false);

      await post(b, '/settings/roles', { name: 'importer', permissions: 'companies.read' });
      expect(b.lastStatus).toBe(409);
      expect(b.lastBody).toContain('already exists');
      await post(b, '/settings/roles', { name: 'Writer', permissions: 'companies.create' });
      expect(b.lastStatus).toBe(400);
      expect(b.lastBody).toContain('companies: create, update and delete need read');

      await post(b, `/settings/roles/${admin.id}`, { name: 'Admin', permissions: 'companies.read' });
      expect(b.lastStatus).toBe(403);
      expect(b.lastBody).toContain('built in');
      await post(b, `/settings/roles/${admin.id}/delete`);
      expect(b.lastStatus).toBe(403);

      const key = await createApiKey(origin.ds, {
        workspaceId: workspace.id,
        role: importer,
        name: 'import',
        expiresAt: new Date(Date.now() + DAY),
      });
      await post(b, `/settings/roles/${importer.id}`, { name: 'Importer', permissions: 'companies.read', assignableToUsers: 'on' });
      expect(b.lastStatus).toBe(409);
      expect(b.lastBody).toContain('must stay assignable to API keys');
      await b.go(`${url}/settings/roles/${importer.id}/delete`);
      expect(b.lastBody).toContain('in use (1 API key)');
      expect(b.lastBody).not.toContain('Delete role</button>');
      await post(b, `/settings/roles/${importer.id}/delete`);
      expect(b.lastStatus).toBe(409);
      expect(b.lastBody).toContain('is in use (1 API key)');

      // Revoked keys no longer hold the role; it can go, and they with it.
      await origin.ds.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
      await post(b, `/settings/roles/${importer.id}/delete`);
      expect(b.lastUrl).toContain('/settings/roles?deleted=');
      expect(b.lastBody).toContain('Role &quot;Importer&quot; deleted.');
      expect(await origin.ds.query('SELECT 1 FROM roles WHERE id = $1', [importer.id])).toHaveLength(0);

      expect((await audit(workspace.id)).map((e) => e.action)).toEqual(['role.create', 'role.delete']);
    });

    it('applies a role edit to an existing key at its next request', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'role-edit');
      const b = await signIn(people[0].email);
      await post(b, '/settings/roles', { name: 'Reader', permissions: 'companies.read', assignableToApiKeys: 'on' });
      const reader = await findRole(origin.ds, workspace.id, 'Reader');
      const key = await createApiKey(origin.ds, {
        workspaceId: workspace.id,
        role: reader,
        name: 'r',
        expiresAt: new Date(Date.now() + DAY),
      });
      expect((await rest(key.secret, { method: 'POST', body: JSON.stringify({ name: 'Before' }) })).status).toBe(403);
      await b.go(`${url}/settings/roles/${reader.id}`);
      expect(b.lastBody).toContain('Used by 1 API key');
      await post(b, `/settings/roles/${reader.id}`, {
        name: 'Reader',
        permissions: ['companies.read', 'companies.create'],
        assignableToApiKeys: 'on',
      });
      expect(b.lastBody).toContain('saved');
      expect((await rest(key.secret, { method: 'POST', body: JSON.stringify({ name: 'After' }) })).status).toBe(201);
      const [entry] = (await audit(workspace.id)).filter((e) => e.action === 'role.update');
      expect(entry.details).toEqual({ changes: ['+ companies.create'] });
    });
  });

  describe('server apps', () => {
    const tokenFor = (clientId: string, secret: string) =>
      fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials&scope=api',
      });

    it('registers an app with its secret shown once, rotates the secret, deletes the app', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'apps');
      const b = await signIn(people[0].email);
      const viewer = await findRole(origin.ds, workspace.id, 'Viewer');
      await post(b, '/settings/apps', { name: 'Nightly sync', role: viewer.id });
      expect(b.lastUrl).toMatch(/\/settings\/apps\/secret\/[0-9a-f-]{36}$/);
      const shownAt = b.lastUrl;
      const clientId = /id="app-client-id"[^>]*value="([^"]+)"/.exec(b.lastBody)![1];
      const secret = /id="app-client-secret"[^>]*value="([^"]+)"/.exec(b.lastBody)![1];
      expect(secret).toMatch(/^wrsa_/);
      await b.go(shownAt);
      expect(b.lastStatus).toBe(410);
      expect(b.lastBody).not.toContain(secret);

      const first = await tokenFor(clientId, secret);
      expect(first.status).toBe(200);
      const { access_token: token } = (await first.json()) as { access_token: string };
      expect((await rest(token)).status).toBe(200);

      const [{ id }] = await origin.ds.query('SELECT id FROM server_apps WHERE client_id = $1', [clientId]);
      await b.go(`${url}/settings/apps/${id}/rotate`);
      expect(b.lastBody).toContain('stops working at once');
      await b.submit('Rotate secret');
      const rotated = /id="app-client-secret"[^>]*value="([^"]+)"/.exec(b.lastBody)![1];
      expect(rotated).not.toBe(secret);
      expect((await tokenFor(clientId, secret)).status).toBe(401);
      expect((await tokenFor(clientId, rotated)).status).toBe(200);

      await b.go(`${url}/settings/apps/${id}/delete`);
      await b.submit('Delete app');
      expect(b.lastUrl).toBe(`${url}/settings/apps?deleted=1`);
      expect((await tokenFor(clientId, rotated)).status).toBe(401);
      expect((await rest(token)).status).toBe(401);

      const log = await audit(workspace.id);
      expect(log.map((e) => e.action)).toEqual(['server_app.create', 'server_app.rotate_secret', 'server_app.delete']);
      expect(JSON.stringify(log)).not.toMatch(/wrsa_/);
    });

    it('offers only roles assignable to API keys', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'apps-roles');
      const b = await signIn(people[0].email);
      await b.go(`${url}/settings/apps`);
      const member = await findRole(origin.ds, workspace.id, 'Member');
      expect(b.lastBody).not.toContain(`value="${member.id}"`);
      await post(b, '/settings/apps', { name: 'x', role: member.id });
      expect(b.lastStatus).toBe(400);
      expect(b.lastBody).toContain('cannot be assigned to apps or API keys');
    });
  });

  describe('members and invites', () => {
    it('changes roles and removes members, but never the last Admin', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin', 'Member'], 'members');
      const [admin, member] = people;
      const b = await signIn(admin.email);
      await b.go(`${url}/settings/members`);
      expect(b.lastBody).toContain(member.email);
      const viewer = await findRole(origin.ds, workspace.id, 'Viewer');
      const adminRole = await findRole(origin.ds, workspace.id, 'Admin');

      await post(b, `/settings/members/${member.id}/role`, { role: viewer.id });
      expect(b.lastUrl).toBe(`${url}/settings/members?done=role`);
      const [row] = await origin.ds.query('SELECT role_id FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
        workspace.id,
        member.id,
      ]);
      expect(row.role_id).toBe(viewer.id);

      await post(b, `/settings/members/${admin.id}/role`, { role: viewer.id });
      expect(b.lastStatus).toBe(409);
      expect(b.lastBody).toContain('last Admin');
      await post(b, `/settings/members/${admin.id}/remove`);
      expect(b.lastStatus).toBe(409);

      await post(b, `/settings/members/${member.id}/role`, { role: adminRole.id });
      await post(b, `/settings/members/${admin.id}/remove`);
      expect(b.lastUrl).toBe(`${url}/settings`);
      expect(b.lastStatus).toBe(403);
      expect(b.lastBody).toContain('not a member of any workspace');

      expect((await audit(workspace.id)).map((e) => `${e.action} ${e.target_label}`)).toEqual([
        `member.change_role ${member.email}`,
        `member.change_role ${member.email}`,
        `member.remove ${admin.email}`,
      ]);
    });

    it('invites a new person: the link signs them up into the workspace once, with the chosen role', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'invite-new');
      const b = await signIn(people[0].email);
      const viewer = await findRole(origin.ds, workspace.id, 'Viewer');
      await post(b, '/settings/members/invites', { role: viewer.id });
      expect(b.lastUrl).toMatch(/\/settings\/members\/invites\/created\//);
      const link = /id="invite-link"[^>]*value="([^"]+)"/.exec(b.lastBody)![1];
      expect(link).toMatch(new RegExp(`^${url}/settings/invites/wrsi_`));
      const [stored] = await origin.ds.query('SELECT token_hash FROM workspace_invites WHERE workspace_id = $1', [workspace.id]);
      expect(link).not.toContain(stored.token_hash);

      const guest = new FormBrowser();
      await guest.go(link);
      expect(guest.lastStatus).toBe(200);
      expect(guest.lastBody).toContain(`Join ${workspace.name}`);
      expect(guest.labels()).toEqual(expect.arrayContaining(['Email', 'Password']));
      const email = `${unique('guest')}@example.com`;
      await guest.submit('Create account and join', { email, password: 'short' });
      expect(guest.lastStatus).toBe(400);
      await guest.submit('Create account and join', { email, password: PASSWORD });
      expect(guest.lastUrl).toBe(`${url}/settings?joined=${workspace.id}`);
      expect(guest.lastBody).toContain(`you joined as Viewer`);
      const [row] = await origin.ds.query(
        'SELECT r.name FROM workspace_members m JOIN users u ON u.id = m.user_id JOIN roles r ON r.workspace_id = m.workspace_id AND r.id = m.role_id WHERE m.workspace_id = $1 AND u.email = $2',
        [workspace.id, email],
      );
      expect(row.name).toBe('Viewer');

      const late = new FormBrowser();
      await late.go(link);
      expect(late.lastStatus).toBe(410);
      expect(late.lastBody).toContain('already used');
      await late.go(`${url}/settings/invites/wrsi_nothing`);
      expect(late.lastStatus).toBe(404);

      await b.go(`${url}/settings/members`);
      expect(b.lastBody).toContain(email);
      expect(b.lastBody).toMatch(/Accepted[\s\S]*by [^<]*guest/);
      const log = await audit(workspace.id);
      expect(log.map((e) => `${e.action} ${e.actor_email}`)).toEqual([`invite.create ${people[0].email}`, `invite.accept ${email}`]);
      expect(JSON.stringify(log)).not.toContain('wrsi_');
    });

    it('invites an existing user: sign in, come back to the link, join; the switcher then offers both workspaces', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'invite-existing');
      const elsewhere = await workspaceWith(origin.ds, ['Admin'], 'home');
      const b = await signIn(people[0].email);
      const member = await findRole(origin.ds, workspace.id, 'Member');
      await post(b, '/settings/members/invites', { role: member.id });
      const link = /id="invite-link"[^>]*value="([^"]+)"/.exec(b.lastBody)![1];

      // A member opening the link keeps their role, and the link stays for its person.
      await b.go(link);
      await b.submit('Join workspace');
      expect(b.lastUrl).toBe(`${url}/settings`);
      const [{ name: stillAdmin }] = await origin.ds.query(
        'SELECT r.name FROM workspace_members m JOIN roles r ON r.workspace_id = m.workspace_id AND r.id = m.role_id WHERE m.workspace_id = $1 AND m.user_id = $2',
        [workspace.id, people[0].id],
      );
      expect(stillAdmin).toBe('Admin');

      const guest = new FormBrowser();
      await guest.go(link);
      const signInHref = /href="(\/login\?return=[^"]+)"/.exec(guest.lastBody)![1].replace(/&amp;/g, '&');
      await guest.go(`${url}${signInHref}`);
      await guest.submit('Sign in', { email: elsewhere.people[0].email, password: PASSWORD });
      expect(guest.lastUrl).toBe(link);
      expect(guest.lastBody).toContain(`signed in as <strong>${elsewhere.people[0].email}</strong>`);
      await guest.submit('Join workspace');
      expect(guest.lastUrl).toBe(`${url}/settings?joined=${workspace.id}`);
      expect(guest.lastBody).toContain('Welcome to');
      expect(guest.labels()).toContain('Workspace');
      // Member in the new workspace: no settings pages there; Admin at home.
      await guest.go(`${url}/settings/api-keys`);
      expect(guest.lastStatus).toBe(403);
      await post(guest, '/settings/workspace', { workspace: elsewhere.workspace.id, return: '/settings/api-keys' });
      expect(guest.lastUrl).toBe(`${url}/settings/api-keys`);
      expect(guest.lastStatus).toBe(200);
      expect(guest.lastBody).toContain(elsewhere.workspace.name);
    });

    it('cancels an invite, and refuses roles that cannot go to users', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'invite-cancel');
      const b = await signIn(people[0].email);
      await post(b, '/settings/roles', { name: 'Bots only', permissions: 'companies.read', assignableToApiKeys: 'on' });
      const botsOnly = await findRole(origin.ds, workspace.id, 'Bots only');
      await post(b, '/settings/members/invites', { role: botsOnly.id });
      expect(b.lastStatus).toBe(400);
      expect(b.lastBody).toContain('cannot be assigned to users');

      await post(b, '/settings/members/invites', { role: (await findRole(origin.ds, workspace.id, 'Viewer')).id });
      const link = /id="invite-link"[^>]*value="([^"]+)"/.exec(b.lastBody)![1];
      const [invite] = await origin.ds.query('SELECT id FROM workspace_invites WHERE workspace_id = $1', [workspace.id]);
      await b.go(`${url}/settings/members`);
      await b.submit('Cancel invite');
      expect(b.lastBody).toContain('Invite cancelled.');
      const guest = new FormBrowser();
      await guest.go(link);
      expect(guest.lastStatus).toBe(410);
      expect(guest.lastBody).toContain('cancelled');
      expect((await audit(workspace.id)).map((e) => e.action)).toEqual(['role.create', 'invite.create', 'invite.revoke']);
      void invite;
    });
  });

  it('shows the audit log to members with a settings permission, newest first', async () => {
    const { people } = await workspaceWith(origin.ds, ['Admin'], 'audit');
    const b = await signIn(people[0].email);
    await json(b, 'POST', '/settings/api/api-keys', { name: 'audited key', role: 'Viewer', expiresIn: '15d' }, csrf(b));
    await b.go(`${url}/settings/audit`);
    expect(b.lastStatus).toBe(200);
    expect(b.lastBody).toContain('Created API key');
    expect(b.lastBody).toContain('audited key');
    expect(b.lastBody).toContain(people[0].email);
    expect(b.lastBody).toContain('role: Viewer');
  });
});
