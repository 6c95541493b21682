import type { INestApplication } from '@nestjs/common';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { statementsDuring } from './query-counter.js';
import { client, type Client, type Http } from './rest-helpers.js';

/**
 * A custom relation on GraphQL and MCP (docs/graphql.md "Relations", docs/mcp.md;
 * docs/decisions/0066-relations.md): the linked record and the inverse connection with list
 * arguments, batched (a bounded number of statements for a page of 60), filters across it;
 * the generic MCP tools describe it, write its id and embed it at depth 1.
 */
describe('relations: GraphQL and MCP', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let ws: TestWorkspace;
  let api: Client;
  let companies: string[];

  const gql = async (query: string, key = ws.keys.Admin, variables?: Record<string, unknown>) => {
    const res = await request(http).post('/graphql').set(bearer(key)).send({ query, variables });
    return res;
  };
  const ok = async (query: string, variables?: Record<string, unknown>) => {
    const res = await gql(query, ws.keys.Admin, variables);
    expect({ status: res.status, errors: res.body.errors }).toEqual({ status: 200, errors: undefined });
    return res.body.data;
  };

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
    ws = await newWorkspace(ds, 'rel-graphql');
    api = client(http, ws.keys.Admin);
    await api.post('/rest/metadata/objects', {
      nameSingular: 'ticket',
      namePlural: 'tickets',
      labelSingular: 'Ticket',
      labelPlural: 'Tickets',
    });
    const made = await api.post('/rest/metadata/fields', {
      object: 'tickets',
      name: 'company',
      type: 'RELATION',
      relation: { type: 'MANY_TO_ONE', targetObject: 'companies', inverseName: 'tickets' },
    });
    expect(made.status).toBe(201);
    companies = [];
    for (let i = 0; i < 60; i++)
      companies.push((await api.post('/rest/companies', { name: `C${String(i).padStart(2, '0')}` })).body.data.createCompany.id);
    // Two tickets for each company, one by one so createdAt orders them.
    for (let round = 0; round < 2; round++) {
      const batch = companies.map((id, i) => ({ name: `T${String(i).padStart(2, '0')}-${round}`, companyId: id }));
      expect((await api.post('/rest/batch/tickets', batch)).status).toBe(201);
    }
  });
  afterAll(() => app.close());

  it('types the linked record and the inverse connection, with list arguments and filters across the relation', async () => {
    const data = await ok(`{
      tickets(first: 3, orderBy: [{name: AscNullsFirst}], filter: {company: {name: {eq: "C01"}}}) {
        totalCount edges { node { name companyId company { name } } } }
      companies(first: 2, orderBy: [{name: AscNullsFirst}], filter: {tickets: {name: {eq: "T01-1"}}}) {
        edges { node { name all: tickets { totalCount edges { node { name } } }
                       one: tickets(first: 1, orderBy: [{name: DescNullsLast}]) { totalCount edges { node { name } } pageInfo { hasNextPage } } } } }
    }`);
    expect(data.tickets.totalCount).toBe(2);
    expect(
      data.tickets.edges.map((e: { node: { name: string; company: { name: string } } }) => [e.node.name, e.node.company.name]),
    ).toEqual([
      ['T01-0', 'C01'],
      ['T01-1', 'C01'],
    ]);
    expect(data.tickets.edges[0].node.companyId).toBe(companies[1]);
    const [c01] = data.companies.edges.map((e: { node: unknown }) => e.node);
    expect(data.companies.edges).toHaveLength(1);
    expect(c01.all.totalCount).toBe(2);
    expect(c01.all.edges.map((e: { node: { name: string } }) => e.node.name).sort()).toEqual(['T01-0', 'T01-1']);
    expect(c01.one).toEqual({ totalCount: 2, edges: [{ node: { name: 'T01-1' } }], pageInfo: { hasNextPage: true } });
  });

  it('batches a page of 60 with both directions in a bounded number of statements', async () => {
    const query = (n: number) => `{
      companies(first: ${n}) { edges { node { name tickets(first: 2) { totalCount edges { node { name company { name } } } } } } }
      tickets(first: ${n}) { edges { node { name company { name tickets(first: 1) { totalCount edges { node { name } } } } } } } }`;
    const onRecords = async (n: number) => {
      const statements = await statementsDuring(ds, async () => {
        const data = await ok(query(n));
        expect(data.companies.edges).toHaveLength(n);
        expect(data.companies.edges[0].node.tickets.totalCount).toBe(2);
        expect(data.tickets.edges[0].node.company.tickets.totalCount).toBe(2);
      });
      return statements.filter((s) => /\b(?:custom_records|companies|record_links)\b/.test(s)).length;
    };
    // Per root list: its page, a page of each nested list for all parents at once with its counts, the linked records at once.
    // (The loaders batch what one tick asks for, so the two linked-company reads may be one or two.)
    expect(await onRecords(60)).toBeLessThanOrEqual(8);
    expect(await onRecords(5)).toBeLessThanOrEqual(8);
  });

  it('the generic MCP tools describe the relation, write its id and embed both ends at depth 1', async () => {
    const mcp = new McpClient({ name: 'relations-test', version: '1.0.0' });
    const server = app.getHttpServer() as import('node:http').Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`);
    await mcp.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: bearer(ws.keys.Admin) } }));
    try {
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
        expect([name, result.isError ?? false]).toEqual([name, false]);
        return result.structuredContent as Record<string, any>;
      };
      const described = (await call('describe_object', { object: 'tickets' })).objects[0];
      expect(JSON.stringify(described)).toContain('companyId');
      expect(described.relations).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'company', type: 'MANY_TO_ONE', targetObject: 'companies', idField: 'companyId' }),
        ]),
      );
      const target = (await call('describe_object', { object: 'companies' })).objects[0];
      expect(target.relations).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'tickets', type: 'ONE_TO_MANY', targetObject: 'tickets' })]),
      );
      const made = await call('create_record', { object: 'tickets', data: { name: 'From an agent', companyId: companies[5] } });
      const got = await call('get_record', { object: 'tickets', id: made.record.id, depth: 1 });
      expect(got.record.company.name).toBe('C05');
      const company = await call('get_record', { object: 'companies', id: companies[5], depth: 1 });
      expect(company.record.tickets.map((t: { name: string }) => t.name).sort()).toEqual(['From an agent', 'T05-0', 'T05-1']);
      const foreign = (await mcp.callTool({
        name: 'create_record',
        arguments: { object: 'tickets', data: { name: 'x', companyId: ws.id } },
      })) as CallToolResult;
      expect(foreign.isError).toBe(true);
      expect(JSON.stringify(foreign.content)).toMatch(/companyId: no company with id/);
    } finally {
      await mcp.close();
    }
  });
});
