import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { newWorkspace, type TestWorkspace } from './factories.js';
import { importErrors, importingApi, upload, waitForImport } from './import-helpers.js';
import { client, expectError, keyWithRole, type Client, type Http } from './rest-helpers.js';

const ticket = { nameSingular: 'ticket', namePlural: 'tickets', labelSingular: 'Ticket', labelPlural: 'Tickets' };
const employee = { nameSingular: 'employee', namePlural: 'employees', labelSingular: 'Employee', labelPlural: 'Employees' };

/**
 * A custom relation's values on every write path and its reads (docs/data-model.md
 * "Relations"; docs/decisions/0066-relations.md): `<name>Id` written through the one writer
 * (create, batch, update, upsert, changes by filter, imports), each link checked against a
 * live record of the caller's workspace; `onDelete`; `depth=1` both ways; relation filters
 * both ways; exports. Attacked as an outsider would: another workspace's ids, a delete racing
 * the links made to it, cascades that loop.
 */
describe('relations: records', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await importingApi());
  });
  afterAll(() => app.close());

  /** A workspace with tickets linked to companies through `company` (its inverse `tickets`), deleted as `onDelete` says. */
  async function workspace(onDelete?: string): Promise<{ ws: TestWorkspace; api: Client; acme: string; globex: string }> {
    const ws = await newWorkspace(ds, 'rel-records');
    const api = client(http, ws.keys.Admin);
    expect((await api.post('/rest/metadata/objects', ticket)).status).toBe(201);
    const made = await api.post('/rest/metadata/fields', {
      object: 'tickets',
      name: 'company',
      type: 'RELATION',
      relation: { type: 'MANY_TO_ONE', targetObject: 'companies', inverseName: 'tickets', inverseLabel: 'Tickets', onDelete },
    });
    expect(made.status).toBe(201);
    const acme = (await api.post('/rest/companies', { name: 'Acme' })).body.data.createCompany.id;
    const globex = (await api.post('/rest/companies', { name: 'Globex' })).body.data.createCompany.id;
    return { ws, api, acme, globex };
  }
  const ticketsOf = async (api: Client, query: Record<string, string> = {}) =>
    (await api.get('/rest/tickets', { order_by: 'name', ...query })).body.data.tickets as { name: string; companyId: string | null }[];
  const linksOf = async (workspaceId: string) =>
    (await ds.query('SELECT target_id FROM record_links WHERE workspace_id = $1 ORDER BY target_id', [workspaceId])).map(
      (r: { target_id: string }) => r.target_id,
    );

  it('writes <name>Id on create, batch, update, upsert and changes by filter, and reads it back', async () => {
    const { ws, api, acme, globex } = await workspace();
    const one = await api.post('/rest/tickets', { name: 'T-1', companyId: acme.toUpperCase() });
    expect(one.status).toBe(201);
    expect(one.body.data.createTicket).toMatchObject({ name: 'T-1', companyId: acme });
    const batch = await api.post('/rest/batch/tickets', [{ name: 'T-2', companyId: globex }, { name: 'T-3' }]);
    expect(batch.status).toBe(201);
    expect(batch.body.data.createTickets.map((t: { companyId: string | null }) => t.companyId)).toEqual([globex, null]);
    const t3 = batch.body.data.createTickets[1].id;
    expect((await api.patch(`/rest/tickets/${t3}`, { companyId: acme })).body.data.updateTicket.companyId).toBe(acme);
    const upserted = await api.post('/rest/tickets?upsert=true', { id: t3, companyId: globex });
    expect(upserted.body.data.createTicket.companyId).toBe(globex);
    const byFilter = await api.patch('/rest/tickets?filter=name[eq]:"T-1"', { companyId: globex });
    expect(byFilter.status).toBe(200);
    expect((await ticketsOf(api)).map((t) => [t.name, t.companyId])).toEqual([
      ['T-1', globex],
      ['T-2', globex],
      ['T-3', globex],
    ]);
    expect(await linksOf(ws.id)).toEqual([globex, globex, globex]);
    expect((await api.patch(`/rest/tickets/${t3}`, { companyId: null })).body.data.updateTicket.companyId).toBeNull();
    expect(await linksOf(ws.id)).toEqual([globex, globex]);
    // The id filters as a uuid.
    expect((await ticketsOf(api, { filter: `companyId[eq]:"${globex}"` })).length).toBe(2);
  });

  it("refuses a link to a missing, deleted or other workspace's record with a 400 on every write path, writing nothing", async () => {
    const { ws, api, acme, globex } = await workspace();
    const theirs = await newWorkspace(ds, 'rel-theirs');
    const foreign = (await client(http, theirs.keys.Admin).post('/rest/companies', { name: 'Theirs' })).body.data.createCompany.id;
    expect((await api.delete(`/rest/companies/${globex}`)).status).toBe(200);
    const kept = (await api.post('/rest/tickets', { name: 'kept', companyId: acme })).body.data.createTicket.id;
    for (const bad of [foreign, globex, '00000000-0000-4000-8000-000000000000']) {
      const message = new RegExp(`companyId: no company with id ${bad} in this workspace`);
      expect(expectError(await api.post('/rest/tickets', { name: 'x', companyId: bad }), 400, 'VALIDATION_FAILED')).toMatch(message);
      expectError(await api.post('/rest/batch/tickets', [{ name: 'x' }, { name: 'y', companyId: bad }]), 400, 'VALIDATION_FAILED');
      expectError(await api.patch(`/rest/tickets/${kept}`, { companyId: bad }), 400, 'VALIDATION_FAILED');
      expectError(await api.post('/rest/tickets?upsert=true', { id: kept, companyId: bad }), 400, 'VALIDATION_FAILED');
      expectError(await api.patch('/rest/tickets?filter=name[eq]:"kept"', { companyId: bad }), 400, 'VALIDATION_FAILED');
    }
    expectError(await api.post('/rest/tickets', { name: 'x', companyId: 'not-a-uuid' }), 400, 'VALIDATION_FAILED');
    expect((await ticketsOf(api)).map((t) => [t.name, t.companyId])).toEqual([['kept', acme]]);
    expect(await linksOf(ws.id)).toEqual([acme]);
  });

  it('refuses a link to an object the role cannot read (403) before looking the record up', async () => {
    const { ws, acme } = await workspace();
    const ticketsOnly = await keyWithRole(ds, ws.id, 'Tickets only', { tickets: { read: true, create: true, update: true, delete: true } });
    const api = client(http, ticketsOnly.secret);
    expectError(await api.post('/rest/tickets', { name: 'x', companyId: acme }), 403, 'FORBIDDEN');
    expectError(await api.post('/rest/tickets', { name: 'x', companyId: '00000000-0000-4000-8000-000000000000' }), 403, 'FORBIDDEN');
    expect((await api.post('/rest/tickets', { name: 'unlinked' })).status).toBe(201);
  });

  it('embeds the linked record and the inverse list at depth=1, and filters across the relation both ways', async () => {
    const { ws, api, acme, globex } = await workspace();
    await api.post('/rest/batch/tickets', [
      { name: 'Printer', companyId: acme },
      { name: 'VPN', companyId: acme },
      { name: 'Coffee', companyId: globex },
      { name: 'Orphan' },
    ]);
    const deep = await ticketsOf(api, { depth: '1' });
    expect(deep.map((t) => [t.name, (t as unknown as { company: { name: string } | null }).company?.name ?? null])).toEqual([
      ['Coffee', 'Globex'],
      ['Orphan', null],
      ['Printer', 'Acme'],
      ['VPN', 'Acme'],
    ]);
    const company = (await api.get(`/rest/companies/${acme}`, { depth: '1' })).body.data.company;
    expect(company.tickets.map((t: { name: string }) => t.name).sort()).toEqual(['Printer', 'VPN']);
    expect(company.people).toEqual([]);
    expect((await ticketsOf(api, { filter: 'company.name[eq]:"Acme"' })).map((t) => t.name)).toEqual(['Printer', 'VPN']);
    const withVpn = await api.get('/rest/companies', { filter: 'tickets.name[eq]:"VPN"' });
    expect(withVpn.body.data.companies.map((c: { name: string }) => c.name)).toEqual(['Acme']);
    expect(expectError(await api.get('/rest/tickets', { filter: 'company.tickets.name[eq]:"x"' }), 400, 'INVALID_FILTER')).toMatch(
      /crosses two relations/,
    );
    // Another workspace with the same model sees none of it.
    const other = await workspace();
    expect(await ticketsOf(other.api, { filter: 'company.name[eq]:"Acme"' })).toEqual([]);
    // Exports carry the id column.
    const csv = await api.get('/rest/tickets/export', { format: 'csv', fields: 'name,companyId' });
    expect(csv.status).toBe(200);
    expect(csv.text.split('\n')[0]).toBe('id,name,companyId');
    expect(csv.text).toContain(`,Printer,${acme}`);
    expect(ws.id).toBeTruthy();
  });

  it('embeds at most 60 records per inverse list, with live ones only', async () => {
    const { api, acme } = await workspace();
    const many = Array.from({ length: 60 }, (_, i) => ({ name: `T-${String(i).padStart(2, '0')}`, companyId: acme }));
    expect((await api.post('/rest/batch/tickets', many)).status).toBe(201);
    const last = (await api.post('/rest/tickets', { name: 'T-60', companyId: acme })).body.data.createTicket.id;
    const gone = (await api.post('/rest/tickets', { name: 'T-gone', companyId: acme })).body.data.createTicket.id;
    await api.delete(`/rest/tickets/${gone}`);
    const company = (await api.get(`/rest/companies/${acme}`, { depth: '1' })).body.data.company;
    expect(company.tickets).toHaveLength(60);
    expect(company.tickets.map((t: { id: string }) => t.id)).not.toContain(last);
    expect((await api.get('/rest/companies', { filter: `tickets.id[eq]:"${gone}"` })).body.data.companies).toEqual([]);
    expect((await api.get('/rest/companies', { filter: `tickets.id[eq]:"${last}"` })).body.data.companies).toHaveLength(1);
  });

  it('SET_NULL: a soft delete keeps the links (restore finds them), erasure clears them', async () => {
    const { ws, api, acme } = await workspace();
    const t = (await api.post('/rest/tickets', { name: 'T', companyId: acme })).body.data.createTicket.id;
    expect((await api.delete(`/rest/companies/${acme}`)).status).toBe(200);
    expect((await api.get(`/rest/tickets/${t}`, { depth: '1' })).body.data.ticket).toMatchObject({ companyId: acme, company: null });
    expect((await api.patch(`/rest/restore/companies/${acme}`, {})).status).toBe(200);
    expect((await api.get(`/rest/tickets/${t}`, { depth: '1' })).body.data.ticket.company.name).toBe('Acme');
    expect((await api.delete(`/rest/companies/${acme}?hard=true`)).status).toBe(200);
    expect((await api.get(`/rest/tickets/${t}`)).body.data.ticket.companyId).toBeNull();
    expect(await linksOf(ws.id)).toEqual([]);
  });

  it('CASCADE: a soft delete deletes the linking records, and restore brings the same ones back', async () => {
    const { ws, api, acme, globex } = await workspace('CASCADE');
    const [a, b, other] = (
      await api.post('/rest/batch/tickets', [
        { name: 'A', companyId: acme },
        { name: 'B', companyId: acme },
        { name: 'G', companyId: globex },
      ])
    ).body.data.createTickets.map((x: { id: string }) => x.id);
    // Deleted before, on its own: the company's restore leaves it deleted.
    expect((await api.delete(`/rest/tickets/${b}`)).status).toBe(200);
    expect((await api.delete(`/rest/companies/${acme}`)).status).toBe(200);
    expect((await ticketsOf(api)).map((t) => t.name)).toEqual(['G']);
    const deletedAt = async (id: string) =>
      (await ds.query('SELECT deleted_at FROM custom_records WHERE workspace_id = $1 AND id = $2', [ws.id, id]))[0].deleted_at;
    expect(await deletedAt(a)).toEqual((await ds.query('SELECT deleted_at FROM companies WHERE id = $1', [acme]))[0].deleted_at);
    expect((await api.patch(`/rest/restore/companies/${acme}`, {})).status).toBe(200);
    expect((await ticketsOf(api)).map((t) => t.name)).toEqual(['A', 'G']);
    expect([await deletedAt(a), await deletedAt(other), (await deletedAt(b)) !== null]).toEqual([null, null, true]);
  });

  it('RESTRICT: a delete while live records link is 409 naming how many, and nothing is deleted', async () => {
    const { api, acme, globex } = await workspace('RESTRICT');
    await api.post('/rest/batch/tickets', [
      { name: 'A', companyId: acme },
      { name: 'B', companyId: acme },
    ]);
    expect(expectError(await api.delete(`/rest/companies/${acme}`), 409, 'CONFLICT')).toMatch(
      /^2 tickets link to this company through company/,
    );
    await api.post('/rest/tickets', { name: 'C', companyId: globex });
    expect(expectError(await api.delete('/rest/companies?filter=name[in]:["Acme","Globex"]'), 409, 'CONFLICT')).toMatch(
      /^3 tickets link to these companies through company/,
    );
    expect(expectError(await api.delete(`/rest/companies/${acme}?hard=true`), 409, 'CONFLICT')).toMatch(/2 tickets \(live or deleted\)/);
    expect((await api.get(`/rest/companies/${acme}`)).status).toBe(200);
    expect((await api.get('/rest/companies')).body.totalCount).toBe(2);
    await api.delete('/rest/tickets?filter=name[in]:["A","B"]');
    expect((await api.delete(`/rest/companies/${acme}`)).status).toBe(200);
  });

  it('bounds a CASCADE cycle at run time: each record is deleted once, and restore brings the loop back', async () => {
    const ws = await newWorkspace(ds, 'rel-cycle');
    const api = client(http, ws.keys.Admin);
    await api.post('/rest/metadata/objects', employee);
    const made = await api.post('/rest/metadata/fields', {
      object: 'employees',
      name: 'manager',
      type: 'RELATION',
      relation: { type: 'MANY_TO_ONE', targetObject: 'employees', inverseName: 'reports', onDelete: 'CASCADE' },
    });
    expect(made.status).toBe(201);
    const boss = (await api.post('/rest/employees', { name: 'Boss' })).body.data.createEmployee.id;
    const mid = (await api.post('/rest/employees', { name: 'Mid', managerId: boss })).body.data.createEmployee.id;
    await api.post('/rest/employees', { name: 'Low', managerId: mid });
    // The boss reports to the lowest: a loop.
    const low = (await api.get('/rest/employees', { filter: 'name[eq]:"Low"' })).body.data.employees[0].id;
    expect((await api.patch(`/rest/employees/${boss}`, { managerId: low })).status).toBe(200);
    expect((await api.delete(`/rest/employees/${mid}`)).status).toBe(200);
    expect((await api.get('/rest/employees')).body.totalCount).toBe(0);
    expect((await api.patch(`/rest/restore/employees/${mid}`, {})).status).toBe(200);
    expect((await api.get('/rest/employees')).body.totalCount).toBe(3);
    const unrelated = (await api.get('/rest/employees', { depth: '1', filter: `id[eq]:"${mid}"` })).body.data.employees[0];
    expect(unrelated.reports.map((e: { name: string }) => e.name)).toEqual(['Low']);
  });

  it('a delete racing links to the same record leaves no live record linked to a deleted one, and no 500', async () => {
    for (const onDelete of ['CASCADE', 'RESTRICT'] as const) {
      const { ws, api, acme } = await workspace(onDelete);
      const creates = Array.from({ length: 20 }, (_, i) => api.post('/rest/tickets', { name: `T-${i}`, companyId: acme }));
      const deleted = api.delete(`/rest/companies/${acme}`);
      const statuses = (await Promise.all([...creates, deleted])).map((r) => r.status);
      expect(statuses.filter((s) => ![200, 201, 400, 409].includes(s))).toEqual([]);
      const dangling = await ds.query(
        `SELECT t.id FROM custom_records t JOIN companies c ON c.workspace_id = t.workspace_id AND c.id = (t.custom->>'companyId')::uuid
          WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND c.deleted_at IS NOT NULL`,
        [ws.id],
      );
      expect([onDelete, dangling]).toEqual([onDelete, []]);
    }
  });

  it('erasure racing links leaves no id of an erased record anywhere', async () => {
    const { ws, api, acme } = await workspace();
    const creates = Array.from({ length: 20 }, (_, i) => api.post('/rest/tickets', { name: `T-${i}`, companyId: acme }));
    const erased = api.delete(`/rest/companies/${acme}?hard=true`);
    const statuses = (await Promise.all([...creates, erased])).map((r) => r.status);
    expect(statuses.filter((s) => ![200, 201, 400].includes(s))).toEqual([]);
    const held = await ds.query(`SELECT id FROM custom_records WHERE workspace_id = $1 AND custom->>'companyId' = $2`, [ws.id, acme]);
    expect(held).toEqual([]);
    expect(await linksOf(ws.id)).toEqual([]);
  });

  it('imports link by id, and refuse a row whose link names no live record of the workspace', async () => {
    const { ws, api, acme } = await workspace();
    const theirs = await newWorkspace(ds, 'rel-imp-theirs');
    const foreign = (await client(http, theirs.keys.Admin).post('/rest/companies', { name: 'Theirs' })).body.data.createCompany.id;
    const res = await upload(
      http,
      ws.keys.Admin,
      '?object=tickets',
      ['name,companyId', `Linked,${acme}`, `Foreign,${foreign}`, 'Plain,'].join('\n'),
    );
    expect(res.status).toBe(202);
    expect(await waitForImport(http, ws.keys.Admin, res.body.data.import.id)).toMatchObject({ status: 'completed', created: 2, failed: 1 });
    expect(await importErrors(http, ws.keys.Admin, res.body.data.import.id)).toEqual([
      { row: 2, line: 3, messages: [`companyId: no company with id ${foreign} in this workspace`] },
    ]);
    expect((await ticketsOf(api)).map((t) => [t.name, t.companyId])).toEqual([
      ['Linked', acme],
      ['Plain', null],
    ]);
    expect(await linksOf(ws.id)).toEqual([acme]);
  });
});
