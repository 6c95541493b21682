import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import type { Response } from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';

/** GraphQL transport (docs/graphql.md) over real HTTP and a real Postgres. */

type Http = Parameters<typeof request>[0];
type Vars = Record<string, unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const COMPANY = `id name domainName { primaryLinkUrl primaryLinkLabel secondaryLinks { url label } } createdAt updatedAt deletedAt`;
const PERSON = `id name { firstName lastName } emails { primaryEmail additionalEmails } companyId createdAt updatedAt deletedAt`;

describe('GraphQL API', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  const post = (secret: string | undefined, query: string, variables?: Vars) =>
    request(http)
      .post('/graphql')
      .set(secret ? bearer(secret) : {})
      .send({ query, variables });

  /** A successful operation: HTTP 200, no errors; returns `data`. */
  async function ok(secret: string, query: string, variables?: Vars) {
    const res = await post(secret, query, variables);
    expect({ status: res.status, errors: res.body.errors }).toEqual({ status: 200, errors: undefined });
    return res.body.data;
  }

  /** An operation refused with one error of this code; returns that error. */
  function expectError(res: Response, code: string, status = 200) {
    expect({ status: res.status, code: res.body.errors?.[0]?.extensions?.code }).toEqual({ status, code });
    expect(res.body.errors).toHaveLength(1);
    const [error] = res.body.errors;
    expect(error.extensions.requestId).toBe(res.headers['x-request-id']);
    expect(JSON.stringify(res.body)).not.toMatch(/stacktrace|\bat .*\.(js|ts):\d+/);
    return error as { message: string; extensions: Record<string, unknown>; path?: string[] };
  }

  async function seedCompanies(ws: TestWorkspace, names: string[]): Promise<{ id: string; name: string }[]> {
    const data = await ok(ws.keys.Admin, `mutation($data: [CompanyCreateInput!]!) { createCompanies(data: $data) { id name } }`, {
      data: names.map((name) => ({ name })),
    });
    return data.createCompanies;
  }

  /** Counts the SQL statements the services send while `fn` runs. */
  /** Every statement the app sends, through TypeORM or straight to its pg pool. Returns the undo. */
  function interceptQueries(hook: (sql: string, run: () => Promise<unknown>) => Promise<unknown>): () => void {
    const pool = (ds.driver as unknown as { master: { query: (...args: unknown[]) => Promise<unknown> } }).master;
    const originalPool = pool.query;
    const originalDs = ds.query;
    pool.query = (sql: unknown, ...rest: unknown[]) =>
      hook(typeof sql === 'string' ? sql : (sql as { text: string }).text, () => originalPool.call(pool, sql, ...rest));
    ds.query = ((sql: string, ...rest: unknown[]) =>
      hook(sql, () => (originalDs as (...a: unknown[]) => Promise<unknown>).call(ds, sql, ...rest))) as typeof ds.query;
    return () => {
      pool.query = originalPool;
      ds.query = originalDs;
    };
  }

  async function countingQueries<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
    const statements: string[] = [];
    const restore = interceptQueries((sql, run) => {
      statements.push(sql);
      return run();
    });
    try {
      return { result: await fn(), statements };
    } finally {
      restore();
    }
  }

  describe('authentication (before any execution)', () => {
    it('no credentials: HTTP 401, UNAUTHENTICATED and WWW-Authenticate naming the root resource metadata', async () => {
      const res = await post(undefined, '{ companies { totalCount } }');
      const error = expectError(res, 'UNAUTHENTICATED', 401);
      expect(res.body.data).toBeUndefined();
      expect(error.message).toMatch(/Authorization: Bearer/);
      expect(res.headers['www-authenticate']).toMatch(
        /^Bearer realm="[^"]+", resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource"$/,
      );
    });

    it('x-api-key alone is not read: 401', async () => {
      const ws = await newWorkspace(ds, 'gql-xkey');
      const res = await request(http).post('/graphql').set('x-api-key', ws.keys.Admin).send({ query: '{ companies { totalCount } }' });
      expectError(res, 'UNAUTHENTICATED', 401);
      expect(res.headers['www-authenticate']).toMatch(/resource_metadata=/);
    });

    it('an unknown bearer token: 401 with error="invalid_token"', async () => {
      const res = await post('wrs_not_a_real_key', '{ companies { totalCount } }');
      expectError(res, 'UNAUTHENTICATED', 401);
      expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    });

    it('an unauthenticated request is refused even when the operation is invalid (nothing is validated first)', async () => {
      const res = await post(undefined, '{ nope }');
      expectError(res, 'UNAUTHENTICATED', 401);
    });
  });

  describe('companies', () => {
    it('createCompany, company(filter), updateCompany (partial), deleteCompany (soft)', async () => {
      const ws = await newWorkspace(ds, 'gql-co');
      const created = (
        await ok(ws.keys.Admin, `mutation($data: CompanyCreateInput!) { createCompany(data: $data) { ${COMPANY} } }`, {
          data: { name: 'Acme', domainName: { primaryLinkUrl: 'acme.com', secondaryLinks: [{ url: 'https://acme.org' }] } },
        })
      ).createCompany;
      expect(created).toEqual({
        id: expect.stringMatching(UUID),
        name: 'Acme',
        domainName: { primaryLinkUrl: 'acme.com', primaryLinkLabel: null, secondaryLinks: [{ url: 'https://acme.org', label: null }] },
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
        deletedAt: null,
      });

      const read = await ok(ws.keys.Viewer, `query($id: UUID!) { company(filter: {id: {eq: $id}}) { ${COMPANY} } }`, { id: created.id });
      expect(read.company).toEqual(created);

      const updated = (
        await ok(
          ws.keys.Admin,
          `mutation($id: UUID!) { updateCompany(id: $id, data: {domainName: {primaryLinkLabel: "Site"}}) { ${COMPANY} } }`,
          {
            id: created.id,
          },
        )
      ).updateCompany;
      expect(updated).toMatchObject({ name: 'Acme', domainName: { primaryLinkUrl: 'acme.com', primaryLinkLabel: 'Site' } });

      const deleted = (await ok(ws.keys.Admin, `mutation($id: UUID!) { deleteCompany(id: $id) { id name deletedAt } }`, { id: created.id }))
        .deleteCompany;
      expect(deleted).toEqual({ id: created.id, name: 'Acme', deletedAt: expect.stringMatching(ISO) });

      const after = await ok(ws.keys.Admin, `query($id: UUID!) { company(filter: {id: {eq: $id}}) { id } companies { totalCount } }`, {
        id: created.id,
      });
      expect(after).toEqual({ company: null, companies: { totalCount: 0 } });
      const trash = await ok(ws.keys.Admin, `{ companies(filter: {deletedAt: {is: NOT_NULL}}) { totalCount edges { node { id } } } }`);
      expect(trash.companies).toEqual({ totalCount: 1, edges: [{ node: { id: created.id } }] });
    });

    it('deleteCompany selecting only id', async () => {
      const ws = await newWorkspace(ds, 'gql-del');
      const [acme] = await seedCompanies(ws, ['Acme']);
      const data = await ok(ws.keys.Admin, `mutation($id: UUID!) { deleteCompany(id: $id) { id } }`, { id: acme.id });
      expect(data).toEqual({ deleteCompany: { id: acme.id } });
    });

    it('createCompanies is all or none, and names the failing item', async () => {
      const ws = await newWorkspace(ds, 'gql-batch');
      const created = await seedCompanies(ws, ['A', 'B', 'C']);
      expect(created.map((c) => c.name)).toEqual(['A', 'B', 'C']);
      const res = await post(
        ws.keys.Admin,
        `mutation { createCompanies(data: [{name: "D"}, {name: "E", domainName: {primaryLinkUrl: "not a url"}}]) { id } }`,
      );
      const error = expectError(res, 'BAD_USER_INPUT');
      expect(error.message).toMatch(/^data\[1\]\.domainName\.primaryLinkUrl/);
      expect(error.extensions.subCode).toBe('VALIDATION_FAILED');
      expect((await ok(ws.keys.Admin, '{ companies { totalCount } }')).companies.totalCount).toBe(3);
    });
  });

  describe('people', () => {
    it('createPerson, person(filter), updatePerson, deletePerson, createPeople and Person.company', async () => {
      const ws = await newWorkspace(ds, 'gql-pe');
      const [acme] = await seedCompanies(ws, ['Acme']);
      const created = (
        await ok(ws.keys.Admin, `mutation($data: PersonCreateInput!) { createPerson(data: $data) { ${PERSON} company { id name } } }`, {
          data: {
            name: { firstName: 'Ada', lastName: 'Lovelace' },
            emails: { primaryEmail: 'ada@acme.com', additionalEmails: ['ada@home.org'] },
            companyId: acme.id,
          },
        })
      ).createPerson;
      expect(created).toEqual({
        id: expect.stringMatching(UUID),
        name: { firstName: 'Ada', lastName: 'Lovelace' },
        emails: { primaryEmail: 'ada@acme.com', additionalEmails: ['ada@home.org'] },
        companyId: acme.id,
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
        deletedAt: null,
        company: { id: acme.id, name: 'Acme' },
      });

      const found = await ok(
        ws.keys.Viewer,
        `{ person(filter: {emails: {primaryEmail: {eq: "ada@acme.com"}}}) { id name { firstName } } }`,
      );
      expect(found.person).toEqual({ id: created.id, name: { firstName: 'Ada' } });

      const updated = (
        await ok(
          ws.keys.Admin,
          `mutation($id: UUID!) { updatePerson(id: $id, data: {name: {lastName: "King"}, companyId: null}) { name { firstName lastName } companyId company { id } } }`,
          {
            id: created.id,
          },
        )
      ).updatePerson;
      expect(updated).toEqual({ name: { firstName: 'Ada', lastName: 'King' }, companyId: null, company: null });

      const batch = (
        await ok(ws.keys.Admin, `mutation($data: [PersonCreateInput!]!) { createPeople(data: $data) { name { firstName } companyId } }`, {
          data: [{ name: { firstName: 'Bo' }, companyId: acme.id }, { name: { firstName: 'Cy' } }],
        })
      ).createPeople;
      expect(batch).toEqual([
        { name: { firstName: 'Bo' }, companyId: acme.id },
        { name: { firstName: 'Cy' }, companyId: null },
      ]);

      const deleted = (await ok(ws.keys.Admin, `mutation($id: UUID!) { deletePerson(id: $id) { id deletedAt } }`, { id: created.id }))
        .deletePerson;
      expect(deleted).toEqual({ id: created.id, deletedAt: expect.stringMatching(ISO) });
      const list = await ok(
        ws.keys.Admin,
        `{ people(orderBy: [{name: {firstName: AscNullsFirst}}]) { totalCount edges { node { name { firstName } } } } }`,
      );
      expect(list.people).toEqual({
        totalCount: 2,
        edges: [{ node: { name: { firstName: 'Bo' } } }, { node: { name: { firstName: 'Cy' } } }],
      });
    });

    it('invalid e-mail: BAD_USER_INPUT naming the field', async () => {
      const ws = await newWorkspace(ds, 'gql-email');
      const res = await post(ws.keys.Admin, `mutation { createPerson(data: {emails: {primaryEmail: "not-an-email"}}) { id } }`);
      const error = expectError(res, 'BAD_USER_INPUT');
      expect(error.message).toMatch(/^emails\.primaryEmail must be an email/);
      expect(error.path).toEqual(['createPerson']);
      expect(res.body.data).toBeNull();
    });
  });

  describe('filter, orderBy and totalCount', () => {
    let ws: TestWorkspace;
    beforeAll(async () => {
      ws = await newWorkspace(ds, 'gql-filter');
      await ok(ws.keys.Admin, `mutation($data: [CompanyCreateInput!]!) { createCompanies(data: $data) { id } }`, {
        data: [
          { name: 'Acme', domainName: { primaryLinkUrl: 'acme.com' } },
          { name: 'Acorn', domainName: { primaryLinkUrl: 'acorn.io' } },
          { name: 'Beta', domainName: { primaryLinkUrl: 'beta.dev' } },
          { name: 'Gamma' },
          { name: 'Delta', domainName: { primaryLinkUrl: 'delta.org' } },
        ],
      });
    });

    const names = async (filter: string, orderBy = '[{name: AscNullsFirst}]') => {
      const data = await ok(ws.keys.Viewer, `{ companies(filter: ${filter}, orderBy: ${orderBy}) { totalCount edges { node { name } } } }`);
      const list = data.companies.edges.map((e: { node: { name: string } }) => e.node.name);
      expect(data.companies.totalCount).toBe(list.length);
      return list;
    };

    it('per-field operators, composites, and/or/not', async () => {
      expect(await names('{name: {ilike: "%ac%"}}')).toEqual(['Acme', 'Acorn']);
      expect(await names('{domainName: {primaryLinkUrl: {eq: "beta.dev"}}}')).toEqual(['Beta']);
      expect(await names('{domainName: {primaryLinkUrl: {is: NULL}}}')).toEqual(['Gamma']);
      expect(await names('{or: [{name: {startsWith: "B"}}, {domainName: {primaryLinkUrl: {endsWith: ".org"}}}]}')).toEqual([
        'Beta',
        'Delta',
      ]);
      expect(await names('{and: [{name: {startsWith: "A"}}, {not: {name: {eq: "Acme"}}}]}')).toEqual(['Acorn']);
      expect(await names('{not: {or: [{name: {in: ["Acme", "Beta"]}}, {domainName: {primaryLinkUrl: {is: NULL}}}]}}')).toEqual([
        'Acorn',
        'Delta',
      ]);
      expect(await names('{name: {gte: "B", lt: "D"}}')).toEqual(['Beta']);
    });

    it('orderBy, with composites', async () => {
      expect(await names('{}', '[{name: DescNullsLast}]')).toEqual(['Gamma', 'Delta', 'Beta', 'Acorn', 'Acme']);
      expect(await names('{}', '[{domainName: {primaryLinkUrl: AscNullsFirst}}]')).toEqual(['Gamma', 'Acme', 'Acorn', 'Beta', 'Delta']);
      expect(await names('{}', '{domainName: {primaryLinkUrl: DescNullsLast}}')).toEqual(['Delta', 'Beta', 'Acorn', 'Acme', 'Gamma']);
    });

    it('totalCount honours the filter and does not depend on the page size', async () => {
      const data = await ok(
        ws.keys.Viewer,
        `{ companies(first: 1, filter: {name: {startsWith: "A"}}, orderBy: [{name: AscNullsFirst}]) { totalCount edges { node { name } } pageInfo { hasNextPage } } }`,
      );
      expect(data.companies).toEqual({ totalCount: 2, edges: [{ node: { name: 'Acme' } }], pageInfo: { hasNextPage: true } });
    });

    it('counts only when totalCount is selected', async () => {
      const query = (fields: string) => `{ companies(filter: {name: {startsWith: "D"}}) { ${fields} } }`;
      const without = await countingQueries(() => ok(ws.keys.Viewer, query('edges { node { name } }')));
      expect(without.statements.filter((sql) => /count\(\*\)/i.test(sql))).toEqual([]);
      const counted = await countingQueries(() => ok(ws.keys.Viewer, query('totalCount ... on CompanyConnection { edges { cursor } }')));
      expect(counted.result.companies.totalCount).toBe(1);
      expect(counted.statements.filter((sql) => /count\(\*\)/i.test(sql))).toHaveLength(1);
    });

    it('bad filter value (non-uuid id): BAD_USER_INPUT with the shared message', async () => {
      const res = await post(ws.keys.Viewer, `{ companies(filter: {id: {eq: "nope"}}) { totalCount } }`);
      const error = expectError(res, 'BAD_USER_INPUT');
      expect(error.message).toBe('filter: id[eq] expects a uuid; got "nope"');
      expect(error.extensions.subCode).toBe('INVALID_FILTER');
      const date = expectError(
        await post(ws.keys.Viewer, `{ companies(filter: {createdAt: {gt: "yesterday"}}) { totalCount } }`),
        'BAD_USER_INPUT',
      );
      expect(date.message).toMatch(/^filter: createdAt\[gt\] expects an ISO 8601 date/);
      const nul = expectError(await post(ws.keys.Viewer, `{ companies(filter: {name: {eq: null}}) { totalCount } }`), 'BAD_USER_INPUT');
      expect(nul.message).toMatch(/use \{is: NULL\}/);
    });

    it('orderBy with two fields in one item: BAD_USER_INPUT', async () => {
      const res = await post(ws.keys.Viewer, `{ companies(orderBy: [{name: AscNullsFirst, createdAt: AscNullsFirst}]) { totalCount } }`);
      expect(expectError(res, 'BAD_USER_INPUT').message).toMatch(/^orderBy: item 0 must name exactly one field/);
    });
  });

  describe('pagination', () => {
    let ws: TestWorkspace;
    let all: string[];
    const page = `totalCount edges { cursor node { name } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`;

    beforeAll(async () => {
      ws = await newWorkspace(ds, 'gql-page');
      all = Array.from({ length: 25 }, (_, i) => `Company ${String(i).padStart(2, '0')}`);
      // Shuffled, so the order under test is the name order and not the insertion order.
      await seedCompanies(
        ws,
        [...all].sort(() => Math.random() - 0.5),
      );
    });

    const read = async (args: string) =>
      (await ok(ws.keys.Viewer, `{ companies(orderBy: [{name: AscNullsFirst}], ${args}) { ${page} } }`)).companies;

    it('forward with first/after: no duplicates, no gaps', async () => {
      const seen: string[] = [];
      let after: string | null = null;
      const flags: [boolean, boolean][] = [];
      for (let i = 0; i < 5; i++) {
        const conn = await read(after ? `first: 10, after: "${after}"` : 'first: 10');
        expect(conn.totalCount).toBe(25);
        seen.push(...conn.edges.map((e: { node: { name: string } }) => e.node.name));
        flags.push([conn.pageInfo.hasPreviousPage, conn.pageInfo.hasNextPage]);
        expect(conn.pageInfo.endCursor).toBe(conn.edges.at(-1).cursor);
        if (!conn.pageInfo.hasNextPage) break;
        after = conn.pageInfo.endCursor;
      }
      expect(seen).toEqual(all);
      expect(flags).toEqual([
        [false, true],
        [true, true],
        [true, false],
      ]);
    });

    it('backward with last/before, from a cursor at the end', async () => {
      const tail = await read('first: 200');
      expect(tail.edges).toHaveLength(25);
      const seen: string[] = [tail.edges[24].node.name];
      let before: string = tail.edges[24].cursor;
      for (let i = 0; i < 5; i++) {
        const conn = await read(`last: 10, before: "${before}"`);
        seen.unshift(...conn.edges.map((e: { node: { name: string } }) => e.node.name));
        expect(conn.pageInfo.hasNextPage).toBe(true);
        if (!conn.pageInfo.hasPreviousPage) break;
        before = conn.pageInfo.startCursor;
      }
      expect(seen).toEqual(all);
    });

    it('page-size rules: default 60, negative and last without before refused, cursor of another order refused', async () => {
      expect((await read('')).edges).toHaveLength(25);
      expect(expectError(await post(ws.keys.Viewer, `{ companies(first: -1) { totalCount } }`), 'BAD_USER_INPUT').message).toMatch(
        /^first must be a non-negative integer/,
      );
      expect(expectError(await post(ws.keys.Viewer, `{ companies(last: 5) { totalCount } }`), 'BAD_USER_INPUT').message).toMatch(
        /^last reads backward from before/,
      );
      const { endCursor } = (await read('first: 2')).pageInfo;
      const res = await post(ws.keys.Viewer, `{ companies(after: "${endCursor}", orderBy: [{createdAt: DescNullsLast}]) { totalCount } }`);
      expect(expectError(res, 'BAD_USER_INPUT').message).toMatch(/^after must be a cursor from pageInfo/);
    });
  });

  describe('relations without N+1', () => {
    it('Company.people and Person.company resolve in one batched query each', async () => {
      const ws = await newWorkspace(ds, 'gql-rel');
      const companies = await seedCompanies(
        ws,
        Array.from({ length: 20 }, (_, i) => `Rel ${String(i).padStart(2, '0')}`),
      );
      await ok(ws.keys.Admin, `mutation($data: [PersonCreateInput!]!) { createPeople(data: $data) { id } }`, {
        data: companies.flatMap((c, i) => [
          { name: { firstName: `P${i}a` }, companyId: c.id },
          { name: { firstName: `P${i}b` }, companyId: c.id },
        ]),
      });

      const { result, statements } = await countingQueries(() =>
        ok(
          ws.keys.Viewer,
          `{ companies(first: 20, orderBy: [{name: AscNullsFirst}]) {
               edges { node { name people { totalCount edges { cursor node { name { firstName } company { name } } } pageInfo { hasNextPage endCursor } } } }
             } }`,
        ),
      );
      const edges = result.companies.edges;
      expect(edges).toHaveLength(20);
      edges.forEach(
        (
          edge: {
            node: {
              name: string;
              people: { totalCount: number; edges: { node: { name: { firstName: string }; company: { name: string } } }[] };
            };
          },
          i: number,
        ) => {
          expect(edge.node.people.totalCount).toBe(2);
          // Created in one statement, so in the same instant: id breaks the tie.
          expect(edge.node.people.edges.map((e) => e.node.name.firstName).sort()).toEqual([`P${i}a`, `P${i}b`]);
          expect(edge.node.people.edges.map((e) => e.node.company.name)).toEqual([edge.node.name, edge.node.name]);
        },
      );
      const touching = (table: string) => statements.filter((sql) => new RegExp(`\\bFROM ${table}\\b`).test(sql));
      // One list query, one query for the 40 people of 20 companies, one for their companies.
      expect(touching('people')).toHaveLength(1);
      expect(touching('companies')).toHaveLength(2);
      expect(statements.length).toBeLessThanOrEqual(5); // + authentication (+ last_used_at at most once a minute)

      // Company.people cursors continue on the top-level list of that company's people.
      const first = edges[0].node;
      const more = await ok(
        ws.keys.Viewer,
        `query($id: UUID!, $after: String) { people(filter: {companyId: {eq: $id}}, after: $after) { edges { node { name { firstName } } } } }`,
        {
          id: companies.find((c) => c.name === first.name)!.id,
          after: first.people.edges[0].cursor,
        },
      );
      expect(more.people.edges).toEqual([{ node: { name: first.people.edges[1].node.name } }]);
    });
  });

  describe('reading only the selected columns', () => {
    it('a list reads the columns of the selected fields (aliases and fragments too) and still pages and links', async () => {
      const ws = await newWorkspace(ds, 'gql-columns');
      const [acme] = await seedCompanies(ws, ['Acme']);
      await ok(ws.keys.Admin, `mutation($data: [PersonCreateInput!]!) { createPeople(data: $data) { id } }`, {
        data: ['Ada', 'Bo', 'Cy'].map((firstName) => ({
          name: { firstName, lastName: 'Projection' },
          emails: { primaryEmail: `${firstName.toLowerCase()}@example.com` },
          companyId: acme.id,
        })),
      });
      const read = (query: string) => countingQueries(() => ok(ws.keys.Viewer, query));
      const select = (statements: string[]) => statements.find((sql) => /\bFROM people\b/.test(sql))!;

      // Only the id: the row has no name, e-mail or company columns.
      const onlyIds = await read(
        `{ people(first: 2, orderBy: [{name: {firstName: AscNullsFirst}}]) { edges { cursor node { id } } pageInfo { endCursor } } }`,
      );
      expect(select(onlyIds.statements)).not.toMatch(/primary_email|company_id/);
      // The order's columns are read for the cursors, which continue where the page ended.
      const next = await ok(
        ws.keys.Viewer,
        `query($after: String) { people(first: 2, after: $after, orderBy: [{name: {firstName: AscNullsFirst}}]) { edges { node { name { firstName } } } } }`,
        {
          after: onlyIds.result.people.pageInfo.endCursor,
        },
      );
      expect(next.people.edges).toEqual([{ node: { name: { firstName: 'Cy' } } }]);

      // A fragment, an alias, a composite and a relation (whose column is read for it).
      const full =
        await read(`{ people(first: 1, orderBy: [{name: {firstName: AscNullsFirst}}]) { edges { node { ...P mail: emails { primaryEmail } } } } }
        fragment P on Person { name { firstName } employer: company { name } }`);
      expect(full.result.people.edges).toEqual([
        { node: { name: { firstName: 'Ada' }, mail: { primaryEmail: 'ada@example.com' }, employer: { name: 'Acme' } } },
      ]);
      expect(select(full.statements)).toMatch(/primary_email/);
      expect(select(full.statements)).toMatch(/company_id/);
    });
  });

  describe('errors and tenancy', () => {
    it('Viewer createCompany: FORBIDDEN, nothing written', async () => {
      const ws = await newWorkspace(ds, 'gql-viewer');
      const res = await post(ws.keys.Viewer, `mutation { createCompany(data: {name: "Nope"}) { id } }`);
      const error = expectError(res, 'FORBIDDEN');
      expect(error.message).toBe('The role "Viewer" does not allow create on companies');
      expect((await ok(ws.keys.Admin, '{ companies { totalCount } }')).companies.totalCount).toBe(0);
    });

    it('unknown id on update: NOT_FOUND; malformed id: BAD_USER_INPUT', async () => {
      const ws = await newWorkspace(ds, 'gql-404');
      const missing = expectError(
        await post(ws.keys.Admin, `mutation { updateCompany(id: "${randomUUID()}", data: {name: "X"}) { id } }`),
        'NOT_FOUND',
      );
      expect(missing.message).toMatch(/^No company with id /);
      expectError(await post(ws.keys.Admin, `mutation { deletePerson(id: "${randomUUID()}") { id } }`), 'NOT_FOUND');
      const bad = expectError(await post(ws.keys.Admin, `mutation { updateCompany(id: "x", data: {name: "X"}) { id } }`), 'BAD_USER_INPUT');
      expect(bad.message).toBe('id must be a UUID; got "x"');
    });

    it("another workspace's company: NOT_FOUND on update, null on company(filter), refused as a person's company", async () => {
      const mine = await newWorkspace(ds, 'gql-ten-a');
      const theirs = await newWorkspace(ds, 'gql-ten-b');
      const [foreign] = await seedCompanies(theirs, ['Theirs']);
      expectError(
        await post(mine.keys.Admin, `mutation($id: UUID!) { updateCompany(id: $id, data: {name: "Mine"}) { id } }`, { id: foreign.id }),
        'NOT_FOUND',
      );
      expectError(await post(mine.keys.Admin, `mutation($id: UUID!) { deleteCompany(id: $id) { id } }`, { id: foreign.id }), 'NOT_FOUND');
      expect(await ok(mine.keys.Admin, `query($id: UUID!) { company(filter: {id: {eq: $id}}) { id } }`, { id: foreign.id })).toEqual({
        company: null,
      });
      const link = await post(mine.keys.Admin, `mutation($id: UUID!) { createPerson(data: {companyId: $id}) { id } }`, { id: foreign.id });
      expect(expectError(link, 'BAD_USER_INPUT').message).toMatch(/^companyId: no company with id/);
      expect(
        (await ok(theirs.keys.Viewer, `query($id: UUID!) { company(filter: {id: {eq: $id}}) { name } }`, { id: foreign.id })).company,
      ).toEqual({ name: 'Theirs' });
    });

    it('a taken id: CONFLICT', async () => {
      const ws = await newWorkspace(ds, 'gql-409');
      const [acme] = await seedCompanies(ws, ['Acme']);
      const res = await post(ws.keys.Admin, `mutation($id: UUID!) { createCompany(data: {id: $id, name: "Again"}) { id } }`, {
        id: acme.id,
      });
      expectError(res, 'CONFLICT');
    });

    it('an unexpected failure: INTERNAL_SERVER_ERROR without internals', async () => {
      const ws = await newWorkspace(ds, 'gql-500');
      const restore = interceptQueries((sql, run) =>
        /FROM companies/.test(sql) ? Promise.reject(new Error('relation "companies" is on fire')) : run(),
      );
      try {
        const res = await post(ws.keys.Viewer, '{ companies { totalCount } }');
        const error = expectError(res, 'INTERNAL_SERVER_ERROR');
        expect(error).toEqual({
          message: 'Internal server error',
          locations: expect.any(Array),
          path: ['companies'],
          extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: expect.any(String) },
        });
        expect(JSON.stringify(res.body)).not.toMatch(/fire/);
      } finally {
        restore();
      }
    });

    it('unknown field: GRAPHQL_VALIDATION_FAILED (HTTP 400)', async () => {
      const ws = await newWorkspace(ds, 'gql-400');
      const error = expectError(await post(ws.keys.Viewer, '{ companies { edges { node { nope } } } }'), 'GRAPHQL_VALIDATION_FAILED', 400);
      expect(error.message).toMatch(/Cannot query field "nope" on type "Company"/);
      expectError(
        await post(ws.keys.Admin, 'mutation { createCompany(data: {name: "A", color: "red"}) { id } }'),
        'GRAPHQL_VALIDATION_FAILED',
        400,
      );
    });

    it('bad variables: BAD_USER_INPUT (HTTP 400)', async () => {
      const ws = await newWorkspace(ds, 'gql-vars');
      const res = await post(ws.keys.Viewer, 'query($n: Int) { companies(first: $n) { totalCount } }', { n: 'ten' });
      expectError(res, 'BAD_USER_INPUT', 400);
    });
  });

  describe('bounds', () => {
    it('refuses a query nested deeper than 8 levels', async () => {
      const ws = await newWorkspace(ds, 'gql-deep');
      const query = '{ companies { edges { node { people { edges { node { company { people { totalCount } } } } } } } } }';
      const error = expectError(await post(ws.keys.Viewer, query), 'GRAPHQL_VALIDATION_FAILED', 400);
      expect(error.message).toMatch(/^The operation is 9 fields deep; at most 8 levels are allowed/);
      // Fragments count too.
      const viaFragment = `{ companies { edges { node { ...deep } } } }
        fragment deep on Company { people { edges { node { company { people { totalCount } } } } } }`;
      expectError(await post(ws.keys.Viewer, viaFragment), 'GRAPHQL_VALIDATION_FAILED', 400);
      // 8 levels pass, and introspection is not counted.
      await ok(ws.keys.Viewer, '{ companies(first: 10) { edges { node { people { edges { node { company { name } } } } } } } }');
      await ok(ws.keys.Viewer, '{ __schema { types { fields { type { ofType { ofType { ofType { name } } } } } } } }');
    });

    it('refuses an operation that may return too many records (cost by page size)', async () => {
      const ws = await newWorkspace(ds, 'gql-cost');
      const query = 'query($n: Int) { companies(first: $n) { edges { node { people { edges { node { id } } } } } } }';
      await ok(ws.keys.Viewer, query, { n: 60 });
      const error = expectError(await post(ws.keys.Viewer, query, { n: 200 }), 'GRAPHQL_VALIDATION_FAILED', 400);
      expect(error.message).toMatch(/^The operation may return 12200 records; at most 5000 are allowed/);
    });
  });

  it('writes the generated schema with the documented type names', () => {
    const schema = readFileSync('apps/records-api/schema.gql', 'utf8');
    for (const name of [
      'type Company ',
      'type CompanyConnection ',
      'type CompanyEdge ',
      'input CompanyCreateInput ',
      'input CompanyUpdateInput ',
      'input CompanyFilterInput ',
      'input CompanyOrderByInput ',
      'type Person ',
      'type PersonConnection ',
      'type PersonEdge ',
      'input PersonCreateInput ',
      'input PersonUpdateInput ',
      'input PersonFilterInput ',
      'input PersonOrderByInput ',
      'enum OrderByDirection ',
    ]) {
      expect(schema).toContain(name);
    }
  });
});
