import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createApiKey } from '#identity/accounts.js';
import { RoleEntity, type FieldPermissions, type ObjectPermissions } from '#database/entities/index.js';
import { BASE_OPEN_API_NAMES, customObjectDeclaration, OBJECTS, type WorkspaceObject } from '#records/objects/index.js';
import { restOperations } from '../apps/records-api/src/rest/rest-operations.js';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { validateOpenApi } from './open-api-validate.js';
import { client, expectError, keyWithRole, type Client as RestClient, type Http } from './rest-helpers.js';

/*
 * A workspace's own objects in its OpenAPI document and its MCP tools (docs/rest.md "OpenAPI",
 * docs/mcp.md "Custom objects"): every REST call of a standard object, described the same way;
 * the six tools of a standard object, filtered by role the same way; in that workspace only.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- OpenAPI JSON
type Json = Record<string, any>;

const TICKET = { nameSingular: 'ticket', namePlural: 'tickets', labelSingular: 'Ticket', labelPlural: 'Tickets' };
const PATTERN = OBJECTS[0];

describe('custom objects in OpenAPI and MCP', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let mcpUrl: URL;
  const clients: Client[] = [];

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
    const server = app.getHttpServer() as import('node:http').Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    mcpUrl = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await app.close();
  });

  const connect = async (secret: string) => {
    const c = new Client({ name: 'custom-objects-e2e', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
    clients.push(c);
    return c;
  };
  const toolNames = (tools: Tool[], pattern: RegExp) =>
    tools
      .map((t) => t.name)
      .filter((n) => pattern.test(n))
      .sort();
  const GENERIC_TOOLS = [
    'aggregate_records',
    'create_record',
    'delete_record',
    'delete_records',
    'describe_object',
    'export_records',
    'get_record',
    'import_records',
    'list_records',
    'search_records',
    'update_record',
    'update_records',
  ];

  /** A workspace with tickets (priority SELECT, estimate NUMBER, code TEXT required) and an inactive object. */
  async function workspaceWithTickets(label: string): Promise<{ ws: TestWorkspace; api: RestClient; ticket: WorkspaceObject }> {
    const ws = await newWorkspace(ds, label);
    const api = client(http, ws.keys.Admin);
    const made = await api.post('/rest/metadata/objects', { ...TICKET, description: 'Support requests' });
    expect(made.status).toBe(201);
    const fields = [
      { object: 'tickets', name: 'priority', type: 'SELECT', options: [{ value: 'HIGH' }, { value: 'LOW' }] },
      { object: 'tickets', name: 'estimate', type: 'NUMBER' },
      { object: 'tickets', name: 'code', type: 'TEXT', isNullable: false },
    ];
    for (const field of fields) expect((await api.post('/rest/metadata/fields', field)).status).toBe(201);
    const project = await api.post('/rest/metadata/objects', { nameSingular: 'project', namePlural: 'projects' });
    expect((await api.patch(`/rest/metadata/objects/${project.body.data.createObject.id}`, { isActive: false })).status).toBe(200);
    return { ws, api, ticket: made.body.data.createObject };
  }

  /** The operations of an object's paths in a document: `METHOD path` → operation. */
  function operationsOf(doc: Json, plural: string): Map<string, Json> {
    const own = new RegExp(`^/rest/(batch/|restore/)?${plural}(/|$)`);
    const found = new Map<string, Json>();
    for (const [path, item] of Object.entries(doc.paths as Json))
      if (own.test(path)) for (const [method, op] of Object.entries(item as Json)) found.set(`${method.toUpperCase()} ${path}`, op);
    return found;
  }

  it("describes each active custom object in its workspace's document as a standard object is, valid; elsewhere nothing", async () => {
    const { ws, api } = await workspaceWithTickets('oa');
    const other = await newWorkspace(ds, 'oa-other');
    const publicDoc = (await request(http).get('/rest/open-api').expect(200)).body as Json;
    const doc = (await api.get('/rest/open-api').expect(200)).body as Json;
    expect(await validateOpenApi(doc)).toBe('valid 3.1.0');

    // Every REST route of the pattern object, for tickets: same methods, parameters, responses and error codes.
    const theirs = operationsOf(publicDoc, PATTERN.plural);
    const mine = operationsOf(doc, 'tickets');
    const renamed = [...theirs.keys()].map((k) => k.replace(new RegExp(`/${PATTERN.plural}(?=/|$)`), '/tickets'));
    expect([...mine.keys()].sort()).toEqual(renamed.sort());
    expect(mine.size).toBe(11);
    const ids = Object.fromEntries(
      Object.entries(restOperations(PATTERN)).map(([kind, o]) => [
        o.operation.operationId,
        restOperations(customObjectDeclaration({ ...TICKET } as WorkspaceObject))[kind as 'list'].operation.operationId,
      ]),
    );
    const shape = (op: Json) => ({
      parameters: (op.parameters ?? []).map((p: Json) => `${p.in} ${p.name} ${p.required} ${JSON.stringify(p.schema)}`),
      responses: Object.keys(op.responses),
      errors: Object.entries(op.responses as Json)
        .filter(([status]) => status >= '400')
        .map(([status, r]) => [status, r.description]),
      body: Boolean(op.requestBody),
      security: op.security,
    });
    for (const [key, op] of theirs) {
      const ticketOp = mine.get(key.replace(new RegExp(`/${PATTERN.plural}(?=/|$)`), '/tickets'))!;
      expect({ key, operationId: ticketOp.operationId }).toEqual({ key, operationId: ids[op.operationId] });
      expect({ key, ...shape(ticketOp) }).toEqual({ key, ...shape(op) });
      expect(ticketOp.tags).toEqual(['tickets']);
      expect(JSON.stringify(ticketOp)).not.toMatch(new RegExp(`${PATTERN.typeName}|${PATTERN.plural}|${PATTERN.singular}`, 'i'));
    }
    expect([...mine.values()].map((op) => op.operationId).sort()).toEqual(
      ['listTickets', 'groupByTickets', 'exportTickets', 'getTicket', 'createTicket', 'createTickets', 'updateTicket', 'deleteTicket']
        .concat(['updateTickets', 'deleteTickets', 'restoreTicket'])
        .sort(),
    );

    // The parameters name the object's fields; the schemas hold them.
    const list = doc.paths['/rest/tickets'].get;
    const filter = list.parameters.find((p: Json) => p.name === 'filter');
    expect(filter.description).toMatch(/`priority` \(eq, neq, in, is\)/);
    expect(filter.description).toMatch(/`estimate` \(eq, neq, in, is, gt/);
    expect(filter.description).toMatch(/`code` \(eq, [^)]*\)\. Deleted records/);
    expect(filter.description).toMatch(/This workspace's custom fields: .*priority \(SELECT: HIGH, LOW\)/);
    expect(list.parameters.find((p: Json) => p.name === 'order_by').description).toMatch(/Sortable: .*estimate/);
    expect(doc.paths['/rest/tickets/groupBy'].get.parameters[0].description).toMatch(/Fields that group: .*priority/);
    expect(list.responses['200'].content['application/json'].schema.properties.data).toEqual({
      type: 'object',
      required: ['tickets'],
      properties: { tickets: { type: 'array', items: { $ref: '#/components/schemas/TicketModel' } } },
    });
    expect(doc.paths['/rest/tickets'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/TicketCreateInput',
    });
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.TicketModel.properties)).toEqual([
      'id',
      'createdAt',
      'updatedAt',
      'deletedAt',
      'name',
      'priority',
      'estimate',
      'code',
    ]);
    expect(schemas.TicketModel.properties.priority).toMatchObject({ anyOf: [{ type: 'string', enum: ['HIGH', 'LOW'] }, { type: 'null' }] });
    expect(schemas.TicketCreateInput).toMatchObject({ additionalProperties: false, required: ['code'] });
    expect(Object.keys(schemas.TicketCreateInput.properties)).toEqual(['id', 'name', 'priority', 'estimate', 'code']);
    expect(Object.keys(schemas.TicketUpdateInput.properties)).toEqual(['name', 'priority', 'estimate', 'code']);
    expect(doc.tags).toContainEqual({ name: 'tickets', description: "Tickets: this workspace's own object — Support requests." });
    expect(Object.keys(doc.webhooks)).toEqual(
      expect.arrayContaining(['ticket.created', 'ticket.updated', 'ticket.deleted', 'ticket.restored']),
    );

    // What the document says is what the API answers.
    const made = await api.post('/rest/tickets', { name: 'Printer', code: 'T-1', priority: 'HIGH' });
    expect(made.status).toBe(201);
    expect(Object.keys(made.body.data)).toEqual(['createTicket']);
    expect(Object.keys(made.body.data.createTicket).sort()).toEqual(Object.keys(schemas.TicketModel.properties).sort());
    expectError(await api.post('/rest/tickets', { name: 'No code' }), 400, 'VALIDATION_FAILED');

    // The standard objects' part of the document is the public one's; the inactive object is nowhere.
    for (const [path, item] of Object.entries(publicDoc.paths)) expect({ path, item: doc.paths[path] }).toEqual({ path, item });
    expect(JSON.stringify(doc)).not.toMatch(/project/i);

    // Another workspace's document and the public one: no trace of the object.
    const others = (await client(http, other.keys.Admin).get('/rest/open-api').expect(200)).body;
    expect(others).toEqual(publicDoc);
    expect(JSON.stringify(publicDoc)).not.toMatch(/ticket/i);
    const forged = await request(http)
      .get('/rest/open-api')
      .set('Authorization', `Bearer ${ws.keys.Admin.slice(0, -4)}AAAA`);
    expect(forged.body).toEqual(publicDoc);
    // Many at once: one document, the same to all.
    const many = await Promise.all(Array.from({ length: 8 }, () => api.get('/rest/open-api')));
    expect(new Set(many.map((r) => `${r.status} ${r.text}`)).size).toBe(1);
    expect(JSON.parse(many[0].text)).toEqual(doc);
    expect(ws.id).not.toBe(other.id);
  });

  it('leaves out the fields a role cannot read, and follows a deactivation at once', async () => {
    const { ws, api, ticket } = await workspaceWithTickets('oa-role');
    const repo = ds.getRepository(RoleEntity);
    const all = { read: true, create: true, update: true, delete: true };
    const role = await repo.save(
      repo.create({
        workspaceId: ws.id,
        name: 'No priority',
        description: 'test role',
        objectPermissions: { '*': all } as unknown as ObjectPermissions,
        fieldPermissions: { tickets: { priority: { read: false, update: false } } } as FieldPermissions,
        settingsPermissions: [],
        assignableToUsers: true,
        assignableToApiKeys: true,
      }),
    );
    const key = await createApiKey(ds, { workspaceId: ws.id, role, name: 'np', expiresAt: new Date(Date.now() + 86_400_000) });
    const doc = (await client(http, key.secret).get('/rest/open-api').expect(200)).body as Json;
    expect(await validateOpenApi(doc)).toBe('valid 3.1.0');
    for (const name of ['TicketModel', 'TicketCreateInput', 'TicketUpdateInput']) {
      expect(doc.components.schemas[name].properties).not.toHaveProperty('priority');
    }
    for (const op of operationsOf(doc, 'tickets').values()) expect(JSON.stringify(op)).not.toMatch(/`priority`|priority \(|priority,/);
    expect(JSON.stringify(doc.paths['/rest/tickets'].get)).toMatch(/`estimate`/);
    expect((await api.get('/rest/open-api')).body.components.schemas.TicketModel.properties).toHaveProperty('priority');
    // MCP neither shows nor takes the field: not in describe_object, not in records, refused in a filter.
    expect((await api.post('/rest/tickets', { name: 'Hidden', code: 'H-1', priority: 'HIGH' })).status).toBe(201);
    const agent = await connect(key.secret);
    const described = (await agent.callTool({ name: 'describe_object', arguments: { object: 'tickets' } })) as CallToolResult;
    const names = ((described.structuredContent as Json).objects[0].fields as Json[]).map((f) => f.name);
    expect(names).toContain('estimate');
    expect(names).not.toContain('priority');
    const rows = (await agent.callTool({ name: 'list_records', arguments: { object: 'tickets' } })) as CallToolResult;
    expect((rows.structuredContent as Json).records[0]).toMatchObject({ name: 'Hidden', code: 'H-1' });
    expect((rows.structuredContent as Json).records[0]).not.toHaveProperty('priority');
    const probe = (await agent.callTool({
      name: 'list_records',
      arguments: { object: 'tickets', filter: 'priority[eq]:"HIGH"' },
    })) as CallToolResult;
    expect(probe.isError).toBe(true);
    const tools = (await agent.listTools()).tools;
    expect(JSON.stringify(tools)).not.toMatch(/"priority"|priority \(|priority,/);

    expect((await api.patch(`/rest/metadata/objects/${ticket.id}`, { isActive: false })).status).toBe(200);
    const after = (await api.get('/rest/open-api').expect(200)).body;
    expect(JSON.stringify(after)).not.toMatch(/ticket/i);
  });

  it('refuses object names whose OpenAPI schemas or operations the API has already, and the list of them is complete', async () => {
    const ws = await newWorkspace(ds, 'oa-names');
    const api = client(http, ws.keys.Admin);
    for (const [nameSingular, namePlural] of [
      ['vaultSecret', 'vaultSecretItems'],
      ['secretThing', 'vaultSecrets'],
      ['error', 'errorItems'],
      ['deleted', 'deletedItems'],
      ['link', 'linkItems'],
    ]) {
      const message = expectError(await api.post('/rest/metadata/objects', { nameSingular, namePlural }), 400, 'VALIDATION_FAILED');
      expect(message).toMatch(/OpenAPI/);
    }
    expect((await api.get('/rest/metadata/objects')).body.totalCount).toBe(3);
    expect((await api.get('/rest/open-api').expect(200)).body).toEqual((await request(http).get('/rest/open-api')).body);

    // Every name of the public document an object's names could make is a standard object's or in BASE_OPEN_API_NAMES.
    const publicDoc = (await request(http).get('/rest/open-api').expect(200)).body as Json;
    const sample = customObjectDeclaration({ ...TICKET, nameSingular: 'qqq', namePlural: 'www' } as WorkspaceObject);
    const made = [
      ...Object.values(restOperations(sample)).map((o) => o.operation.operationId),
      ...['Model', 'CreateInput', 'UpdateInput', 'CreatedEvent', 'UpdatedEvent', 'DeletedEvent', 'RestoredEvent'].map((s) => `Qqq${s}`),
    ];
    const patterns = made.map((name) => new RegExp(`^${name.replace(/Qqq|Www/, '([A-Z][A-Za-z0-9]*)')}$`));
    const standard = new Set(OBJECTS.flatMap((o) => [o.typeName, o.pluralType]));
    const names = [
      ...Object.keys(publicDoc.components.schemas),
      ...Object.values(publicDoc.paths as Json).flatMap((item) => Object.values(item as Json).map((op) => op.operationId)),
    ];
    const stems = new Set(names.flatMap((name) => patterns.flatMap((p) => p.exec(name)?.[1] ?? [])));
    expect([...stems].filter((stem) => !standard.has(stem) && !BASE_OPEN_API_NAMES.has(stem))).toEqual([]);
  });

  it('reaches each active custom object through the generic tools as REST does, filtered by role, in its workspace only', async () => {
    const { ws, api, ticket } = await workspaceWithTickets('mcp');
    const other = await newWorkspace(ds, 'mcp-other');
    const admin = await connect(ws.keys.Admin);
    const { tools } = await admin.listTools();
    // No tools of its own (a workspace's 50 objects would make 300): the generic ones take it.
    expect(toolNames(tools, /ticket|project/)).toEqual([]);
    expect(toolNames(tools, /_records?$|^describe_object$/)).toEqual(GENERIC_TOOLS);
    expect(admin.getInstructions()).toContain('Objects without tools of their own: tickets;');
    const described = (await admin.callTool({ name: 'describe_object', arguments: { object: 'tickets' } })) as CallToolResult;
    const fields = (described.structuredContent as Json).objects[0].fields as Json[];
    expect(fields.find((f) => f.name === 'priority')).toMatchObject({ type: 'SELECT', options: ['HIGH', 'LOW'], isCustom: true });
    // A field the object requires says so (code was made with isNullable: false).
    expect(fields.find((f) => f.name === 'code')).toMatchObject({ type: 'TEXT', isNullable: false });
    expect(fields.find((f) => f.name === 'estimate')).toMatchObject({ type: 'NUMBER', isNullable: true });
    expect(fields.map((f) => f.name)).toEqual(expect.arrayContaining(['id', 'name', 'priority', 'estimate', 'code', 'createdAt']));
    const listedObjects = (await admin.callTool({ name: 'describe_object', arguments: {} })) as CallToolResult;
    expect(((listedObjects.structuredContent as Json).objects as Json[]).map((o) => o.namePlural)).toEqual([
      ...OBJECTS.map((o) => o.plural),
      'tickets',
    ]);

    // A create and a list through MCP, answered as REST answers.
    const made = (await admin.callTool({
      name: 'create_record',
      arguments: { object: 'tickets', data: { name: 'Printer', code: 'T-1', priority: 'HIGH', estimate: 2 } },
    })) as CallToolResult;
    expect(made.isError).toBeFalsy();
    const record = (made.structuredContent as Json).record;
    expect(record).toMatchObject({ name: 'Printer', code: 'T-1', priority: 'HIGH', estimate: 2, deletedAt: null });
    const listed = (await admin.callTool({
      name: 'list_records',
      arguments: { object: 'tickets', filter: 'priority[eq]:"HIGH"', order_by: 'estimate' },
    })) as CallToolResult;
    expect(listed.structuredContent).toMatchObject({ records: [record], totalCount: 1 });
    expect((await api.get(`/rest/tickets/${record.id}`)).body.data.ticket).toEqual(record);
    const got = (await admin.callTool({ name: 'get_record', arguments: { object: 'tickets', id: record.id } })) as CallToolResult;
    expect((got.structuredContent as Json).record).toEqual(record);
    const refused = (await admin.callTool({
      name: 'create_record',
      arguments: { object: 'tickets', data: { name: 'x', code: 'T-2', priority: 'URGENT' } },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect((refused.content[0] as { text: string }).text).toMatch(/^VALIDATION_FAILED: /);
    const missing = (await admin.callTool({
      name: 'create_record',
      arguments: { object: 'tickets', data: { name: 'no code' } },
    })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect((await api.get('/rest/tickets')).body.totalCount).toBe(1);
    const changed = (await admin.callTool({
      name: 'update_record',
      arguments: { object: 'tickets', id: record.id, data: { estimate: 3 } },
    })) as CallToolResult;
    expect((changed.structuredContent as Json).record).toMatchObject({ id: record.id, estimate: 3, code: 'T-1' });

    // Viewer: the read tools only. A role without the object: the generic tools, which answer FORBIDDEN as REST does.
    const viewer = await connect(ws.keys.Viewer);
    expect(toolNames((await viewer.listTools()).tools, /_records?$|^describe_object$/)).toEqual([
      'aggregate_records',
      'describe_object',
      'export_records',
      'get_record',
      'list_records',
      'search_records',
    ]);
    const viewerWrite = (await viewer.callTool({
      name: 'delete_record',
      arguments: { object: 'tickets', id: record.id },
    })) as CallToolResult;
    expect((viewerWrite.content[0] as { text: string }).text).toMatch(/^FORBIDDEN: /);
    const none = await keyWithRole(ds, ws.id, 'Companies only', {
      companies: { read: true, create: true, update: true, delete: true },
    } as ObjectPermissions);
    const outsider = await connect(none.secret);
    const outsiderObjects = (await outsider.callTool({ name: 'describe_object', arguments: {} })) as CallToolResult;
    expect(((outsiderObjects.structuredContent as Json).objects as Json[]).map((o) => o.namePlural)).toEqual(['companies']);
    const hiddenObject = (await outsider.callTool({ name: 'describe_object', arguments: { object: 'tickets' } })) as CallToolResult;
    expect((hiddenObject.content[0] as { text: string }).text).toMatch(/^FORBIDDEN: /);
    const forbidden = (await outsider.callTool({ name: 'list_records', arguments: { object: 'tickets' } })) as CallToolResult;
    expect(forbidden.isError).toBe(true);
    expect((forbidden.content[0] as { text: string }).text).toMatch(/^FORBIDDEN: /);
    expectError(await client(http, none.secret).get('/rest/tickets'), 403, 'FORBIDDEN');

    // Another workspace: no such object, and naming it reaches nothing of this workspace.
    const stranger = await connect(other.keys.Admin);
    expect(JSON.stringify(await stranger.listTools())).not.toMatch(/ticket/i);
    const probe = (await stranger.callTool({ name: 'get_record', arguments: { object: 'tickets', id: record.id } })) as CallToolResult;
    expect(probe.isError).toBe(true);
    expect((probe.content[0] as { text: string }).text).toMatch(/^NOT_FOUND: /);
    const probeWrite = (await stranger.callTool({
      name: 'update_record',
      arguments: { object: 'tickets', id: record.id, data: { estimate: 9 } },
    })) as CallToolResult;
    expect((probeWrite.content[0] as { text: string }).text).toMatch(/^NOT_FOUND: /);
    expect((await api.get(`/rest/tickets/${record.id}`)).body.data.ticket.estimate).toBe(3);

    // Deactivated (or never active, as projects): NOT_FOUND at once; reactivated, it answers again.
    expect((await api.patch(`/rest/metadata/objects/${ticket.id}`, { isActive: false })).status).toBe(200);
    const gone = (await admin.callTool({ name: 'list_records', arguments: { object: 'tickets' } })) as CallToolResult;
    expect((gone.content[0] as { text: string }).text).toMatch(/^NOT_FOUND: /);
    const inactive = (await admin.callTool({ name: 'list_records', arguments: { object: 'projects' } })) as CallToolResult;
    expect((inactive.content[0] as { text: string }).text).toMatch(/^NOT_FOUND: /);
    expect((await api.patch(`/rest/metadata/objects/${ticket.id}`, { isActive: true })).status).toBe(200);
    const back = (await admin.callTool({ name: 'list_records', arguments: { object: 'tickets' } })) as CallToolResult;
    expect((back.structuredContent as Json).totalCount).toBe(1);
  });

  it('aggregate_records groups a custom object as REST groupBy does; search_records takes it exactly when REST search does', async () => {
    const { ws, api } = await workspaceWithTickets('mcp-agg');
    for (const [name, priority, estimate] of [
      ['A', 'HIGH', 1],
      ['B', 'HIGH', 2],
      ['C', 'LOW', 5],
    ] as const) {
      expect((await api.post('/rest/tickets', { name, code: name, priority, estimate })).status).toBe(201);
    }
    const admin = await connect(ws.keys.Admin);
    const aggregate = (await admin.listTools()).tools.find((t) => t.name === 'aggregate_records')!;
    // The object by name: the workspace's own are named by describe_object, so the schema stays one size.
    expect(aggregate.inputSchema.properties!.object).toMatchObject({ type: 'string' });
    expect(aggregate.description).toMatch(/own objects: see describe_object/);
    const grouped = (await admin.callTool({
      name: 'aggregate_records',
      arguments: { object: 'tickets', group_by: 'priority', aggregate: 'count,sum:estimate' },
    })) as CallToolResult;
    expect(grouped.isError).toBeFalsy();
    const rest = await api.get('/rest/tickets/groupBy', { group_by: 'priority', aggregate: 'count,sum:estimate' });
    expect(rest.status).toBe(200);
    expect((grouped.structuredContent as Json).groups).toEqual(rest.body.data.groups);
    expect(rest.body.data.groups).toEqual([
      { by: { priority: 'HIGH' }, count: 2, sum: { estimate: '3' } },
      { by: { priority: 'LOW' }, count: 1, sum: { estimate: '5' } },
    ]);
    // Another workspace's aggregate does not offer the object.
    const other = await newWorkspace(ds, 'mcp-agg-other');
    const strange = (await (
      await connect(other.keys.Admin)
    ).callTool({ name: 'aggregate_records', arguments: { object: 'tickets' } })) as CallToolResult;
    expect(strange.isError).toBe(true);

    const restSearch = await api.get('/rest/search', { q: 'A', objects: 'tickets' });
    const mcpSearch = (await admin.callTool({ name: 'search_records', arguments: { q: 'A', objects: ['tickets'] } })) as CallToolResult;
    expect({ rest: restSearch.status === 200, mcp: !mcpSearch.isError }).toEqual({
      rest: restSearch.status === 200,
      mcp: restSearch.status === 200,
    });
  });

  it("keeps the standard objects' own tools while the list fits 96 KB, and the generic tools always", async () => {
    const ws = await newWorkspace(ds, 'mcp-budget');
    const api = client(http, ws.keys.Admin);
    const list = async () => {
      const res = await request(http)
        .post('/mcp')
        .set({ Authorization: `Bearer ${ws.keys.Admin}`, Accept: 'application/json, text/event-stream' })
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
      expect(res.status).toBe(200);
      return { tools: res.body.result.tools as Tool[], bytes: Buffer.byteLength(res.text) };
    };
    const plain = await list();
    expect(plain.tools.length).toBe(30);
    expect(plain.bytes).toBeLessThanOrEqual(64 * 1024);
    // A few custom fields keep every tool; the most allowed on people make its tools' schemas grow past what the list can take.
    expect((await api.post('/rest/metadata/fields', { object: 'people', name: 'nickname', type: 'TEXT' })).status).toBe(201);
    const few = await list();
    expect(few.tools.length).toBe(30);
    const types = ['SELECT', 'NUMBER', 'TEXT', 'DATE_TIME', 'LINKS', 'EMAILS', 'BOOLEAN', 'MULTI_SELECT', 'CURRENCY', 'PHONES'];
    for (let i = 0; i < 99; i++) {
      const type = types[i % types.length];
      const body = {
        object: 'people',
        name: `f${i}`,
        type,
        ...(type.includes('SELECT') ? { options: [{ value: 'A' }, { value: 'B' }] } : {}),
      };
      expect((await api.post('/rest/metadata/fields', body)).status).toBe(201);
    }
    const wide = await list();
    expect(wide.bytes).toBeLessThanOrEqual(96 * 1024);
    // Opportunities' tools embed a person (pointOfContact, depth 1) with those fields too: both go.
    expect(toolNames(wide.tools, /person|people|opportunit/)).toEqual([]);
    expect(toolNames(wide.tools, /compan/)).toEqual([
      'create_company',
      'delete_company',
      'get_company',
      'list_companies',
      'update_company',
      'upsert_company',
    ]);
    expect(toolNames(wide.tools, /_records?$|^describe_object$/)).toEqual(GENERIC_TOOLS);
    const admin = await connect(ws.keys.Admin);
    expect(admin.getInstructions()).toMatch(/Objects without tools of their own: people, opportunities; the generic tools take them/);
    const person = (await admin.callTool({
      name: 'create_record',
      arguments: { object: 'people', data: { name: { firstName: 'Ada' }, f1: 3 } },
    })) as CallToolResult;
    expect(person.isError).toBeFalsy();
    expect((person.structuredContent as Json).record).toMatchObject({ name: { firstName: 'Ada' }, f1: 3 });
  });

  it('keeps tools/list of a workspace with 50 custom objects at 30 tools and within 64 KB', async () => {
    const ws = await newWorkspace(ds, 'mcp-fifty');
    const api = client(http, ws.keys.Admin);
    const list = async () =>
      request(http)
        .post('/mcp')
        .set({ Authorization: `Bearer ${ws.keys.Admin}`, Accept: 'application/json, text/event-stream' })
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const base = await list();
    for (let i = 0; i < 50; i++) {
      const singular = `objectWithALongerName${i}`;
      expect((await api.post('/rest/metadata/objects', { nameSingular: singular, namePlural: `${singular}s` })).status).toBe(201);
      if (i < 3) {
        for (const [name, type] of [
          ['status', 'SELECT'],
          ['amount', 'NUMBER'],
          ['note', 'TEXT'],
        ]) {
          const body = {
            object: `${singular}s`,
            name,
            type,
            ...(type === 'SELECT' ? { options: [{ value: 'OPEN' }, { value: 'DONE' }] } : {}),
          };
          expect((await api.post('/rest/metadata/fields', body)).status).toBe(201);
        }
      }
    }
    const res = await list();
    expect(res.status).toBe(200);
    const tools = res.body.result.tools as Tool[];
    expect(tools.length).toBe(base.body.result.tools.length);
    expect(tools.length).toBeLessThanOrEqual(40);
    const bytes = Buffer.byteLength(res.text);
    // docs/mcp.md "Generic tools" states these figures.
    process.stdout.write(
      `tools/list: ${tools.length} tools, ${bytes} bytes with 50 custom objects (${Buffer.byteLength(base.text)} without)\n`,
    );
    expect(bytes).toBeLessThanOrEqual(64 * 1024);
  }, 120_000);
});
