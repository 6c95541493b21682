import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { client, type Http } from './rest-helpers.js';

/** Custom fields over GraphQL (docs/data-model.md): typed per workspace, in introspection, inputs, filters and order. */
describe('custom fields over GraphQL', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  const gql = (secret: string, query: string, variables?: Record<string, unknown>) =>
    request(http).post('/graphql').set(bearer(secret)).send({ query, variables });

  async function withFields(): Promise<TestWorkspace> {
    const ws = await newWorkspace(ds, 'cf-gql');
    const api = client(http, ws.keys.Admin);
    for (const body of [
      { object: 'companies', name: 'tier', type: 'SELECT', options: [{ value: 'GOLD', label: 'Gold' }, { value: 'SILVER' }] },
      { object: 'companies', name: 'arr', type: 'NUMBER', description: 'Annual recurring revenue' },
      { object: 'companies', name: 'budget', type: 'CURRENCY' },
      { object: 'companies', name: 'tags', type: 'MULTI_SELECT', options: [{ value: 'SAAS' }, { value: 'RETAIL' }] },
      { object: 'people', name: 'phone', type: 'PHONES' },
      { object: 'people', name: 'vip', type: 'BOOLEAN' },
    ]) {
      expect((await api.post('/rest/metadata/fields', body)).status).toBe(201);
    }
    return ws;
  }

  it('types the fields for that workspace only, in introspection too; the base schema is unchanged for others', async () => {
    const ws = await withFields();
    const other = await newWorkspace(ds, 'cf-gql-other');
    const introspect = `{ __type(name: "Company") { fields { name type { name kind ofType { name } } } } }`;
    const mine = await gql(ws.keys.Admin, introspect);
    expect(mine.status).toBe(200);
    const fields = Object.fromEntries(mine.body.data.__type.fields.map((f: { name: string; type: { name: string } }) => [f.name, f.type]));
    expect(fields.tier.name).toBe('CompanyTierEnum');
    expect(fields.arr.name).toBe('Float');
    expect(fields.budget.name).toBe('Currency');
    expect(fields.tags.kind).toBe('LIST');
    const theirs = await gql(other.keys.Admin, introspect);
    const names = theirs.body.data.__type.fields.map((f: { name: string }) => f.name);
    expect(names).toContain('name');
    expect(names).not.toContain('tier');
    expect((await gql(other.keys.Admin, '{ __type(name: "CompanyTierEnum") { name } }')).body.data.__type).toBeNull();
    const enumValues = await gql(ws.keys.Admin, '{ __type(name: "CompanyTierEnum") { enumValues { name description } } }');
    expect(enumValues.body.data.__type.enumValues).toEqual([
      { name: 'GOLD', description: 'Gold' },
      { name: 'SILVER', description: null },
    ]);
    // Another workspace asking for the field gets a validation error, as for any unknown field.
    const asked = await gql(other.keys.Admin, '{ companies { edges { node { tier } } } }');
    expect(asked.status).toBe(400);
    expect(asked.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('creates, updates, filters and orders by custom fields; nested lists see them too', async () => {
    const ws = await withFields();
    const created = await gql(
      ws.keys.Admin,
      `mutation { a: createCompany(data: {name: "Acme", tier: GOLD, arr: 120.5, budget: {amountMicros: 5000000000, currencyCode: "USD"}, tags: [SAAS]}) { id name tier arr budget { amountMicros currencyCode } tags }
                  b: createCompany(data: {name: "Beta", tier: SILVER, arr: 10}) { id tier }
                  c: createCompany(data: {name: "Gamma", tier: GOLD, arr: 999}) { id tier } }`,
    );
    expect(created.status).toBe(200);
    expect(created.body.errors).toBeUndefined();
    expect(created.body.data.a).toMatchObject({
      name: 'Acme',
      tier: 'GOLD',
      arr: 120.5,
      budget: { amountMicros: 5000000000, currencyCode: 'USD' },
      tags: ['SAAS'],
    });
    const acmeId = created.body.data.a.id;
    const person = await gql(
      ws.keys.Admin,
      `mutation($c: UUID) { createPerson(data: {name: {firstName: "Ada"}, companyId: $c, vip: true, phone: {primaryPhoneNumber: "+1 555"}}) { id vip phone { primaryPhoneNumber primaryPhoneCallingCode } } }`,
      { c: acmeId },
    );
    expect(person.body.data.createPerson).toMatchObject({
      vip: true,
      phone: { primaryPhoneNumber: '+1 555', primaryPhoneCallingCode: null },
    });

    const list = await gql(
      ws.keys.Admin,
      `{ companies(filter: {tier: {eq: GOLD}}, orderBy: [{arr: DescNullsLast}]) { totalCount edges { node { name arr } } } }`,
    );
    expect(list.body.data.companies.totalCount).toBe(2);
    expect(list.body.data.companies.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['Gamma', 'Acme']);
    const bySub = await gql(
      ws.keys.Admin,
      `{ companies(filter: {budget: {amountMicros: {gte: 1}}, tags: {containsAny: [SAAS]}}) { edges { node { name } } } }`,
    );
    expect(bySub.body.data.companies.edges).toEqual([{ node: { name: 'Acme' } }]);
    const nested = await gql(
      ws.keys.Admin,
      `{ companies(filter: {name: {eq: "Acme"}}) { edges { node { people(filter: {vip: {eq: true}}) { edges { node { vip } } } } } } }`,
    );
    expect(nested.body.data.companies.edges[0].node.people.edges).toEqual([{ node: { vip: true } }]);

    const updated = await gql(
      ws.keys.Admin,
      `mutation($id: UUID!) { updateCompany(id: $id, data: {tier: SILVER, budget: {currencyCode: "EUR"}}) { tier budget { amountMicros currencyCode } } }`,
      { id: acmeId },
    );
    expect(updated.body.data.updateCompany).toEqual({ tier: 'SILVER', budget: { amountMicros: 5000000000, currencyCode: 'EUR' } });

    const wrong = await gql(ws.keys.Admin, `mutation { createCompany(data: {name: "X", tier: PLATINUM}) { id } }`);
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const badValue = await gql(ws.keys.Admin, `mutation { createCompany(data: {name: "X", budget: {currencyCode: "usd"}}) { id } }`);
    expect(badValue.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('a deactivated field leaves the schema on the next request', async () => {
    const ws = await withFields();
    const api = client(http, ws.keys.Admin);
    const tier = (await api.get('/rest/metadata/fields', { object: 'companies' })).body.data.fields.find(
      (f: { name: string }) => f.name === 'tier',
    );
    expect((await gql(ws.keys.Admin, '{ companies { edges { node { tier } } } }')).status).toBe(200);
    expect((await api.patch(`/rest/metadata/fields/${tier.id}`, { isActive: false })).status).toBe(200);
    expect((await gql(ws.keys.Admin, '{ companies { edges { node { tier } } } }')).status).toBe(400);
    expect((await gql(ws.keys.Admin, '{ companies { edges { node { arr } } } }')).status).toBe(200);
  });
});
