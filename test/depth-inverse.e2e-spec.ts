import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi } from './factories.js';
import { allPermissions, client, expectError, keyWithRole, type Http } from './rest-helpers.js';

/** depth=1 embeds every relation, inverse ones too (docs/rest.md): a company's people and opportunities, at most 60 each, live only. */
describe('depth=1 inverse relations', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  it("embeds a company's people and opportunities and a person's deals, live records only, at most 60", async () => {
    const ws = await newWorkspace(ds, 'depth');
    const api = client(http, ws.keys.Admin);
    const company = (await api.post('/rest/companies', { name: 'Acme' })).body.data.createCompany;
    const ada = (await api.post('/rest/people', { name: { firstName: 'Ada' }, companyId: company.id })).body.data.createPerson;
    const deals = Array.from({ length: 61 }, (_, i) => ({ name: `Deal ${i}`, companyId: company.id, pointOfContactId: ada.id }));
    expect((await api.post('/rest/batch/opportunities', deals.slice(0, 60))).status).toBe(201);
    const last = (await api.post('/rest/opportunities', deals[60])).body.data.createOpportunity;
    const gone = (await api.post('/rest/opportunities', { name: 'Gone', companyId: company.id })).body.data.createOpportunity;
    await api.delete(`/rest/opportunities/${gone.id}`);

    let res = await api.get(`/rest/companies/${company.id}`, { depth: 1 });
    expect(res.status).toBe(200);
    const got = res.body.data.company;
    expect(got.people.map((p: { id: string }) => p.id)).toEqual([ada.id]);
    expect(got.opportunities).toHaveLength(60);
    expect(got.opportunities.map((o: { id: string }) => o.id)).not.toContain(last.id);
    expect(got.opportunities.map((o: { id: string }) => o.id)).not.toContain(gone.id);

    res = await api.get('/rest/people', { depth: 1 });
    expect(res.body.data.people[0].company.id).toBe(company.id);
    expect(res.body.data.people[0].pointOfContactForOpportunities).toHaveLength(60);

    // MCP get_company with depth 1 carries both lists, and its output schema says so.
    const mcp = (method: string, params: object) =>
      request(http)
        .post('/mcp')
        .set(bearer(ws.keys.Admin))
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method, params });
    const call = await mcp('tools/call', { name: 'get_company', arguments: { id: company.id, depth: 1 } });
    expect(call.body.result.isError).toBeFalsy();
    expect(call.body.result.structuredContent.company.opportunities).toHaveLength(60);
    const tools = (await mcp('tools/list', {})).body.result.tools as { name: string; outputSchema: any }[];
    const get = tools.find((t) => t.name === 'get_company')!;
    expect(Object.keys(get.outputSchema.properties.company.properties)).toEqual(expect.arrayContaining(['people', 'opportunities']));

    // OpenAPI: the company model describes both lists.
    const doc = (await request(http).get('/rest/open-api')).body;
    expect(Object.keys(doc.components.schemas.CompanyModel.properties)).toEqual(expect.arrayContaining(['people', 'opportunities']));
  });

  it('leaves out the inverse lists the role cannot read, and refuses one named in fields= (403)', async () => {
    const ws = await newWorkspace(ds, 'depth-roles');
    const perms = { ...allPermissions(), opportunities: { read: false, create: false, update: false, delete: false } };
    const { secret } = await keyWithRole(ds, ws.id, 'No deals', perms);
    const api = client(http, secret);
    const company = (await client(http, ws.keys.Admin).post('/rest/companies', { name: 'Acme' })).body.data.createCompany;
    // A role without opportunities read company?depth=1 before inverse lists came: it still can.
    const plain = await api.get(`/rest/companies/${company.id}`, { depth: 1 });
    expect(plain.status).toBe(200);
    expect(plain.body.data.company.people).toEqual([]);
    expect(plain.body.data.company).not.toHaveProperty('opportunities');
    expectError(await api.get(`/rest/companies/${company.id}`, { depth: 1, fields: 'name,opportunities' }), 403, 'FORBIDDEN');
    const res = await api.get(`/rest/companies/${company.id}`, { depth: 1, fields: 'name,people' });
    expect(res.status).toBe(200);
    expect(res.body.data.company.people).toEqual([]);
  });
});
