import type { INestApplication } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import type { DataSource } from 'typeorm';
import { fieldIndexesSettled } from '#identity/field-indexes.js';
import { sweepDeletedObjects } from '#identity/objects.js';
import { BASE_GRAPHQL_TYPES, OBJECTS, objectTypeNames } from '#records/objects/index.js';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { waitUntil } from './processes.js';
import { client, expectError, keyWithRole, UUID, type Client, type Http } from './rest-helpers.js';

/** A workspace's own objects (docs/data-model.md "Custom objects"): the metadata API and REST, attacked as an outsider would. */
describe('custom objects', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  async function admin(): Promise<{ ws: TestWorkspace; api: Client; viewer: Client }> {
    const ws = await newWorkspace(ds, 'objects');
    return { ws, api: client(http, ws.keys.Admin), viewer: client(http, ws.keys.Viewer) };
  }
  const ticket = { nameSingular: 'ticket', namePlural: 'tickets', labelSingular: 'Ticket', labelPlural: 'Tickets' };
  const objectRows = async (workspaceId: string) =>
    Number((await ds.query('SELECT count(*) AS n FROM objects WHERE workspace_id = $1 AND is_custom', [workspaceId]))[0].n);

  it('creates an object with a TEXT name and lists it beside the standard objects, with their fields', async () => {
    const { ws, api } = await admin();
    const made = await api.post('/rest/metadata/objects', { ...ticket, description: 'Support requests' });
    expect(made.status).toBe(201);
    const created = made.body.data.createObject;
    expect(created).toMatchObject({
      id: expect.stringMatching(UUID),
      nameSingular: 'ticket',
      namePlural: 'tickets',
      labelSingular: 'Ticket',
      labelPlural: 'Tickets',
      description: 'Support requests',
      labelIdentifierField: 'name',
      isCustom: true,
      isActive: true,
    });
    expect(created.fields.map((f: { name: string; isCustom: boolean }) => [f.name, f.isCustom])).toEqual([
      ['id', false],
      ['createdAt', false],
      ['updatedAt', false],
      ['deletedAt', false],
      ['name', true],
    ]);
    const list = await api.get('/rest/metadata/objects');
    expect(list.status).toBe(200);
    expect(list.body.totalCount).toBe(4);
    const byName = Object.fromEntries(list.body.data.objects.map((o: { namePlural: string }) => [o.namePlural, o]));
    expect(Object.keys(byName)).toEqual(['companies', 'people', 'opportunities', 'tickets']);
    expect(byName.companies.isCustom).toBe(false);
    expect(byName.companies.fields.find((f: { name: string }) => f.name === 'domainName')).toMatchObject({
      type: 'LINKS',
      isCustom: false,
    });
    expect(byName.opportunities.fields.find((f: { name: string }) => f.name === 'companyId')).toMatchObject({
      type: 'RELATION',
      relation: { type: 'MANY_TO_ONE', targetObject: 'companies', name: 'company' },
    });
    expect((await api.get(`/rest/metadata/objects/${created.id}`)).body.data.object.namePlural).toBe('tickets');
    // The fields API keeps listing custom fields only, now marked.
    const fields = await api.get('/rest/metadata/fields', { object: 'tickets' });
    expect(fields.body.data.fields.map((f: { name: string; isCustom: boolean }) => [f.name, f.isCustom])).toEqual([['name', true]]);
    const audit = await ds.query(`SELECT action FROM audit_log WHERE workspace_id = $1 AND action LIKE 'object.%'`, [ws.id]);
    expect(audit.map((a: { action: string }) => a.action)).toEqual(['object.create']);
  });

  it('serves its records on every REST call, as a standard object', async () => {
    const { api } = await admin();
    await api.post('/rest/metadata/objects', ticket);
    const priority = await api.post('/rest/metadata/fields', {
      object: 'tickets',
      name: 'priority',
      type: 'SELECT',
      options: [{ value: 'HIGH' }, { value: 'LOW' }],
    });
    expect(priority.status).toBe(201);
    const one = await api.post('/rest/tickets', { name: 'Printer on fire', priority: 'HIGH' });
    expect(one.status).toBe(201);
    const record = one.body.data.createTicket;
    expect(record).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Printer on fire',
      priority: 'HIGH',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      deletedAt: null,
    });
    const batch = await api.post('/rest/batch/tickets', [{ name: 'Coffee machine' }, { name: 'VPN down', priority: 'LOW' }]);
    expect(batch.status).toBe(201);
    expect(batch.body.data.createTickets).toHaveLength(2);
    const list = await api.get('/rest/tickets', { order_by: 'name[AscNullsFirst]', limit: 2 });
    expect([list.status, list.text]).toEqual([200, expect.anything()]);
    expect(list.body.totalCount).toBe(3);
    expect(list.body.data.tickets.map((t: { name: string }) => t.name)).toEqual(['Coffee machine', 'Printer on fire']);
    const next = await api.get('/rest/tickets', {
      order_by: 'name[AscNullsFirst]',
      limit: 2,
      starting_after: list.body.pageInfo.endCursor,
    });
    expect(next.body.data.tickets.map((t: { name: string }) => t.name)).toEqual(['VPN down']);
    const high = await api.get('/rest/tickets', { filter: 'priority[eq]:"HIGH"' });
    expect(high.body.data.tickets.map((t: { id: string }) => t.id)).toEqual([record.id]);
    expect(high.body.totalCount).toBe(1);
    expect((await api.get(`/rest/tickets/${record.id}`)).body.data.ticket.name).toBe('Printer on fire');
    const updated = await api.patch(`/rest/tickets/${record.id}`, { priority: 'LOW' });
    expect(updated.body.data.updateTicket.priority).toBe('LOW');
    const groups = await api.get('/rest/tickets/groupBy', { group_by: 'priority', aggregate: 'count' });
    expect(groups.status).toBe(200);
    expect(groups.body.data.groups).toEqual([
      { by: { priority: 'LOW' }, count: 2 },
      { by: { priority: null }, count: 1 },
    ]);
    const exported = await api.get('/rest/tickets/export', { format: 'csv' });
    expect(exported.status).toBe(200);
    expect(exported.text.split('\n')[0]).toBe('id,createdAt,updatedAt,deletedAt,name,priority');
    expect((await api.delete(`/rest/tickets/${record.id}`)).body.data.deleteTicket).toEqual({ id: record.id });
    expectError(await api.get(`/rest/tickets/${record.id}`), 404, 'NOT_FOUND');
    expect((await api.patch(`/rest/restore/tickets/${record.id}`, {})).body.data.restoreTicket.id).toBe(record.id);
    const byFilter = await api.patch('/rest/tickets?filter=priority[eq]:"LOW"', { priority: 'HIGH' });
    expect(byFilter.body.data.updateTickets.count).toBe(2);
    const upsert = await api.post('/rest/tickets?upsert=true', { id: record.id, name: 'Printer fixed' });
    expect(upsert.status).toBe(200);
    expect(upsert.body.meta).toEqual({ created: [], updated: [record.id] });
    const removed = await api.delete('/rest/tickets?filter=priority[eq]:"HIGH"');
    expect(removed.body.data.deleteTickets.count).toBe(2);
    expect((await api.get('/rest/tickets')).body.totalCount).toBe(1);
    // Unknown fields and wrong values are 400, nothing written.
    expectError(await api.post('/rest/tickets', { name: 'x', nope: 1 }), 400, 'VALIDATION_FAILED');
    expectError(await api.post('/rest/tickets', { name: 'x', priority: 'URGENT' }), 400, 'VALIDATION_FAILED');
    expect((await api.get('/rest/tickets')).body.totalCount).toBe(1);
  });

  it("another workspace's object, and a deactivated or deleted one, behave as missing; deleting removes its records in the background", async () => {
    const { ws, api } = await admin();
    const other = await admin();
    const id = (await api.post('/rest/metadata/objects', ticket)).body.data.createObject.id;
    const made = (await api.post('/rest/tickets', { name: 'Mine' })).body.data.createTicket;
    expectError(await other.api.get('/rest/tickets'), 404, 'NOT_FOUND');
    expectError(await other.api.get(`/rest/tickets/${made.id}`), 404, 'NOT_FOUND');
    expectError(await other.api.get(`/rest/metadata/objects/${id}`), 404, 'NOT_FOUND');
    expectError(await other.api.patch(`/rest/metadata/objects/${id}`, { isActive: false }), 404, 'NOT_FOUND');
    expectError(await other.api.delete(`/rest/metadata/objects/${id}`), 404, 'NOT_FOUND');
    // The other workspace may take the same names for its own object.
    expect((await other.api.post('/rest/metadata/objects', ticket)).status).toBe(201);
    expect((await other.api.get('/rest/tickets')).body.totalCount).toBe(0);
    // Deleting an active object is refused; a standard one never.
    expectError(await api.delete(`/rest/metadata/objects/${id}`), 409, 'CONFLICT');
    const companies = (await api.get('/rest/metadata/objects')).body.data.objects[0];
    expectError(await api.delete(`/rest/metadata/objects/${companies.id}`), 409, 'CONFLICT');
    expectError(await api.patch(`/rest/metadata/objects/${companies.id}`, { isActive: false }), 400, 'VALIDATION_FAILED');
    // Deactivated: every record route is 404, the records are kept.
    expect((await api.patch(`/rest/metadata/objects/${id}`, { isActive: false })).body.data.updateObject.isActive).toBe(false);
    expectError(await api.get('/rest/tickets'), 404, 'NOT_FOUND');
    expectError(await api.post('/rest/tickets', { name: 'x' }), 404, 'NOT_FOUND');
    expectError(await api.get(`/rest/tickets/${made.id}`), 404, 'NOT_FOUND');
    await api.patch(`/rest/metadata/objects/${id}`, { isActive: true });
    expect((await api.get(`/rest/tickets/${made.id}`)).body.data.ticket.name).toBe('Mine');
    await api.patch(`/rest/metadata/objects/${id}`, { isActive: false });
    expect((await api.delete(`/rest/metadata/objects/${id}`)).body.data.deleteObject).toEqual({ id });
    expect(await objectRows(ws.id)).toBe(0);
    expectError(await api.get('/rest/tickets'), 404, 'NOT_FOUND');
    // The deletion started a sweep; another instance's (or this test's) finds the lock taken and leaves it the work.
    await sweepDeletedObjects(ds);
    await waitUntil(
      async () =>
        (await ds.query('SELECT count(*)::int AS n FROM custom_records WHERE workspace_id = $1', [ws.id]))[0].n === 0 &&
        !(await ds.query('SELECT 1 FROM deleted_objects WHERE workspace_id = $1', [ws.id])).length,
      10_000,
      () => "the deleted object's records to be swept",
    );
    // The other workspace's records were not touched.
    expect((await other.api.post('/rest/tickets', { name: 'Theirs' })).status).toBe(201);
    // The names are free again once the records are gone.
    expect((await api.post('/rest/metadata/objects', ticket)).status).toBe(201);
    expect((await api.get('/rest/tickets')).body.totalCount).toBe(0);
  });

  it('refuses bad definitions with 400 naming the problem, writing nothing', async () => {
    const { ws, api } = await admin();
    const refused: [unknown, RegExp][] = [
      [{ ...ticket, nameSingular: 'subscription', namePlural: 'subscriptions' }, /reserved/],
      [{ ...ticket, nameSingular: 'query', namePlural: 'queries' }, /reserved/],
      [{ ...ticket, nameSingular: 'mutation', namePlural: 'mutations' }, /reserved/],
      [{ ...ticket, nameSingular: 'pageInfo', namePlural: 'pageInfos' }, /reserved/],
      [{ ...ticket, nameSingular: 'address', namePlural: 'addresses' }, /GraphQL type Address/],
      [{ ...ticket, nameSingular: 'currency', namePlural: 'currencies' }, /GraphQL type Currency/],
      [{ ...ticket, nameSingular: 'links', namePlural: 'linkLists' }, /GraphQL type Links/],
      [{ ...ticket, nameSingular: 'change', namePlural: 'changes' }, /reserved/],
      [{ ...ticket, nameSingular: 'thing', namePlural: 'metadata' }, /reserved/],
      [{ ...ticket, nameSingular: 'search', namePlural: 'searches' }, /reserved/],
      [{ ...ticket, nameSingular: 'thing', namePlural: 'imports' }, /reserved/],
      [{ ...ticket, nameSingular: 'thing', namePlural: 'batch' }, /reserved/],
      [{ ...ticket, nameSingular: 'thing', namePlural: 'restore' }, /reserved/],
      [{ ...ticket, nameSingular: 'company', namePlural: 'firms' }, /already the name of an object/],
      [{ ...ticket, nameSingular: 'thing', namePlural: 'people' }, /already the name of an object/],
      [{ ...ticket, nameSingular: 'Ticket' }, /camelCase/],
      [{ ...ticket, namePlural: 'tick-ets' }, /camelCase/],
      [{ ...ticket, namePlural: 'ticket' }, /must differ/],
      [{ ...ticket, nameSingular: 'constructor', namePlural: 'constructors' }, /reserved/],
      [{ ...ticket, nameSingular: '__proto__', namePlural: 'protos' }, /camelCase/],
      [{ ...ticket, labelSingular: 'x'.repeat(101) }, /labelSingular/],
      [{ ...ticket, labelPlural: 'bad\u0000label' }, /labelPlural/],
      [{ ...ticket, extra: true }, /extra is not a known field/],
      [[ticket], /JSON object/],
    ];
    for (const [body, message] of refused) {
      const res = await api.post('/rest/metadata/objects', body);
      expect(expectError(res, 400, 'VALIDATION_FAILED')).toMatch(message);
    }
    expect(await objectRows(ws.id)).toBe(0);
    expect((await api.post('/rest/metadata/objects', ticket)).status).toBe(201);
    expect(expectError(await api.post('/rest/metadata/objects', ticket), 400, 'VALIDATION_FAILED')).toMatch(/already the name/);
    const id = (await api.get('/rest/metadata/objects')).body.data.objects[3].id;
    expect(expectError(await api.patch(`/rest/metadata/objects/${id}`, { namePlural: 'issues' }), 400, 'VALIDATION_FAILED')).toMatch(
      /never changes/,
    );
    expect(
      expectError(await api.patch(`/rest/metadata/objects/${id}`, { labelIdentifierField: 'nope' }), 400, 'VALIDATION_FAILED'),
    ).toMatch(/TEXT or FULL_NAME/);
    expectError(await api.get('/rest/metadata/objects/not-a-uuid'), 404, 'NOT_FOUND');
    expectError(await api.get('/rest/metadata/objects', { object: 'x' }), 400, 'VALIDATION_FAILED');
  });

  it('holds the limit of 50 custom objects under concurrency', async () => {
    const { ws, api } = await admin();
    await ds.query(
      `INSERT INTO objects (workspace_id, name_singular, name_plural, label_singular, label_plural)
       SELECT $1, 'thing' || i, 'things' || i, 'Thing', 'Things' FROM generate_series(1, 48) i`,
      [ws.id],
    );
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api.post('/rest/metadata/objects', { nameSingular: `extra${i}`, namePlural: `extras${i}`, labelSingular: 'E', labelPlural: 'Es' }),
      ),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(2);
    for (const res of answers.filter((r) => r.status !== 201))
      expect(expectError(res, 400, 'VALIDATION_FAILED')).toMatch(/50 custom objects/);
    expect(await objectRows(ws.id)).toBe(50);
  });

  it('needs DATA_MODEL to change the model, and object permissions to use the records', async () => {
    const { ws, api, viewer } = await admin();
    expectError(await viewer.post('/rest/metadata/objects', ticket), 403, 'FORBIDDEN');
    expectError(await viewer.get('/rest/metadata/objects'), 403, 'FORBIDDEN');
    expectError(await client(http).get('/rest/metadata/objects'), 401, 'UNAUTHENTICATED');
    expectError(await client(http).get('/rest/tickets'), 401, 'UNAUTHENTICATED');
    await api.post('/rest/metadata/objects', ticket);
    await api.post('/rest/tickets', { name: 'Visible' });
    // The built-in Viewer reads every object, as it reads companies, and writes none.
    expect((await viewer.get('/rest/tickets')).body.totalCount).toBe(1);
    expectError(await viewer.post('/rest/tickets', { name: 'x' }), 403, 'FORBIDDEN');
    // A role made by users uses only the objects it names.
    const none = client(
      http,
      (await keyWithRole(ds, ws.id, 'Companies only', { companies: { read: true, create: true, update: true, delete: true } })).secret,
    );
    expectError(await none.get('/rest/tickets'), 403, 'FORBIDDEN');
    const reader = client(
      http,
      (
        await keyWithRole(ds, ws.id, 'Ticket reader', {
          companies: { read: true, create: false, update: false, delete: false },
          tickets: { read: true, create: false, update: false, delete: false },
        })
      ).secret,
    );
    expect((await reader.get('/rest/tickets')).status).toBe(200);
    expectError(await reader.post('/rest/tickets', { name: 'x' }), 403, 'FORBIDDEN');
  });

  it("gives a custom object's filterable fields an index on the shared table, led by workspace and object", async () => {
    const { api } = await admin();
    await api.post('/rest/metadata/objects', { nameSingular: 'invoice', namePlural: 'invoices', labelSingular: 'I', labelPlural: 'Is' });
    expect((await api.post('/rest/metadata/fields', { object: 'invoices', name: 'invoiceCode', type: 'TEXT' })).status).toBe(201);
    await fieldIndexesSettled();
    const [index] = await ds.query(`SELECT indexdef FROM pg_indexes WHERE tablename = 'custom_records' AND indexdef LIKE '%invoiceCode%'`);
    expect(index.indexdef).toMatch(
      /\(workspace_id, object_id, \(\(custom ->> 'invoiceCode'::text\)\) DESC NULLS LAST, id DESC\) WHERE \(deleted_at IS NULL\)/,
    );
  });

  it('lists every type name of the committed GraphQL schema among the names no object may make', () => {
    const schema = readFileSync('apps/records-api/schema.gql', 'utf8');
    const names = [...schema.matchAll(/^(?:type|input|enum|scalar|union|interface) (\w+)/gm)].map((m) => m[1]);
    const standard = new Set(OBJECTS.flatMap((o) => objectTypeNames(o.singular)));
    expect(names.filter((name) => !BASE_GRAPHQL_TYPES.has(name) && !standard.has(name))).toEqual([]);
  });
});
