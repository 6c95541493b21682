import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { newWorkspace, startApi } from './factories.js';
import { statementsDuring } from './query-counter.js';
import { client, expectError, type Http } from './rest-helpers.js';

/** `fields=` on REST lists and single reads (docs/rest.md): only those fields (and id) are returned and read. */
describe('REST fields=', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  async function seeded(label: string) {
    const ws = await newWorkspace(ds, label);
    const api = client(http, ws.keys.Admin);
    const company = (await api.post('/rest/companies', { name: 'Acme', domainName: { primaryLinkUrl: 'acme.com' } })).body.data
      .createCompany;
    const person = (await api.post('/rest/people', { name: { firstName: 'Ada' }, companyId: company.id })).body.data.createPerson;
    await api.post('/rest/opportunities', { name: 'Deal', companyId: company.id });
    return { ws, api, company, person };
  }

  it('returns only the named fields plus id, on lists and single reads', async () => {
    const { api, company } = await seeded('fields');
    let res = await api.get('/rest/companies', { fields: 'name,domainName' });
    expect(res.status).toBe(200);
    expect(res.body.data.companies).toEqual([
      { id: company.id, name: 'Acme', domainName: { primaryLinkUrl: 'acme.com', primaryLinkLabel: null, secondaryLinks: [] } },
    ]);
    expect(res.body.totalCount).toBe(1);
    res = await api.get(`/rest/companies/${company.id}`, { fields: 'id,createdAt' });
    expect(res.body.data.company).toEqual({ id: company.id, createdAt: company.createdAt });
    // Cursors still work on a pruned page (the order's columns are read).
    res = await api.get('/rest/companies', { fields: 'id', order_by: 'name', limit: 1 });
    expect(res.body.data.companies).toEqual([{ id: company.id }]);
    expect(res.body.pageInfo.endCursor).toEqual(expect.any(String));
    res = await api.get('/rest/companies', { fields: 'id', order_by: 'name', starting_after: res.body.pageInfo.endCursor });
    expect(res.status).toBe(200);
    expect(res.body.data.companies).toEqual([]);
  });

  it('reads only the columns of the named fields', async () => {
    const { api, company } = await seeded('fields-sql');
    const statements = await statementsDuring(ds, () => api.get(`/rest/companies/${company.id}`, { fields: 'name' }));
    const read = statements.find((s) => /FROM companies/.test(s) && /SELECT/.test(s))!;
    expect(read).toMatch(/SELECT id, created_at, name FROM companies/);
    expect(read).not.toMatch(/domain_primary_link_url/);
  });

  it('embeds with depth=1 only the relations it names', async () => {
    const { api, company, person } = await seeded('fields-depth');
    let res = await api.get(`/rest/people/${person.id}`, { depth: 1, fields: 'name,company' });
    expect(res.body.data.person).toEqual({ id: person.id, name: person.name, company: expect.objectContaining({ id: company.id }) });
    res = await api.get('/rest/companies', { depth: 1, fields: 'name,people' });
    expect(Object.keys(res.body.data.companies[0]).sort()).toEqual(['id', 'name', 'people']);
    expect(res.body.data.companies[0].people).toHaveLength(1);
    const text = expectError(await api.get('/rest/people', { fields: 'company' }), 400, 'INVALID_FIELDS');
    expect(text).toMatch(/"company" is embedded only with depth=1/);
  });

  it('takes custom field names, in their workspace only', async () => {
    const { api, company } = await seeded('fields-custom');
    expect((await api.post('/rest/metadata/fields', { object: 'companies', name: 'arr', type: 'NUMBER', label: 'ARR' })).status).toBe(201);
    await api.patch(`/rest/companies/${company.id}`, { arr: 1200 });
    let res = await api.get('/rest/companies', { fields: 'arr' });
    expect(res.body.data.companies).toEqual([{ id: company.id, arr: 1200 }]);
    res = await api.get(`/rest/companies/${company.id}`, { fields: 'name,arr' });
    expect(res.body.data.company).toEqual({ id: company.id, name: 'Acme', arr: 1200 });
    const other = await seeded('fields-custom-other');
    expectError(await other.api.get('/rest/companies', { fields: 'arr' }), 400, 'INVALID_FIELDS');
  });

  it('refuses unknown names with 400 INVALID_FIELDS, naming them and what is allowed', async () => {
    const { api, company } = await seeded('fields-bad');
    let text = expectError(await api.get('/rest/companies', { fields: 'name,website' }), 400, 'INVALID_FIELDS');
    expect(text).toMatch(/unknown field "website"; allowed: id, name, domainName, createdAt, updatedAt, deletedAt/);
    text = expectError(await api.get(`/rest/companies/${company.id}`, { fields: 'domainName.primaryLinkUrl' }), 400, 'INVALID_FIELDS');
    expect(text).toMatch(/unknown field "domainName.primaryLinkUrl"/);
    expectError(await api.get(`/rest/companies/${company.id}`, { other: 'x' }), 400, 'VALIDATION_FAILED');
  });
});
