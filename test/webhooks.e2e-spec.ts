import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiKey, findRole } from '#identity/accounts.js';
import { postEvent, retryDelayMs } from '#webhooks/delivery.js';
import { createWebhook } from '#webhooks/webhooks.js';
import type { FormBrowser } from '../bench/form-browser.js';
import { settingsJson, signInAt } from './settings-client.js';
import { startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';
import { Receiver, TEST_WORKER_ENV, sleep } from './webhook-receiver.js';

/**
 * Webhooks end to end (README "Webhooks", docs/webhooks.md): the settings JSON API and page, and deliveries from every
 * transport to real receivers on loopback, verified with the `standardwebhooks` package.
 */
describe('Webhooks', () => {
  let origin: PublicOrigin;
  let url: string;
  const DAY = 86_400_000;

  beforeAll(async () => {
    origin = await startPublicOrigin(TEST_WORKER_ENV);
    url = origin.url;
  });

  afterAll(async () => {
    await origin?.close();
  });

  const signIn = (email: string) => signInAt(url, email);
  /** The settings JSON API, with the CSRF token on every call. */
  const json = (b: FormBrowser | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    settingsJson(url, b, method, path, body, { ...(b ? { 'x-csrf-token': b.cookie('wrs_csrf')! } : {}), ...headers }).then(
      ({ status, body }) => ({ status, body }),
    );

  const count = async (table: string, workspaceId: string) =>
    Number((await origin.ds.query(`SELECT count(*) AS n FROM ${table} WHERE workspace_id = $1`, [workspaceId]))[0].n);

  async function adminKey(workspaceId: string): Promise<string> {
    const role = await findRole(origin.ds, workspaceId, 'Admin');
    return (await createApiKey(origin.ds, { workspaceId, role, name: 'k', expiresAt: new Date(Date.now() + DAY) })).secret;
  }

  async function subscribe(workspaceId: string, receiver: Receiver, operations: string[] = ['*.*']) {
    return createWebhook(origin.ds, workspaceId, { url: receiver.url, operations }, { allowPrivate: true });
  }

  const rest = (key: string, method: string, path: string, body?: unknown) =>
    fetch(`${url}/rest${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));
  const graphql = (key: string, query: string, variables: Record<string, unknown> = {}) =>
    fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    }).then((r) => r.json() as Promise<any>);
  const mcp = (key: string, name: string, args: Record<string, unknown>) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    }).then((r) => r.json() as Promise<any>);

  describe('settings JSON API', () => {
    it('creates, lists, edits, reveals and deletes a webhook; the secret is whsec_, never listed, and every change is audited', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'wh-api');
      const b = await signIn(people[0].email);
      const created = await json(b, 'POST', '/settings/api/webhooks', {
        url: 'https://hooks.example.com/crm',
        description: 'CRM sync',
        operations: ['company.*', 'person.created'],
      });
      expect(created.status).toBe(201);
      const hook = created.body.data.createWebhook;
      expect(hook).toMatchObject({
        url: 'https://hooks.example.com/crm',
        description: 'CRM sync',
        operations: ['company.*', 'person.created'],
        enabled: true,
      });
      expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

      const list = await json(b, 'GET', '/settings/api/webhooks');
      expect(list.status).toBe(200);
      expect(list.body.totalCount).toBe(1);
      expect(JSON.stringify(list.body)).not.toContain(hook.secret);
      expect(list.body.data.webhooks[0]).toEqual({
        ...hook,
        secret: undefined,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });

      const edited = await json(b, 'PATCH', `/settings/api/webhooks/${hook.id}`, {
        operations: ['*.deleted'],
        enabled: false,
        description: '',
      });
      expect(edited.status).toBe(200);
      expect(edited.body.data.updateWebhook).toMatchObject({ operations: ['*.deleted'], enabled: false, description: '', url: hook.url });

      const revealed = await json(b, 'POST', `/settings/api/webhooks/${hook.id}/reveal-secret`);
      expect(revealed).toEqual({ status: 200, body: { data: { webhookSecret: { id: hook.id, secret: hook.secret } } } });
      // The secret is sealed at rest: the row does not hold it.
      const [row] = await origin.ds.query('SELECT secret_sealed FROM webhooks WHERE id = $1', [hook.id]);
      expect(row.secret_sealed).not.toContain(hook.secret.slice(6, 20));

      const deleted = await json(b, 'DELETE', `/settings/api/webhooks/${hook.id}`);
      expect(deleted).toEqual({ status: 200, body: { data: { deleteWebhook: { id: hook.id } } } });
      expect((await json(b, 'GET', `/settings/api/webhooks/${hook.id}`)).status).toBe(404);

      const audit = await origin.ds.query(
        'SELECT action, target_label, details::text AS details FROM audit_log WHERE workspace_id = $1 ORDER BY created_at',
        [workspace.id],
      );
      expect(audit.map((a: { action: string }) => a.action)).toEqual([
        'webhook.create',
        'webhook.update',
        'webhook.reveal_secret',
        'webhook.delete',
      ]);
      expect(JSON.stringify(audit)).not.toContain(hook.secret);
    });

    it('refuses bad input with 4xx in the error shape and writes nothing', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'wh-bad');
      const b = await signIn(people[0].email);
      const cases: [unknown, RegExp][] = [
        [{ url: 'not a url' }, /url must be an absolute https URL/],
        [{ url: 'ftp://example.com/x' }, /url must be http or https/],
        [{ url: 'https://example.com/x', operations: ['company.exploded'] }, /unknown pattern "company.exploded"/],
        [{ url: 'https://example.com/x', operations: ['widget.*'] }, /unknown pattern "widget.\*"/],
        [{ url: 'https://example.com/x', operations: [] }, /at least one pattern/],
        [{ url: 'https://example.com/x', operations: 'company.created' }, /operations must be a list/],
        [{ url: 'https://example.com/x', description: 'd'.repeat(501) }, /description must be at most 500 characters/],
        [{ url: 'https://user:pw@example.com/x' }, /user name or password/],
        [{ url: 'https://example.com/x', secret: 'mine' }, /unknown field secret/],
        [{ description: 'no url' }, /url is required/],
        [[], /JSON object/],
      ];
      for (const [body, message] of cases) {
        const res = await json(b, 'POST', '/settings/api/webhooks', body);
        expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: 'VALIDATION_FAILED' });
        expect(res.body).toEqual({
          statusCode: 400,
          error: 'Bad Request',
          code: 'VALIDATION_FAILED',
          messages: expect.any(Array),
          requestId: expect.any(String),
        });
        expect(res.body.messages.join(' ')).toMatch(message);
      }
      expect((await json(b, 'POST', '/settings/api/webhooks', 'url=x', { 'content-type': 'text/plain' })).status).toBe(415);
      expect((await json(b, 'POST', '/settings/api/webhooks', '{"url":', {})).status).toBe(400);

      // Without WEBHOOKS_ALLOW_PRIVATE: https only, public addresses only.
      process.env.WEBHOOKS_ALLOW_PRIVATE = '';
      try {
        for (const [target, message] of [
          ['http://example.com/x', /url must be https/],
          ['https://127.0.0.1/x', /127.0.0.1 is private, loopback or special-use/],
          ['https://[::1]:8443/x', /::1 is private/],
          ['https://10.1.2.3/x', /private/],
          ['https://localhost/x', /localhost is private/],
        ] as const) {
          const res = await json(b, 'POST', '/settings/api/webhooks', { url: target });
          expect({ target, status: res.status }).toEqual({ target, status: 400 });
          expect(res.body.messages.join(' ')).toMatch(message);
        }
      } finally {
        process.env.WEBHOOKS_ALLOW_PRIVATE = '1';
      }

      const created = (await json(b, 'POST', '/settings/api/webhooks', { url: 'https://example.com/ok' })).body.data.createWebhook;
      expect(created.operations).toEqual(['*.*']);
      const badEdit = await json(b, 'PATCH', `/settings/api/webhooks/${created.id}`, { description: 'new', operations: ['nope'] });
      expect(badEdit.status).toBe(400);
      expect((await json(b, 'PATCH', `/settings/api/webhooks/${created.id}`, { enabled: 'yes' })).status).toBe(400);
      expect((await json(b, 'GET', `/settings/api/webhooks/${created.id}`)).body.data.webhook.description).toBe('');
      expect((await json(b, 'GET', '/settings/api/webhooks/not-a-uuid')).body.code).toBe('INVALID_ID');
      expect(await count('webhooks', workspace.id)).toBe(1);
    });

    it('a workspace has at most 20 webhooks: one more is a 409 on the JSON API and on the page, and nothing is stored', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'wh-cap');
      const b = await signIn(people[0].email);
      for (let i = 0; i < 20; i++) {
        const res = await json(b, 'POST', '/settings/api/webhooks', { url: `https://example.com/cap/${i}` });
        expect({ i, status: res.status }).toEqual({ i, status: 201 });
      }
      const over = await json(b, 'POST', '/settings/api/webhooks', { url: 'https://example.com/cap/20' });
      expect(over).toEqual({
        status: 409,
        body: {
          statusCode: 409,
          error: 'Conflict',
          code: 'CONFLICT',
          messages: [expect.stringMatching(/at most 20 webhooks/)],
          requestId: expect.any(String),
        },
      });
      await b.go(`${url}/settings/webhooks`);
      await b.submit('Add webhook', { url: 'https://example.com/cap/page', description: '', operations: '*.*' });
      expect(b.lastStatus).toBe(409);
      expect(b.lastBody).toContain('at most 20 webhooks');
      expect(await count('webhooks', workspace.id)).toBe(20);
      // Deleting one makes room again.
      const [first] = (await json(b, 'GET', '/settings/api/webhooks')).body.data.webhooks;
      expect((await json(b, 'DELETE', `/settings/api/webhooks/${first.id}`)).status).toBe(200);
      expect((await json(b, 'POST', '/settings/api/webhooks', { url: 'https://example.com/cap/again' })).status).toBe(201);
    });

    it('is for signed-in members with the permission only: bearer tokens get 401, other roles 403, other workspaces 404', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin', 'Member'], 'wh-perm');
      const other = await workspaceWith(origin.ds, ['Admin'], 'wh-other');
      const admin = await signIn(people[0].email);
      const hook = (await json(admin, 'POST', '/settings/api/webhooks', { url: 'https://example.com/a' })).body.data.createWebhook;

      const key = await adminKey(workspace.id);
      for (const [method, path] of [
        ['GET', '/settings/api/webhooks'],
        ['POST', `/settings/api/webhooks/${hook.id}/reveal-secret`],
        ['GET', `/settings/api/webhooks/${hook.id}`],
      ]) {
        const res = await json(undefined, method, path, undefined, { authorization: `Bearer ${key}` });
        expect({ path, status: res.status }).toEqual({ path, status: 401 });
      }
      // Nothing under /rest, /graphql or /mcp manages webhooks.
      expect((await rest(key, 'GET', '/webhooks')).status).toBe(404);

      const member = await signIn(people[1].email);
      expect((await json(member, 'GET', '/settings/api/webhooks')).status).toBe(403);
      expect((await json(member, 'POST', `/settings/api/webhooks/${hook.id}/reveal-secret`)).status).toBe(403);

      const stranger = await signIn(other.people[0].email);
      for (const [method, path] of [
        ['GET', `/settings/api/webhooks/${hook.id}`],
        ['POST', `/settings/api/webhooks/${hook.id}/reveal-secret`],
        ['DELETE', `/settings/api/webhooks/${hook.id}`],
        ['GET', `/settings/api/webhooks/${hook.id}/attempts`],
      ]) {
        const res = await json(stranger, method, path);
        expect({ path, method, status: res.status, code: res.body.code }).toEqual({ path, method, status: 404, code: 'NOT_FOUND' });
      }
      expect((await json(stranger, 'GET', '/settings/api/webhooks')).body.totalCount).toBe(0);
      // Without the CSRF token a write is refused.
      const noCsrf = await fetch(`${url}/settings/api/webhooks/${hook.id}`, {
        method: 'DELETE',
        headers: { cookie: admin.cookieHeader() },
      });
      expect(noCsrf.status).toBe(403);
      expect(await count('webhooks', workspace.id)).toBe(1);
    });

    it('the page creates a webhook, shows the secret once, edits it, reveals it and deletes it', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'wh-page');
      const b = await signIn(people[0].email);
      await b.go(`${url}/settings/webhooks`);
      expect(b.lastStatus).toBe(200);
      expect(b.lastBody).toContain('No webhooks yet.');
      await b.submit('Add webhook', {
        url: 'https://example.com/page',
        description: 'from the page',
        operations: 'company.created, person.*',
      });
      expect(b.lastUrl).toMatch(/\/settings\/webhooks\/created\//);
      const secret = /whsec_[A-Za-z0-9+/=]+/.exec(b.lastBody)![0];
      const createdUrl = b.lastUrl;
      await b.go(createdUrl);
      expect(b.lastStatus).toBe(410);
      expect(b.lastBody).not.toContain(secret);
      const [row] = await origin.ds.query('SELECT id, operations FROM webhooks WHERE workspace_id = $1', [workspace.id]);
      expect(row.operations).toEqual(['company.created', 'person.*']);

      await b.go(`${url}/settings/webhooks/${row.id}`);
      await b.submit('Save', { url: 'https://example.com/page2', description: 'x', operations: 'nonsense' });
      expect(b.lastStatus).toBe(400);
      expect(b.lastBody).toContain('unknown pattern');
      await b.go(`${url}/settings/webhooks/${row.id}`);
      await b.submit('Save', { url: 'https://example.com/page2', description: 'x', operations: '*.*' });
      expect(b.lastUrl).toBe(`${url}/settings/webhooks/${row.id}?notice=saved`);
      expect(b.lastBody).toContain('https://example.com/page2');
      await b.submit('Reveal signing secret', {});
      expect(b.lastBody).toContain(secret);
      await b.go(`${url}/settings/webhooks/${row.id}/delete`);
      await b.submit('Delete webhook', {});
      expect(b.lastUrl).toBe(`${url}/settings/webhooks?deleted=1`);
      expect(await count('webhooks', workspace.id)).toBe(0);
    });
  });

  describe('deliveries', () => {
    it('each operation on each transport sends exactly one signed event of its type, with the record and the previous values', async () => {
      const { workspace } = await workspaceWith(origin.ds, [], 'wh-transports');
      const key = await adminKey(workspace.id);
      const receiver = await new Receiver().start();
      try {
        const hook = await subscribe(workspace.id, receiver);
        const expected: string[] = [];
        const ids: Record<string, string> = {};

        // REST single, batch, update, delete (companies and people)
        const c1 = (await rest(key, 'POST', '/companies', { name: 'Acme' })).body.data.createCompany;
        expected.push(`company.created:${c1.id}`);
        const batch = (
          await rest(key, 'POST', '/batch/people', [{ name: { firstName: 'Ann' } }, { name: { firstName: 'Bob' }, companyId: c1.id }])
        ).body.data.createPeople;
        expected.push(...batch.map((p: { id: string }) => `person.created:${p.id}`));
        const patched = await rest(key, 'PATCH', `/companies/${c1.id}`, { name: 'Acme Corp' });
        expect(patched.status).toBe(200);
        expected.push(`company.updated:${c1.id}`);
        expect((await rest(key, 'DELETE', `/people/${batch[0].id}`)).status).toBe(200);
        expected.push(`person.deleted:${batch[0].id}`);

        // GraphQL
        const g = await graphql(key, 'mutation { createCompany(data: {name: "Globex"}) { id } }');
        ids.globex = g.data.createCompany.id;
        expected.push(`company.created:${ids.globex}`);
        const gb = await graphql(key, 'mutation { createPeople(data: [{name: {firstName: "Cy"}}]) { id } }');
        expected.push(`person.created:${gb.data.createPeople[0].id}`);
        await graphql(key, `mutation { updatePerson(id: "${batch[1].id}", data: {emails: {primaryEmail: "bob@example.com"}}) { id } }`);
        expected.push(`person.updated:${batch[1].id}`);
        await graphql(key, `mutation { deleteCompany(id: "${ids.globex}") { id } }`);
        expected.push(`company.deleted:${ids.globex}`);

        // MCP
        const m = await mcp(key, 'create_person', { name: { firstName: 'Dee' } });
        ids.dee = m.result.structuredContent.person.id;
        expected.push(`person.created:${ids.dee}`);
        await mcp(key, 'update_company', { id: c1.id, domainName: { primaryLinkUrl: 'acme.com' } });
        expected.push(`company.updated:${c1.id}`);
        await mcp(key, 'delete_person', { id: ids.dee });
        expected.push(`person.deleted:${ids.dee}`);

        await receiver.waitFor(expected.length);
        await sleep(800);
        const events = receiver.verified(hook.secret) as any[];
        expect(events.map((e) => `${e.type}:${e.data.record.id}`).sort()).toEqual([...expected].sort());
        expect(new Set(events.map((e) => e.id)).size).toBe(expected.length);
        for (const [i, e] of events.entries()) {
          expect(e).toEqual({
            id: expect.any(String),
            type: expect.any(String),
            workspaceId: workspace.id,
            occurredAt: expect.any(String),
            data: expect.any(Object),
          });
          expect(receiver.receipts[i].headers['webhook-id']).toBe(e.id);
          expect(receiver.receipts[i].headers['content-type']).toBe('application/json');
          expect(receiver.receipts[i].body).toMatch(
            /^\{"id":"[^"]+","type":"[^"]+","workspaceId":"[^"]+","occurredAt":"[^"]+","data":\{"record":\{"id":/,
          );
        }
        const renamed = events.find((e) => e.type === 'company.updated' && e.data.record.name === 'Acme Corp');
        expect(renamed.data.previous).toEqual({ name: 'Acme' });
        // The record is the REST shape.
        expect(renamed.data.record).toEqual(patched.body.data.updateCompany);
        expect(Object.keys(renamed.data.record).sort()).toEqual(['createdAt', 'deletedAt', 'domainName', 'id', 'name', 'updatedAt']);
        const emailed = events.find((e) => e.type === 'person.updated');
        expect(emailed.data.previous).toEqual({ emails: { primaryEmail: null, additionalEmails: [] } });
        expect(emailed.data.record.emails.primaryEmail).toBe('bob@example.com');
        const linked = events.find((e) => e.type === 'company.updated' && e.data.record.domainName.primaryLinkUrl === 'acme.com');
        expect(linked.data.previous).toEqual({ domainName: { primaryLinkUrl: null, primaryLinkLabel: null, secondaryLinks: [] } });
        const deleted = events.find((e) => e.type === 'person.deleted' && e.data.record.id === ids.dee);
        expect(deleted.data.record.deletedAt).toEqual(expect.any(String));
        expect(deleted.data.previous).toBeUndefined();
      } finally {
        await receiver.close();
      }
    }, 90_000);

    it('a create stores each created event with the record exactly as REST returns it, keys and their order included', async () => {
      const { workspace } = await workspaceWith(origin.ds, [], 'wh-created');
      const key = await adminKey(workspace.id);
      const receiver = await new Receiver().start();
      try {
        await subscribe(workspace.id, receiver);
        const company = (
          await rest(key, 'POST', '/companies', {
            name: 'O\'Brien "Quotes" & Co',
            domainName: {
              primaryLinkUrl: 'https://obrien.example.com',
              primaryLinkLabel: 'Site',
              secondaryLinks: [{ url: 'https://b.example.com', label: 'B' }],
            },
          })
        ).body.data.createCompany;
        const people = (
          await rest(key, 'POST', '/batch/people', [
            {
              name: { firstName: 'Zoë', lastName: 'Ünal' },
              emails: { primaryEmail: 'zoe@example.com', additionalEmails: ['z@example.com'] },
              companyId: company.id,
            },
            {},
          ])
        ).body.data.createPeople;
        const deal = (
          await rest(key, 'POST', '/opportunities', {
            name: 'Deal',
            amount: { amountMicros: 1500000000, currencyCode: 'EUR' },
            closeDate: '2026-12-31T10:20:30.456Z',
            stage: 'PROPOSAL',
            companyId: company.id,
            pointOfContactId: people[0].id,
          })
        ).body.data.createOpportunity;
        const bare = (await rest(key, 'POST', '/opportunities', { name: 'Bare' })).body.data.createOpportunity;
        const created: [string, Record<string, unknown>][] = [
          ['company', company],
          ['person', people[0]],
          ['person', people[1]],
          ['opportunity', deal],
          ['opportunity', bare],
        ];
        expect(created.every(([, record]) => typeof record?.id === 'string')).toBe(true);

        const stored = await origin.ds.query(`SELECT id, type, payload::text AS payload FROM webhook_events WHERE workspace_id = $1`, [
          workspace.id,
        ]);
        expect(stored).toHaveLength(created.length);
        for (const [object, record] of created) {
          const row = stored.find((r: { payload: string }) => JSON.parse(r.payload).data.record.id === record.id);
          const body = JSON.parse(row.payload);
          expect(row.type).toBe(`${object}.created`);
          expect(Object.keys(body)).toEqual(['id', 'type', 'workspaceId', 'occurredAt', 'data']);
          expect(body).toMatchObject({ id: row.id, type: `${object}.created`, workspaceId: workspace.id, data: { record } });
          expect(body.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
          expect(JSON.stringify(body.data.record)).toBe(JSON.stringify(record));
        }
        const deliveries = await origin.ds.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE workspace_id = $1`, [
          workspace.id,
        ]);
        expect(deliveries[0].n).toBe(created.length);
        await receiver.waitFor(created.length);
      } finally {
        await receiver.close();
      }
    }, 60_000);

    it('with custom fields of every type and awkward text, each created event is the REST record, and the receiver gets the stored body', async () => {
      const { workspace } = await workspaceWith(origin.ds, [], 'wh-created-custom');
      const key = await adminKey(workspace.id);
      const fields = [
        { name: 'tier', type: 'SELECT', options: [{ value: 'GOLD', label: 'Gold' }] },
        {
          name: 'tags',
          type: 'MULTI_SELECT',
          options: [
            { value: 'A', label: 'A' },
            { value: 'B', label: 'B' },
          ],
        },
        { name: 'arr', type: 'NUMBER' },
        { name: 'active', type: 'BOOLEAN' },
        { name: 'renewal', type: 'DATE' },
        { name: 'seen', type: 'DATE_TIME' },
        { name: 'note', type: 'TEXT' },
        { name: 'budget', type: 'CURRENCY' },
        { name: 'site', type: 'LINKS' },
        { name: 'contact', type: 'EMAILS' },
      ];
      for (const f of fields)
        expect((await rest(key, 'POST', '/metadata/fields', { object: 'companies', label: f.name, ...f })).status).toBe(201);
      const receiver = await new Receiver().start();
      try {
        await subscribe(workspace.id, receiver, ['company.created']);
        const full = {
          name: 'Line one\nLine two\t"quoted" \\ back — Zürich 日本語 🚀 \u0001',
          tier: 'GOLD',
          tags: ['B', 'A'],
          arr: 1234.5,
          active: false,
          renewal: '2027-01-31',
          seen: '2026-11-27T08:09:10.123Z',
          note: "it's </script> & <b>",
          budget: { amountMicros: 9007199254740991, currencyCode: 'EUR' },
          site: {
            primaryLinkUrl: 'https://x.example.com/a?b=c&d',
            primaryLinkLabel: 'X',
            secondaryLinks: [{ url: 'https://y.example.com', label: 'Y' }],
          },
          contact: { primaryEmail: 'a@example.com', additionalEmails: ['b@example.com'] },
        };
        const one = await rest(key, 'POST', '/companies', full);
        expect(one.status).toBe(201);
        const batch = await rest(key, 'POST', '/batch/companies', [{ name: 'Empty' }, { ...full, name: 'Second' }]);
        expect(batch.status).toBe(201);
        const created = [one.body.data.createCompany, ...batch.body.data.createCompanies];
        expect(created).toHaveLength(3);
        const stored = await origin.ds.query(`SELECT id, type, payload::text AS payload FROM webhook_events WHERE workspace_id = $1`, [
          workspace.id,
        ]);
        expect(stored).toHaveLength(created.length);
        for (const record of created) {
          const row = stored.find((r: { payload: string }) => JSON.parse(r.payload).data.record.id === record.id);
          const body = JSON.parse(row.payload);
          // The record as REST returns it: the same keys in the same order, the same values (Postgres writes the body).
          expect(JSON.stringify(body)).toBe(
            JSON.stringify({
              id: row.id,
              type: 'company.created',
              workspaceId: workspace.id,
              occurredAt: body.occurredAt,
              data: { record },
            }),
          );
          expect(body.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        }
        await receiver.waitFor(created.length);
        expect(receiver.receipts.map((r) => r.body).sort()).toEqual(stored.map((r: { payload: string }) => r.payload).sort());
      } finally {
        await receiver.close();
      }
    }, 60_000);

    it('operation filters hold, and another workspace’s changes never reach this webhook', async () => {
      const { workspace } = await workspaceWith(origin.ds, [], 'wh-filter');
      const other = await workspaceWith(origin.ds, [], 'wh-filter-other');
      const key = await adminKey(workspace.id);
      const otherKey = await adminKey(other.workspace.id);
      const onlyCompanyCreated = await new Receiver().start();
      const people = await new Receiver().start();
      try {
        await subscribe(workspace.id, onlyCompanyCreated, ['company.created']);
        await subscribe(workspace.id, people, ['person.*']);
        const c = (await rest(key, 'POST', '/companies', { name: 'One' })).body.data.createCompany;
        await rest(key, 'PATCH', `/companies/${c.id}`, { name: 'Two' });
        await rest(key, 'DELETE', `/companies/${c.id}`);
        const p = (await rest(key, 'POST', '/people', { name: { firstName: 'Eve' } })).body.data.createPerson;
        await rest(key, 'PATCH', `/people/${p.id}`, { name: { firstName: 'Eva' } });
        await rest(otherKey, 'POST', '/companies', { name: 'Elsewhere' });
        await rest(otherKey, 'POST', '/people', {});
        await onlyCompanyCreated.waitFor(1);
        await people.waitFor(2);
        await sleep(1000);
        expect(onlyCompanyCreated.receipts.map((r) => r.json.type)).toEqual(['company.created']);
        expect(people.receipts.map((r) => r.json.type).sort()).toEqual(['person.created', 'person.updated']);
        expect(people.receipts.every((r) => r.json.workspaceId === workspace.id)).toBe(true);
      } finally {
        await onlyCompanyCreated.close();
        await people.close();
      }
    }, 90_000);

    it('a failing batch or update sends nothing and stores no event', async () => {
      const { workspace } = await workspaceWith(origin.ds, [], 'wh-fail');
      const key = await adminKey(workspace.id);
      const receiver = await new Receiver().start();
      try {
        await subscribe(workspace.id, receiver);
        const bad = await rest(key, 'POST', '/batch/companies', [{ name: 'Fine' }, { name: '' }]);
        expect(bad.status).toBe(400);
        const conflict = '00000000-0000-4000-8000-000000000001';
        expect((await rest(key, 'POST', '/batch/companies', [{ id: conflict, name: 'A' }])).status).toBe(201);
        expect((await rest(key, 'POST', '/batch/companies', [{ name: 'B' }, { id: conflict, name: 'C' }])).status).toBe(409);
        const gql = await graphql(
          key,
          'mutation { createPeople(data: [{name: {firstName: "x"}}, {companyId: "00000000-0000-4000-8000-000000000099"}]) { id } }',
        );
        expect(gql.errors[0].extensions.code).toBe('BAD_USER_INPUT');
        expect((await rest(key, 'PATCH', `/companies/00000000-0000-4000-8000-000000000077`, { name: 'x' })).status).toBe(404);
        // A unique value taken: 409 naming the record that has it, from the create's one statement with its events.
        const site = await rest(key, 'POST', '/companies', { name: 'Site', domainName: { primaryLinkUrl: 'https://dup.example.com' } });
        expect(site.status).toBe(201);
        const taken = await rest(key, 'POST', '/batch/companies', [
          { name: 'F' },
          { name: 'G', domainName: { primaryLinkUrl: 'dup.example.com/' } },
        ]);
        expect(taken.status).toBe(409);
        expect(taken.body.messages.join(' ')).toContain(site.body.data.createCompany.id);
        await receiver.waitFor(2);
        await sleep(1000);
        expect(receiver.receipts.map((r) => `${r.json.type}:${r.json.data.record.id}`).sort()).toEqual(
          [`company.created:${conflict}`, `company.created:${site.body.data.createCompany.id}`].sort(),
        );
        expect(await count('webhook_events', workspace.id)).toBe(2);
        expect(await count('companies', workspace.id)).toBe(2);
      } finally {
        await receiver.close();
      }
    }, 90_000);

    it('retries with backoff: 500, 500, 200 gets the same event id three times, then nothing; attempts are logged; Redeliver sends it again', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'wh-retry');
      const key = await adminKey(workspace.id);
      const receiver = await new Receiver().start();
      try {
        const hook = await subscribe(workspace.id, receiver);
        receiver.answers = [500, 500, 200];
        await rest(key, 'POST', '/companies', { name: 'Retry Inc' });
        await receiver.waitFor(3);
        await sleep(2000);
        expect(receiver.receipts).toHaveLength(3);
        const ids = receiver.receipts.map((r) => r.headers['webhook-id']);
        expect(new Set(ids).size).toBe(1);
        receiver.verified(hook.secret);
        const gaps = [receiver.receipts[1].at - receiver.receipts[0].at, receiver.receipts[2].at - receiver.receipts[1].at];
        expect(gaps[0]).toBeGreaterThanOrEqual(300 * 0.8 - 50);
        expect(gaps[1]).toBeGreaterThanOrEqual(600 * 0.8 - 50);

        const b = await signIn(people[0].email);
        const attempts = (await json(b, 'GET', `/settings/api/webhooks/${hook.id}/attempts`)).body;
        expect(attempts.totalCount).toBe(3);
        expect(attempts.data.attempts.map((a: any) => [a.attempt, a.statusCode, a.responseExcerpt])).toEqual([
          [3, 200, 'answer 200'],
          [2, 500, 'answer 500'],
          [1, 500, 'answer 500'],
        ]);
        expect(attempts.data.attempts[0]).toMatchObject({
          eventId: ids[0],
          eventType: 'company.created',
          durationMs: expect.any(Number),
          attemptedAt: expect.any(String),
          deliveryStatus: 'delivered',
        });

        await b.go(`${url}/settings/webhooks/${hook.id}`);
        expect(b.lastBody).toContain('HTTP 500');
        expect(b.lastBody).toContain('Redeliver');
        await b.submit('Redeliver', {});
        expect(b.lastUrl).toBe(`${url}/settings/webhooks/${hook.id}?notice=redelivered`);
        await receiver.waitFor(4);
        expect(receiver.receipts[3].headers['webhook-id']).toBe(ids[0]);
        // Another workspace's delivery id behaves as missing.
        const strangerDelivery = await json(
          b,
          'POST',
          `/settings/api/webhooks/${hook.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`,
        );
        expect(strangerDelivery.status).toBe(404);
      } finally {
        await receiver.close();
      }
    }, 90_000);

    it('a webhook failing for the whole disable window is switched off, and its admins see why', async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'wh-disable');
      const key = await adminKey(workspace.id);
      const receiver = await new Receiver().start();
      try {
        receiver.fallback = 503;
        const hook = await subscribe(workspace.id, receiver);
        await rest(key, 'POST', '/companies', { name: 'Down Ltd' });
        const deadline = Date.now() + 20_000;
        let row: any;
        do {
          await sleep(300);
          [row] = await origin.ds.query('SELECT enabled, disabled_reason FROM webhooks WHERE id = $1', [hook.id]);
        } while (row.enabled && Date.now() < deadline);
        expect(row.enabled).toBe(false);
        expect(row.disabled_reason).toMatch(/every delivery failed since .* \(last: HTTP 503\)/);
        const seen = receiver.receipts.length;
        expect(seen).toBeGreaterThanOrEqual(3);
        await rest(key, 'POST', '/companies', { name: 'After' });
        await sleep(1500);
        expect(receiver.receipts.length).toBe(seen);

        const b = await signIn(people[0].email);
        await b.go(`${url}/settings/webhooks`);
        expect(b.lastBody).toContain('Disabled after failures');
        expect(b.lastBody).toContain('every delivery failed since');
        // Turning it on again clears the reason.
        const on = await json(b, 'PATCH', `/settings/api/webhooks/${hook.id}`, { enabled: true });
        expect(on.body.data.updateWebhook).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
      } finally {
        await receiver.close();
      }
    }, 90_000);
  });

  describe('docs', () => {
    it('/docs/webhooks is listed in /llms.txt and documents every event type, the headers, the schedule and standardwebhooks', async () => {
      expect(await (await fetch(`${url}/llms.txt`)).text()).toContain(`[Webhooks](${url}/docs/webhooks.md)`);
      const md = await (await fetch(`${url}/docs/webhooks.md`)).text();
      for (const type of ['company.created', 'company.updated', 'company.deleted', 'person.created', 'person.updated', 'person.deleted']) {
        expect({ type, documented: md.includes(`\`${type}\``) && md.includes(`"type":"${type}"`) }).toEqual({ type, documented: true });
      }
      for (const text of [
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
        "from 'standardwebhooks'",
        'wh.verify(',
        '30 s',
        '1 h',
        '24 h',
        '3 days',
        'WEBHOOKS_ALLOW_PRIVATE',
      ])
        expect(md).toContain(text);
      expect((await fetch(`${url}/docs/webhooks`)).status).toBe(200);
    });

    it('the OpenAPI document describes each event in its webhooks section', async () => {
      const doc = (await (await fetch(`${url}/rest/open-api`)).json()) as any;
      expect(Object.keys(doc.webhooks).sort()).toEqual([
        'company.created',
        'company.deleted',
        'company.restored',
        'company.updated',
        // One per import (docs/rest.md "Imports").
        'import.completed',
        'opportunity.created',
        'opportunity.deleted',
        'opportunity.restored',
        'opportunity.updated',
        'person.created',
        'person.deleted',
        'person.restored',
        'person.updated',
        // Sent by "Send test event" to one webhook (docs/webhooks.md "Event types").
        'webhook.test',
      ]);
      const test = doc.components.schemas.WebhookTestEvent;
      expect([test.properties.type.const, test.properties.data.required]).toEqual(['webhook.test', ['webhook']]);
      const updated = doc.webhooks['person.updated'].post;
      expect(updated.parameters.map((p: any) => [p.in, p.name])).toEqual([
        ['header', 'webhook-id'],
        ['header', 'webhook-timestamp'],
        ['header', 'webhook-signature'],
      ]);
      const schema = doc.components.schemas[updated.requestBody.content['application/json'].schema.$ref.split('/').pop()];
      expect(schema.properties.type.const).toBe('person.updated');
      expect(schema.properties.data.properties.record.$ref).toBe('#/components/schemas/PersonModel');
      expect(schema.properties.data.properties.previous).toBeDefined();
      expect(doc.components.schemas.CompanyCreatedEvent.properties.data.properties.previous).toBeUndefined();
    });
  });

  describe('safety', () => {
    it('refuses private targets without WEBHOOKS_ALLOW_PRIVATE, checked on the address connected to', async () => {
      const receiver = await new Receiver().start();
      try {
        const port = new URL(receiver.url).port;
        const base = {
          eventId: 'msg_1',
          body: '{}',
          secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          timeoutMs: 2000,
          allowPrivate: false,
        };
        // A name that resolves to loopback is refused in the socket's lookup, before any byte is sent.
        const byName = await postEvent(`https://localhost:${port}/hook`, base);
        expect(byName).toMatchObject({ statusCode: null, error: expect.stringMatching(/resolves to a private or special-use address/) });
        const literal = await postEvent(`https://127.0.0.1:${port}/hook`, base);
        expect(literal.error).toMatch(/127.0.0.1 is a private or special-use address/);
        const plain = await postEvent(receiver.url, base);
        expect(plain.error).toMatch(/only https targets/);
        expect(receiver.receipts).toHaveLength(0);
        // With the setting, the same receiver is reached.
        const allowed = await postEvent(receiver.url, { ...base, allowPrivate: true });
        expect(allowed).toMatchObject({ statusCode: 200, error: null, excerpt: 'answer 200' });
        expect(receiver.receipts).toHaveLength(1);
      } finally {
        await receiver.close();
      }
    });

    it('does not follow redirects: a 3xx is a failed attempt', async () => {
      const receiver = await new Receiver().start();
      try {
        receiver.answers = [302];
        const result = await postEvent(receiver.url, {
          eventId: 'msg_2',
          body: '{}',
          secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          timeoutMs: 2000,
          allowPrivate: true,
        });
        expect(result.statusCode).toBe(302);
        expect(receiver.receipts).toHaveLength(1);
      } finally {
        await receiver.close();
      }
    });

    /** A target on loopback that counts connections; `onRequest` answers (or not) the n-th request of a connection. */
    async function countingTarget(onRequest: (req: IncomingMessage, res: ServerResponse, nthOnConnection: number) => void) {
      let connections = 0;
      const server = createServer((req, res) => {
        const socket = req.socket as typeof req.socket & { served?: number };
        socket.served = (socket.served ?? 0) + 1;
        req.resume();
        req.on('end', () => onRequest(req, res, socket.served!));
      });
      server.on('connection', () => connections++);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
        connections: () => connections,
        close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
      };
    }
    const post = (url: string, timeoutMs = 5000) =>
      postEvent(url, { eventId: 'msg_keep', body: '{}', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', timeoutMs, allowPrivate: true });

    it('keeps the connection to a target for the next POST', async () => {
      const target = await countingTarget((_req, res) => res.writeHead(204).end());
      try {
        for (let i = 0; i < 3; i++) expect(await post(target.url)).toMatchObject({ statusCode: 204, error: null });
        expect(target.connections()).toBe(1);
      } finally {
        await target.close();
      }
    });

    it('a job’s 16 POSTs at once leave 16 connections kept, which the next 16 reuse', async () => {
      const target = await countingTarget((_req, res) => res.writeHead(204).end());
      try {
        for (let burst = 0; burst < 2; burst++) {
          const results = await Promise.all(Array.from({ length: 16 }, () => post(target.url)));
          expect(results.every((r) => r.statusCode === 204)).toBe(true);
          // Each connection goes back to the pool as its answer ends.
          await new Promise((resolve) => setImmediate(resolve));
        }
        expect(target.connections()).toBe(16);
      } finally {
        await target.close();
      }
    });

    it('a kept connection the target drops when it is reused costs no failed attempt: the POST goes again on a new one', async () => {
      // The second request of any connection finds it closed, as when a server's keep-alive timeout ends it at that moment.
      const target = await countingTarget((req, res, nth) => (nth === 1 ? res.writeHead(204).end() : req.socket.destroy()));
      try {
        expect(await post(target.url)).toMatchObject({ statusCode: 204, error: null });
        expect(await post(target.url)).toMatchObject({ statusCode: 204, error: null });
        expect(target.connections()).toBe(2);
      } finally {
        await target.close();
      }
    });

    it('a target that drops every connection without answering fails the attempt once, without looping', async () => {
      const target = await countingTarget((req) => req.socket.destroy());
      try {
        expect(await post(target.url)).toMatchObject({ statusCode: null, error: expect.stringMatching(/socket hang up|ECONNRESET/) });
        // The first connection was new, so nothing is retried.
        expect(target.connections()).toBe(1);
      } finally {
        await target.close();
      }
    });

    it('a slow answer on a kept connection is waited for up to the timeout, not cut at the idle limit', async () => {
      // The first answer at once, every later one after 1.1 s, past the 1 s an idle kept connection is held.
      const target = await countingTarget((_req, res, nth) =>
        nth === 1 ? res.writeHead(204).end() : setTimeout(() => res.writeHead(204).end(), 1100).unref(),
      );
      try {
        expect(await post(target.url)).toMatchObject({ statusCode: 204, error: null });
        expect(await post(target.url)).toMatchObject({ statusCode: 204, error: null });
        expect(await post(target.url, 500)).toMatchObject({ statusCode: null, error: 'no answer within 0.5 s' });
        expect(target.connections()).toBe(1);
      } finally {
        await target.close();
      }
    });

    it('the retry schedule doubles from the base, is capped at 120× the base, and covers 24 hours with the defaults', () => {
      const mid = () => 0.5;
      expect([1, 2, 3, 4, 8, 9, 20].map((n) => retryDelayMs(n, 30_000, mid))).toEqual([
        30_000, 60_000, 120_000, 240_000, 3_600_000, 3_600_000, 3_600_000,
      ]);
      expect(retryDelayMs(1, 30_000, () => 0)).toBe(24_000);
      expect(retryDelayMs(1, 30_000, () => 1)).toBe(36_000);
    });
  });
});
