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

  /**
   * Ids a workspace's records hold for a relation that name no record of its target (deleted
   * or not), and links whose field is gone: what a deletion must never leave.
   */
  async function dangling(workspaceId: string): Promise<unknown[]> {
    return ds.query(
      `SELECT 'link of a deleted field' AS what, l.source_id AS id FROM record_links l
        WHERE l.workspace_id = $1 AND NOT EXISTS (SELECT 1 FROM custom_fields f WHERE f.workspace_id = l.workspace_id AND f.id = l.field_id)
       UNION ALL
       SELECT 'id of a missing ' || (f.settings->>'targetObject'), r.id
         FROM custom_fields f
         JOIN objects so ON so.workspace_id = f.workspace_id AND so.name_plural = f.object
         JOIN (SELECT workspace_id, object_id, id, custom, NULL AS plural FROM custom_records WHERE workspace_id = $1
               UNION ALL SELECT workspace_id, NULL, id, custom, 'companies' FROM companies WHERE workspace_id = $1
               UNION ALL SELECT workspace_id, NULL, id, custom, 'people' FROM people WHERE workspace_id = $1) r
           ON r.workspace_id = f.workspace_id AND (r.object_id = so.id OR r.plural = f.object)
        WHERE f.workspace_id = $1 AND f.type = 'RELATION' AND f.settings->>'relationType' = 'MANY_TO_ONE'
          AND r.custom->>(f.name || 'Id') IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM objects t JOIN custom_records c ON c.workspace_id = t.workspace_id AND c.object_id = t.id
                           WHERE t.workspace_id = $1 AND c.workspace_id = $1 AND t.name_plural = f.settings->>'targetObject' AND c.id::text = r.custom->>(f.name || 'Id'))
          AND NOT EXISTS (SELECT 1 FROM companies c WHERE f.settings->>'targetObject' = 'companies' AND c.workspace_id = $1 AND c.id::text = r.custom->>(f.name || 'Id'))`,
      [workspaceId],
    );
  }

  it('deleting an object deletes its relations, both sides, and leaves no id of its records anywhere', async () => {
    const { id, api } = await workspace();
    const employees = (
      await api.post('/rest/metadata/objects', {
        nameSingular: 'employee',
        namePlural: 'employees',
        labelSingular: 'Employee',
        labelPlural: 'Employees',
      })
    ).body.data.createObject;
    const toEmployees = await api.post(
      '/rest/metadata/fields',
      relation({ name: 'assignee' }, { targetObject: 'employees', inverseName: 'assigned' }),
    );
    const fromEmployees = await api.post(
      '/rest/metadata/fields',
      relation({ object: 'employees', name: 'employer' }, { targetObject: 'companies', inverseName: 'staff' }),
    );
    expect([toEmployees.status, fromEmployees.status]).toEqual([201, 201]);
    const ada = (await api.post('/rest/employees', { name: 'Ada' })).body.data.createEmployee.id;
    const acme = (await api.post('/rest/companies', { name: 'Acme' })).body.data.createCompany.id;
    await api.patch(`/rest/employees/${ada}`, { employerId: acme });
    const ticket = (await api.post('/rest/tickets', { name: 'T', assigneeId: ada })).body.data.createTicket.id;
    expect(await dangling(id)).toEqual([]);
    expect((await api.patch(`/rest/metadata/objects/${employees.id}`, { isActive: false })).status).toBe(200);
    // Hidden with its object: the ticket shows no assigneeId, and a write naming it is refused.
    expect((await api.get(`/rest/tickets/${ticket}`)).body.data.ticket).not.toHaveProperty('assigneeId');
    expectError(await api.patch(`/rest/tickets/${ticket}`, { assigneeId: ada }), 400, 'VALIDATION_FAILED');
    expect((await api.get(`/rest/companies/${acme}`, { depth: '1' })).body.data.company).not.toHaveProperty('staff');
    expect((await api.delete(`/rest/metadata/objects/${employees.id}`)).status).toBe(200);
    expect(await fieldRows(id)).toBe(0);
    expect((await api.get(`/rest/tickets/${ticket}`)).body.data.ticket).not.toHaveProperty('assigneeId');
    expect(await ds.query(`SELECT custom FROM custom_records WHERE workspace_id = $1 AND id = $2`, [id, ticket])).toEqual([
      { custom: { name: 'T' } },
    ]);
    expect(await dangling(id)).toEqual([]);
    expect(Number((await ds.query('SELECT count(*) AS n FROM record_links WHERE workspace_id = $1', [id]))[0].n)).toBe(0);
    // A new field may take the freed names.
    expect((await api.post('/rest/metadata/fields', { object: 'tickets', name: 'assigneeId', type: 'TEXT' })).status).toBe(201);
  });

  it('two concurrent calls making the same relation make it once; another workspace cannot reach it', async () => {
    const { id, api } = await workspace();
    const both = await Promise.all([api.post('/rest/metadata/fields', relation()), api.post('/rest/metadata/fields', relation())]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(await fieldRows(id)).toBe(2);
    const made = both.find((r) => r.status === 201)!.body.data.createField;
    const stranger = await workspace();
    expectError(await stranger.api.get(`/rest/metadata/fields/${made.id}`), 404, 'NOT_FOUND');
    expectError(await stranger.api.patch(`/rest/metadata/fields/${made.id}`, { isActive: false }), 404, 'NOT_FOUND');
    expectError(await stranger.api.delete(`/rest/metadata/fields/${made.relation.inverseFieldId}`), 404, 'NOT_FOUND');
    // Another workspace's own object is no target here.
    await stranger.api.post('/rest/metadata/objects', {
      nameSingular: 'secret',
      namePlural: 'secrets',
      labelSingular: 'S',
      labelPlural: 'S',
    });
    expectError(
      await api.post('/rest/metadata/fields', relation({ name: 'secret' }, { targetObject: 'secrets', inverseName: 'x' })),
      400,
      'VALIDATION_FAILED',
    );
    expect(await fieldRows(id)).toBe(2);
    expect((await api.get(`/rest/metadata/fields/${made.id}`)).body.data.field.isActive).toBe(true);
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
