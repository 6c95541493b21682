import { ApolloServer } from '@apollo/server';
import type { INestApplication } from '@nestjs/common';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import { parse } from 'graphql';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { toConnection } from '../apps/records-api/src/graphql/connections.js';
import { planQuery } from '../apps/records-api/src/graphql/query-plan.js';
import { createApiKey } from '#identity/accounts.js';
import { createRole } from '#identity/roles.js';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';

/**
 * Issue 12: successful `POST /graphql` queries are executed by graphql-js without
 * Apollo's request pipeline (graphql/graphql-fast-path.ts); everything else goes to Apollo. The
 * answers must be the ones Apollo gives, byte for byte, and Apollo must still see every
 * request the fast path does not take. Apollo's own handler is counted (not replaced) to
 * tell which one answered.
 */
describe("GraphQL queries without Apollo's pipeline", () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Parameters<typeof request>[0];
  let ws: TestWorkspace;
  let apolloCalls = 0;
  const original = ApolloServer.prototype.executeHTTPGraphQLRequest;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
    ws = await newWorkspace(ds, 'gql-fast');
    const companies = await post({
      query: 'mutation($d: [CompanyCreateInput!]!) { createCompanies(data: $d) { id name } }',
      variables: {
        d: [
          {
            name: 'Fast A',
            domainName: { primaryLinkUrl: 'https://a.example.com', secondaryLinks: [{ url: 'https://b.example.com', label: 'B' }] },
          },
          { name: 'Fast B' },
          // Everything JSON escapes differently in one place or another.
          { name: 'Fast "C" \\ é 😀 \u2028 \u0001\t\n</script>' },
        ],
      },
    });
    expect(companies.body.errors).toBeUndefined();
    const people = await post({
      query: 'mutation($d: [PersonCreateInput!]!) { createPeople(data: $d) { id } }',
      variables: {
        d: companies.body.data.createCompanies.map((c: { id: string }, i: number) => ({
          name: { firstName: `P${i}` },
          emails: { primaryEmail: `p${i}@example.com`, additionalEmails: i ? [] : ['x@example.com'] },
          companyId: c.id,
        })),
      },
    });
    expect(people.body.errors).toBeUndefined();
    const deals = await post({
      query: 'mutation($d: [OpportunityCreateInput!]!) { createOpportunities(data: $d) { id } }',
      variables: {
        d: [
          {
            name: 'Deal 1',
            stage: 'MEETING',
            amount: { amountMicros: '1500000000', currencyCode: 'USD' },
            closeDate: '2026-12-31T00:00:00.000Z',
          },
          { name: 'Deal 2' },
        ],
      },
    });
    expect(deals.body.errors).toBeUndefined();
    ApolloServer.prototype.executeHTTPGraphQLRequest = function (
      this: ApolloServer,
      ...args: Parameters<ApolloServer['executeHTTPGraphQLRequest']>
    ) {
      apolloCalls++;
      return original.apply(this, args);
    } as ApolloServer['executeHTTPGraphQLRequest'];
  });
  afterAll(async () => {
    ApolloServer.prototype.executeHTTPGraphQLRequest = original;
    await app.close();
  });

  function post(body: object, headers: Record<string, string> = {}, secret = ws?.keys.Admin) {
    return request(http)
      .post('/graphql')
      .set({ ...bearer(secret), ...headers })
      .send(body);
  }

  /** The answer, and whether Apollo handled it. */
  async function answer(body: object, headers: Record<string, string> = {}, secret?: string) {
    const before = apolloCalls;
    const res = await post(body, headers, secret);
    return { status: res.status, type: res.headers['content-type'], text: res.text, byApollo: apolloCalls > before };
  }

  const QUERIES: [string, object][] = [
    [
      'a list with a filter, an order and variables',
      {
        query:
          'query($n: Int, $f: CompanyFilterInput) { companies(first: $n, filter: $f, orderBy: [{name: DescNullsLast}]) { totalCount edges { cursor node { id name createdAt } } pageInfo { hasNextPage endCursor } } }',
        variables: { n: 2, f: { name: { like: 'Fast%' } } },
      },
    ],
    [
      'aliases, fragments, nested relations both ways',
      {
        query: `{ all: people(orderBy: [{name: {firstName: AscNullsFirst}}]) { edges { node { ...P employer: company { name people { totalCount edges { node { id } } } } } } } }
              fragment P on Person { id name { firstName lastName } emails { primaryEmail additionalEmails } }`,
      },
    ],
    [
      'a single record by filter, and null when there is none',
      {
        query:
          'query($missing: UUID!) { company(filter: {name: {eq: "Fast B"}}) { name domainName { primaryLinkUrl secondaryLinks { url } } } none: company(filter: {id: {eq: $missing}}) { id } }',
        variables: { missing: '00000000-0000-4000-8000-000000000000' },
      },
    ],
    [
      'a named operation among several',
      {
        query: 'query One { companies(first: 1) { totalCount } } query Two { people(first: 1) { totalCount } }',
        operationName: 'Two',
      },
    ],
    ['introspection', { query: '{ __typename __schema { queryType { name } } __type(name: "Company") { fields { name } } }' }],
    [
      'a directive',
      {
        query: 'query($x: Boolean!) { companies { totalCount @include(if: $x) edges { node { name @skip(if: $x) } } } }',
        variables: { x: true },
      },
    ],
    // Planned (query-plan.ts): written straight to JSON text, without graphql-js's executor.
    ["the bench's list", { query: '{ companies(first: 60) { totalCount edges { node { id name } } } }' }],
    [
      'every connection field, aliases, fragments, __typename and merged fields',
      {
        query: `{ __typename a: companies(first: 2, orderBy: [{name: AscNullsFirst}]) { __typename totalCount
                  edges { __typename cursor node { ...C ... on Company { createdAt updatedAt deletedAt } } }
                  edges { node { id } }
                  pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
                b: people { totalCount edges { node { name { firstName lastName } emails { primaryEmail additionalEmails } companyId } } } }
              fragment C on Company { id nm: name domainName { primaryLinkUrl primaryLinkLabel secondaryLinks { url label } } }`,
      },
    ],
    [
      'strings that need escaping, enums, currency amounts and dates',
      {
        query:
          '{ companies(filter: {name: {like: "Fast%"}}, orderBy: [{name: DescNullsLast}]) { edges { node { name } } } opportunities { edges { node { name stage amount { amountMicros currencyCode } closeDate companyId } } } }',
      },
    ],
    [
      'a recursive filter, a cursor and an order in variables, and an empty page',
      {
        query:
          'query($f: CompanyFilterInput, $o: [CompanyOrderByInput!], $after: String) { companies(first: 1, filter: $f, orderBy: $o, after: $after) { totalCount edges { cursor node { name } } pageInfo { hasNextPage endCursor } } }',
        variables: {
          f: { or: [{ name: { eq: 'Fast A' } }, { and: [{ name: { like: 'Fast%' } }, { not: { name: { eq: 'Fast B' } } }] }] },
          o: [{ name: 'AscNullsFirst' }],
        },
      },
    ],
    [
      'nothing matches',
      {
        query:
          '{ companies(filter: {name: {eq: "nobody"}}) { totalCount edges { node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }',
      },
    ],
  ];

  /** Which of QUERIES skip graphql-js's executor: lists and single records of plain fields, no directives, relations or introspection. */
  const PLANNED: Record<string, boolean> = {
    'a list with a filter, an order and variables': true,
    'aliases, fragments, nested relations both ways': false,
    'a single record by filter, and null when there is none': true,
    'a named operation among several': true,
    introspection: false,
    'a directive': false,
    "the bench's list": true,
    'every connection field, aliases, fragments, __typename and merged fields': true,
    'strings that need escaping, enums, currency amounts and dates': true,
    'a recursive filter, a cursor and an order in variables, and an empty page': true,
    'nothing matches': true,
  };

  it('plans exactly the documents it can write without graphql-js', () => {
    const schema = app.get(GraphQLSchemaHost).schema;
    const planned = Object.fromEntries(
      QUERIES.map(([label, body]) => {
        const { query, operationName } = body as { query: string; operationName?: string };
        return [label, planQuery(schema, parse(query), operationName) !== null];
      }),
    );
    expect(planned).toEqual(PLANNED);
  });

  it('gives edges a cursor from their class, not an accessor of their own (V8 kept each page alive in a hidden class)', () => {
    const page = {
      records: [{ id: 'a' }, { id: 'b' }],
      cursorAt: (i: number) => `c${i}`,
      totalCount: 2,
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: 'c0', endCursor: 'c1' },
    };
    const { edges } = toConnection(page);
    expect(edges.map((edge) => edge.cursor)).toEqual(['c0', 'c1']);
    expect(edges.map((edge) => Object.getOwnPropertyDescriptor(edge, 'cursor'))).toEqual([undefined, undefined]);
  });

  it.each(QUERIES)('%s: answered without Apollo, exactly as Apollo answers it', async (_label, body) => {
    const fast = await answer(body);
    // Accept: application/graphql-response+json is Apollo's alone; only the media type differs.
    const apollo = await answer(body, { accept: 'application/graphql-response+json' });
    expect(apollo.byApollo).toBe(true);
    expect(fast).toEqual({ status: 200, type: 'application/json; charset=utf-8', text: apollo.text, byApollo: false });
    expect(JSON.parse(fast.text).errors).toBeUndefined();
  });

  it('leaves mutations, errors, bad input and missing credentials to Apollo, which answers as before', async () => {
    const mutation = await answer({ query: 'mutation { createCompany(data: {name: "Fast D"}) { name } }' });
    expect(mutation).toMatchObject({ status: 200, byApollo: true });
    expect(JSON.parse(mutation.text).data.createCompany.name).toBe('Fast D');

    // A query whose execution fails (a filter value that is not a UUID).
    const failing = await answer({ query: '{ companies(filter: {id: {eq: "not-a-uuid"}}) { totalCount } }' });
    expect(failing.byApollo).toBe(true);
    expect(JSON.parse(failing.text).errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });

    const invalid = await answer({ query: '{ companies { nope } }' });
    expect(invalid).toMatchObject({ status: 400, byApollo: true });
    expect(JSON.parse(invalid.text).errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');

    const badVariables = await answer({ query: 'query($n: Int) { companies(first: $n) { totalCount } }', variables: { n: 'many' } });
    expect(badVariables).toMatchObject({ status: 400, byApollo: true });

    const tooCostly = await answer({
      query: '{ companies(first: 200) { edges { node { people(first: 200) { edges { node { id } } } } } } }',
    });
    expect(tooCostly).toMatchObject({ status: 400, byApollo: true });
    expect(JSON.parse(tooCostly.text).errors[0].message).toMatch(/at most 5000/);

    const unauthenticated = await request(http).post('/graphql').send({ query: '{ companies { totalCount } }' });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers['www-authenticate']).toMatch(/^Bearer /);
  });

  it("answers a repeated query from its kept document, with each request's own variables and workspace", async () => {
    const other = await newWorkspace(ds, 'gql-fast-other');
    const body = { query: 'query($n: Int) { companies(first: $n) { totalCount edges { node { name } } } }' };
    const mine = await answer({ ...body, variables: { n: 1 } });
    const theirs = await answer({ ...body, variables: { n: 5 } }, {}, other.keys.Admin);
    expect([mine.byApollo, theirs.byApollo]).toEqual([false, false]);
    expect(JSON.parse(mine.text).data.companies.edges).toHaveLength(1);
    expect(JSON.parse(theirs.text).data.companies).toEqual({ totalCount: 0, edges: [] });
  });

  it('leaves every request to Apollo with GRAPHQL_FAST_PATH=off, answering the same', async () => {
    const body = { query: '{ companies(orderBy: [{name: AscNullsFirst}]) { totalCount edges { node { name } } } }' };
    const fast = await answer(body);
    expect(fast.byApollo).toBe(false);
    process.env.GRAPHQL_FAST_PATH = 'off';
    let apolloOnly: INestApplication | undefined;
    try {
      ({ app: apolloOnly } = await startApi());
      const before = apolloCalls;
      const res = await request(apolloOnly.getHttpServer()).post('/graphql').set(bearer(ws.keys.Admin)).send(body);
      expect(apolloCalls).toBe(before + 1);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(JSON.parse(fast.text));
    } finally {
      delete process.env.GRAPHQL_FAST_PATH;
      await apolloOnly?.close();
    }
  });

  it("answers a workspace's own schema (custom fields) on the fast path too, and leaves a restricted role's hidden field to Apollo", async () => {
    const custom = await newWorkspace(ds, 'gql-fast-custom');
    const admin = (path: string, body: object) => request(http).post(path).set(bearer(custom.keys.Admin)).send(body);
    expect((await admin('/rest/metadata/fields', { object: 'companies', name: 'tier', type: 'TEXT' })).status).toBe(201);
    expect((await admin('/rest/companies', { name: 'Tiered', tier: 'gold' })).status).toBe(201);
    const query = { query: '{ companies { totalCount edges { node { name tier } } } }' };
    const first = await answer(query, {}, custom.keys.Admin);
    expect(first.byApollo).toBe(false);
    expect(JSON.parse(first.text)).toEqual({ data: { companies: { totalCount: 1, edges: [{ node: { name: 'Tiered', tier: 'gold' } }] } } });
    // Another workspace's kept document for the same text never answers for this schema.
    const base = await answer(query);
    expect(base.status).toBe(400);
    expect(base.byApollo).toBe(true);
    // A role that cannot read `tier`: its FORBIDDEN comes from Apollo, as before.
    const role = await createRole(ds, custom.id, {
      name: 'No tier',
      description: '',
      objectPermissions: { companies: { read: true, create: false, update: false, delete: false } } as never,
      fieldPermissions: { companies: { tier: { read: false, update: false } } },
      settingsPermissions: [],
      assignableToUsers: true,
      assignableToApiKeys: true,
    });
    const restricted = (
      await createApiKey(ds, { workspaceId: custom.id, role, name: 'no tier', expiresAt: new Date(Date.now() + 86_400_000) })
    ).secret;
    const hidden = await answer(query, {}, restricted);
    expect(hidden.byApollo).toBe(true);
    expect(JSON.parse(hidden.text).errors[0].extensions.code).toBe('FORBIDDEN');
    const allowed = await answer({ query: '{ companies { edges { node { name } } } }' }, {}, restricted);
    expect(allowed.byApollo).toBe(false);
    expect(JSON.parse(allowed.text)).toEqual({ data: { companies: { edges: [{ node: { name: 'Tiered' } }] } } });
  });
});
