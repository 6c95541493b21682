import { randomBytes } from 'node:crypto';
import { addMember, createApiKey, createUser, findRole } from '#identity/accounts.js';
import { createRole, deleteRole, updateRole, type RoleInput } from '#identity/roles.js';
import { RECORD_OBJECTS, type FieldPermissions, type ObjectPermissions } from '#database/entities/index.js';
import type { FormBrowser } from '../bench/form-browser.js';
import { waitUntil } from './processes.js';
import { settingsJson, signInAt } from './settings-client.js';
import { PASSWORD, startPublicOrigin, unique, workspaceWith, type PublicOrigin } from './public-origin.js';
import { EchoReceiver, Receiver, TEST_WORKER_ENV } from './webhook-receiver.js';

/**
 * Webhooks against the vault and the roles (docs/webhooks.md "Custom headers", "Who a
 * webhook delivers as"; docs/decisions/0049-webhooks-vault-and-read-permissions.md): a member
 * without VAULT cannot make a webhook send a vault secret, or send one elsewhere; a member
 * with it types the password first; a delivery carries only what the webhook's role reads.
 */
const DAY = 86_400_000;

/** The Authorization header a receiver got, disguised as a thief's echo would send it back. */
const disguised = (auth: string) => ({
  base64: Buffer.from(auth).toString('base64'),
  hex: Buffer.from(auth).toString('hex'),
  reversed: [...auth].reverse().join(''),
  spaced: [...auth].join(' '),
});

describe('Webhooks, the vault and read permissions', () => {
  let origin: PublicOrigin;
  let url: string;

  beforeAll(async () => {
    origin = await startPublicOrigin({ ...TEST_WORKER_ENV });
    url = origin.url;
  }, 60_000);
  afterAll(async () => {
    await origin?.close();
  });

  const signIn = (email: string) => signInAt(url, email);
  const json = (b: FormBrowser, method: string, path: string, body?: unknown) =>
    settingsJson(url, b, method, path, body, { 'x-csrf-token': b.cookie('wrs_csrf')! });
  const rest = (key: string, method: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const count = async (sql: string, params: unknown[]) => Number((await origin.ds.query(sql, params))[0].n);

  const everything = (): ObjectPermissions =>
    Object.fromEntries(RECORD_OBJECTS.map((o) => [o, { read: true, create: true, update: true, delete: true }])) as ObjectPermissions;
  function roleInput(name: string, o: { objects?: ObjectPermissions; fields?: FieldPermissions; vault?: boolean } = {}): RoleInput {
    return {
      name,
      description: '',
      objectPermissions: o.objects ?? everything(),
      fieldPermissions: o.fields ?? {},
      settingsPermissions: o.vault ? ['API_KEYS_AND_WEBHOOKS', 'VAULT'] : ['API_KEYS_AND_WEBHOOKS'],
      assignableToUsers: true,
      assignableToApiKeys: true,
    };
  }

  /** A workspace with an Admin (and its key) and one member per given role, made first. */
  async function workspace(label: string, roles: RoleInput[] = []) {
    const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], label);
    const adminRole = await findRole(origin.ds, workspace.id, 'Admin');
    const key = (
      await createApiKey(origin.ds, { workspaceId: workspace.id, role: adminRole, name: 'admin', expiresAt: new Date(Date.now() + DAY) })
    ).secret;
    const members: { id: string; email: string; roleId: string }[] = [];
    for (const input of roles) {
      const role = await createRole(origin.ds, workspace.id, input);
      const email = `${unique('member')}@example.com`;
      const user = await createUser(origin.ds, email, PASSWORD);
      await addMember(origin.ds, workspace.id, user.id, role);
      members.push({ id: user.id, email, roleId: role.id });
    }
    return { workspace, admin: people[0], key, members };
  }

  const attemptsOf = async (b: FormBrowser, hookId: string) =>
    (await json(b, 'GET', `/settings/api/webhooks/${hookId}/attempts`)).body.data.attempts as any[];

  describe('the vault', () => {
    it('a member without VAULT cannot name a vault secret in a webhook header; the answer is the same whether the secret exists', async () => {
      const { workspace: ws, key, members } = await workspace('whv-oracle', [roleInput('Integrator')]);
      expect(
        (await rest(key, 'POST', '/rest/vault/secrets', { name: 'CRM_TOKEN', value: `s-${randomBytes(16).toString('hex')}` })).status,
      ).toBe(201);
      const b = await signIn(members[0].email);
      const create = (name: string) =>
        json(b, 'POST', '/settings/api/webhooks', {
          url: 'http://127.0.0.1:9/leak',
          headers: [{ name: 'X-Leak', value: `{{vault.${name}}}` }],
          password: PASSWORD,
        });
      const existing = await create('CRM_TOKEN');
      const missing = await create('NO_SUCH_SECRET_AT_ALL_IN_THIS_VAULT');
      expect({ status: existing.status, code: existing.body.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
      const { requestId: _a, ...one } = existing.body;
      const { requestId: _b, ...other } = missing.body;
      expect(other).toEqual(one);
      expect(one.messages).toEqual([expect.stringMatching(/need the Vault secrets permission/)]);
      expect(JSON.stringify(one)).not.toMatch(/CRM_TOKEN|NO_SUCH/);

      // The page's form refuses the same way, saying nothing about the names either.
      await b.go(`${url}/settings/webhooks`);
      await b.submit('Add webhook', {
        url: 'http://127.0.0.1:9/leak',
        operations: '*.*',
        headers: 'X-Leak: {{vault.CRM_TOKEN}}',
      });
      expect(b.lastStatus).toBe(403);
      expect(b.lastBody).toContain('need the Vault secrets permission');
      expect(await count('SELECT count(*) AS n FROM webhooks WHERE workspace_id = $1', [ws.id])).toBe(0);
    });

    it('changing the URL or headers of, or redelivering, a webhook that sends vault secrets needs VAULT and the password of the last 5 minutes, audited', async () => {
      const { workspace: ws, admin, key, members } = await workspace('whv-guard', [roleInput('Integrator')]);
      const receiver = await new Receiver().start();
      try {
        const value = `s-${randomBytes(16).toString('hex')}`;
        expect((await rest(key, 'POST', '/rest/vault/secrets', { name: 'CRM_TOKEN', value })).status).toBe(201);
        const a = await signIn(admin.email);
        const body = {
          url: receiver.url,
          operations: ['company.created'],
          headers: [{ name: 'Authorization', value: 'Bearer {{vault.CRM_TOKEN}}' }],
        };
        // Signed in, not typed again: refused, and a wrong password is refused too.
        const fresh = await json(a, 'POST', '/settings/api/webhooks', body);
        expect({ status: fresh.status, code: fresh.body.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
        expect(fresh.body.messages).toEqual([expect.stringMatching(/Type your password/)]);
        expect((await json(a, 'POST', '/settings/api/webhooks', { ...body, password: 'wrong password' })).status).toBe(403);
        expect(await count('SELECT count(*) AS n FROM webhooks WHERE workspace_id = $1', [ws.id])).toBe(0);
        const made = await json(a, 'POST', '/settings/api/webhooks', { ...body, password: PASSWORD });
        expect(made.status).toBe(201);
        expect(made.body.data.createWebhook).not.toHaveProperty('password');
        const hook = made.body.data.createWebhook;

        expect((await rest(key, 'POST', '/rest/companies', { name: 'Vaulted' })).status).toBe(201);
        await receiver.waitFor(1);
        expect(receiver.receipts[0].headers.authorization).toBe(`Bearer ${value}`);
        await waitUntil(async () => (await attemptsOf(a, hook.id)).length === 1, 10_000);
        const [delivered] = await attemptsOf(a, hook.id);

        // The member without VAULT: no new URL, no new headers, no redelivery; a description is fine.
        const m = await signIn(members[0].email);
        const pointed = await json(m, 'PATCH', `/settings/api/webhooks/${hook.id}`, { url: 'http://127.0.0.1:9/mine', password: PASSWORD });
        expect({ status: pointed.status, code: pointed.body.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
        const moved = await json(m, 'PATCH', `/settings/api/webhooks/${hook.id}`, {
          headers: [{ name: 'X-Leak', value: '{{vault.CRM_TOKEN}}' }],
        });
        expect(moved.status).toBe(403);
        const again = await json(m, 'POST', `/settings/api/webhooks/${hook.id}/deliveries/${delivered.deliveryId}/redeliver`, {
          password: PASSWORD,
        });
        expect(again.status).toBe(403);
        await m.go(`${url}/settings/webhooks/${hook.id}`);
        await m.submit('Redeliver', {});
        expect(m.lastStatus).toBe(403);
        expect((await origin.ds.query('SELECT url, headers FROM webhooks WHERE workspace_id = $1', [ws.id]))[0]).toEqual({
          url: receiver.url,
          headers: body.headers,
        });
        expect(await count('SELECT count(*) AS n FROM webhook_deliveries WHERE workspace_id = $1', [ws.id])).toBe(1);
        expect((await json(m, 'PATCH', `/settings/api/webhooks/${hook.id}`, { description: 'CRM sync' })).status).toBe(200);

        // The admin, 6 minutes after typing it: asked again, for the URL and for a redelivery.
        await origin.ds.query(`UPDATE web_sessions SET password_confirmed_at = now() - interval '6 minutes' WHERE user_id = $1`, [
          admin.id,
        ]);
        expect((await json(a, 'PATCH', `/settings/api/webhooks/${hook.id}`, { url: `${receiver.url}?v=2` })).status).toBe(403);
        const redeliver = (extra: object = {}) =>
          json(a, 'POST', `/settings/api/webhooks/${hook.id}/deliveries/${delivered.deliveryId}/redeliver`, extra);
        expect((await redeliver()).status).toBe(403);
        expect((await redeliver({ password: PASSWORD })).status).toBe(202);
        await receiver.waitFor(2);
        expect((await json(a, 'PATCH', `/settings/api/webhooks/${hook.id}`, { url: `${receiver.url}?v=2` })).status).toBe(200);

        const audit = await origin.ds.query(
          `SELECT action, actor_email, details FROM audit_log WHERE workspace_id = $1 AND action LIKE 'webhook.%' ORDER BY created_at, id`,
          [ws.id],
        );
        expect(audit.map((r: any) => [r.action, r.actor_email, r.details.vaultSecrets ?? null])).toEqual([
          ['webhook.create', admin.email, ['CRM_TOKEN']],
          ['webhook.update', members[0].email, null],
          ['webhook.redeliver', admin.email, ['CRM_TOKEN']],
          ['webhook.update', admin.email, ['CRM_TOKEN']],
        ]);
        expect(JSON.stringify(audit)).not.toContain(value);
      } finally {
        await receiver.close();
      }
    }, 60_000);

    it('the pages ask for the password where it is needed; a bad, foreign or forged confirmation changes nothing', async () => {
      const { workspace: ws, admin, key } = await workspace('whv-pages');
      const other = await workspace('whv-pages-other');
      const receiver = await new Receiver().start();
      try {
        expect(
          (await rest(key, 'POST', '/rest/vault/secrets', { name: 'CRM_TOKEN', value: `s-${randomBytes(16).toString('hex')}` })).status,
        ).toBe(201);
        const a = await signIn(admin.email);
        await a.go(`${url}/settings/webhooks`);
        expect(a.lastBody).toContain('<label for="wh-password">Your password');
        const fields = { url: receiver.url, operations: 'company.created', headers: 'Authorization: Bearer {{vault.CRM_TOKEN}}' };
        await a.submit('Add webhook', fields);
        expect(a.lastStatus).toBe(403);
        expect(a.lastBody).toContain('Type your password to send vault secrets');
        expect(a.lastBody).not.toContain(PASSWORD);
        await a.submit('Add webhook', { ...fields, password: PASSWORD });
        expect(a.lastUrl).toMatch(/\/settings\/webhooks\/created\//);
        const [{ id }] = await origin.ds.query('SELECT id FROM webhooks WHERE workspace_id = $1', [ws.id]);
        expect((await rest(key, 'POST', '/rest/companies', { name: 'Paged' })).status).toBe(201);
        await receiver.waitFor(1);
        await waitUntil(async () => (await attemptsOf(a, id)).length === 1, 10_000);

        // A malformed password is a 400 and saves nothing.
        const typed = await json(a, 'PATCH', `/settings/api/webhooks/${id}`, { url: `${receiver.url}?x`, password: 42 });
        expect({ status: typed.status, code: typed.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
        // Later than 5 minutes: Redeliver on the page asks for the password first, in a form of its own.
        await origin.ds.query(`UPDATE web_sessions SET password_confirmed_at = now() - interval '6 minutes' WHERE user_id = $1`, [
          admin.id,
        ]);
        await a.go(`${url}/settings/webhooks/${id}`);
        expect(a.lastBody).toContain('Your password, to redeliver');
        await a.submit('Redeliver', {});
        expect(a.lastStatus).toBe(403);
        await a.go(`${url}/settings/webhooks/${id}`);
        await a.submit('Confirm password', { password: 'not it' });
        expect(a.lastStatus).toBe(403);
        expect(a.lastBody).toContain('Wrong password');
        // Without the CSRF token, or for another workspace's webhook, nothing is confirmed.
        const forged = await fetch(`${url}/settings/webhooks/${id}/password`, {
          method: 'POST',
          headers: { cookie: a.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ password: PASSWORD }).toString(),
        });
        expect(forged.status).toBe(403);
        const [{ id: foreign }] = await origin.ds.query(
          'INSERT INTO webhooks (workspace_id, url, operations, secret_sealed, role_id) VALUES ($1, $2, $3, $4, NULL) RETURNING id',
          [other.workspace.id, 'https://hooks.example.com/theirs', ['*.*'], 'x'],
        );
        await a.go(`${url}/settings/webhooks/${foreign}/password`, {
          method: 'POST',
          form: { _csrf: a.cookie('wrs_csrf')!, password: PASSWORD },
        });
        expect(a.lastStatus).toBe(404);
        expect((await json(a, 'PATCH', `/settings/api/webhooks/${id}`, { url: `${receiver.url}?x` })).status).toBe(403);

        await a.go(`${url}/settings/webhooks/${id}`);
        await a.submit('Confirm password', { password: PASSWORD });
        expect(a.lastUrl).toBe(`${url}/settings/webhooks/${id}?notice=password`);
        expect(a.lastBody).not.toContain('Your password, to redeliver');
        await a.submit('Redeliver', {});
        expect(a.lastUrl).toBe(`${url}/settings/webhooks/${id}?notice=redelivered`);
        await receiver.waitFor(2);
      } finally {
        await receiver.close();
      }
    }, 60_000);

    it('keeps no answer excerpt of an attempt that carried vault values: an echo in base64, hex or reversed is not readable', async () => {
      const { workspace: ws, admin, key } = await workspace('whv-echo');
      const echo = await new EchoReceiver(disguised).start();
      try {
        const value = `s-${randomBytes(16).toString('hex')}`;
        expect((await rest(key, 'POST', '/rest/vault/secrets', { name: 'CRM_TOKEN', value })).status).toBe(201);
        const a = await signIn(admin.email);
        const hook = await json(a, 'POST', '/settings/api/webhooks', {
          url: echo.url,
          operations: ['company.created'],
          headers: [{ name: 'Authorization', value: 'Bearer {{vault.CRM_TOKEN}}' }],
          password: PASSWORD,
        });
        expect(hook.status).toBe(201);
        const plain = await json(a, 'POST', '/settings/api/webhooks', { url: echo.url, operations: ['company.created'] });
        expect((await rest(key, 'POST', '/rest/companies', { name: 'Echoed' })).status).toBe(201);
        await waitUntil(
          async () => (await count('SELECT count(*) AS n FROM webhook_attempts WHERE workspace_id = $1', [ws.id])) === 2,
          10_000,
        );
        expect(echo.auth).toContain(`Bearer ${value}`);
        const [vaulted] = await attemptsOf(a, hook.body.data.createWebhook.id);
        expect(vaulted).toMatchObject({ statusCode: 200, responseExcerpt: '' });
        // A webhook without vault references keeps its excerpt as before.
        const [kept] = await attemptsOf(a, plain.body.data.createWebhook.id);
        expect(JSON.parse(kept.responseExcerpt)).toEqual({ base64: '', hex: '', reversed: '', spaced: '' });
        const stored = JSON.stringify(await origin.ds.query('SELECT * FROM webhook_attempts WHERE workspace_id = $1', [ws.id]));
        const auth = `Bearer ${value}`;
        for (const form of [value, Buffer.from(auth).toString('base64'), Buffer.from(auth).toString('hex'), [...auth].reverse().join('')])
          expect(stored).not.toContain(form);
        await a.go(`${url}/settings/webhooks/${hook.body.data.createWebhook.id}`);
        expect(a.lastBody).toContain('not kept');
      } finally {
        await echo.close();
      }
    }, 60_000);
  });

  describe('read permissions', () => {
    const HIDDEN = {
      domainName: { read: false, update: false },
      notes: { read: false, update: false },
      revenue: { read: false, update: false },
    };

    async function withCustomFields(key: string) {
      for (const [name, type] of [
        ['notes', 'TEXT'],
        ['revenue', 'NUMBER'],
      ])
        expect((await rest(key, 'POST', '/rest/metadata/fields', { object: 'companies', name, label: name, type })).status).toBe(201);
    }

    it('a delivery carries only what the role of whoever made or last edited the webhook reads, checked at each delivery', async () => {
      const { workspace: ws, admin, key } = await workspace('whp-fields');
      await withCustomFields(key);
      const objects = everything();
      objects.people = { read: false, create: false, update: false, delete: false };
      const restricted = await createRole(origin.ds, ws.id, roleInput('Restricted', { objects, fields: { companies: HIDDEN } }));
      const email = `${unique('restricted')}@example.com`;
      const user = await createUser(origin.ds, email, PASSWORD);
      await addMember(origin.ds, ws.id, user.id, restricted);

      const mine = await new Receiver().start();
      const admins = await new Receiver().start();
      try {
        const m = await signIn(email);
        const a = await signIn(admin.email);
        const hook = (await json(m, 'POST', '/settings/api/webhooks', { url: mine.url })).body.data.createWebhook;
        expect(hook.role).toEqual({ id: restricted.id, name: 'Restricted' });
        const full = (await json(a, 'POST', '/settings/api/webhooks', { url: admins.url })).body.data.createWebhook;

        const company = await rest(key, 'POST', '/rest/companies', {
          name: 'Acme',
          domainName: { primaryLinkUrl: 'acme.com' },
          notes: 'acquisition target',
          revenue: 12_000_000,
        });
        expect(company.status).toBe(201);
        const id = company.body.data.createCompany.id;
        const person = await rest(key, 'POST', '/rest/people', { name: { firstName: 'Ann', lastName: 'Kim' } });
        expect(person.status).toBe(201);
        expect(
          (
            await rest(key, 'PATCH', `/rest/companies/${id}`, {
              name: 'Acme Corp',
              domainName: { primaryLinkUrl: 'acme.io' },
              notes: 'closing',
            })
          ).status,
        ).toBe(200);
        await admins.waitFor(3);
        await mine.waitFor(2);
        await waitUntil(
          async () =>
            (await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE workspace_id = $1 AND status = 'pending'`, [ws.id])) === 0,
          10_000,
        );

        const theirs = admins.verified(full.secret);
        expect(theirs.map((e) => e.type).sort()).toEqual(['company.created', 'company.updated', 'person.created']);
        const adminsUpdate = theirs.find((e) => e.type === 'company.updated');
        expect(adminsUpdate.data.previous).toEqual({
          name: 'Acme',
          domainName: expect.objectContaining({ primaryLinkUrl: 'acme.com' }),
          notes: 'acquisition target',
        });

        const got = mine.verified(hook.secret);
        expect(got.map((e) => e.type)).toEqual(['company.created', 'company.updated']);
        for (const event of got) {
          for (const hidden of Object.keys(HIDDEN)) {
            expect(event.data.record).not.toHaveProperty(hidden);
            if (event.data.previous) expect(event.data.previous).not.toHaveProperty(hidden);
          }
          expect(JSON.stringify(event)).not.toMatch(/acme\.(com|io)|acquisition|closing|12000000/);
        }
        expect(got[0].data.record).toEqual({
          id,
          name: 'Acme',
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          deletedAt: null,
        });
        expect(got[1].data).toEqual({ record: expect.objectContaining({ id, name: 'Acme Corp' }), previous: { name: 'Acme' } });

        // The person event: skipped, not failed, and shown so on the webhook's page.
        const skipped = await origin.ds.query(
          `SELECT d.status, e.type FROM webhook_deliveries d JOIN webhook_events e ON e.workspace_id = d.workspace_id AND e.id = d.event_id
            WHERE d.workspace_id = $1 AND d.webhook_id = $2 AND e.type = 'person.created'`,
          [ws.id, hook.id],
        );
        expect(skipped).toEqual([{ status: 'skipped', type: 'person.created' }]);
        const logged = (await attemptsOf(m, hook.id)).find((x) => x.eventType === 'person.created');
        expect(logged).toMatchObject({ deliveryStatus: 'skipped', statusCode: null, error: expect.stringMatching(/cannot read people/) });
        expect(
          (await origin.ds.query('SELECT failing_since FROM webhooks WHERE workspace_id = $1 AND id = $2', [ws.id, hook.id]))[0],
        ).toEqual({
          failing_since: null,
        });

        // A restriction made later applies to the next delivery.
        await updateRole(origin.ds, ws.id, restricted.id, {
          ...roleInput('Restricted', { objects, fields: { companies: { ...HIDDEN, name: { read: false, update: false } } } }),
        });
        expect((await rest(key, 'PATCH', `/rest/companies/${id}`, { name: 'Acme Inc' })).status).toBe(200);
        await mine.waitFor(3);
        const later = mine.verified(hook.secret)[2];
        expect(later.type).toBe('company.updated');
        expect(later.data.record).not.toHaveProperty('name');
        expect(later.data).not.toHaveProperty('previous.name');

        // The admin saves the member's webhook: it delivers as Admin from then on.
        const edited = await json(a, 'PATCH', `/settings/api/webhooks/${hook.id}`, { description: 'now the admin’s' });
        expect(edited.body.data.updateWebhook.role).toEqual({ id: expect.any(String), name: 'Admin' });
        expect((await rest(key, 'PATCH', `/rest/companies/${id}`, { notes: 'visible now' })).status).toBe(200);
        await mine.waitFor(4);
        expect(mine.verified(hook.secret)[3].data.record.notes).toBe('visible now');
        // The restricted member saves the admin's webhook: it is narrowed to her role.
        expect((await json(m, 'PATCH', `/settings/api/webhooks/${full.id}`, { description: 'mine now' })).status).toBe(200);
        expect((await rest(key, 'POST', '/rest/people', { name: { firstName: 'Bo', lastName: 'Li' } })).status).toBe(201);
        expect((await rest(key, 'PATCH', `/rest/companies/${id}`, { notes: 'hidden again' })).status).toBe(200);
        await admins.waitFor(6);
        await waitUntil(
          async () =>
            (await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE workspace_id = $1 AND status = 'pending'`, [ws.id])) === 0,
          10_000,
        );
        const narrowed = admins.verified(full.secret).slice(5);
        expect(narrowed.map((e) => e.type)).toEqual(['company.updated']);
        expect(narrowed[0].data.record).not.toHaveProperty('notes');
        expect(narrowed[0].data.previous).toEqual({});
      } finally {
        await mine.close();
        await admins.close();
      }
    }, 90_000);

    it('a webhook whose role was deleted delivers nothing, and its page says why', async () => {
      const { workspace: ws, admin, key } = await workspace('whp-deleted');
      const role = await createRole(origin.ds, ws.id, roleInput('Temporary'));
      const email = `${unique('temp')}@example.com`;
      const user = await createUser(origin.ds, email, PASSWORD);
      await addMember(origin.ds, ws.id, user.id, role);
      const receiver = await new Receiver().start();
      try {
        const m = await signIn(email);
        const hook = (await json(m, 'POST', '/settings/api/webhooks', { url: receiver.url, operations: ['company.created'] })).body.data
          .createWebhook;
        const member = await findRole(origin.ds, ws.id, 'Member');
        await origin.ds.query('UPDATE workspace_members SET role_id = $3 WHERE workspace_id = $1 AND user_id = $2', [
          ws.id,
          user.id,
          member.id,
        ]);
        await deleteRole(origin.ds, ws.id, role.id);

        expect((await rest(key, 'POST', '/rest/companies', { name: 'Nobody hears' })).status).toBe(201);
        await waitUntil(
          async () =>
            (await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE workspace_id = $1 AND status = 'skipped'`, [ws.id])) === 1,
          10_000,
        );
        expect(receiver.receipts).toHaveLength(0);
        const a = await signIn(admin.email);
        const shown = (await json(a, 'GET', `/settings/api/webhooks/${hook.id}`)).body.data.webhook;
        expect(shown.role).toEqual({ id: role.id, name: null });
        const [attempt] = await attemptsOf(a, hook.id);
        expect(attempt).toMatchObject({ deliveryStatus: 'skipped', error: expect.stringMatching(/role .*was deleted/) });
        await a.go(`${url}/settings/webhooks/${hook.id}`);
        expect(a.lastBody).toMatch(/delivers as a role that was deleted/);
        await a.go(`${url}/settings/webhooks`);
        expect(a.lastBody).toMatch(/delivers as a role that was deleted/);
        // Saved again by the admin, it delivers as Admin.
        expect(
          (await json(a, 'PATCH', `/settings/api/webhooks/${hook.id}`, { description: 'back' })).body.data.updateWebhook.role.name,
        ).toBe('Admin');
        expect((await rest(key, 'POST', '/rest/companies', { name: 'Heard' })).status).toBe(201);
        await receiver.waitFor(1);
        expect(receiver.receipts[0].json.data.record.name).toBe('Heard');
      } finally {
        await receiver.close();
      }
    }, 60_000);
  });
});
