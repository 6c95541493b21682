import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { RECORD_OBJECTS, RoleEntity, type FieldPermissions, type ObjectPermissions } from '#database/entities/index.js';
import { BadInputError } from '#errors/errors.js';
import { createApiKey } from '#identity/accounts.js';
import { createRole, updateRole, type RoleInput } from '#identity/roles.js';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { expectError, type Http } from './rest-helpers.js';

/**
 * Field-level permissions (docs/authentication.md, "Field permissions"), one matrix over every
 * surface: a role that cannot read opportunities' `amount` and the custom field `dealNote`
 * never sees them (REST, depth=1, exports, MCP results and tool schemas, GraphQL, search)
 * and cannot filter, order, group or aggregate on them (403 everywhere); a role that cannot
 * update `amount` is refused every kind of write with nothing written. Roles without
 * restrictions (built-in, or saved before) see every field; an edit applies at once.
 */
describe('field permissions', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let ws: TestWorkspace;
  let other: TestWorkspace;
  let hiddenKey: string;
  let hiddenRoleId: string;
  let readOnlyKey: string;
  let legacyKey: string;
  let companyId: string;
  let dealId: string;

  const every = (read = true, write = true): ObjectPermissions =>
    Object.fromEntries(RECORD_OBJECTS.map((o) => [o, { read, create: write, update: write, delete: write }])) as ObjectPermissions;
  const roleInput = (name: string, fieldPermissions: FieldPermissions): RoleInput => ({
    name,
    description: '',
    objectPermissions: every(),
    fieldPermissions,
    settingsPermissions: [],
    assignableToUsers: true,
    assignableToApiKeys: true,
  });
  async function keyFor(workspaceId: string, role: RoleEntity): Promise<string> {
    return (await createApiKey(ds, { workspaceId, role, name: `${role.name} key`, expiresAt: new Date(Date.now() + 86_400_000) })).secret;
  }
  const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
  const get = (key: string, path: string) => request(http).get(path).set(auth(key));
  const send = (key: string, method: 'post' | 'patch', path: string, body: unknown) => {
    const agent = request(http);
    return (method === 'post' ? agent.post(path) : agent.patch(path)).set(auth(key)).send(body as object);
  };
  const gql = (key: string, query: string, variables?: Record<string, unknown>) =>
    request(http).post('/graphql').set(auth(key)).send({ query, variables });
  const mcp = async (key: string, method: string, params: Record<string, unknown>) => {
    const res = await request(http)
      .post('/mcp')
      .set({ ...auth(key), accept: 'application/json, text/event-stream' })
      .send({ jsonrpc: '2.0', id: 1, method, params });
    expect(res.status).toBe(200);
    return res.body.result;
  };
  const amountOf = async (id: string): Promise<string | null> =>
    (await ds.query('SELECT amount_micros::text AS a FROM opportunities WHERE workspace_id = $1 AND id = $2', [ws.id, id]))[0].a;
  const countOpportunities = async (): Promise<number> =>
    Number((await ds.query('SELECT count(*) AS n FROM opportunities WHERE workspace_id = $1', [ws.id]))[0].n);
  const forbidden = (res: request.Response, field: string) => expect(expectError(res, 403, 'FORBIDDEN')).toContain(field);

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
    ws = await newWorkspace(ds, 'fperm');
    other = await newWorkspace(ds, 'fperm-other');
    const admin = ws.keys.Admin;
    expect((await send(admin, 'post', '/rest/metadata/fields', { object: 'opportunities', name: 'dealNote', type: 'TEXT' })).status).toBe(
      201,
    );
    expect(
      (await send(other.keys.Admin, 'post', '/rest/metadata/fields', { object: 'opportunities', name: 'theirs', type: 'TEXT' })).status,
    ).toBe(201);
    companyId = (await send(admin, 'post', '/rest/companies', { name: 'Quokka Ltd' })).body.data.createCompany.id;
    const deal = await send(admin, 'post', '/rest/opportunities', {
      name: 'Zebra renewal',
      amount: { amountMicros: 5_000_000_000, currencyCode: 'EUR' },
      stage: 'MEETING',
      companyId,
      dealNote: 'pinecone',
    });
    expect(deal.status).toBe(201);
    dealId = deal.body.data.createOpportunity.id;

    const hidden = await createRole(
      ds,
      ws.id,
      roleInput('No amounts', {
        opportunities: { amount: { read: false, update: false }, dealNote: { read: false, update: false } },
      }),
    );
    hiddenRoleId = hidden.id;
    hiddenKey = await keyFor(ws.id, hidden);
    readOnlyKey = await keyFor(
      ws.id,
      await createRole(ds, ws.id, roleInput('Amounts read only', { opportunities: { amount: { read: true, update: false } } })),
    );
    // A role as saved before field permissions existed: the column's default.
    const repo = ds.getRepository(RoleEntity);
    const legacy = await repo.save(
      repo.create({
        workspaceId: ws.id,
        name: 'Saved before',
        objectPermissions: every(),
        settingsPermissions: [],
        assignableToApiKeys: true,
      }),
    );
    expect(legacy.fieldPermissions).toEqual({});
    legacyKey = await keyFor(ws.id, legacy);
  });
  afterAll(() => app?.close());

  it('leaves hidden fields out of REST records: list, get, depth=1, write answers and batches', async () => {
    const list = await get(hiddenKey, '/rest/opportunities');
    expect(list.status).toBe(200);
    const [record] = list.body.data.opportunities;
    expect(record).toMatchObject({ id: dealId, name: 'Zebra renewal', stage: 'MEETING' });
    expect(record).not.toHaveProperty('amount');
    expect(record).not.toHaveProperty('dealNote');
    const one = await get(hiddenKey, `/rest/opportunities/${dealId}`);
    expect(Object.keys(one.body.data.opportunity)).not.toEqual(expect.arrayContaining(['amount']));
    expect(one.body.data.opportunity).not.toHaveProperty('dealNote');
    const company = await get(hiddenKey, `/rest/companies/${companyId}?depth=1`);
    expect(company.body.data.company.opportunities[0]).toMatchObject({ id: dealId, name: 'Zebra renewal' });
    expect(company.body.data.company.opportunities[0]).not.toHaveProperty('amount');
    const made = await send(hiddenKey, 'post', '/rest/opportunities', { name: 'Yak deal' });
    expect(made.status).toBe(201);
    expect(made.body.data.createOpportunity).not.toHaveProperty('amount');
    const patched = await send(hiddenKey, 'patch', `/rest/opportunities/${made.body.data.createOpportunity.id}`, { stage: 'PROPOSAL' });
    expect(patched.body.data.updateOpportunity).toMatchObject({ stage: 'PROPOSAL' });
    expect(patched.body.data.updateOpportunity).not.toHaveProperty('amount');
    const batch = await send(hiddenKey, 'post', '/rest/batch/opportunities', [{ name: 'Gnu deal' }]);
    expect(batch.status).toBe(201);
    expect(batch.body.data.createOpportunities[0]).not.toHaveProperty('amount');
    // Naming it in fields= is asking for it.
    forbidden(await get(hiddenKey, '/rest/opportunities?fields=name,amount'), 'amount');
    // The Admin, and a role saved before, see everything.
    for (const key of [ws.keys.Admin, legacyKey, ws.keys.Viewer]) {
      const seen = await get(key, `/rest/opportunities/${dealId}`);
      expect(seen.body.data.opportunity).toMatchObject({ amount: { amountMicros: 5_000_000_000 }, dealNote: 'pinecone' });
    }
  });

  it('leaves hidden fields out of exports (CSV columns, NDJSON keys); asking for one in fields is 403', async () => {
    const csv = await get(hiddenKey, '/rest/opportunities/export?format=csv');
    expect(csv.status).toBe(200);
    const header = csv.text.split('\n')[0];
    expect(header).toContain('name');
    expect(header).not.toMatch(/amount|dealNote/);
    expect(csv.text).not.toContain('pinecone');
    const ndjson = await get(hiddenKey, '/rest/opportunities/export?format=ndjson');
    const first = JSON.parse(ndjson.text.split('\n')[0]);
    expect(first).toHaveProperty('name');
    expect(first).not.toHaveProperty('amount');
    expect(first).not.toHaveProperty('dealNote');
    forbidden(await get(hiddenKey, '/rest/opportunities/export?format=csv&fields=name,dealNote'), 'dealNote');
    forbidden(
      await get(hiddenKey, `/rest/opportunities/export?format=csv&filter=${encodeURIComponent('dealNote[eq]:"pinecone"')}`),
      'dealNote',
    );
    const full = await get(ws.keys.Admin, '/rest/opportunities/export?format=csv');
    expect(full.text.split('\n')[0]).toMatch(/amount\.amountMicros.*dealNote/);
  });

  it('refuses filter, order, group, aggregate and relation filters on a hidden field (REST), 403 naming it', async () => {
    const q = (s: string) => encodeURIComponent(s);
    forbidden(await get(hiddenKey, `/rest/opportunities?filter=${q('amount.amountMicros[gt]:0')}`), 'opportunities.amount');
    forbidden(await get(hiddenKey, `/rest/opportunities?filter=${q('or(name[eq]:"x",not(dealNote[is]:NULL))')}`), 'opportunities.dealNote');
    forbidden(await get(hiddenKey, `/rest/opportunities?order_by=${q('amount[DescNullsLast]')}`), 'opportunities.amount');
    forbidden(await get(hiddenKey, '/rest/opportunities/groupBy?group_by=dealNote'), 'opportunities.dealNote');
    forbidden(await get(hiddenKey, '/rest/opportunities/groupBy?group_by=stage&aggregate=sum:amount.amountMicros'), 'opportunities.amount');
    forbidden(await get(hiddenKey, `/rest/companies?filter=${q('opportunities.amount.amountMicros[gt]:0')}`), 'opportunities.amount');
    forbidden(
      await request(http)
        .patch(`/rest/opportunities?filter=${q('amount.amountMicros[gt]:0')}`)
        .set(auth(hiddenKey))
        .send({ stage: 'NEW' }),
      'opportunities.amount',
    );
    // What it may read still filters, orders and groups.
    expect((await get(hiddenKey, `/rest/opportunities?filter=${q('stage[eq]:"MEETING"')}&order_by=${q('name')}`)).status).toBe(200);
    expect((await get(hiddenKey, '/rest/opportunities/groupBy?group_by=stage&aggregate=count')).status).toBe(200);
  });

  it('GraphQL: a hidden field is a FORBIDDEN error at its path, the rest of the answer stands; filters and groups on it are FORBIDDEN', async () => {
    const res = await gql(
      hiddenKey,
      `{ opportunities(filter: {name: {eq: "Zebra renewal"}}) { edges { node { id name amount { amountMicros } dealNote company { name } } } } }`,
    );
    expect(res.status).toBe(200);
    const node = res.body.data.opportunities.edges[0].node;
    expect(node).toEqual({ id: dealId, name: 'Zebra renewal', amount: null, dealNote: null, company: { name: 'Quokka Ltd' } });
    const errors = res.body.errors.map((e: any) => ({ path: e.path, code: e.extensions.code }));
    expect(errors).toEqual(
      expect.arrayContaining([
        { path: ['opportunities', 'edges', 0, 'node', 'amount'], code: 'FORBIDDEN' },
        { path: ['opportunities', 'edges', 0, 'node', 'dealNote'], code: 'FORBIDDEN' },
      ]),
    );
    expect(res.body.errors).toHaveLength(2);
    // Nested through a relation, too.
    const nested = await gql(
      hiddenKey,
      `{ company(filter: {id: {eq: "${companyId}"}}) { name opportunities { edges { node { name amount { currencyCode } } } } } }`,
    );
    expect(nested.body.data.company.opportunities.edges[0].node).toEqual({ name: 'Zebra renewal', amount: null });
    expect(nested.body.errors[0]).toMatchObject({
      path: ['company', 'opportunities', 'edges', 0, 'node', 'amount'],
      extensions: { code: 'FORBIDDEN' },
    });
    // Not selecting it: a clean answer.
    const clean = await gql(hiddenKey, '{ opportunities { totalCount edges { node { name } } } }');
    expect(clean.body.errors).toBeUndefined();
    for (const query of [
      '{ opportunities(filter: {amount: {amountMicros: {gt: 0}}}) { totalCount } }',
      '{ opportunities(orderBy: [{amount: {amountMicros: DescNullsLast}}]) { totalCount } }',
      '{ opportunitiesGroupBy(groupBy: ["dealNote"]) { groups { count } } }',
      '{ opportunitiesGroupBy(groupBy: ["stage"], aggregate: ["sum:amount.amountMicros"]) { groups { count } } }',
      '{ companies(filter: {opportunities: {amount: {amountMicros: {gt: 0}}}}) { totalCount } }',
    ]) {
      const refused = await gql(hiddenKey, query);
      expect({ query, code: refused.body.errors?.[0]?.extensions?.code }).toEqual({ query, code: 'FORBIDDEN' });
    }
    // Roles without restrictions keep the shared schema and its answers.
    const admin = await gql(ws.keys.Admin, `{ opportunity(filter: {id: {eq: "${dealId}"}}) { amount { amountMicros } dealNote } }`);
    expect(admin.body).toEqual({ data: { opportunity: { amount: { amountMicros: 5_000_000_000 }, dealNote: 'pinecone' } } });
  });

  it('MCP: tool schemas for the role leave the fields out; results too; filters and aggregates on them are FORBIDDEN', async () => {
    const tools = (await mcp(hiddenKey, 'tools/list', {})).tools as {
      name: string;
      description: string;
      inputSchema: any;
      outputSchema: any;
    }[];
    const byName = (name: string) => tools.find((t) => t.name === name)!;
    const listed = byName('list_opportunities').outputSchema.properties.opportunities.items.properties;
    expect(listed).toHaveProperty('name');
    expect(listed).not.toHaveProperty('amount');
    expect(listed).not.toHaveProperty('dealNote');
    expect(byName('create_opportunity').inputSchema.properties).not.toHaveProperty('amount');
    expect(byName('create_opportunity').inputSchema.properties).not.toHaveProperty('dealNote');
    expect(byName('get_company').outputSchema.properties.company.properties.opportunities.items.properties).not.toHaveProperty('amount');
    expect(byName('list_opportunities').inputSchema.properties.filter.description).not.toContain('amount.amountMicros');
    expect(byName('aggregate_records').description).not.toMatch(/amount\.amountMicros|dealNote/);
    const adminTools = (await mcp(ws.keys.Admin, 'tools/list', {})).tools as typeof tools;
    expect(adminTools.find((t) => t.name === 'create_opportunity')!.inputSchema.properties).toHaveProperty('amount');

    const got = await mcp(hiddenKey, 'tools/call', { name: 'get_opportunity', arguments: { id: dealId } });
    expect(got.isError).toBeFalsy();
    expect(got.structuredContent.opportunity).toMatchObject({ name: 'Zebra renewal' });
    expect(got.structuredContent.opportunity).not.toHaveProperty('amount');
    const page = await mcp(hiddenKey, 'tools/call', { name: 'list_opportunities', arguments: {} });
    expect(page.isError).toBeFalsy();
    expect(JSON.stringify(page.structuredContent)).not.toMatch(/amountMicros|pinecone/);
    const filtered = await mcp(hiddenKey, 'tools/call', { name: 'list_opportunities', arguments: { filter: 'amount.amountMicros[gt]:0' } });
    expect(filtered).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/^FORBIDDEN: .*opportunities\.amount/) }] });
    const grouped = await mcp(hiddenKey, 'tools/call', {
      name: 'aggregate_records',
      arguments: { object: 'opportunities', group_by: 'stage', aggregate: 'sum:amount.amountMicros' },
    });
    expect(grouped).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/^FORBIDDEN/) }] });
  });

  it('search never matches on a hidden field (nor shows it), and still matches on the rest', async () => {
    const admin = await get(ws.keys.Admin, '/rest/search?q=pinecone');
    expect(admin.body.data.search.map((h: { id: string }) => h.id)).toEqual([dealId]);
    const hidden = await get(hiddenKey, '/rest/search?q=pinecone');
    expect(hidden.status).toBe(200);
    expect(hidden.body.data.search).toEqual([]);
    const byName = await get(hiddenKey, '/rest/search?q=zebra');
    expect(byName.body.data.search.map((h: { id: string }) => h.id)).toEqual([dealId]);
    expect(byName.body.data.search[0].record).not.toHaveProperty('amount');
    expect(byName.body.data.search[0].record).not.toHaveProperty('dealNote');
    const tool = await mcp(hiddenKey, 'tools/call', { name: 'search_records', arguments: { q: 'pinecone' } });
    expect(JSON.stringify(tool.structuredContent)).not.toContain(dealId);
  });

  it('refuses every write that sets a field the role cannot update, and writes nothing', async () => {
    const before = await countOpportunities();
    const amount = { amountMicros: 1, currencyCode: 'USD' };
    forbidden(await send(readOnlyKey, 'post', '/rest/opportunities', { name: 'Nope', amount }), 'opportunities.amount');
    forbidden(
      await send(readOnlyKey, 'post', '/rest/batch/opportunities', [{ name: 'Fine' }, { name: 'Nope', amount }]),
      'opportunities.amount',
    );
    forbidden(await send(readOnlyKey, 'post', '/rest/opportunities?upsert=true', { id: dealId, amount }), 'opportunities.amount');
    forbidden(await send(readOnlyKey, 'patch', `/rest/opportunities/${dealId}`, { amount }), 'opportunities.amount');
    forbidden(
      await request(http)
        .patch(`/rest/opportunities?filter=${encodeURIComponent('id[is]:NOT_NULL')}`)
        .set(auth(readOnlyKey))
        .send({ amount }),
      'opportunities.amount',
    );
    // A hidden field cannot be written either.
    forbidden(await send(hiddenKey, 'patch', `/rest/opportunities/${dealId}`, { dealNote: 'overwritten' }), 'opportunities.dealNote');
    const mutation = await gql(readOnlyKey, `mutation { updateOpportunity(id: "${dealId}", data: {amount: {amountMicros: 1}}) { id } }`);
    expect(mutation.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const tool = await mcp(readOnlyKey, 'tools/call', { name: 'update_opportunity', arguments: { id: dealId, amount } });
    expect(tool.isError).toBe(true);
    const updateTool = ((await mcp(readOnlyKey, 'tools/list', {})).tools as { name: string; inputSchema: any }[]).find(
      (t) => t.name === 'update_opportunity',
    )!;
    expect(updateTool.inputSchema.properties).not.toHaveProperty('amount');
    const csv = await request(http)
      .post('/rest/imports?object=opportunities&mode=create')
      .set({ ...auth(readOnlyKey), 'content-type': 'text/csv' })
      .send('name,amount.amountMicros\nImported,5\n');
    forbidden(csv, 'opportunities.amount');
    const ndjson = await request(http)
      .post('/rest/imports?object=opportunities&mode=create')
      .set({ ...auth(readOnlyKey), 'content-type': 'application/x-ndjson' })
      .send(`{"name":"Fine"}\n{"name":"Imported","amount":{"amountMicros":5}}\n`);
    forbidden(ndjson, 'opportunities.amount');

    expect(await countOpportunities()).toBe(before);
    expect(await amountOf(dealId)).toBe('5000000000');
    expect((await ds.query('SELECT count(*)::int AS n FROM imports WHERE workspace_id = $1', [ws.id]))[0].n).toBe(0);
    // It reads the field, and updates the others.
    const read = await get(readOnlyKey, `/rest/opportunities/${dealId}`);
    expect(read.body.data.opportunity.amount.amountMicros).toBe(5_000_000_000);
    expect((await send(readOnlyKey, 'patch', `/rest/opportunities/${dealId}`, { stage: 'PROPOSAL' })).status).toBe(200);
  });

  it('the OpenAPI document of a role names no field it cannot read: models, inputs, list parameters, examples, tags', async () => {
    /** Every string of the paths of `plural` (and its tag) that names `field` as a field: a list item, a path, a condition; not a word of prose. */
    const naming = (doc: any, plural: string, field: string) => {
      const strings: string[] = [];
      const walk = (node: unknown) => {
        if (typeof node === 'string') strings.push(node);
        else if (node && typeof node === 'object') for (const value of Object.values(node)) walk(value);
      };
      for (const [path, item] of Object.entries(doc.paths))
        if (new RegExp(`^/rest/(batch/|restore/)?${plural}(/|$)`).test(path)) walk(item);
      walk(doc.tags.find((t: any) => t.name === plural));
      const escaped = field.replace('.', '\\.');
      return strings.filter((text) => new RegExp(`(^|[\\s(,;:\`"])${escaped}(?=[.\`,;)[])`).test(text));
    };
    const model = (doc: any, name: string) => doc.components.schemas[name];
    const hiddenDoc = (await get(hiddenKey, '/rest/open-api')).body;
    for (const name of ['OpportunityModel', 'OpportunityCreateInput', 'OpportunityUpdateInput']) {
      expect({ name, properties: Object.keys(model(hiddenDoc, name).properties) }).toEqual({
        name,
        properties: expect.not.arrayContaining(['amount', 'dealNote']),
      });
      expect(model(hiddenDoc, name).required ?? []).not.toContain('amount');
    }
    expect(JSON.stringify(hiddenDoc)).not.toContain('dealNote');
    expect(naming(hiddenDoc, 'opportunities', 'amount')).toEqual([]);
    // What the role may use is still described.
    expect(naming(hiddenDoc, 'opportunities', 'closeDate').length).toBeGreaterThan(3);
    expect(model(hiddenDoc, 'OpportunityModel').properties).toHaveProperty('stage');

    // Hidden on one object: gone from its paths, from the relation filters of others, and from the upsert notes of all.
    const noCompanyNames = await createRole(
      ds,
      ws.id,
      roleInput('No company names', { companies: { name: { read: false, update: false }, domainName: { read: false, update: false } } }),
    );
    const companiesDoc = (await get(await keyFor(ws.id, noCompanyNames), '/rest/open-api')).body;
    expect(JSON.stringify(companiesDoc)).not.toContain('domainName');
    expect(Object.keys(model(companiesDoc, 'CompanyModel').properties)).not.toContain('name');
    expect(naming(companiesDoc, 'companies', 'name')).toEqual([]);
    expect(naming(companiesDoc, 'people', 'company.name')).toEqual([]);
    expect(naming(companiesDoc, 'people', 'name')).not.toEqual([]);
    expect(Object.keys(model(companiesDoc, 'PersonModel').properties)).toContain('name');

    // Roles without restrictions get the whole document, custom field included.
    for (const key of [ws.keys.Admin, legacyKey]) {
      const full = (await get(key, '/rest/open-api')).body;
      expect(Object.keys(model(full, 'OpportunityModel').properties)).toEqual(expect.arrayContaining(['amount', 'dealNote']));
      expect(naming(full, 'opportunities', 'amount').length).toBeGreaterThan(3);
      expect(JSON.stringify(full)).toContain('domainName');
    }
  });

  it('applies a role edit to a key already in use, at its next request', async () => {
    const before = await get(hiddenKey, `/rest/opportunities/${dealId}`);
    expect(before.body.data.opportunity).not.toHaveProperty('amount');
    const input = roleInput('No amounts', { opportunities: { dealNote: { read: false, update: false } } });
    await updateRole(ds, ws.id, hiddenRoleId, input);
    const after = await get(hiddenKey, `/rest/opportunities/${dealId}`);
    expect(after.body.data.opportunity.amount.amountMicros).toBe(5_000_000_000);
    expect(after.body.data.opportunity).not.toHaveProperty('dealNote');
    expect(
      (await gql(hiddenKey, `{ opportunity(filter: {id: {eq: "${dealId}"}}) { amount { amountMicros } } }`)).body.errors,
    ).toBeUndefined();
    await updateRole(ds, ws.id, hiddenRoleId, roleInput('No amounts', { opportunities: { amount: { read: false, update: false } } }));
    expect((await get(hiddenKey, `/rest/opportunities/${dealId}`)).body.data.opportunity).not.toHaveProperty('amount');
  });

  it('drops a deleted custom field from the roles that restricted it', async () => {
    const made = await send(ws.keys.Admin, 'post', '/rest/metadata/fields', { object: 'companies', name: 'scratch', type: 'TEXT' });
    expect(made.status).toBe(201);
    const fieldId = made.body.data.createField.id;
    const role = await createRole(ds, ws.id, roleInput('Scratch hidden', { companies: { scratch: { read: false, update: false } } }));
    expect(role.fieldPermissions).toEqual({ companies: { scratch: { read: false, update: false } } });
    expect((await send(ws.keys.Admin, 'patch', `/rest/metadata/fields/${fieldId}`, { isActive: false })).status).toBe(200);
    expect((await request(http).delete(`/rest/metadata/fields/${fieldId}`).set(auth(ws.keys.Admin))).status).toBe(200);
    const [{ field_permissions: after }] = await ds.query('SELECT field_permissions FROM roles WHERE workspace_id = $1 AND id = $2', [
      ws.id,
      role.id,
    ]);
    expect(after).toEqual({ companies: {} });
    // The role is edited as any other, and a field made again with that name starts unrestricted.
    await updateRole(ds, ws.id, role.id, { ...roleInput('Scratch hidden', {}), description: 'edited' });
  });

  it('refuses field permissions naming unknown objects or fields, system fields, another workspace’s field, update without read, or too many', async () => {
    const refused = async (fieldPermissions: unknown, message: RegExp) => {
      const err = await createRole(ds, ws.id, roleInput(`r${Math.random()}`, fieldPermissions as FieldPermissions)).catch((e) => e);
      expect(err).toBeInstanceOf(BadInputError);
      expect((err as BadInputError).messages.join(' | ')).toMatch(message);
      return err as BadInputError;
    };
    await refused({ invoices: { total: { read: false } } }, /unknown object "invoices"/);
    await refused({ opportunities: { nope: { read: false } } }, /opportunities has no field "nope"/);
    await refused({ opportunities: { theirs: { read: false } } }, /opportunities has no field "theirs" in this workspace/);
    await refused({ opportunities: { id: { read: false } } }, /id is on every record and cannot be restricted/);
    await refused({ opportunities: { createdAt: { update: false } } }, /cannot be restricted/);
    await refused({ opportunities: { companyId: { read: false } } }, /links are governed/);
    await refused({ opportunities: { amount: { read: false, update: true } } }, /update needs read/);
    await refused({ opportunities: { amount: { read: 'no' } } }, /true or false/);
    await refused({ opportunities: { amount: { read: false, admin: true } } }, /must be \{read\?: boolean, update\?: boolean\}/);
    await refused('everything', /must be an object/);
    const huge = await refused(
      { opportunities: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`f${i}`, { read: false }])) },
      /names 50000 fields; at most 500/,
    );
    expect(huge.messages).toHaveLength(1);
    const many = await refused(
      { opportunities: Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`f${i}`, { read: false }])) },
      /more problems not shown/,
    );
    expect(many.messages.length).toBeLessThanOrEqual(11);
    // The other workspace may restrict its own field; defaults are not stored.
    const theirs = await createRole(
      ds,
      other.id,
      roleInput('Theirs hidden', { opportunities: { theirs: { read: false }, name: { read: true, update: true } } } as never),
    );
    expect(theirs.fieldPermissions).toEqual({ opportunities: { theirs: { read: false, update: false } } });
  });
});
