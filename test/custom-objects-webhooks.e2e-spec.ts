import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { addMember, createApiKey, createUser, findRole } from '#identity/accounts.js';
import { createRole, type RoleInput } from '#identity/roles.js';
import { RECORD_OBJECTS, type FieldPermissions, type ObjectPermissions } from '#database/entities/index.js';
import type { FormBrowser } from '../bench/form-browser.js';
import { waitUntil } from './processes.js';
import { settingsJson, signInAt } from './settings-client.js';
import { PASSWORD, startPublicOrigin, unique, workspaceWith, type PublicOrigin, restAt } from './public-origin.js';
import { Receiver, TEST_WORKER_ENV } from './webhook-receiver.js';

/**
 * Webhooks of a workspace's own objects (docs/webhooks.md): operations name them on the JSON
 * API, the page and the CLI, for that workspace only; their events are delivered as the
 * standard objects' are, cut to the webhook's role.
 */
const DAY = 86_400_000;
const CLI = resolve(process.cwd(), 'dist/apps/cli/src/main.js');
const ticket = { nameSingular: 'ticket', namePlural: 'tickets', labelSingular: 'Ticket', labelPlural: 'Tickets' };
const none = { read: false, create: false, update: false, delete: false };
const all = { read: true, create: true, update: true, delete: true };

describe('custom objects: webhooks', () => {
  let origin: PublicOrigin;
  let url: string;

  beforeAll(async () => {
    origin = await startPublicOrigin({ ...TEST_WORKER_ENV });
    url = origin.url;
  }, 60_000);
  afterAll(async () => {
    await origin?.close();
  });

  const json = (b: FormBrowser, method: string, path: string, body?: unknown) =>
    settingsJson(url, b, method, path, body, { 'x-csrf-token': b.cookie('wrs_csrf')! });
  const rest = (key: string, method: string, path: string, body?: unknown) => restAt(url, key, method, path, body);
  const standard = (permissions = all): ObjectPermissions =>
    Object.fromEntries(RECORD_OBJECTS.map((o) => [o, permissions])) as ObjectPermissions;
  const roleInput = (name: string, objects: ObjectPermissions, fields: FieldPermissions = {}): RoleInput => ({
    name,
    description: '',
    objectPermissions: objects,
    fieldPermissions: fields,
    settingsPermissions: ['API_KEYS_AND_WEBHOOKS'],
    assignableToUsers: true,
    assignableToApiKeys: true,
  });

  /** A workspace with an Admin member, an Admin key and the object `tickets` (a TEXT `secret` besides its `name`). */
  async function workspace(label: string) {
    const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], label);
    const adminRole = await findRole(origin.ds, workspace.id, 'Admin');
    const key = (
      await createApiKey(origin.ds, { workspaceId: workspace.id, role: adminRole, name: 'admin', expiresAt: new Date(Date.now() + DAY) })
    ).secret;
    const made = await rest(key, 'POST', '/rest/metadata/objects', ticket);
    expect(made.status).toBe(201);
    expect((await rest(key, 'POST', '/rest/metadata/fields', { object: 'tickets', name: 'secret', type: 'TEXT' })).status).toBe(201);
    return { workspace, admin: people[0], key, objectId: made.body.data.createObject.id as string };
  }
  async function member(workspaceId: string, input: RoleInput): Promise<{ email: string; roleId: string }> {
    const role = await createRole(origin.ds, workspaceId, input);
    const email = `${unique('member')}@example.com`;
    await addMember(origin.ds, workspaceId, (await createUser(origin.ds, email, PASSWORD)).id, role);
    return { email, roleId: role.id };
  }
  const pending = async (workspaceId: string) =>
    Number(
      (
        await origin.ds.query(`SELECT count(*) AS n FROM webhook_deliveries WHERE workspace_id = $1 AND status = 'pending'`, [workspaceId])
      )[0].n,
    );

  it("operations name the workspace's own objects on the JSON API, the page and the CLI; another workspace's or a deactivated one is 400", async () => {
    const { workspace: ws, admin, key, objectId } = await workspace('cow-ops');
    const theirs = await workspace('cow-ops-theirs');
    expect(
      (await rest(theirs.key, 'POST', '/rest/metadata/objects', { ...ticket, nameSingular: 'project', namePlural: 'projects' })).status,
    ).toBe(201);
    const a = await signInAt(url, admin.email);
    const made = await json(a, 'POST', '/settings/api/webhooks', {
      url: 'https://hooks.example.com/t',
      operations: ['ticket.created', 'ticket.*'],
    });
    expect(made.status).toBe(201);
    expect(made.body.data.createWebhook.operations).toEqual(['ticket.created', 'ticket.*']);
    const foreign = await json(a, 'POST', '/settings/api/webhooks', { url: 'https://hooks.example.com/p', operations: ['project.*'] });
    expect(foreign.status).toBe(400);
    expect(foreign.body.messages).toEqual([
      expect.stringMatching(
        /unknown pattern "project\.\*"; use <object>\.<action> with object one of company, person, opportunity, ticket or \*/,
      ),
    ]);
    expect(JSON.stringify(foreign.body)).not.toMatch(/project,|projects/);
    expect(
      (await json(a, 'PATCH', `/settings/api/webhooks/${made.body.data.createWebhook.id}`, { operations: ['project.created'] })).status,
    ).toBe(400);

    // The page lists the workspace's own event types and takes a pattern naming them.
    await a.go(`${url}/settings/webhooks`);
    expect(a.lastBody).toContain('ticket.created');
    expect(a.lastBody).not.toContain('project.created');
    await a.submit('Add webhook', { url: 'https://hooks.example.com/page', description: '', operations: 'ticket.updated, company.*' });
    expect(a.lastUrl).toMatch(/\/settings\/webhooks\/created\//);

    // The CLI, with the same rules.
    const cli = (args: string[]) =>
      new Promise<{ code: number; stdout: string }>((done) =>
        execFile(process.execPath, [CLI, ...args], { timeout: 60_000 }, (err, stdout) =>
          done({ code: err ? Number(err.code) : 0, stdout }),
        ),
      );
    const create = (operations: string) =>
      cli(['webhook:create', '--workspace', ws.id, '--url', 'https://hooks.example.com/cli', '--operations', operations, '--json']);
    const created = await create('ticket.*');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout).operations).toEqual(['ticket.*']);
    const refused = await create('project.*');
    expect(refused.code).not.toBe(0);
    expect(JSON.parse(refused.stdout).error).toEqual({
      code: 'VALIDATION_FAILED',
      message: expect.stringMatching(/unknown pattern "project\.\*"/),
    });

    // Deactivated, the object is no longer one to name; the webhooks naming it stay as they are.
    expect((await rest(key, 'PATCH', `/rest/metadata/objects/${objectId}`, { isActive: false })).status).toBe(200);
    const off = await json(a, 'POST', '/settings/api/webhooks', { url: 'https://hooks.example.com/off', operations: ['ticket.*'] });
    expect(off.status).toBe(400);
    expect(off.body.messages[0]).toMatch(
      /unknown pattern "ticket\.\*"; use <object>\.<action> with object one of company, person, opportunity or \*/,
    );
    const [{ n }] = await origin.ds.query('SELECT count(*)::int AS n FROM webhooks WHERE workspace_id = $1', [ws.id]);
    expect(n).toBe(3);
  }, 90_000);

  it("delivers a custom object's events to *.* and ticket.*, cut to the webhook's role: an unreadable object is skipped, a hidden field left out", async () => {
    const { workspace: ws, admin, key } = await workspace('cow-deliver');
    // Reads every standard object but names no other: under decision 57 it cannot read tickets.
    const standardOnly = await member(ws.id, roleInput('Standard only', standard()));
    // Reads tickets without their `secret`.
    const noSecret = await member(
      ws.id,
      roleInput('No secret', { ...standard(none), tickets: all }, { tickets: { secret: { read: false, update: false } } }),
    );
    const receivers = {
      admin: await new Receiver().start(),
      standardOnly: await new Receiver().start(),
      noSecret: await new Receiver().start(),
    };
    try {
      const hooks: Record<string, { id: string; secret: string }> = {};
      for (const [who, email, operations] of [
        ['admin', admin.email, ['*.*']],
        ['standardOnly', standardOnly.email, ['*.*']],
        ['noSecret', noSecret.email, ['ticket.*']],
      ] as const) {
        const b = await signInAt(url, email);
        const made = await json(b, 'POST', '/settings/api/webhooks', { url: receivers[who].url, operations });
        expect(made.status).toBe(201);
        hooks[who] = made.body.data.createWebhook;
      }
      const created = await rest(key, 'POST', '/rest/tickets', { name: 'Printer on fire', secret: 'root password is hunter2' });
      expect(created.status).toBe(201);
      const id = created.body.data.createTicket.id;
      expect((await rest(key, 'PATCH', `/rest/tickets/${id}`, { secret: 'rotated: hunter3', name: 'Printer fixed' })).status).toBe(200);
      expect((await rest(key, 'DELETE', `/rest/tickets/${id}`)).status).toBe(200);
      expect((await rest(key, 'PATCH', `/rest/restore/tickets/${id}`, {})).status).toBe(200);
      await receivers.admin.waitFor(4);
      await receivers.noSecret.waitFor(4);
      await waitUntil(
        async () => (await pending(ws.id)) === 0,
        15_000,
        () => 'every delivery to end',
      );

      const adminGot = receivers.admin.verified(hooks.admin.secret);
      expect(adminGot.map((e) => e.type)).toEqual(['ticket.created', 'ticket.updated', 'ticket.deleted', 'ticket.restored']);
      expect(adminGot[0].data.record).toMatchObject({ id, name: 'Printer on fire', secret: 'root password is hunter2' });

      const cut = receivers.noSecret.verified(hooks.noSecret.secret);
      expect(cut.map((e) => e.type)).toEqual(['ticket.created', 'ticket.updated', 'ticket.deleted', 'ticket.restored']);
      for (const event of cut) expect(JSON.stringify(event)).not.toMatch(/hunter|secret/);
      expect(cut[1].data).toEqual({
        record: expect.objectContaining({ id, name: 'Printer fixed' }),
        previous: { name: 'Printer on fire' },
      });

      // The role that cannot read tickets gets none of their events: skipped, saying why.
      expect(receivers.standardOnly.receipts).toHaveLength(0);
      const skipped = await origin.ds.query(`SELECT status FROM webhook_deliveries WHERE workspace_id = $1 AND webhook_id = $2`, [
        ws.id,
        hooks.standardOnly.id,
      ]);
      expect(skipped.map((d: { status: string }) => d.status)).toEqual(['skipped', 'skipped', 'skipped', 'skipped']);
      const a = await signInAt(url, admin.email);
      const attempts = (await json(a, 'GET', `/settings/api/webhooks/${hooks.standardOnly.id}/attempts`)).body.data.attempts;
      expect(attempts[0]).toMatchObject({ deliveryStatus: 'skipped', error: expect.stringMatching(/cannot read tickets/) });
    } finally {
      for (const r of Object.values(receivers)) await r.close();
    }
  }, 90_000);
});
