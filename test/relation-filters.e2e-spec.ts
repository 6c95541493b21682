import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { client, expectError, type Client, type Http } from './rest-helpers.js';

/** Filters across one relation, both ways (docs/rest.md "Relation filters", docs/graphql.md): REST, GraphQL, MCP, tenancy, custom fields. */
describe('relation filters', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  type Seeded = { ws: TestWorkspace; api: Client; acme: string; globex: string; ada: string; bob: string; loner: string };

  /** Acme (Ada, a CUSTOMER deal), Globex (Bob, a NEW deal and a deleted CUSTOMER one), and Lone without a company. */
  async function seed(label: string): Promise<Seeded> {
    const ws = await newWorkspace(ds, label);
    const api = client(http, ws.keys.Admin);
    const company = async (name: string) => (await api.post('/rest/companies', { name })).body.data.createCompany.id as string;
    const person = async (firstName: string, companyId: string | null) =>
      (await api.post('/rest/people', { name: { firstName }, companyId })).body.data.createPerson.id as string;
    const acme = await company('Acme Corp');
    const globex = await company('Globex');
    const ada = await person('Ada', acme);
    const bob = await person('Bob', globex);
    const loner = await person('Lone', null);
    await api.post('/rest/opportunities', { name: 'Acme deal', stage: 'CUSTOMER', companyId: acme, pointOfContactId: ada });
    await api.post('/rest/opportunities', { name: 'Globex deal', stage: 'NEW', companyId: globex });
    const gone = (await api.post('/rest/opportunities', { name: 'Old', stage: 'CUSTOMER', companyId: globex })).body.data.createOpportunity;
    expect((await api.delete(`/rest/opportunities/${gone.id}`)).status).toBe(200);
    return { ws, api, acme, globex, ada, bob, loner };
  }

  const names = (records: { name: { firstName: string } | string }[]) =>
    records.map((r) => (typeof r.name === 'string' ? r.name : r.name.firstName)).sort();

  it('filters people by their company and companies by their opportunities, live records only, over REST', async () => {
    const { api, globex } = await seed('rel-rest');
    let res = await api.get('/rest/people', { filter: 'company.name[ilike]:"%acme%"' });
    expect(res.status).toBe(200);
    expect(names(res.body.data.people)).toEqual(['Ada']);
    expect(res.body.totalCount).toBe(1);

    // A company with at least one such opportunity; Globex's CUSTOMER deal is deleted.
    res = await api.get('/rest/companies', { filter: 'opportunities.stage[eq]:"CUSTOMER"' });
    expect(names(res.body.data.companies)).toEqual(['Acme Corp']);
    res = await api.get('/rest/companies', { filter: 'opportunities.stage[in]:["NEW","CUSTOMER"]' });
    expect(names(res.body.data.companies)).toEqual(['Acme Corp', 'Globex']);
    res = await api.get('/rest/companies', { filter: 'people.name.firstName[eq]:"Bob"' });
    expect(names(res.body.data.companies)).toEqual(['Globex']);

    // Inside and/or/not: not(…) also matches people without a company.
    res = await api.get('/rest/people', { filter: 'not(company.name[ilike]:"%acme%")' });
    expect(names(res.body.data.people)).toEqual(['Bob', 'Lone']);
    res = await api.get('/rest/people', { filter: 'or(company.name[eq]:"Globex",name.firstName[eq]:"Lone")' });
    expect(names(res.body.data.people)).toEqual(['Bob', 'Lone']);

    // Opportunities by their point of contact and their company.
    res = await api.get('/rest/opportunities', { filter: 'pointOfContact.name.firstName[eq]:"Ada",company.name[startsWith]:"Acme"' });
    expect(names(res.body.data.opportunities)).toEqual(['Acme deal']);

    // A deleted company is no match.
    expect((await api.delete(`/rest/companies/${globex}`)).status).toBe(200);
    res = await api.get('/rest/people', { filter: 'company.name[eq]:"Globex"' });
    expect(res.body.data.people).toEqual([]);
  });

  it('never reaches another workspace', async () => {
    const a = await seed('rel-a');
    const b = await seed('rel-b');
    // B's Acme has the same name; A's filter sees A's people only, and B's link cannot point into A.
    const res = await a.api.get('/rest/people', { filter: 'company.name[ilike]:"%acme%"' });
    expect(res.body.data.people.map((p: { id: string }) => p.id)).toEqual([a.ada]);
    const companies = await b.api.get('/rest/companies', { filter: 'people.id[eq]:"' + a.ada + '"' });
    expect(companies.body.data.companies).toEqual([]);
  });

  it('refuses two hops, a bare relation, unknown target fields and wrong operators with 400 INVALID_FILTER', async () => {
    const { api } = await seed('rel-bad');
    let text = expectError(await api.get('/rest/people', { filter: 'company.people.name.firstName[eq]:"Ada"' }), 400, 'INVALID_FILTER');
    expect(text).toMatch(/crosses two relations/);
    text = expectError(await api.get('/rest/companies', { filter: 'opportunities.company.name[eq]:"x"' }), 400, 'INVALID_FILTER');
    expect(text).toMatch(/crosses two relations/);
    text = expectError(await api.get('/rest/people', { filter: 'company[eq]:"x"' }), 400, 'INVALID_FILTER');
    expect(text).toMatch(/"company" at character 1 is a relation/);
    text = expectError(await api.get('/rest/people', { filter: 'company.nme[eq]:"x"' }), 400, 'INVALID_FILTER');
    expect(text).toMatch(/unknown field "nme" \(in company\)/);
    text = expectError(await api.get('/rest/companies', { filter: 'opportunities.stage[ilike]:"x"' }), 400, 'INVALID_FILTER');
    expect(text).toMatch(/not allowed on enum field stage/);
    expectError(await api.get('/rest/companies', { filter: 'opportunities.stage[eq]:"WON"' }), 400, 'INVALID_FILTER');
  });

  it('reaches custom fields of the target, in the workspace that has them only', async () => {
    const { ws, api } = await seed('rel-custom');
    const field = await api.post('/rest/metadata/fields', {
      object: 'companies',
      name: 'tier',
      type: 'SELECT',
      label: 'Tier',
      options: [
        { value: 'GOLD', label: 'Gold' },
        { value: 'SILVER', label: 'Silver' },
      ],
    });
    expect(field.status).toBe(201);
    const acme = (await api.get('/rest/companies', { filter: 'name[eq]:"Acme Corp"' })).body.data.companies[0];
    expect((await api.patch(`/rest/companies/${acme.id}`, { tier: 'GOLD' })).status).toBe(200);
    let res = await api.get('/rest/people', { filter: 'company.tier[eq]:"GOLD"' });
    expect(names(res.body.data.people)).toEqual(['Ada']);
    // A number field on opportunities, reached from companies.
    await api.post('/rest/metadata/fields', { object: 'opportunities', name: 'probability', type: 'NUMBER', label: 'Probability' });
    const deal = (await api.get('/rest/opportunities', { filter: 'name[eq]:"Globex deal"' })).body.data.opportunities[0];
    await api.patch(`/rest/opportunities/${deal.id}`, { probability: 0.8 });
    res = await api.get('/rest/companies', { filter: 'opportunities.probability[gte]:"0.5"' });
    expect(names(res.body.data.companies)).toEqual(['Globex']);

    const gql = await request(http)
      .post('/graphql')
      .set(bearer(ws.keys.Admin))
      .send({ query: '{ people(filter: {company: {tier: {eq: GOLD}}}) { edges { node { name { firstName } } } } }' });
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.people.edges.map((e: { node: { name: { firstName: string } } }) => e.node.name.firstName)).toEqual(['Ada']);

    // Another workspace does not know the field.
    const other = await seed('rel-custom-other');
    expectError(await other.api.get('/rest/people', { filter: 'company.tier[eq]:"GOLD"' }), 400, 'INVALID_FILTER');
  });

  it('takes {company: {name: {ilike: …}}} and {opportunities: {stage: {eq: CUSTOMER}}} in GraphQL, refusing two hops', async () => {
    const { ws } = await seed('rel-gql');
    const gql = (query: string) => request(http).post('/graphql').set(bearer(ws.keys.Admin)).send({ query });
    let res = await gql('{ people(filter: {company: {name: {ilike: "%acme%"}}}) { totalCount edges { node { name { firstName } } } } }');
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.people.totalCount).toBe(1);
    res = await gql('{ companies(filter: {opportunities: {stage: {eq: CUSTOMER}}}) { edges { node { name } } } }');
    expect(res.body.data.companies.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['Acme Corp']);
    // Several conditions inside one relation hold for the same opportunity.
    res = await gql('{ companies(filter: {opportunities: {stage: {eq: NEW}, name: {eq: "Acme deal"}}}) { edges { node { name } } } }');
    expect(res.body.data.companies.edges).toEqual([]);
    res = await gql('{ companies(filter: {opportunities: {or: [{stage: {eq: NEW}}, {name: {eq: "Acme deal"}}]}}) { totalCount } }');
    expect(res.body.data.companies.totalCount).toBe(2);
    res = await gql('{ people(filter: {company: {people: {name: {firstName: {eq: "Ada"}}}}}) { totalCount } }');
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', subCode: 'INVALID_FILTER' });
    expect(res.body.errors[0].message).toMatch(/crosses two relations/);
  });

  it('takes relation filters in MCP list tools', async () => {
    const { ws } = await seed('rel-mcp');
    const res = await request(http)
      .post('/mcp')
      .set(bearer(ws.keys.Admin))
      .set('Accept', 'application/json, text/event-stream')
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_companies', arguments: { filter: 'opportunities.stage[eq]:"CUSTOMER"' } },
      });
    expect(res.status).toBe(200);
    expect(res.body.result.isError).toBeFalsy();
    expect(res.body.result.structuredContent.companies.map((c: { name: string }) => c.name)).toEqual(['Acme Corp']);
  });
});
