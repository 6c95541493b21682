import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { allPermissions, client, expectError, keyWithRole, type Client, type Http } from './rest-helpers.js';

/** Aggregates (docs/rest.md "Aggregates"): REST groupBy, GraphQL <objects>GroupBy, MCP aggregate_records; exact, bounded, permitted. */
describe('group by and aggregates', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  const BIG = 4_000_000_000_000_000; // 4e15 micros: three of them pass 2^53

  async function seed(label: string): Promise<{ ws: TestWorkspace; api: Client }> {
    const ws = await newWorkspace(ds, label);
    const api = client(http, ws.keys.Admin);
    const acme = (await api.post('/rest/companies', { name: 'Acme' })).body.data.createCompany;
    const res = await api.post('/rest/batch/opportunities', [
      { name: 'a', stage: 'NEW', amount: { amountMicros: BIG, currencyCode: 'USD' }, closeDate: '2026-01-05', companyId: acme.id },
      { name: 'b', stage: 'NEW', amount: { amountMicros: BIG, currencyCode: 'USD' }, closeDate: '2026-01-31T23:30:00Z' },
      { name: 'c', stage: 'NEW', amount: { amountMicros: BIG + 1, currencyCode: 'USD' }, closeDate: '2026-02-01' },
      { name: 'd', stage: 'CUSTOMER', amount: { amountMicros: 1, currencyCode: 'USD' }, closeDate: '2026-03-10', companyId: acme.id },
      { name: 'e', stage: 'CUSTOMER', amount: { amountMicros: 2, currencyCode: 'USD' } },
    ]);
    expect(res.status).toBe(201);
    return { ws, api };
  }

  const groupBy = (api: Client, query: Record<string, string>) => api.get('/rest/opportunities/groupBy', query);

  it('groups by stage and closeDate:month with exact sums, averages, min and max, ordered by the keys', async () => {
    const { api } = await seed('gb');
    const res = await groupBy(api, {
      group_by: 'stage,closeDate:month',
      aggregate: 'count,sum:amount.amountMicros,avg:amount.amountMicros,min:closeDate,max:closeDate',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        groups: [
          {
            by: { stage: 'CUSTOMER', closeDate: '2026-03-01' },
            count: 1,
            sum: { 'amount.amountMicros': '1' },
            avg: { 'amount.amountMicros': '1' },
            min: { closeDate: '2026-03-10T00:00:00.000Z' },
            max: { closeDate: '2026-03-10T00:00:00.000Z' },
          },
          {
            by: { stage: 'CUSTOMER', closeDate: null },
            count: 1,
            sum: { 'amount.amountMicros': '2' },
            avg: { 'amount.amountMicros': '2' },
            min: { closeDate: null },
            max: { closeDate: null },
          },
          {
            by: { stage: 'NEW', closeDate: '2026-01-01' },
            count: 2,
            sum: { 'amount.amountMicros': '8000000000000000' },
            avg: { 'amount.amountMicros': '4000000000000000' },
            min: { closeDate: '2026-01-05T00:00:00.000Z' },
            max: { closeDate: '2026-01-31T23:30:00.000Z' },
          },
          {
            by: { stage: 'NEW', closeDate: '2026-02-01' },
            count: 1,
            sum: { 'amount.amountMicros': '4000000000000001' },
            avg: { 'amount.amountMicros': '4000000000000001' },
            min: { closeDate: '2026-02-01T00:00:00.000Z' },
            max: { closeDate: '2026-02-01T00:00:00.000Z' },
          },
        ],
      },
    });
    // Beyond 2^53 the sum stays exact; min/max of an integer field are numbers.
    const total = await groupBy(api, { group_by: 'stage', aggregate: 'sum:amount.amountMicros,max:amount.amountMicros,count' });
    expect(total.body.data.groups).toEqual([
      { by: { stage: 'CUSTOMER' }, sum: { 'amount.amountMicros': '3' }, max: { 'amount.amountMicros': 2 }, count: 2 },
      { by: { stage: 'NEW' }, sum: { 'amount.amountMicros': '12000000000000001' }, max: { 'amount.amountMicros': BIG + 1 }, count: 3 },
    ]);
    // Year granularity, no group at all, a filter (with a relation), deleted records left out.
    expect((await groupBy(api, { group_by: 'closeDate:year' })).body.data.groups).toEqual([
      { by: { closeDate: '2026-01-01' }, count: 4 },
      { by: { closeDate: null }, count: 1 },
    ]);
    expect((await groupBy(api, {})).body.data.groups).toEqual([{ by: {}, count: 5 }]);
    expect((await groupBy(api, { filter: 'company.name[eq]:"Acme"', group_by: 'stage' })).body.data.groups).toEqual([
      { by: { stage: 'CUSTOMER' }, count: 1 },
      { by: { stage: 'NEW' }, count: 1 },
    ]);
    const one = (await api.get('/rest/opportunities', { filter: 'name[eq]:"e"' })).body.data.opportunities[0];
    await api.delete(`/rest/opportunities/${one.id}`);
    expect((await groupBy(api, { group_by: 'stage' })).body.data.groups).toEqual([
      { by: { stage: 'CUSTOMER' }, count: 1 },
      { by: { stage: 'NEW' }, count: 3 },
    ]);
    // Text fields group on companies and people too.
    expect((await api.get('/rest/companies/groupBy', { group_by: 'name' })).body.data.groups).toEqual([{ by: { name: 'Acme' }, count: 1 }]);
  });

  it('works on custom fields (select, boolean, date groups; number sums), in their workspace only', async () => {
    const { ws, api } = await seed('gb-custom');
    const add = (body: object) => api.post('/rest/metadata/fields', body).then((r) => expect(r.status).toBe(201));
    await add({
      object: 'opportunities',
      name: 'source',
      type: 'SELECT',
      label: 'Source',
      options: [
        { value: 'WEB', label: 'Web' },
        { value: 'EVENT', label: 'Event' },
      ],
    });
    await add({ object: 'opportunities', name: 'weight', type: 'NUMBER', label: 'Weight' });
    await add({ object: 'opportunities', name: 'hot', type: 'BOOLEAN', label: 'Hot' });
    await add({ object: 'opportunities', name: 'signed', type: 'DATE', label: 'Signed' });
    const all = (await api.get('/rest/opportunities', { order_by: 'name' })).body.data.opportunities;
    await api.patch(`/rest/opportunities/${all[0].id}`, { source: 'WEB', weight: 0.1, hot: true, signed: '2026-05-20' });
    await api.patch(`/rest/opportunities/${all[1].id}`, { source: 'WEB', weight: 0.2, hot: false, signed: '2026-05-02' });
    await api.patch(`/rest/opportunities/${all[2].id}`, { source: 'EVENT', weight: 1.5 });
    let res = await api.get('/rest/opportunities/groupBy', { group_by: 'source', aggregate: 'count,sum:weight,avg:weight,max:weight' });
    expect(res.body.data.groups).toEqual([
      { by: { source: 'EVENT' }, count: 1, sum: { weight: '1.5' }, avg: { weight: '1.5' }, max: { weight: 1.5 } },
      { by: { source: 'WEB' }, count: 2, sum: { weight: '0.3' }, avg: { weight: '0.15' }, max: { weight: 0.2 } },
      { by: { source: null }, count: 2, sum: { weight: null }, avg: { weight: null }, max: { weight: null } },
    ]);
    res = await api.get('/rest/opportunities/groupBy', { group_by: 'hot,signed:month', filter: 'hot[is]:NOT_NULL' });
    expect(res.body.data.groups).toEqual([
      { by: { hot: false, signed: '2026-05-01' }, count: 1 },
      { by: { hot: true, signed: '2026-05-01' }, count: 1 },
    ]);
    const gql = await request(http).post('/graphql').set(bearer(ws.keys.Admin)).send({
      query:
        '{ opportunitiesGroupBy(groupBy: ["source"], aggregate: ["sum:weight"], filter: {source: {eq: WEB}}) { groups { by { field value } sum { field value } count } } }',
    });
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.opportunitiesGroupBy.groups).toEqual([
      { by: [{ field: 'source', value: 'WEB' }], sum: [{ field: 'weight', value: '0.3' }], count: null },
    ]);
    const other = await seed('gb-custom-other');
    expectError(await other.api.get('/rest/opportunities/groupBy', { group_by: 'source' }), 400, 'INVALID_GROUP_BY');
    // Tenancy: the other workspace counts its own five only.
    expect((await other.api.get('/rest/opportunities/groupBy', {})).body.data.groups).toEqual([{ by: {}, count: 5 }]);
  });

  it('refuses bad input with stable codes', async () => {
    const { ws, api } = await seed('gb-bad');
    let text = expectError(await groupBy(api, { group_by: 'companyId' }), 400, 'INVALID_GROUP_BY');
    expect(text).toMatch(/"companyId" \(uuid\) cannot be grouped; fields that group: name, amount.currencyCode, closeDate, stage/);
    expectError(await groupBy(api, { group_by: 'amount.amountMicros' }), 400, 'INVALID_GROUP_BY');
    expectError(await groupBy(api, { group_by: 'stage:month' }), 400, 'INVALID_GROUP_BY');
    expectError(await groupBy(api, { group_by: 'closeDate:decade' }), 400, 'INVALID_GROUP_BY');
    expectError(await groupBy(api, { group_by: 'nope' }), 400, 'INVALID_GROUP_BY');
    text = expectError(await groupBy(api, { aggregate: 'median:amount.amountMicros' }), 400, 'INVALID_AGGREGATE');
    expect(text).toMatch(/unknown aggregate "median"; one of count, sum, avg, min, max/);
    text = expectError(await groupBy(api, { aggregate: 'sum:name' }), 400, 'INVALID_AGGREGATE');
    expect(text).toMatch(/sum does not take text field name; fields sum takes: amount.amountMicros/);
    expectError(await groupBy(api, { aggregate: 'sum' }), 400, 'INVALID_AGGREGATE');
    expectError(await groupBy(api, { filter: 'company.people.name.firstName[eq]:"x"' }), 400, 'INVALID_FILTER');
    expectError(await groupBy(api, { limit: '3' }), 400, 'VALIDATION_FAILED');

    // More than 1 000 groups.
    await ds.query(`INSERT INTO opportunities (workspace_id, name) SELECT $1, 'bulk ' || g FROM generate_series(1, 1001) g`, [ws.id]);
    text = expectError(await groupBy(api, { group_by: 'name' }), 400, 'TOO_MANY_GROUPS');
    expect(text).toMatch(/more than 1000 groups/);
    const gql = await request(http)
      .post('/graphql')
      .set(bearer(ws.keys.Admin))
      .send({ query: '{ opportunitiesGroupBy(groupBy: ["name"]) { groups { count } } }' });
    expect(gql.body.errors[0].extensions).toMatchObject({ subCode: 'TOO_MANY_GROUPS' });
  });

  it('needs read permission on the object: 403 on REST, FORBIDDEN on GraphQL and MCP, never an empty answer', async () => {
    const { ws } = await seed('gb-403');
    const perms = { ...allPermissions(), opportunities: { read: false, create: false, update: false, delete: false } };
    const { secret } = await keyWithRole(ds, ws.id, 'No deals', perms);
    expectError(await client(http, secret).get('/rest/opportunities/groupBy', { group_by: 'nope' }), 403, 'FORBIDDEN');
    const gql = await request(http).post('/graphql').set(bearer(secret)).send({ query: '{ opportunitiesGroupBy { groups { count } } }' });
    expect(gql.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const mcp = await request(http)
      .post('/mcp')
      .set(bearer(secret))
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'aggregate_records', arguments: { object: 'opportunities' } } });
    expect(mcp.body.result.isError).toBe(true);
    expect(mcp.body.result.content[0].text).toMatch(/^FORBIDDEN/);
    // Companies it may read.
    expect((await client(http, secret).get('/rest/companies/groupBy', {})).body.data.groups).toEqual([{ by: {}, count: 1 }]);
  });

  it('MCP aggregate_records answers with the REST groups', async () => {
    const { ws } = await seed('gb-mcp');
    const mcp = (method: string, params: object) =>
      request(http)
        .post('/mcp')
        .set(bearer(ws.keys.Admin))
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method, params });
    const tools = (await mcp('tools/list', {})).body.result.tools.map((t: { name: string }) => t.name);
    expect(tools).toContain('aggregate_records');
    const res = await mcp('tools/call', {
      name: 'aggregate_records',
      arguments: { object: 'opportunities', group_by: 'stage', aggregate: 'count,sum:amount.amountMicros' },
    });
    expect(res.body.result.isError).toBeFalsy();
    expect(res.body.result.structuredContent.groups).toEqual([
      { by: { stage: 'CUSTOMER' }, count: 2, sum: { 'amount.amountMicros': '3' } },
      { by: { stage: 'NEW' }, count: 3, sum: { 'amount.amountMicros': '12000000000000001' } },
    ]);
    const bad = await mcp('tools/call', { name: 'aggregate_records', arguments: { object: 'opportunities', aggregate: 'sum:name' } });
    expect(bad.body.result.isError).toBe(true);
    expect(bad.body.result.content[0].text).toMatch(/^INVALID_AGGREGATE/);
  });
});
