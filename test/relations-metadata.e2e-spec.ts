import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { newWorkspace, startApi } from './factories.js';
import { client, expectError, keyWithRole, UUID, type Client, type Http } from './rest-helpers.js';

/**
 * Relation fields through the metadata API (docs/data-model.md "Relations";
 * docs/decisions/0066-relations.md): both sides made in one call between any two objects,
 * and every bad definition a 400 that writes nothing.
 */
describe('relation fields: the metadata API', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  const ticket = { nameSingular: 'ticket', namePlural: 'tickets', labelSingular: 'Ticket', labelPlural: 'Tickets' };
  async function workspace(): Promise<{ id: string; api: Client; key: string }> {
    const ws = await newWorkspace(ds, 'relations');
    const api = client(http, ws.keys.Admin);
    expect((await api.post('/rest/metadata/objects', ticket)).status).toBe(201);
    return { id: ws.id, api, key: ws.keys.Admin };
  }
  const relation = (extra: Record<string, unknown> = {}, relationExtra: Record<string, unknown> = {}) => ({
    object: 'tickets',
    name: 'company',
    label: 'Company',
    type: 'RELATION',
    relation: { type: 'MANY_TO_ONE', targetObject: 'companies', inverseName: 'tickets', inverseLabel: 'Tickets', ...relationExtra },
    ...extra,
  });
  const fieldRows = async (workspaceId: string) =>
    Number((await ds.query(`SELECT count(*) AS n FROM custom_fields WHERE workspace_id = $1 AND type = 'RELATION'`, [workspaceId]))[0].n);

  it('creates both sides in one call and answers the relation with the inverse field id', async () => {
    const { id, api } = await workspace();
    const made = await api.post('/rest/metadata/fields', relation({}, { onDelete: 'CASCADE' }));
    expect(made.status).toBe(201);
    const field = made.body.data.createField;
    expect(field).toMatchObject({
      id: expect.stringMatching(UUID),
      object: 'tickets',
      name: 'company',
      label: 'Company',
      type: 'RELATION',
      isCustom: true,
      isActive: true,
      relation: {
        type: 'MANY_TO_ONE',
        targetObject: 'companies',
        inverseFieldId: expect.stringMatching(UUID),
        inverseName: 'tickets',
        onDelete: 'CASCADE',
      },
    });
    const inverse = (await api.get(`/rest/metadata/fields/${field.relation.inverseFieldId}`)).body.data.field;
    expect(inverse).toMatchObject({
      object: 'companies',
      name: 'tickets',
      label: 'Tickets',
      type: 'RELATION',
      relation: { type: 'ONE_TO_MANY', targetObject: 'tickets', inverseFieldId: field.id, inverseName: 'company', onDelete: 'CASCADE' },
    });
    // Listed on each object, among its custom fields.
    const companies = await api.get('/rest/metadata/fields', { object: 'companies' });
    expect(companies.body.data.fields.map((f: { name: string }) => f.name)).toEqual(['tickets']);
    expect(await fieldRows(id)).toBe(2);
    const audit = await ds.query(`SELECT action, details FROM audit_log WHERE workspace_id = $1 AND action = 'field.create'`, [id]);
    expect(audit).toEqual([
      { action: 'field.create', details: { type: 'RELATION', targetObject: 'companies', inverseName: 'tickets', onDelete: 'CASCADE' } },
    ]);
  });

  it('links any two objects: custom to custom, standard to custom, and an object to itself; onDelete defaults to SET_NULL', async () => {
    const { api } = await workspace();
    expect(
      (
        await api.post('/rest/metadata/objects', {
          nameSingular: 'employee',
          namePlural: 'employees',
          labelSingular: 'Employee',
          labelPlural: 'Employees',
        })
      ).status,
    ).toBe(201);
    const toCustom = await api.post(
      '/rest/metadata/fields',
      relation({ name: 'assignee' }, { targetObject: 'employees', inverseName: 'assignedTickets' }),
    );
    expect(toCustom.status).toBe(201);
    expect(toCustom.body.data.createField.relation.onDelete).toBe('SET_NULL');
    const fromStandard = await api.post(
      '/rest/metadata/fields',
      relation({ object: 'companies', name: 'accountManager' }, { targetObject: 'employees', inverseName: 'accounts' }),
    );
    expect(fromStandard.status).toBe(201);
    const self = await api.post(
      '/rest/metadata/fields',
      relation({ object: 'employees', name: 'manager' }, { targetObject: 'employees', inverseName: 'reports' }),
    );
    expect(self.status).toBe(201);
    const employees = await api.get('/rest/metadata/fields', { object: 'employees' });
    expect(employees.body.data.fields.map((f: { name: string }) => f.name).sort()).toEqual([
      'accounts',
      'assignedTickets',
      'manager',
      'name',
      'reports',
    ]);
  });

  it('refuses bad definitions with a 400 naming the problem, writing nothing', async () => {
    const { id, api } = await workspace();
    await api.post('/rest/metadata/fields', { object: 'tickets', name: 'code', type: 'TEXT' });
    await api.post('/rest/metadata/fields', { object: 'tickets', name: 'ownerId', type: 'TEXT' });
    const cases: [Record<string, unknown>, RegExp][] = [
      [relation({}, { targetObject: 'unicorns' }), /relation\.targetObject must be one of companies, people, opportunities, tickets/],
      [relation({}, { inverseName: 'people' }), /relation\.inverseName: "people" is already a field of companies/],
      [relation({}, { inverseName: 'name' }), /relation\.inverseName: "name" is already a field of companies/],
      [relation({ name: 'Company' }), /name must be camelCase/],
      [relation({}, { inverseName: 'ticket-list' }), /relation\.inverseName must be camelCase/],
      [relation({ name: 'code' }), /name: "code" is already a field of tickets/],
      [relation({ name: 'owner' }), /name: "ownerId" is already a field of tickets/],
      [relation({}, { onDelete: 'EXPLODE' }), /relation\.onDelete must be one of SET_NULL, CASCADE, RESTRICT/],
      [relation({}, { type: 'ONE_TO_ONE' }), /relation\.type must be one of MANY_TO_ONE/],
      [relation({ isUnique: true }), /isUnique: a RELATION field does not take it/],
      [relation({ relation: 'companies' }), /type must be one of .*RELATION with relation/],
      [
        relation({ object: 'tickets' }, { targetObject: 'tickets', inverseName: 'company' }),
        /relation\.inverseName: "company" is already a field of tickets/,
      ],
    ];
    for (const [body, message] of cases) {
      const res = await api.post('/rest/metadata/fields', body);
      expect([body, res.status]).toEqual([body, 400]);
      expect(expectError(res, 400, 'VALIDATION_FAILED')).toMatch(message);
    }
    expect(await fieldRows(id)).toBe(0);
    // A name taken by a relation's id key is refused to later fields too.
    expect((await api.post('/rest/metadata/fields', relation())).status).toBe(201);
    expectError(await api.post('/rest/metadata/fields', { object: 'tickets', name: 'companyId', type: 'TEXT' }), 400, 'VALIDATION_FAILED');
    expect(expectError(await api.post('/rest/metadata/fields', relation()), 400, 'VALIDATION_FAILED')).toMatch(
      /"company" is already a field of tickets/,
    );
    expect(await fieldRows(id)).toBe(2);
  });

  it('refuses an inactive target, and a relation beyond the 50th on an object', async () => {
    const { id, api } = await workspace();
    const made = await api.post('/rest/metadata/objects', {
      nameSingular: 'asset',
      namePlural: 'assets',
      labelSingular: 'Asset',
      labelPlural: 'Assets',
    });
    await api.patch(`/rest/metadata/objects/${made.body.data.createObject.id}`, { isActive: false });
    expect(
      expectError(await api.post('/rest/metadata/fields', relation({}, { targetObject: 'assets' })), 400, 'VALIDATION_FAILED'),
    ).toMatch(/assets is inactive/);
    for (let i = 0; i < 50; i++) {
      const res = await api.post('/rest/metadata/fields', relation({ name: `link${i}` }, { inverseName: `linked${i}` }));
      expect([i, res.status]).toEqual([i, 201]);
    }
    expect(
      expectError(
        await api.post('/rest/metadata/fields', relation({ name: 'link50' }, { inverseName: 'linked50' })),
        400,
        'VALIDATION_FAILED',
      ),
    ).toMatch(/already has 50 relation fields; an object has at most 50/);
    expect(await fieldRows(id)).toBe(100);
  });

  it('needs DATA_MODEL (403)', async () => {
    const ws = await newWorkspace(ds, 'relations-roles');
    const admin = client(http, ws.keys.Admin);
    await admin.post('/rest/metadata/objects', ticket);
    const member = client(
      http,
      (await keyWithRole(ds, ws.id, 'No data model', { '*': { read: true, create: true, update: true, delete: true } })).secret,
    );
    expectError(await member.post('/rest/metadata/fields', relation()), 403, 'FORBIDDEN');
    expectError(await client(http).post('/rest/metadata/fields', relation()), 401, 'UNAUTHENTICATED');
    expect(await fieldRows(ws.id)).toBe(0);
  });

  it('turns both sides off together, deletes both, and leaves no value or link behind', async () => {
    const { id, api } = await workspace();
    const field = (await api.post('/rest/metadata/fields', relation())).body.data.createField;
    const company = (await api.post('/rest/companies', { name: 'Acme' })).body.data.createCompany;
    const made = await api.post('/rest/tickets', { name: 'T-1', companyId: company.id });
    expect(made.status).toBe(201);
    expect(Number((await ds.query('SELECT count(*) AS n FROM record_links WHERE workspace_id = $1', [id]))[0].n)).toBe(1);
    expectError(await api.patch(`/rest/metadata/fields/${field.id}`, { relation: { onDelete: 'CASCADE' } }), 400, 'VALIDATION_FAILED');
    expect((await api.patch(`/rest/metadata/fields/${field.relation.inverseFieldId}`, { isActive: false })).status).toBe(200);
    expect((await api.get(`/rest/metadata/fields/${field.id}`)).body.data.field.isActive).toBe(false);
    expect((await api.delete(`/rest/metadata/fields/${field.id}`)).status).toBe(200);
    expect(await fieldRows(id)).toBe(0);
    expect(await ds.query(`SELECT custom FROM custom_records WHERE workspace_id = $1`, [id])).toEqual([{ custom: { name: 'T-1' } }]);
    expect(Number((await ds.query('SELECT count(*) AS n FROM record_links WHERE workspace_id = $1', [id]))[0].n)).toBe(0);
  });
});
