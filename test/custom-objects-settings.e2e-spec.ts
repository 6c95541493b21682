import { addMember, createApiKey, createUser, findRole } from '#identity/accounts.js';
import { createRole } from '#identity/roles.js';
import { RECORD_OBJECTS, type ObjectPermissions } from '#database/entities/index.js';
import type { FormBrowser } from '../bench/form-browser.js';
import { waitUntil } from './processes.js';
import { settingsJson, signInAt } from './settings-client.js';
import { PASSWORD, startPublicOrigin, unique, workspaceWith, type PublicOrigin, restAt } from './public-origin.js';

/**
 * The settings pages with a workspace's own objects (docs/settings.md): /settings/data-model
 * creates, deactivates, reactivates and deletes them and adds their fields; /settings/roles and
 * its JSON API show and keep what roles allow on them; /settings/imports offers them. Attacked
 * with forged forms, another workspace's objects and a role without "Data model".
 */
const DAY = 86_400_000;

describe('custom objects on the settings pages', () => {
  let origin: PublicOrigin;
  let url: string;

  beforeAll(async () => {
    origin = await startPublicOrigin();
    url = origin.url;
  }, 60_000);
  afterAll(async () => {
    await origin?.close();
  });

  const post = (b: FormBrowser, path: string, form: Record<string, string | string[]> = {}) =>
    b.go(`${url}${path}`, { method: 'POST', form: { _csrf: b.cookie('wrs_csrf')!, ...form } });
  const rest = (key: string, method: string, path: string, body?: unknown) => restAt(url, key, method, path, body);
  async function workspace(label: string) {
    const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], label);
    const role = await findRole(origin.ds, workspace.id, 'Admin');
    const key = (await createApiKey(origin.ds, { workspaceId: workspace.id, role, name: 'admin', expiresAt: new Date(Date.now() + DAY) }))
      .secret;
    return { workspace, key, b: await signInAt(url, people[0].email), email: people[0].email };
  }
  const objectRow = async (workspaceId: string, plural: string) =>
    (
      await origin.ds.query('SELECT id, is_active, label_plural FROM objects WHERE workspace_id = $1 AND name_plural = $2', [
        workspaceId,
        plural,
      ])
    )[0];

  it('creates an object on /settings/data-model, adds its fields, deactivates, reactivates and deletes it after typing its name', async () => {
    const { workspace: ws, key, b } = await workspace('cos-dm');
    await b.go(`${url}/settings/data-model`);
    expect(b.lastStatus).toBe(200);
    for (const title of ['Companies', 'People', 'Opportunities']) expect(b.lastBody).toContain(`>${title}</h2>`);

    // Refused definitions are explained by the form, which keeps what was typed; nothing is written.
    await b.submit('Create object', { nameSingular: 'query', namePlural: 'queries', labelSingular: '', labelPlural: '' });
    expect(b.lastStatus).toBe(400);
    expect(b.lastBody).toMatch(/nameSingular &quot;query&quot; is reserved/);
    expect(b.lastBody).toMatch(/<details class="panel"\s+open>\s*<summary id="new-object-title">/);
    expect(b.lastBody).toContain('value="queries"');
    await b.submit('Create object', { nameSingular: 'ticket', namePlural: 'ticket' });
    expect(b.lastBody).toContain('nameSingular and namePlural must differ');
    expect(await objectRow(ws.id, 'queries')).toBeUndefined();

    await b.submit('Create object', {
      nameSingular: 'ticket',
      namePlural: 'tickets',
      labelSingular: 'Ticket',
      labelPlural: 'Support tickets',
      description: 'Requests from customers',
    });
    expect(b.lastUrl).toMatch(/\/settings\/data-model\?objectCreated=/);
    expect(b.lastBody).toContain('Object &quot;Support tickets&quot; (tickets) created');
    expect(b.lastBody).toMatch(/<section class="gap-top" id="object-tickets" aria-labelledby="object-tickets-title">/);
    const object = await objectRow(ws.id, 'tickets');
    expect(object).toMatchObject({ is_active: true, label_plural: 'Support tickets' });
    expect((await rest(key, 'POST', '/rest/tickets', { name: 'Printer on fire' })).status).toBe(201);

    // A field added by the object's own form, then its page and its delete page (a custom object's, not only a standard one's).
    await b.submit('Add field<span class="sr-only"> to Support tickets</span>', {
      name: 'priority',
      label: 'Priority',
      type: 'SELECT',
      options: 'HIGH|High\nLOW|Low',
      isNullable: 'on',
    });
    expect(b.lastBody).toContain('Field &quot;Priority&quot; (tickets.priority) added.');
    const [field] = await origin.ds.query(
      `SELECT id FROM custom_fields WHERE workspace_id = $1 AND object = 'tickets' AND name = 'priority'`,
      [ws.id],
    );
    expect((await rest(key, 'POST', '/rest/tickets', { name: 'VPN down', priority: 'HIGH' })).status).toBe(201);
    await b.go(`${url}/settings/data-model/${field.id}`);
    expect(b.lastStatus).toBe(200);
    expect(b.lastBody).toContain('Support tickets · <code>SELECT</code>');
    await b.submit('Deactivate field');
    await b.go(`${url}/settings/data-model/${field.id}/delete`);
    expect(b.lastStatus).toBe(200);
    expect(b.lastBody).toContain('1 ticket holds a value of it.');
    // The label identifier stays on while it names the records.
    const [name] = await origin.ds.query(`SELECT id FROM custom_fields WHERE workspace_id = $1 AND object = 'tickets' AND name = 'name'`, [
      ws.id,
    ]);
    await b.go(`${url}/settings/data-model/${name.id}`);
    await b.submit('Deactivate field');
    expect(b.lastStatus).toBe(409);
    expect(b.lastBody).toContain('is the label identifier of tickets');

    // The object's page: labels, then deactivate (hidden from the APIs, records kept), reactivate.
    await b.go(`${url}/settings/data-model/objects/${object.id}`);
    expect(b.lastStatus).toBe(200);
    await b.submit('Save object', { labelSingular: 'Ticket', labelPlural: 'Tickets', description: '', labelIdentifierField: 'name' });
    expect(b.lastUrl).toMatch(/notice=saved/);
    expect((await objectRow(ws.id, 'tickets')).label_plural).toBe('Tickets');
    await b.submit('Save object', { labelSingular: '', labelPlural: 'Tickets', description: '', labelIdentifierField: 'priority' });
    expect(b.lastStatus).toBe(400);
    expect(b.lastBody).toMatch(/labelSingular must be a non-empty string/);
    // Deleting an active object is refused, even posted directly.
    await post(b, `/settings/data-model/objects/${object.id}/delete`, { confirm: 'tickets' });
    expect(b.lastStatus).toBe(409);
    await b.go(`${url}/settings/data-model/objects/${object.id}`);
    await b.submit('Deactivate object');
    expect(b.lastBody).toContain('Deactivated: the object is hidden from the APIs');
    expect((await rest(key, 'GET', '/rest/tickets')).status).toBe(404);
    await b.go(`${url}/settings/data-model`);
    expect(b.lastBody).toContain('Inactive objects');
    expect(b.lastBody).not.toContain('id="object-tickets-title"');
    await post(b, `/settings/data-model/objects/${object.id}/active`, { active: 'true' });
    expect(b.lastBody).toContain('Reactivated: the object is back in the APIs');
    expect((await rest(key, 'GET', '/rest/tickets')).body.totalCount).toBe(2);
    await b.submit('Deactivate object');

    // Delete: the plural name typed, else nothing happens.
    await b.go(`${url}/settings/data-model/objects/${object.id}/delete`);
    expect(b.lastBody).toContain('2 tickets go with it.');
    await post(b, `/settings/data-model/objects/${object.id}/delete`, { confirm: 'ticket' });
    expect(b.lastStatus).toBe(400);
    expect(b.lastBody).toContain('type the object&#39;s plural name, tickets, to delete it');
    expect(await objectRow(ws.id, 'tickets')).toBeDefined();
    await post(b, `/settings/data-model/objects/${object.id}/delete`, { confirm: 'tickets' });
    expect(b.lastUrl).toMatch(/objectDeleted=/);
    expect(b.lastBody).toContain('Object tickets deleted; its records are being removed in the background.');
    expect(await objectRow(ws.id, 'tickets')).toBeUndefined();
    await waitUntil(
      async () => (await origin.ds.query('SELECT count(*)::int AS n FROM custom_records WHERE workspace_id = $1', [ws.id]))[0].n === 0,
      20_000,
      () => "the deleted object's records to be swept",
    );
    const audit = await origin.ds.query(
      `SELECT action, target_label FROM audit_log WHERE workspace_id = $1 AND action LIKE 'object.%' ORDER BY created_at`,
      [ws.id],
    );
    expect(audit.map((a: { action: string }) => a.action)).toEqual([
      'object.create',
      'object.update',
      'object.update',
      'object.update',
      'object.update',
      'object.delete',
    ]);
  }, 90_000);

  it("refuses another workspace's objects, forged forms and a role without Data model; nothing is written", async () => {
    const mine = await workspace('cos-dm-mine');
    const theirs = await workspace('cos-dm-theirs');
    const made = await rest(theirs.key, 'POST', '/rest/metadata/objects', { nameSingular: 'secretThing', namePlural: 'secretThings' });
    expect(made.status).toBe(201);
    const theirId = made.body.data.createObject.id;
    // Their object's pages are missing here; a field for their object is refused; their object is not shown.
    for (const path of [`/settings/data-model/objects/${theirId}`, `/settings/data-model/objects/${theirId}/delete`]) {
      await mine.b.go(`${url}${path}`);
      expect([path, mine.b.lastStatus]).toEqual([path, 404]);
    }
    await post(mine.b, `/settings/data-model/objects/${theirId}/active`, { active: 'false' });
    expect(mine.b.lastStatus).toBe(404);
    await post(mine.b, '/settings/data-model', { object: 'secretThings', name: 'leak', type: 'TEXT', isNullable: 'on' });
    expect(mine.b.lastStatus).toBe(400);
    expect(mine.b.lastBody).toMatch(/object must be one of companies, people, opportunities/);
    expect(mine.b.lastBody).not.toContain('secretThings');
    // A standard object has no page of its own here, nor a delete.
    const [companies] = await origin.ds.query(`SELECT id FROM objects WHERE workspace_id = $1 AND name_plural = 'companies'`, [
      mine.workspace.id,
    ]);
    await mine.b.go(`${url}/settings/data-model/objects/${companies.id}`);
    expect(mine.b.lastStatus).toBe(404);
    await post(mine.b, `/settings/data-model/objects/${companies.id}/delete`, { confirm: 'companies' });
    expect(mine.b.lastStatus).toBe(409);
    // A forged role form naming their object, or a prototype key, is refused.
    await post(mine.b, '/settings/roles', { name: 'Forged', objectsShown: ['secretThings'], permissions: ['secretThings.read'] });
    expect(mine.b.lastStatus).toBe(400);
    expect(mine.b.lastBody).toContain('unknown object &quot;secretThings&quot;');
    await post(mine.b, '/settings/roles', { name: 'Forged', objectsShown: ['__proto__'], permissions: ['__proto__.read'] });
    expect(mine.b.lastStatus).toBe(400);
    expect(await origin.ds.query(`SELECT 1 FROM roles WHERE workspace_id = $1 AND name = 'Forged'`, [mine.workspace.id])).toEqual([]);

    // A member whose role lacks "Data model": 403 on every object route, with a valid CSRF token.
    const keeper = await createRole(origin.ds, mine.workspace.id, {
      name: 'Keeper',
      description: '',
      objectPermissions: Object.fromEntries(
        RECORD_OBJECTS.map((o) => [o, { read: true, create: true, update: true, delete: true }]),
      ) as ObjectPermissions,
      settingsPermissions: ['ROLES'],
      assignableToUsers: true,
      assignableToApiKeys: true,
    });
    const email = `${unique('keeper')}@example.com`;
    await addMember(origin.ds, mine.workspace.id, (await createUser(origin.ds, email, PASSWORD)).id, keeper);
    const k = await signInAt(url, email);
    await post(k, '/settings/data-model/objects', { nameSingular: 'ticket', namePlural: 'tickets' });
    expect(k.lastStatus).toBe(403);
    expect((await rest(mine.key, 'POST', '/rest/metadata/objects', { nameSingular: 'ticket', namePlural: 'tickets' })).status).toBe(201);
    const own = (await objectRow(mine.workspace.id, 'tickets')).id;
    await post(k, `/settings/data-model/objects/${own}/active`, { active: 'false' });
    expect(k.lastStatus).toBe(403);
    expect((await objectRow(mine.workspace.id, 'tickets')).is_active).toBe(true);
    expect(await objectRow(mine.workspace.id, 'queries')).toBeUndefined();
  }, 60_000);

  it('shows a custom object on the roles page and "Other objects" for what a role does not name; the JSON API keeps both', async () => {
    const { workspace: ws, key, b } = await workspace('cos-roles');
    expect((await rest(key, 'POST', '/rest/metadata/objects', { nameSingular: 'ticket', namePlural: 'tickets' })).status).toBe(201);
    await b.go(`${url}/settings/roles`);
    expect(b.lastBody).toMatch(
      /<th scope="col">Companies<\/th><th scope="col">People<\/th><th scope="col">Opportunities<\/th><th scope="col">Tickets<\/th><th scope="col">Other objects<\/th>/,
    );
    const member = await findRole(origin.ds, ws.id, 'Member');
    await b.go(`${url}/settings/roles/${member.id}`);
    expect(b.lastBody).toContain('<legend>Tickets</legend>');
    expect(b.lastBody).toContain('<legend>Other objects</legend>');
    expect(b.lastBody).toMatch(/id="perm-tickets-read"[^>]*value="tickets.read"\s+checked/);
    expect(b.lastBody).toMatch(/id="perm-other-objects-update"[^>]*value="\*.update"\s+checked/);

    // The JSON API: a partial change keeps the "*" entry and the custom object's.
    const csrf = { 'x-csrf-token': b.cookie('wrs_csrf')! };
    const made = await settingsJson(
      url,
      b,
      'POST',
      '/settings/api/roles',
      {
        name: 'Ticket desk',
        description: '',
        objectPermissions: {
          companies: { read: true, create: false, update: false, delete: false },
          tickets: { read: true, create: true, update: true, delete: false },
          '*': { read: true, create: false, update: false, delete: false },
        },
        settingsPermissions: [],
        assignableToUsers: true,
        assignableToApiKeys: true,
      },
      csrf,
    );
    expect(made.status).toBe(201);
    const id = made.body.data.createRole.id;
    const patched = await settingsJson(url, b, 'PATCH', `/settings/api/roles/${id}`, { description: 'tickets first' }, csrf);
    expect(patched.status).toBe(200);
    expect(patched.body.data.updateRole.objectPermissions).toMatchObject({
      tickets: { read: true, create: true, update: true, delete: false },
      '*': { read: true, create: false, update: false, delete: false },
    });
    // An object made later falls under "Other objects".
    expect((await rest(key, 'POST', '/rest/metadata/objects', { nameSingular: 'project', namePlural: 'projects' })).status).toBe(201);
    await b.go(`${url}/settings/roles`);
    const row = b.lastBody.slice(b.lastBody.indexOf('<strong>Ticket desk</strong'));
    expect(row).toMatch(/<td data-label="Projects">read<br \/><span class="muted">as other objects<\/span><\/td>/);
    // The imports page offers the workspace's own objects the role may create.
    await b.go(`${url}/settings/imports`);
    expect(b.lastBody).toContain('<option value="tickets">tickets</option>');
  }, 60_000);
});
