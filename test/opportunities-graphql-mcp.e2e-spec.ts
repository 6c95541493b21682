import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { statementsDuring } from './query-counter.js';
import { allPermissions, keyWithRole } from './rest-helpers.js';

/** Opportunities over GraphQL and MCP (docs/architecture.md): the same service layer, rules and messages as REST. */

type Http = Parameters<typeof request>[0];
type Vars = Record<string, unknown>;

const OPPORTUNITY = 'id name amount { amountMicros currencyCode } closeDate stage companyId pointOfContactId createdAt updatedAt deletedAt';

describe('opportunities over GraphQL and MCP', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  const gql = (secret: string, query: string, variables?: Vars) =>
    request(http).post('/graphql').set(bearer(secret)).send({ query, variables });

  async function ok(secret: string, query: string, variables?: Vars) {
    const res = await gql(secret, query, variables);
    expect({ status: res.status, errors: res.body.errors }).toEqual({ status: 200, errors: undefined });
    return res.body.data;
  }

  async function refused(secret: string, query: string, variables: Vars | undefined, code: string) {
    const res = await gql(secret, query, variables);
    expect(res.body.errors?.[0]?.extensions?.code).toBe(code);
    expect(res.body.errors).toHaveLength(1);
    return res.body.errors[0] as { message: string; extensions: Record<string, unknown> };
  }

  const count = async (ws: TestWorkspace) =>
    (await ds.query('SELECT count(*)::int AS n FROM opportunities WHERE workspace_id = $1', [ws.id]))[0].n as number;

  describe('GraphQL', () => {
    it('creates with amounts beyond 2^31 (BigFloat), reads the relations both ways, updates and deletes', async () => {
      const ws = await newWorkspace(ds, 'gql-opp');
      const { createCompany: company } = await ok(ws.keys.Admin, 'mutation { createCompany(data: {name: "Acme"}) { id } }');
      const { createPerson: person } = await ok(
        ws.keys.Admin,
        `mutation($c: UUID) { createPerson(data: {name: {firstName: "Ada"}, companyId: $c}) { id } }`,
        { c: company.id },
      );
      const { createOpportunity: opp } = await ok(
        ws.keys.Admin,
        `mutation($data: OpportunityCreateInput!) { createOpportunity(data: $data) { ${OPPORTUNITY} } }`,
        {
          data: {
            name: 'Big deal',
            amount: { amountMicros: 4_000_000_000_000, currencyCode: 'USD' },
            closeDate: '2026-11-30',
            stage: 'PROPOSAL',
            companyId: company.id,
            pointOfContactId: person.id,
          },
        },
      );
      expect(opp).toMatchObject({
        name: 'Big deal',
        amount: { amountMicros: 4_000_000_000_000, currencyCode: 'USD' },
        closeDate: '2026-11-30T00:00:00.000Z',
        stage: 'PROPOSAL',
        companyId: company.id,
        pointOfContactId: person.id,
      });
      // A literal in the document, and NEW by default.
      const { createOpportunity: small } = await ok(
        ws.keys.Admin,
        'mutation { createOpportunity(data: {name: "Small", amount: {amountMicros: 3000000000}}) { stage amount { amountMicros } } }',
      );
      expect(small).toEqual({ stage: 'NEW', amount: { amountMicros: 3_000_000_000 } });

      const data = await ok(
        ws.keys.Admin,
        `query($id: UUID!) {
          opportunity(filter: {id: {eq: $id}}) { company { name } pointOfContact { name { firstName } } }
          companies(first: 5) { edges { node { opportunities { totalCount edges { node { name } } } } } }
          people(first: 5) { edges { node { pointOfContactForOpportunities { totalCount edges { node { id } } } } } }
        }`,
        { id: opp.id },
      );
      expect(data.opportunity).toEqual({ company: { name: 'Acme' }, pointOfContact: { name: { firstName: 'Ada' } } });
      expect(data.companies.edges[0].node.opportunities).toEqual({ totalCount: 1, edges: [{ node: { name: 'Big deal' } }] });
      expect(data.people.edges[0].node.pointOfContactForOpportunities).toEqual({ totalCount: 1, edges: [{ node: { id: opp.id } }] });

      const { updateOpportunity } = await ok(
        ws.keys.Admin,
        `mutation($id: UUID!) { updateOpportunity(id: $id, data: {stage: CUSTOMER, pointOfContactId: null}) { stage pointOfContactId } }`,
        { id: opp.id },
      );
      expect(updateOpportunity).toEqual({ stage: 'CUSTOMER', pointOfContactId: null });
      const { deleteOpportunity } = await ok(ws.keys.Admin, `mutation($id: UUID!) { deleteOpportunity(id: $id) { id deletedAt } }`, {
        id: opp.id,
      });
      expect(deleteOpportunity.deletedAt).not.toBeNull();
    });

    it('filters and orders with the documented examples, and pages by cursor', async () => {
      const ws = await newWorkspace(ds, 'gql-opp-list');
      await ok(ws.keys.Admin, 'mutation($d: [OpportunityCreateInput!]!) { createOpportunities(data: $d) { id } }', {
        d: [
          { name: 'a', stage: 'NEW', amount: { amountMicros: 500_000 } },
          { name: 'b', stage: 'MEETING', amount: { amountMicros: 9_000_000_000 }, closeDate: '2026-01-10' },
          { name: 'c', stage: 'CUSTOMER', amount: { amountMicros: 2_000_000 }, closeDate: '2027-05-01' },
          { name: 'd', stage: 'MEETING' },
        ],
      });
      const names = async (args: string) =>
        (await ok(ws.keys.Admin, `{ opportunities(${args}) { totalCount edges { node { name } } } }`)).opportunities.edges.map(
          (e: { node: { name: string } }) => e.node.name,
        );
      // One batch: the same createdAt, so the default order falls to the ids; compare as sets.
      const matching = async (args: string) => (await names(args)).sort();
      expect(await matching('filter: {stage: {in: [NEW, MEETING]}}')).toEqual(['a', 'b', 'd']);
      expect(await matching('filter: {amount: {amountMicros: {gte: 1000000}}}')).toEqual(['b', 'c']);
      expect(await matching('filter: {amount: {amountMicros: {gt: "8999999999"}}}')).toEqual(['b']);
      expect(await matching('filter: {closeDate: {lte: "2026-12-31"}}')).toEqual(['b']);
      expect(await matching('filter: {or: [{stage: {eq: CUSTOMER}}, {closeDate: {is: NULL}, stage: {neq: NEW}}]}')).toEqual(['c', 'd']);
      expect(await names('orderBy: [{amount: {amountMicros: DescNullsLast}}]')).toEqual(['b', 'c', 'a', 'd']);
      expect(await names('orderBy: [{stage: AscNullsFirst}, {name: DescNullsLast}]')).toEqual(['c', 'd', 'b', 'a']);

      const first = await ok(
        ws.keys.Admin,
        '{ opportunities(first: 2, orderBy: [{closeDate: AscNullsLast}]) { edges { node { name } } pageInfo { hasNextPage endCursor } } }',
      );
      expect(first.opportunities.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['b', 'c']);
      const next = await ok(
        ws.keys.Admin,
        `query($after: String) { opportunities(first: 2, after: $after, orderBy: [{closeDate: AscNullsLast}]) { edges { node { name } } pageInfo { hasNextPage hasPreviousPage } } }`,
        {
          after: first.opportunities.pageInfo.endCursor,
        },
      );
      expect(next.opportunities.edges.map((e: { node: { name: string } }) => e.node.name).sort()).toEqual(['a', 'd']);
      expect(next.opportunities.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true });

      const bad = await refused(
        ws.keys.Admin,
        '{ opportunities(filter: {amount: {amountMicros: {gte: 1.5}}}) { totalCount } }',
        undefined,
        'BAD_USER_INPUT',
      );
      expect(bad.message).toMatch(/amount\.amountMicros\[gte\] expects an integer/);
    });

    it('refuses bad input with the REST messages and writes nothing; a batch is all or none', async () => {
      const ws = await newWorkspace(ds, 'gql-opp-bad');
      const other = await newWorkspace(ds, 'gql-opp-other');
      const { createCompany: foreign } = await ok(other.keys.Admin, 'mutation { createCompany(data: {name: "Theirs"}) { id } }');
      const create = 'mutation($data: OpportunityCreateInput!) { createOpportunity(data: $data) { id } }';
      const cases: [Vars, RegExp][] = [
        [{ name: 'A', amount: { currencyCode: 'dollars' } }, /amount\.currencyCode must be an ISO 4217 currency code/],
        [{ name: 'A', amount: { amountMicros: 1.25 } }, /amount\.amountMicros must be an integer/],
        [{ name: 'A', amount: { amountMicros: 2 ** 55 } }, /amount\.amountMicros must be at most 9007199254740991/],
        [{ name: 'A', amount: { amountMicros: 'ten' } }, /amount\.amountMicros must be an integer/],
        [{ name: 'A', closeDate: 'tomorrow' }, /closeDate must be an ISO 8601 date/],
        [{ name: '' }, /name should not be empty/],
        [{ name: 'A', companyId: foreign.id }, new RegExp(`companyId: no company with id ${foreign.id} in this workspace`)],
        [{ name: 'A', pointOfContactId: randomUUID() }, /pointOfContactId: no person with id/],
      ];
      for (const [data, message] of cases) {
        const error = await refused(ws.keys.Admin, create, { data }, 'BAD_USER_INPUT');
        expect({ data, message: error.message }).toEqual({ data, message: expect.stringMatching(message) });
      }
      // An unknown stage is refused by the schema (an enum), before the service layer.
      const stage = await gql(ws.keys.Admin, create, { data: { name: 'A', stage: 'WON' } });
      expect(stage.body.errors[0].message).toMatch(/OpportunityStageEnum/);
      const batch = await refused(
        ws.keys.Admin,
        'mutation($d: [OpportunityCreateInput!]!) { createOpportunities(data: $d) { id } }',
        {
          d: [{ name: 'fine' }, { name: 'bad', amount: { currencyCode: 'x' } }],
        },
        'BAD_USER_INPUT',
      );
      expect(batch.message).toMatch(/data\[1\]\.amount\.currencyCode/);
      expect(await count(ws)).toBe(0);
    });

    it('permissions and isolation: Viewer reads only, a legacy custom role reads nothing, other workspaces see nothing', async () => {
      const ws = await newWorkspace(ds, 'gql-opp-roles');
      const { createOpportunity: opp } = await ok(ws.keys.Admin, 'mutation { createOpportunity(data: {name: "Mine"}) { id } }');
      expect((await ok(ws.keys.Viewer, '{ opportunities { totalCount } }')).opportunities.totalCount).toBe(1);
      expect(
        (await refused(ws.keys.Viewer, 'mutation { createOpportunity(data: {name: "No"}) { id } }', undefined, 'FORBIDDEN')).message,
      ).toBe('The role "Viewer" does not allow create on opportunities');
      const legacy = await keyWithRole(ds, ws.id, 'Legacy', allPermissions());
      await refused(legacy.secret, '{ opportunities { totalCount } }', undefined, 'FORBIDDEN');
      // Company.opportunities needs read on opportunities too.
      await ok(ws.keys.Admin, 'mutation { createCompany(data: {name: "Acme"}) { id } }');
      const nested = await gql(legacy.secret, '{ companies { edges { node { name opportunities { totalCount } } } } }');
      expect(nested.body.errors[0].extensions.code).toBe('FORBIDDEN');

      const other = await newWorkspace(ds, 'gql-opp-iso');
      expect(
        (await ok(other.keys.Admin, `query($id: UUID!) { opportunity(filter: {id: {eq: $id}}) { id } }`, { id: opp.id })).opportunity,
      ).toBeNull();
      await refused(
        other.keys.Admin,
        `mutation($id: UUID!) { updateOpportunity(id: $id, data: {name: "x"}) { id } }`,
        { id: opp.id },
        'NOT_FOUND',
      );
    });

    it('reads the relations of a page without N+1: one query per relation', async () => {
      const ws = await newWorkspace(ds, 'gql-opp-n1');
      const companies = (
        await ok(ws.keys.Admin, 'mutation($d: [CompanyCreateInput!]!) { createCompanies(data: $d) { id } }', {
          d: Array.from({ length: 10 }, (_, i) => ({ name: `C${i}` })),
        })
      ).createCompanies as { id: string }[];
      await ok(ws.keys.Admin, 'mutation($d: [OpportunityCreateInput!]!) { createOpportunities(data: $d) { id } }', {
        d: companies.flatMap((c, i) => [
          { name: `O${i}a`, companyId: c.id },
          { name: `O${i}b`, companyId: c.id },
        ]),
      });
      const statements = await statementsDuring(ds, async () => {
        const data = await ok(ws.keys.Admin, '{ opportunities { edges { node { name company { name opportunities { totalCount } } } } } }');
        expect(data.opportunities.edges).toHaveLength(20);
        expect(data.opportunities.edges.every((e: any) => e.node.company.opportunities.totalCount === 2)).toBe(true);
      });
      const reads = statements.filter((s) => /\bFROM (opportunities|companies)\b/.test(s));
      expect(reads.length).toBe(3); // the page, the companies, their opportunities
    });
  });

  describe('MCP', () => {
    async function mcp(secret: string, method: string, params: Vars) {
      const res = await request(http)
        .post('/mcp')
        .set(bearer(secret))
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method, params });
      expect(res.status).toBe(200);
      return res.body.result;
    }
    const call = (secret: string, name: string, args: Vars) => mcp(secret, 'tools/call', { name, arguments: args });

    it('lists the six opportunity tools for Admin and the two read tools for Viewer, with the declared schemas', async () => {
      const ws = await newWorkspace(ds, 'mcp-opp');
      const admin = (await mcp(ws.keys.Admin, 'tools/list', {})).tools as {
        name: string;
        inputSchema: any;
        annotations: any;
        description: string;
      }[];
      const opp = admin
        .filter((t) => t.name.endsWith('opportunity') || t.name.endsWith('opportunities'))
        .map((t) => t.name)
        .sort();
      expect(opp).toEqual([
        'create_opportunity',
        'delete_opportunity',
        'get_opportunity',
        'list_opportunities',
        'update_opportunity',
        'upsert_opportunity',
      ]);
      const create = admin.find((t) => t.name === 'create_opportunity')!;
      expect(create.inputSchema.required).toEqual(['name']);
      expect(create.inputSchema.additionalProperties).toBe(false);
      expect(Object.keys(create.inputSchema.properties).sort()).toEqual([
        'amount',
        'closeDate',
        'companyId',
        'id',
        'name',
        'pointOfContactId',
        'stage',
      ]);
      // amountMicros is a JSON number in the tool schema (docs/architecture.md).
      expect(JSON.stringify(create.inputSchema.properties.amount)).toMatch(/"amountMicros":\{[^}]*"number"/);
      expect(JSON.stringify(create.inputSchema.properties.stage)).toContain('NEW, SCREENING, MEETING, PROPOSAL, CUSTOMER');
      expect(admin.find((t) => t.name === 'delete_opportunity')!.annotations.destructiveHint).toBe(true);
      expect(JSON.stringify(admin.find((t) => t.name === 'list_opportunities')!.inputSchema)).toContain(
        'stage[in]:[\\"NEW\\",\\"MEETING\\"]',
      );
      const viewer = (await mcp(ws.keys.Viewer, 'tools/list', {})).tools.map((t: { name: string }) => t.name);
      expect(viewer.filter((n: string) => n.includes('opportunit')).sort()).toEqual(['get_opportunity', 'list_opportunities']);
    });

    it("creates, lists with the REST syntax, embeds at depth 1, updates, deletes; errors are REST's", async () => {
      const ws = await newWorkspace(ds, 'mcp-opp-calls');
      const company = (await call(ws.keys.Admin, 'create_company', { name: 'Acme' })).structuredContent.company;
      const created = await call(ws.keys.Admin, 'create_opportunity', {
        name: 'Acme pilot',
        amount: { amountMicros: 7_500_000_000_000, currencyCode: 'EUR' },
        stage: 'MEETING',
        companyId: company.id,
      });
      expect(created.isError).toBeFalsy();
      const opp = created.structuredContent.opportunity;
      expect(opp).toMatchObject({
        name: 'Acme pilot',
        amount: { amountMicros: 7_500_000_000_000, currencyCode: 'EUR' },
        stage: 'MEETING',
        closeDate: null,
      });
      expect(created.content[0].text).toBe(`Created opportunity "Acme pilot" (id ${opp.id}).`);

      const listed = await call(ws.keys.Admin, 'list_opportunities', {
        filter: 'amount.amountMicros[gte]:1000000,stage[in]:["MEETING"]',
        depth: 1,
      });
      expect(listed.structuredContent.totalCount).toBe(1);
      expect(listed.structuredContent.opportunities[0].company.name).toBe('Acme');
      expect(listed.structuredContent.opportunities[0].pointOfContact).toBeNull();
      expect(listed.content[0].text).toBe('1 of 1 opportunities.');

      for (const [args, text] of [
        [{ name: 'X', stage: 'WON' }, /^VALIDATION_FAILED: stage must be one of the following values/],
        [{ name: 'X', amount: { amountMicros: 0.5 } }, /^VALIDATION_FAILED: amount\.amountMicros must be an integer/],
        [{ name: 'X', amount: { currencyCode: 'eur' } }, /^VALIDATION_FAILED: amount\.currencyCode must be an ISO 4217/],
        [{ name: 'X', companyId: randomUUID() }, /^VALIDATION_FAILED: companyId: no company with id/],
      ] as const) {
        const res = await call(ws.keys.Admin, 'create_opportunity', args);
        expect({ args, isError: res.isError, text: res.content[0].text }).toEqual({
          args,
          isError: true,
          text: expect.stringMatching(text),
        });
      }
      const badFilter = await call(ws.keys.Admin, 'list_opportunities', { filter: 'stage[eq]:"WON"' });
      expect(badFilter.content[0].text).toMatch(/^INVALID_FILTER: filter: stage\[eq\].* expects one of NEW/);
      // Unknown keys are refused by the input schema.
      const unknown = await call(ws.keys.Admin, 'create_opportunity', { name: 'X', probability: 3 });
      expect(unknown.isError).toBe(true);

      const updated = await call(ws.keys.Admin, 'update_opportunity', { id: opp.id, stage: 'CUSTOMER', closeDate: '2026-10-01' });
      expect(updated.structuredContent.opportunity).toMatchObject({ stage: 'CUSTOMER', closeDate: '2026-10-01T00:00:00.000Z' });
      const refusedForViewer = await call(ws.keys.Viewer, 'delete_opportunity', { id: opp.id });
      expect(refusedForViewer.content[0].text).toBe('FORBIDDEN: The role "Viewer" does not allow delete on opportunities');
      expect((await call(ws.keys.Admin, 'delete_opportunity', { id: opp.id })).structuredContent).toEqual({ id: opp.id });
      expect((await call(ws.keys.Admin, 'get_opportunity', { id: opp.id })).content[0].text).toMatch(/^NOT_FOUND: /);
      expect(await count(ws)).toBe(1);
    });
  });
});
