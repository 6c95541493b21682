import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { createApiKey, findRole } from '#identity/accounts.js';
import { createWebhook } from '#webhooks/webhooks.js';
import { startApi } from './factories.js';
import { startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';
import { Receiver, TEST_WORKER_ENV, sleep } from './webhook-receiver.js';

/**
 * One custom field added through the metadata API is usable at once on every surface
 * (docs/data-model.md): REST (create, filter, order, batch), GraphQL (typed, in
 * introspection), the OpenAPI document of the credential, MCP tools and webhook payloads —
 * in that workspace only. Then: a change made through one instance applies to the next
 * request on another, with no restart.
 */
describe('custom fields on every surface', () => {
  let origin: PublicOrigin;
  let url: string;

  beforeAll(async () => {
    origin = await startPublicOrigin(TEST_WORKER_ENV);
    url = origin.url;
  });
  afterAll(() => origin?.close());

  async function adminKey(ds: DataSource, workspaceId: string): Promise<string> {
    const role = await findRole(ds, workspaceId, 'Admin');
    return (await createApiKey(ds, { workspaceId, role, name: 'k', expiresAt: new Date(Date.now() + 86_400_000) })).secret;
  }
  const call = async (base: string, key: string | undefined, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const mcp = (key: string, method: string, params: Record<string, unknown>) =>
    call(url, key, 'POST', '/mcp', { jsonrpc: '2.0', id: 1, method, params }).then((r) => r.body);

  it('REST, GraphQL, OpenAPI, MCP and webhooks carry a field added through the API, for its workspace only', async () => {
    const ws = (await workspaceWith(origin.ds, [], 'cf-all')).workspace;
    const other = (await workspaceWith(origin.ds, [], 'cf-none')).workspace;
    const key = await adminKey(origin.ds, ws.id);
    const otherKey = await adminKey(origin.ds, other.id);
    const receiver = await new Receiver().start();
    try {
      const hook = await createWebhook(origin.ds, ws.id, { url: receiver.url, operations: ['company.*'] }, { allowPrivate: true });
      const field = await call(url, key, 'POST', '/rest/metadata/fields', {
        object: 'companies',
        name: 'tier',
        label: 'Tier',
        type: 'SELECT',
        options: [{ value: 'GOLD' }, { value: 'SILVER' }],
      });
      expect(field.status).toBe(201);
      const score = await call(url, key, 'POST', '/rest/metadata/fields', { object: 'companies', name: 'score', type: 'NUMBER' });
      expect(score.status).toBe(201);

      // REST: create, batch, filter, order.
      const rest = await call(url, key, 'POST', '/rest/companies', { name: 'Acme', tier: 'GOLD', score: 2 });
      expect(rest.status).toBe(201);
      expect(rest.body.data.createCompany).toMatchObject({ tier: 'GOLD', score: 2 });
      const batch = await call(url, key, 'POST', '/rest/batch/companies', [
        { name: 'Beta', tier: 'GOLD', score: 5 },
        { name: 'Gamma', tier: 'SILVER', score: 9 },
      ]);
      expect(batch.status).toBe(201);
      const listed = await call(
        url,
        key,
        'GET',
        `/rest/companies?filter=${encodeURIComponent('tier[eq]:"GOLD"')}&order_by=${encodeURIComponent('score[DescNullsLast]')}`,
      );
      expect(listed.body.data.companies.map((c: { name: string }) => c.name)).toEqual(['Beta', 'Acme']);

      // GraphQL: typed, in introspection, in filters.
      const gql = await call(url, key, 'POST', '/graphql', {
        query:
          '{ __type(name: "Company") { fields { name type { name } } } companies(filter: {tier: {eq: SILVER}}) { edges { node { name tier score } } } }',
      });
      expect(gql.status).toBe(200);
      expect(gql.body.data.__type.fields).toEqual(
        expect.arrayContaining([
          { name: 'tier', type: { name: 'CompanyTierEnum' } },
          { name: 'score', type: { name: 'Float' } },
        ]),
      );
      expect(gql.body.data.companies.edges).toEqual([{ node: { name: 'Gamma', tier: 'SILVER', score: 9 } }]);

      // OpenAPI: the credential's document describes the field; without a credential, the base document.
      const doc = await call(url, key, 'GET', '/rest/open-api');
      expect(doc.body.components.schemas.CompanyModel.properties.tier).toMatchObject({
        anyOf: [{ type: 'string', enum: ['GOLD', 'SILVER'] }, { type: 'null' }],
      });
      expect(doc.body.components.schemas.CompanyCreateInput.properties.score).toBeDefined();
      const base = await call(url, undefined, 'GET', '/rest/open-api');
      expect(base.body.components.schemas.CompanyModel.properties.tier).toBeUndefined();
      const others = await call(url, otherKey, 'GET', '/rest/open-api');
      expect(others.body).toEqual(base.body);

      // MCP: the tool schemas and descriptions name the field; a call with it works.
      const tools = (await mcp(key, 'tools/list', {})).result.tools as {
        name: string;
        description: string;
        inputSchema: any;
        outputSchema: any;
      }[];
      const create = tools.find((t) => t.name === 'create_company')!;
      expect(create.inputSchema.properties.tier).toMatchObject({ anyOf: [{ type: 'string', enum: ['GOLD', 'SILVER'] }, { type: 'null' }] });
      expect(create.description).toMatch(/tier \(SELECT: GOLD, SILVER\)/);
      const otherTools = (await mcp(otherKey, 'tools/list', {})).result.tools as typeof tools;
      expect(otherTools.find((t) => t.name === 'create_company')!.inputSchema.properties.tier).toBeUndefined();
      const made = await mcp(key, 'tools/call', { name: 'create_company', arguments: { name: 'Delta', tier: 'SILVER', score: 1.5 } });
      expect(made.result.isError).toBeFalsy();
      expect(made.result.structuredContent.company).toMatchObject({ tier: 'SILVER', score: 1.5 });
      const found = await mcp(key, 'tools/call', { name: 'list_companies', arguments: { filter: 'score[lt]:2', order_by: 'score' } });
      expect(found.result.structuredContent.companies.map((c: { name: string }) => c.name)).toEqual(['Delta']);
      const refused = await mcp(key, 'tools/call', { name: 'create_company', arguments: { name: 'E', tier: 'BRONZE' } });
      expect(refused.result.isError).toBe(true);

      // In that workspace only.
      const elsewhere = await call(url, otherKey, 'POST', '/rest/companies', { name: 'X', tier: 'GOLD' });
      expect(elsewhere.status).toBe(400);

      // Webhooks: the payload carries the field.
      await receiver.waitFor(4);
      await sleep(300);
      const events = receiver.verified(hook.secret) as any[];
      const acme = events.find((e) => e.data.record.name === 'Acme');
      expect(acme.type).toBe('company.created');
      expect(acme.data.record).toMatchObject({ tier: 'GOLD', score: 2 });
    } finally {
      await receiver.close();
    }
  });

  it('a change through one instance applies to the next request on another, without a restart', async () => {
    // A second records API on the same database: its own credential cache, data-model cache and GraphQL servers.
    const second: { app: INestApplication } = await startApi();
    try {
      const ws = (await workspaceWith(origin.ds, [], 'cf-two')).workspace;
      const key = await adminKey(origin.ds, ws.id);
      const other = second.app.getHttpServer();
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      const otherUrl = `http://127.0.0.1:${other.address().port}`;
      // Warm both instances' caches for this credential and workspace.
      for (const base of [url, otherUrl]) {
        expect((await call(base, key, 'GET', '/rest/companies')).status).toBe(200);
        expect((await call(base, key, 'POST', '/graphql', { query: '{ companies { totalCount } }' })).status).toBe(200);
      }
      const added = await call(url, key, 'POST', '/rest/metadata/fields', { object: 'companies', name: 'region', type: 'TEXT' });
      expect(added.status).toBe(201);
      // At once on the other instance: REST, GraphQL and MCP.
      const made = await call(otherUrl, key, 'POST', '/rest/companies', { name: 'Acme', region: 'EMEA' });
      expect(made.status).toBe(201);
      expect(made.body.data.createCompany.region).toBe('EMEA');
      const gql = await call(otherUrl, key, 'POST', '/graphql', {
        query: '{ companies(filter: {region: {eq: "EMEA"}}) { edges { node { region } } } }',
      });
      expect(gql.body.data.companies.edges).toEqual([{ node: { region: 'EMEA' } }]);
      // Deactivated on the other instance: gone at once on the first.
      const id = added.body.data.createField.id;
      expect((await call(otherUrl, key, 'PATCH', `/rest/metadata/fields/${id}`, { isActive: false })).status).toBe(200);
      const read = await call(url, key, 'GET', `/rest/companies/${made.body.data.createCompany.id}`);
      expect(read.body.data.company).not.toHaveProperty('region');
      expect((await call(url, key, 'POST', '/graphql', { query: '{ companies { edges { node { region } } } }' })).status).toBe(400);
    } finally {
      await second.app.close();
    }
  });
});
