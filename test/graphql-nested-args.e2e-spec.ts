import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { statementsDuring } from './query-counter.js';

/** Relation lists take the list arguments: `Company.people(first, after, filter, orderBy)`, batched per request. */

type Http = Parameters<typeof request>[0];

describe('GraphQL nested connection arguments', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let ws: TestWorkspace;
  let companies: { id: string; name: string }[];

  const ok = async (query: string, variables?: Record<string, unknown>) => {
    const res = await request(http).post('/graphql').set(bearer(ws.keys.Admin)).send({ query, variables });
    expect({ status: res.status, errors: res.body.errors }).toEqual({ status: 200, errors: undefined });
    return res.body.data;
  };

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
    ws = await newWorkspace(ds, 'nested');
    companies = [];
    for (const name of ['Acme', 'Globex', 'Initech']) {
      companies.push((await ok(`mutation { createCompany(data: {name: "${name}"}) { id name } }`)).createCompany);
    }
    // Acme: 5 people, Globex: 2, Initech: none; created one by one so createdAt orders them.
    for (const [company, last] of [
      [0, 'Kim'],
      [0, 'Lee'],
      [1, 'Moss'],
      [0, 'Kang'],
      [0, 'Lopez'],
      [1, 'Ng'],
      [0, 'Kline'],
    ] as const) {
      await ok(`mutation($c: UUID) { createPerson(data: {name: {lastName: "${last}"}, companyId: $c}) { id } }`, {
        c: companies[company].id,
      });
    }
  });
  afterAll(() => app.close());

  const lastNames = (connection: { edges: { node: { name: { lastName: string } } }[] }) =>
    connection.edges.map((e) => e.node.name.lastName);

  it('people(first: 2) is no longer an unknown argument: a page per company, with its cursors and exact totals', async () => {
    const data = await ok(`{ companies(orderBy: [{name: AscNullsFirst}]) { edges { node { name
      people(first: 2) { totalCount edges { node { name { lastName } } } pageInfo { hasNextPage hasPreviousPage endCursor } } } } } }`);
    const [acme, globex, initech] = data.companies.edges.map((e: { node: unknown }) => e.node);
    expect(lastNames(acme.people)).toEqual(['Kim', 'Lee']);
    expect(acme.people.totalCount).toBe(5);
    expect(acme.people.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(lastNames(globex.people)).toEqual(['Moss', 'Ng']);
    expect(globex.people.pageInfo.hasNextPage).toBe(false);
    expect(initech.people).toEqual({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, endCursor: null } });

    // The nested endCursor continues both nested and at the top level.
    const next = await ok(
      `query($after: String, $id: UUID!) {
      company(filter: {id: {eq: $id}}) { people(first: 2, after: $after) { edges { node { name { lastName } } } pageInfo { hasPreviousPage } } }
      people(first: 2, after: $after, filter: {companyId: {eq: $id}}) { edges { node { name { lastName } } } }
    }`,
      { after: acme.people.pageInfo.endCursor, id: companies[0].id },
    );
    expect(lastNames(next.company.people)).toEqual(['Kang', 'Lopez']);
    expect(next.company.people.pageInfo.hasPreviousPage).toBe(true);
    expect(lastNames(next.people)).toEqual(['Kang', 'Lopez']);
  });

  it('filters and orders inside the relation; without arguments it stays the 60 oldest', async () => {
    const data = await ok(`{ companies(orderBy: [{name: AscNullsFirst}], first: 2) { edges { node {
      filtered: people(filter: {name: {lastName: {startsWith: "K"}}}, orderBy: [{name: {lastName: DescNullsLast}}]) { totalCount edges { node { name { lastName } } } }
      all: people { totalCount edges { node { name { lastName } } } } } } } }`);
    const [acme, globex] = data.companies.edges.map((e: { node: any }) => e.node);
    expect(lastNames(acme.filtered)).toEqual(['Kline', 'Kim', 'Kang']);
    expect(acme.filtered.totalCount).toBe(3);
    expect(globex.filtered).toEqual({ totalCount: 0, edges: [] });
    expect(lastNames(acme.all)).toEqual(['Kim', 'Lee', 'Kang', 'Lopez', 'Kline']);
  });

  it('batches: the nested pages of a whole list are one statement (plus one for the counts)', async () => {
    const statements = await statementsDuring(ds, () =>
      ok('{ companies { edges { node { people(first: 1) { totalCount edges { node { id } } } } } } }'),
    );
    expect(statements.filter((s) => /\bFROM people\b/.test(s))).toHaveLength(2);
  });

  it('refuses bad nested arguments with the top-level messages', async () => {
    const res = await request(http)
      .post('/graphql')
      .set(bearer(ws.keys.Admin))
      .send({ query: '{ companies { edges { node { people(first: 2, filter: {companyId: {eq: "nope"}}) { totalCount } } } } }' });
    expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(res.body.errors[0].message).toMatch(/companyId\[eq\] expects a uuid/);
    const cost = await request(http)
      .post('/graphql')
      .set(bearer(ws.keys.Admin))
      .send({ query: '{ companies(first: 100) { edges { node { people(first: 100) { totalCount } } } } }' });
    expect(cost.status).toBe(400);
    expect(cost.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});
