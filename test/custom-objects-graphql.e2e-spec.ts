import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createApiKey } from '#identity/accounts.js';
import { createRole } from '#identity/roles.js';
import { BASE_GRAPHQL_ROOT_FIELDS, OBJECTS, objectRootFieldNames } from '#records/objects/index.js';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { httpJson, spawnApp, statsOf, type AppProcess } from './processes.js';
import { client, keyWithRole, UUID, type Client, type Http } from './rest-helpers.js';

/**
 * A workspace's own objects over GraphQL (docs/graphql.md "Custom objects"): typed per
 * workspace exactly as a standard object, in introspection too, with the standard objects'
 * resolvers, limits, permissions and Idempotency-Key; never in another workspace's schema.
 */

const ticket = { nameSingular: 'ticket', namePlural: 'tickets', labelSingular: 'Ticket', labelPlural: 'Tickets' };
const TICKET_FIELDS = [
  { object: 'tickets', name: 'priority', type: 'SELECT', options: [{ value: 'HIGH', label: 'High' }, { value: 'LOW' }] },
  { object: 'tickets', name: 'hours', type: 'NUMBER' },
  { object: 'tickets', name: 'site', type: 'LINKS' },
  { object: 'tickets', name: 'tags', type: 'MULTI_SELECT', options: [{ value: 'HW' }, { value: 'SW' }] },
];

interface TypeRef {
  kind: string;
  name: string | null;
  ofType: TypeRef | null;
}
/** `[Ticket!]!` from introspection's nested type references. */
const print = (t: TypeRef): string =>
  t.kind === 'NON_NULL' ? `${print(t.ofType!)}!` : t.kind === 'LIST' ? `[${print(t.ofType!)}]` : t.name!;
const TYPE_REF = 'type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }';
const TYPE = `query ($name: String!) { __type(name: $name) { name kind
  fields { name ${TYPE_REF} } inputFields { name ${TYPE_REF} } enumValues { name description } } }`;
type Named = { name: string; type: TypeRef };
const shape = (fields: Named[] | null) => Object.fromEntries((fields ?? []).map((f) => [f.name, print(f.type)]));

describe('custom objects over GraphQL', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  const gql = (secret: string, query: string, variables?: Record<string, unknown>, idempotencyKey?: string) => {
    const req = request(http).post('/graphql').set(bearer(secret));
    return (idempotencyKey ? req.set('Idempotency-Key', idempotencyKey) : req).send({ query, variables });
  };
  const ticketRows = async (workspaceId: string) =>
    Number((await ds.query('SELECT count(*)::int AS n FROM custom_records WHERE workspace_id = $1', [workspaceId]))[0].n);

  async function withTickets(label = 'co-gql'): Promise<{ ws: TestWorkspace; api: Client; objectId: string }> {
    const ws = await newWorkspace(ds, label);
    const api = client(http, ws.keys.Admin);
    const made = await api.post('/rest/metadata/objects', ticket);
    expect(made.status).toBe(201);
    for (const body of TICKET_FIELDS) expect((await api.post('/rest/metadata/fields', body)).status).toBe(201);
    return { ws, api, objectId: made.body.data.createObject.id };
  }

  it("types the object as a standard one, in introspection; another workspace's schema and errors never show it", async () => {
    const { ws } = await withTickets();
    const typeOf = async (secret: string, name: string) => {
      const res = await gql(secret, TYPE, { name });
      expect([res.status, res.body.errors]).toEqual([200, undefined]);
      return res.body.data.__type;
    };
    const record = await typeOf(ws.keys.Admin, 'Ticket');
    expect(shape(record.fields)).toEqual({
      id: 'UUID!',
      name: 'String',
      priority: 'TicketPriorityEnum',
      hours: 'Float',
      site: 'Links',
      tags: '[TicketTagsEnum!]',
      createdAt: 'DateTime!',
      updatedAt: 'DateTime!',
      deletedAt: 'DateTime',
    });
    expect((await typeOf(ws.keys.Admin, 'TicketPriorityEnum')).enumValues).toEqual([
      { name: 'HIGH', description: 'High' },
      { name: 'LOW', description: null },
    ]);
    expect(shape((await typeOf(ws.keys.Admin, 'TicketConnection')).fields)).toEqual({
      totalCount: 'Int!',
      edges: '[TicketEdge!]!',
      pageInfo: 'PageInfo!',
    });
    expect(shape((await typeOf(ws.keys.Admin, 'TicketEdge')).fields)).toEqual({ node: 'Ticket!', cursor: 'String!' });
    const inputs = {
      id: 'UUID',
      name: 'String',
      priority: 'TicketPriorityEnum',
      hours: 'Float',
      site: 'LinksInput',
      tags: '[TicketTagsEnum!]',
    };
    expect(shape((await typeOf(ws.keys.Admin, 'TicketCreateInput')).inputFields)).toEqual(inputs);
    const { id: _id, ...updatable } = inputs;
    expect(shape((await typeOf(ws.keys.Admin, 'TicketUpdateInput')).inputFields)).toEqual(updatable);
    expect(shape((await typeOf(ws.keys.Admin, 'TicketFilterInput')).inputFields)).toEqual({
      id: 'UUIDFilter',
      name: 'StringFilter',
      priority: 'TicketPriorityEnumFilter',
      hours: 'FloatFilter',
      site: 'LinksFilter',
      tags: 'TicketTagsEnumListFilter',
      createdAt: 'DateFilter',
      updatedAt: 'DateFilter',
      deletedAt: 'DateFilter',
      and: '[TicketFilterInput!]',
      or: '[TicketFilterInput!]',
      not: 'TicketFilterInput',
    });
    expect(shape((await typeOf(ws.keys.Admin, 'TicketOrderByInput')).inputFields)).toEqual({
      id: 'OrderByDirection',
      name: 'OrderByDirection',
      priority: 'OrderByDirection',
      hours: 'OrderByDirection',
      site: 'LinksOrderByInput',
      createdAt: 'OrderByDirection',
      updatedAt: 'OrderByDirection',
      deletedAt: 'OrderByDirection',
    });

    // Its root fields are the standard ones' with the names changed: arguments, defaults, nullability, descriptions.
    const roots = await gql(
      ws.keys.Admin,
      `{ __schema { queryType { fields { name description ${TYPE_REF} args { name description defaultValue ${TYPE_REF} } } }
                    mutationType { fields { name description ${TYPE_REF} args { name description defaultValue ${TYPE_REF} } } } } }`,
    );
    expect(roots.body.errors).toBeUndefined();
    type Root = Named & { description: string | null; args: (Named & { description: string | null; defaultValue: string | null })[] };
    const rootFields: Root[] = [...roots.body.data.__schema.queryType.fields, ...roots.body.data.__schema.mutationType.fields];
    const described = (field: Root | undefined, rename: (text: string) => string) =>
      field && {
        name: rename(field.name),
        description: field.description && rename(field.description),
        type: rename(print(field.type)),
        args: field.args
          .map((a) => ({ name: a.name, description: a.description, defaultValue: a.defaultValue, type: rename(print(a.type)) }))
          .sort((a, b) => a.name.localeCompare(b.name)),
      };
    const asTicket = (text: string) =>
      text
        .replace(/Companies/g, 'Tickets')
        .replace(/Company/g, 'Ticket')
        .replace(/companies/g, 'tickets')
        .replace(/company/g, 'ticket');
    const pairs = [
      ['companies', 'tickets'],
      ['company', 'ticket'],
      ['companiesGroupBy', 'ticketsGroupBy'],
      ['createCompany', 'createTicket'],
      ['createCompanies', 'createTickets'],
      ['updateCompany', 'updateTicket'],
      ['deleteCompany', 'deleteTicket'],
      ['restoreCompany', 'restoreTicket'],
    ];
    for (const [standard, custom] of pairs) {
      const mine = described(
        rootFields.find((f) => f.name === custom),
        (text) => text,
      );
      expect(mine).toEqual(
        described(
          rootFields.find((f) => f.name === standard),
          asTicket,
        ),
      );
    }

    // Another workspace: none of it, in introspection or in the suggestions of its errors.
    const other = await newWorkspace(ds, 'co-gql-other');
    for (const name of ['Ticket', 'TicketConnection', 'TicketPriorityEnum', 'TicketCreateInput']) {
      expect(await typeOf(other.keys.Admin, name)).toBeNull();
    }
    // graphql-js suggests names of the schema it validates against: this workspace's own only.
    const suggested = (res: request.Response) =>
      res.body.errors.map((e: { message: string }) => e.message.split('Did you mean')[1] ?? '').join(' ');
    const mineTypo = await gql(ws.keys.Admin, '{ ticke { totalCount } }');
    expect(mineTypo.status).toBe(400);
    expect(suggested(mineTypo)).toMatch(/"tickets?"/);
    for (const query of ['{ ticke { totalCount } }', '{ tickets { totalCount } }', 'mutation { createTicke(data: {name: "x"}) { id } }']) {
      const theirs = await gql(other.keys.Admin, query);
      expect(theirs.status).toBe(400);
      expect(theirs.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(suggested(theirs)).not.toMatch(/ticket/i);
    }
    expect(await ticketRows(other.id)).toBe(0);
    // Without a credential nothing is parsed: 401, whatever the document names.
    const anonymous = await request(http).post('/graphql').send({ query: '{ tickets { totalCount } }' });
    expect([anonymous.status, anonymous.body.errors[0].extensions.code]).toEqual([401, 'UNAUTHENTICATED']);
  });

  it('lists with filter, orderBy, cursors both ways and totalCount; ticket(filter) finds the first match; groups', async () => {
    const { ws } = await withTickets();
    const created = await gql(
      ws.keys.Admin,
      `mutation($d: [TicketCreateInput!]!) { createTickets(data: $d) { id name priority hours tags site { primaryLinkUrl } } }`,
      {
        d: [
          { name: 'Printer', priority: 'HIGH', hours: 3, tags: ['HW'] },
          { name: 'VPN', priority: 'LOW', hours: 1, tags: ['SW'] },
          { name: 'Laptop', priority: 'HIGH', hours: 5, tags: ['HW', 'SW'], site: { primaryLinkUrl: 'https://laptops.example' } },
        ],
      },
    );
    expect(created.body.errors).toBeUndefined();
    expect(created.body.data.createTickets).toEqual([
      { id: expect.stringMatching(UUID), name: 'Printer', priority: 'HIGH', hours: 3, tags: ['HW'], site: { primaryLinkUrl: null } },
      { id: expect.stringMatching(UUID), name: 'VPN', priority: 'LOW', hours: 1, tags: ['SW'], site: { primaryLinkUrl: null } },
      {
        id: expect.stringMatching(UUID),
        name: 'Laptop',
        priority: 'HIGH',
        hours: 5,
        tags: ['HW', 'SW'],
        site: { primaryLinkUrl: 'https://laptops.example' },
      },
    ]);
    const PAGE = `query($first: Int, $after: String, $last: Int, $before: String) {
      tickets(first: $first, after: $after, last: $last, before: $before, filter: {priority: {eq: HIGH}}, orderBy: [{hours: DescNullsLast}]) {
        totalCount edges { cursor node { name hours } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
    const first = await gql(ws.keys.Admin, PAGE, { first: 1 });
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data.tickets.totalCount).toBe(2);
    expect(first.body.data.tickets.edges.map((e: { node: unknown }) => e.node)).toEqual([{ name: 'Laptop', hours: 5 }]);
    expect(first.body.data.tickets.pageInfo.hasNextPage).toBe(true);
    const second = await gql(ws.keys.Admin, PAGE, { first: 1, after: first.body.data.tickets.pageInfo.endCursor });
    expect(second.body.data.tickets.edges.map((e: { node: unknown }) => e.node)).toEqual([{ name: 'Printer', hours: 3 }]);
    expect(second.body.data.tickets.pageInfo.hasNextPage).toBe(false);
    const back = await gql(ws.keys.Admin, PAGE, { last: 1, before: second.body.data.tickets.pageInfo.startCursor });
    expect(back.body.data.tickets.edges.map((e: { node: unknown }) => e.node)).toEqual([{ name: 'Laptop', hours: 5 }]);

    const nested = await gql(
      ws.keys.Admin,
      `{ tickets(filter: {or: [{tags: {containsAny: [SW]}}, {site: {primaryLinkUrl: {is: NOT_NULL}}}], not: {name: {eq: "VPN"}}},
                 orderBy: [{name: AscNullsFirst}]) { edges { node { name } } } }`,
    );
    expect(nested.body.data.tickets.edges).toEqual([{ node: { name: 'Laptop' } }]);
    const one = await gql(
      ws.keys.Admin,
      '{ a: ticket(filter: {hours: {lt: 2}}) { name } b: ticket(filter: {name: {eq: "none"}}) { name } }',
    );
    expect(one.body).toEqual({ data: { a: { name: 'VPN' }, b: null } });

    const groups = await gql(
      ws.keys.Admin,
      '{ ticketsGroupBy(groupBy: ["priority"], aggregate: ["count", "max:hours"]) { groups { by { field value } count max { field value } } } }',
    );
    expect(groups.body.errors).toBeUndefined();
    expect(groups.body.data.ticketsGroupBy.groups).toEqual([
      { by: [{ field: 'priority', value: 'HIGH' }], count: 2, max: [{ field: 'hours', value: '5' }] },
      { by: [{ field: 'priority', value: 'LOW' }], count: 1, max: [{ field: 'hours', value: '1' }] },
    ]);

    // The shared rules, with the standard objects' codes.
    const refused = [
      ['{ tickets(first: 1, last: 1) { totalCount } }', 'INVALID_LIMIT'],
      ['{ tickets(orderBy: [{hours: AscNullsFirst, name: AscNullsFirst}]) { totalCount } }', 'INVALID_ORDER_BY'],
      ['{ tickets(filter: {name: {eq: null}}) { totalCount } }', 'INVALID_FILTER'],
      ['{ tickets(after: "garbage") { totalCount } }', 'INVALID_CURSOR'],
      ['{ ticketsGroupBy(groupBy: ["nope"]) { groups { count } } }', 'INVALID_GROUP_BY'],
    ];
    for (const [query, subCode] of refused) {
      const res = await gql(ws.keys.Admin, query);
      expect([res.status, res.body.errors?.[0]?.extensions?.code, res.body.errors?.[0]?.extensions?.subCode]).toEqual([
        200,
        'BAD_USER_INPUT',
        subCode,
      ]);
    }
    // Cost: each list multiplies by its page size, as a standard list does.
    const costly = Array.from({ length: 26 }, (_, i) => `l${i}: tickets(first: 200) { edges { node { id } } }`).join(' ');
    const tooCostly = await gql(ws.keys.Admin, `{ ${costly} }`);
    expect([tooCostly.status, tooCostly.body.errors?.[0]?.extensions?.code]).toEqual([400, 'GRAPHQL_VALIDATION_FAILED']);
    expect(tooCostly.body.errors[0].message).toMatch(/may return 5200 records/);
  });

  it('creates, upserts, batches, updates, deletes and restores, with the errors and the all-or-none of the standard objects', async () => {
    const { ws } = await withTickets();
    const id = randomUUID();
    const create = await gql(
      ws.keys.Admin,
      `mutation($d: TicketCreateInput!) { createTicket(data: $d) { id name priority createdAt updatedAt deletedAt } }`,
      { d: { id, name: 'Fire', priority: 'HIGH' } },
    );
    expect(create.body).toEqual({
      data: {
        createTicket: { id, name: 'Fire', priority: 'HIGH', createdAt: expect.any(String), updatedAt: expect.any(String), deletedAt: null },
      },
    });
    const taken = await gql(ws.keys.Admin, `mutation($id: UUID) { createTicket(data: {id: $id, name: "Again"}) { id } }`, { id });
    expect(taken.body.errors[0].extensions.code).toBe('CONFLICT');
    const upsert = await gql(
      ws.keys.Admin,
      `mutation($id: UUID) { createTicket(data: {id: $id, hours: 2}, upsert: true) { id name hours } }`,
      { id },
    );
    expect(upsert.body.data.createTicket).toEqual({ id, name: 'Fire', hours: 2 });
    const batchUpsert = await gql(
      ws.keys.Admin,
      `mutation($id: UUID) { createTickets(data: [{id: $id, name: "Fire out"}, {name: "Smoke"}], upsert: true) { id name } }`,
      { id },
    );
    expect(batchUpsert.body.data.createTickets).toEqual([
      { id, name: 'Fire out' },
      { id: expect.stringMatching(UUID), name: 'Smoke' },
    ]);
    expect(await ticketRows(ws.id)).toBe(2);

    // All or none: one bad record, or more than 60, writes nothing.
    const oneBad = await gql(ws.keys.Admin, `mutation($t: String) { createTickets(data: [{name: "ok"}, {name: $t}]) { id } }`, {
      t: 'x'.repeat(10_001),
    });
    expect([oneBad.body.errors[0].extensions.code, oneBad.body.errors[0].extensions.subCode]).toEqual([
      'BAD_USER_INPUT',
      'VALIDATION_FAILED',
    ]);
    const tooMany = await gql(ws.keys.Admin, 'mutation($d: [TicketCreateInput!]!) { createTickets(data: $d) { id } }', {
      d: Array.from({ length: 61 }, (_, i) => ({ name: `t${i}` })),
    });
    expect(tooMany.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(await ticketRows(ws.id)).toBe(2);

    const updated = await gql(
      ws.keys.Admin,
      `mutation($id: UUID!) { updateTicket(id: $id, data: {priority: LOW, tags: [SW]}) { priority tags name } }`,
      {
        id,
      },
    );
    expect(updated.body.data.updateTicket).toEqual({ priority: 'LOW', tags: ['SW'], name: 'Fire out' });
    const missing = await gql(ws.keys.Admin, `mutation($id: UUID!) { updateTicket(id: $id, data: {name: "x"}) { id } }`, {
      id: randomUUID(),
    });
    expect(missing.body.errors[0].extensions.code).toBe('NOT_FOUND');

    const deleted = await gql(ws.keys.Admin, `mutation($id: UUID!) { deleteTicket(id: $id) { id name deletedAt } }`, { id });
    expect(deleted.body.data.deleteTicket).toEqual({ id, name: 'Fire out', deletedAt: expect.any(String) });
    expect((await gql(ws.keys.Admin, '{ tickets { totalCount } }')).body.data.tickets.totalCount).toBe(1);
    const withDeleted = await gql(ws.keys.Admin, '{ tickets(filter: {deletedAt: {is: NOT_NULL}}) { edges { node { id } } } }');
    expect(withDeleted.body.data.tickets.edges).toEqual([{ node: { id } }]);
    const again = await gql(ws.keys.Admin, `mutation($id: UUID!) { deleteTicket(id: $id) { id } }`, { id });
    expect(again.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const restored = await gql(ws.keys.Admin, `mutation($id: UUID!) { restoreTicket(id: $id) { id deletedAt } }`, { id });
    expect(restored.body.data.restoreTicket).toEqual({ id, deletedAt: null });
    const live = await gql(ws.keys.Admin, `mutation($id: UUID!) { restoreTicket(id: $id) { id } }`, { id });
    expect(live.body.errors[0].extensions.code).toBe('CONFLICT');
    // Schema-level mistakes are the client's: 400 before anything runs.
    const badEnum = await gql(ws.keys.Admin, 'mutation { createTicket(data: {name: "x", priority: URGENT}) { id } }');
    expect([badEnum.status, badEnum.body.errors[0].extensions.code]).toEqual([400, 'GRAPHQL_VALIDATION_FAILED']);
    expect(await ticketRows(ws.id)).toBe(2);
  });

  it('replays a create under an Idempotency-Key, single and batch, and creates once', async () => {
    const { ws } = await withTickets();
    const CREATE = `mutation($d: TicketCreateInput!, $l: [TicketCreateInput!]!) { one: createTicket(data: $d) { id name } many: createTickets(data: $l) { id } }`;
    const variables = { d: { name: 'Keyed' }, l: [{ name: 'K1' }, { name: 'K2' }] };
    const key = `co-gql-${randomUUID()}`;
    const first = await gql(ws.keys.Admin, CREATE, variables, key);
    expect(first.body.errors).toBeUndefined();
    const retry = await gql(ws.keys.Admin, CREATE, variables, key);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.data).toEqual(first.body.data);
    expect(await ticketRows(ws.id)).toBe(3);
    const reused = await gql(ws.keys.Admin, CREATE, { ...variables, d: { name: 'Other' } }, key);
    expect([reused.status, reused.body.errors[0].extensions.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    expect(await ticketRows(ws.id)).toBe(3);
  });

  it("answers FORBIDDEN to a role without the object, and at the field's own path to a role that cannot read a field", async () => {
    const { ws } = await withTickets();
    await gql(ws.keys.Admin, 'mutation { createTicket(data: {name: "Seen", hours: 7}) { id } }');
    const companiesOnly = (
      await keyWithRole(ds, ws.id, 'Companies only', { companies: { read: true, create: true, update: true, delete: true } })
    ).secret;
    for (const query of [
      '{ tickets { totalCount } }',
      '{ ticket(filter: {name: {eq: "Seen"}}) { id } }',
      'mutation { createTicket(data: {name: "x"}) { id } }',
    ]) {
      const res = await gql(companiesOnly, query);
      expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
    }
    // The built-in Viewer reads the object as it reads companies, and writes nothing.
    expect((await gql(ws.keys.Viewer, '{ tickets { totalCount } }')).body.data.tickets.totalCount).toBe(1);
    expect((await gql(ws.keys.Viewer, 'mutation { createTicket(data: {name: "x"}) { id } }')).body.errors[0].extensions.code).toBe(
      'FORBIDDEN',
    );

    const all = { read: true, create: true, update: true, delete: true };
    const role = await createRole(ds, ws.id, {
      name: 'No hours',
      description: '',
      objectPermissions: { companies: all, people: all, opportunities: all, tickets: all },
      fieldPermissions: { tickets: { hours: { read: false, update: false } } },
      settingsPermissions: [],
      assignableToUsers: true,
      assignableToApiKeys: true,
    });
    const restricted = (
      await createApiKey(ds, { workspaceId: ws.id, role, name: 'no hours', expiresAt: new Date(Date.now() + 86_400_000) })
    ).secret;
    const read = await gql(restricted, '{ tickets { edges { node { name hours } } } }');
    expect(read.status).toBe(200);
    expect(read.body.errors).toHaveLength(1);
    expect(read.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(read.body.errors[0].path).toEqual(['tickets', 'edges', 0, 'node', 'hours']);
    expect(read.body.data.tickets.edges[0].node).toEqual({ name: 'Seen', hours: null });
    const filtered = await gql(restricted, '{ tickets(filter: {hours: {gt: 1}}) { totalCount } }');
    expect(filtered.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const write = await gql(restricted, 'mutation { createTicket(data: {name: "y", hours: 1}) { id } }');
    expect(write.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(await ticketRows(ws.id)).toBe(1);
    // Another workspace's role cannot name this workspace's object.
    const other = await newWorkspace(ds, 'co-gql-other');
    await expect(
      createRole(ds, other.id, {
        name: 'Theirs',
        description: '',
        objectPermissions: { companies: all },
        fieldPermissions: { tickets: { hours: { read: false, update: false } } },
        settingsPermissions: [],
        assignableToUsers: true,
        assignableToApiKeys: true,
      }),
    ).rejects.toThrow(/unknown object "tickets"/);
  });

  it('a deactivated object, or field, leaves the schema on the next request and comes back with its records', async () => {
    const { ws, api, objectId } = await withTickets();
    await gql(ws.keys.Admin, 'mutation { createTicket(data: {name: "Kept", hours: 4}) { id } }');
    expect((await api.patch(`/rest/metadata/objects/${objectId}`, { isActive: false })).status).toBe(200);
    const gone = await gql(ws.keys.Admin, '{ tickets { totalCount } }');
    expect([gone.status, gone.body.errors[0].extensions.code]).toEqual([400, 'GRAPHQL_VALIDATION_FAILED']);
    expect((await gql(ws.keys.Admin, TYPE, { name: 'Ticket' })).body.data.__type).toBeNull();
    expect((await api.patch(`/rest/metadata/objects/${objectId}`, { isActive: true })).status).toBe(200);
    expect((await gql(ws.keys.Admin, '{ tickets { edges { node { name hours } } } }')).body.data.tickets.edges).toEqual([
      { node: { name: 'Kept', hours: 4 } },
    ]);
    const hours = (await api.get('/rest/metadata/fields', { object: 'tickets' })).body.data.fields.find(
      (f: { name: string }) => f.name === 'hours',
    );
    expect((await api.patch(`/rest/metadata/fields/${hours.id}`, { isActive: false })).status).toBe(200);
    expect((await gql(ws.keys.Admin, '{ tickets { edges { node { hours } } } }')).status).toBe(400);
    expect((await gql(ws.keys.Admin, '{ tickets { edges { node { name } } } }')).body.data.tickets.edges).toEqual([
      { node: { name: 'Kept' } },
    ]);
  });

  it('an object without an active field is served without an update mutation (an input needs a field)', async () => {
    const ws = await newWorkspace(ds, 'co-gql-bare');
    // As an object whose fields were all deactivated leaves it (its `name` included).
    await ds.query(
      `INSERT INTO objects (workspace_id, name_singular, name_plural, label_singular, label_plural) VALUES ($1, 'ticket', 'tickets', 'T', 'Ts')`,
      [ws.id],
    );
    await ds.query('UPDATE workspaces SET data_model_version = data_model_version + 1 WHERE id = $1', [ws.id]);
    const made = await gql(ws.keys.Admin, 'mutation { createTicket(data: {}) { id } }');
    expect(made.body.errors).toBeUndefined();
    expect((await gql(ws.keys.Admin, '{ tickets { totalCount edges { node { id createdAt } } } }')).body.data.tickets.totalCount).toBe(1);
    expect((await gql(ws.keys.Admin, TYPE, { name: 'TicketUpdateInput' })).body.data.__type).toBeNull();
  });

  it('names that would make one GraphQL name twice never break the schema: the later one is left out of GraphQL, the rest is served', async () => {
    const ws = await newWorkspace(ds, 'co-gql-clash');
    const api = client(http, ws.keys.Admin);
    // ticket.priorityStatus and ticketPriority.status would both make the enum TicketPriorityStatusEnum.
    expect((await api.post('/rest/metadata/objects', ticket)).status).toBe(201);
    expect(
      (
        await api.post('/rest/metadata/objects', {
          nameSingular: 'ticketPriority',
          namePlural: 'ticketPriorities',
          labelSingular: 'P',
          labelPlural: 'Ps',
        })
      ).status,
    ).toBe(201);
    const select = { type: 'SELECT', options: [{ value: 'OPEN' }, { value: 'SHUT' }] };
    expect((await api.post('/rest/metadata/fields', { object: 'tickets', name: 'priorityStatus', ...select })).status).toBe(201);
    expect(
      (await api.post('/rest/metadata/fields', { object: 'ticketPriorities', name: 'status', type: 'SELECT', options: [{ value: 'A' }] }))
        .status,
    ).toBe(201);
    const both = await gql(
      ws.keys.Admin,
      'mutation { createTicket(data: {name: "T", priorityStatus: OPEN}) { priorityStatus } createTicketPriority(data: {name: "P"}) { name } }',
    );
    expect(both.body).toEqual({ data: { createTicket: { priorityStatus: 'OPEN' }, createTicketPriority: { name: 'P' } } });
    const left = await gql(ws.keys.Admin, '{ ticketPriorities { edges { node { status } } } }');
    expect([left.status, left.body.errors[0].extensions.code]).toEqual([400, 'GRAPHQL_VALIDATION_FAILED']);
    // REST serves the field all the same.
    expect((await api.post('/rest/ticketPriorities', { name: 'Q', status: 'A' })).status).toBe(201);
    // Names that would make a root field the schema has, or a type named like an enum, are refused when the object is made.
    for (const [nameSingular, namePlural, message] of [
      ['vaultSecretValue', 'vaultSecretValues', /GraphQL field vaultSecretValue, which exists already/],
      ['companiesGroupBy', 'companiesGroupBys', /GraphQL field companiesGroupBy, which exists/],
      ['ticketsGroupBy', 'ticketsGroupBys', /GraphQL field ticketsGroupBy, which exists/],
      ['thingsGroupBy', 'things', /GraphQL field thingsGroupBy twice/],
      ['statusEnum', 'statusEnums', /GraphQL type StatusEnum, a name kept for enums/],
    ] as const) {
      const res = await api.post('/rest/metadata/objects', { nameSingular, namePlural, labelSingular: 'X', labelPlural: 'Xs' });
      expect([res.status, res.body.messages?.join(' ')]).toEqual([400, expect.stringMatching(message)]);
    }
  });

  it("an object's description, quotes and backslashes included, is its type's description", async () => {
    const ws = await newWorkspace(ds, 'co-gql-text');
    const description = 'Support "tickets" \\ """ \u2713 \ud834\udd1e';
    expect((await client(http, ws.keys.Admin).post('/rest/metadata/objects', { ...ticket, description })).status).toBe(201);
    const res = await gql(ws.keys.Admin, '{ __type(name: "Ticket") { description } }');
    expect(res.body).toEqual({ data: { __type: { description } } });
  });

  it('writes running while the data model changes all land: no 500, no lost write', async () => {
    const { ws, api } = await withTickets();
    const writes = Array.from({ length: 24 }, (_, i) =>
      gql(ws.keys.Admin, `mutation($n: String) { createTicket(data: {name: $n}) { id } }`, { n: `churn ${i}` }),
    );
    const changes = [
      api.post('/rest/metadata/fields', { object: 'tickets', name: 'extraOne', type: 'TEXT' }),
      api.post('/rest/metadata/objects', { nameSingular: 'project', namePlural: 'projects', labelSingular: 'P', labelPlural: 'Ps' }),
      api.post('/rest/metadata/fields', { object: 'tickets', name: 'extraTwo', type: 'SELECT', options: [{ value: 'A' }] }),
    ];
    const [answers, changed] = await Promise.all([Promise.all(writes), Promise.all(changes)]);
    for (const res of changed) expect(res.status).toBe(201);
    for (const res of answers) expect([res.status, res.body.errors]).toEqual([200, undefined]);
    expect(await ticketRows(ws.id)).toBe(24);
    const after = await gql(ws.keys.Admin, '{ tickets(filter: {name: {startsWith: "churn"}}) { totalCount } projects { totalCount } }');
    expect(after.body).toEqual({ data: { tickets: { totalCount: 24 }, projects: { totalCount: 0 } } });
  });

  it('lists every root field of the committed GraphQL schema among those no object may make', () => {
    const schema = readFileSync('apps/records-api/schema.gql', 'utf8');
    const roots = [...schema.matchAll(/^type (?:Query|Mutation) \{\n([\s\S]*?)^\}/gm)].flatMap((m) =>
      [...m[1].matchAll(/^ {2}(\w+)[(:]/gm)].map((f) => f[1]),
    );
    expect(roots.length).toBeGreaterThan(20);
    const standard = new Set(OBJECTS.flatMap((o) => objectRootFieldNames(o.singular, o.plural)));
    expect(roots.filter((name) => !standard.has(name) && !BASE_GRAPHQL_ROOT_FIELDS.has(name))).toEqual([]);
  });
});

/**
 * Schema builds on a real records API process (as test/attack-graphql-schemas.e2e-spec.ts):
 * the process reports its builds, what its cache holds and its event loop's longest delay
 * over IPC (libs/ops/src/process-stats.ts); requests are not timed.
 */
describe('custom objects in GraphQL schemas on a real records API process', () => {
  let app: INestApplication;
  let ds: DataSource;
  let api: AppProcess;

  beforeAll(async () => {
    ({ app, ds } = await startApi());
    api = await spawnApp('records-api', { WEBHOOKS_WORKER: 'off' }, { ipc: true });
  }, 120_000);
  afterAll(async () => {
    api?.child.kill('SIGKILL');
    await app?.close();
  });

  const call = (secret: string, method: string, path: string, body?: unknown) =>
    httpJson(`${api.url}${path}`, { method, headers: { Authorization: `Bearer ${secret}` }, body });
  const gql = (secret: string, query: string) => call(secret, 'POST', '/graphql', { query });

  async function workspaceWith(objects: { singular: string; plural: string; fields: string[] }[]): Promise<TestWorkspace> {
    const ws = await newWorkspace(ds, 'co-gql-builds');
    for (const o of objects) {
      const made = await call(ws.keys.Admin, 'POST', '/rest/metadata/objects', {
        nameSingular: o.singular,
        namePlural: o.plural,
        labelSingular: o.singular,
        labelPlural: o.plural,
      });
      expect(made.status).toBe(201);
      for (const name of o.fields) {
        expect((await call(ws.keys.Admin, 'POST', '/rest/metadata/fields', { object: o.plural, name, type: 'TEXT' })).status).toBe(201);
      }
    }
    return ws;
  }

  it('builds one schema per data-model version, and one for two workspaces whose objects are identical', async () => {
    const objects = [
      { singular: 'ticket', plural: 'tickets', fields: ['summary'] },
      { singular: 'project', plural: 'projects', fields: ['code', 'owner'] },
    ];
    const one = await workspaceWith(objects);
    const two = await workspaceWith(objects);
    const before = await statsOf(api, 'reset');
    for (const ws of [one, two, one, two]) {
      const res = await gql(ws.keys.Admin, '{ tickets { totalCount } projects { edges { node { code owner } } } }');
      expect(res.body).toEqual({ data: { tickets: { totalCount: 0 }, projects: { edges: [] } } });
    }
    const shared = await statsOf(api);
    expect(shared['graphqlSchemas.builds'] - before['graphqlSchemas.builds']).toBe(1);
    // One schema, each workspace's own records.
    const made = await gql(one.keys.Admin, 'mutation { createTicket(data: {summary: "Only in one"}) { id } }');
    expect(made.body.errors).toBeUndefined();
    expect((await gql(one.keys.Admin, '{ tickets { totalCount } }')).body.data.tickets.totalCount).toBe(1);
    expect((await gql(two.keys.Admin, '{ tickets { totalCount } }')).body.data.tickets.totalCount).toBe(0);
    const id = made.body.data.createTicket.id;
    const theirs = await gql(two.keys.Admin, `mutation { updateTicket(id: "${id}", data: {summary: "x"}) { id } }`);
    expect(theirs.body.errors[0].extensions.code).toBe('NOT_FOUND');

    // A new version of one of them is a build of its own; the other keeps the shared schema.
    expect((await call(one.keys.Admin, 'POST', '/rest/metadata/fields', { object: 'tickets', name: 'extra', type: 'TEXT' })).status).toBe(
      201,
    );
    for (let i = 0; i < 3; i++) {
      expect((await gql(one.keys.Admin, '{ tickets { edges { node { extra } } } }')).body).toEqual({
        data: { tickets: { edges: [{ node: { extra: null } }] } },
      });
      expect((await gql(two.keys.Admin, '{ tickets { edges { node { extra } } } }')).status).toBe(400);
    }
    const after = await statsOf(api);
    expect(after['graphqlSchemas.builds'] - shared['graphqlSchemas.builds']).toBe(1);
    expect(after['eventLoop.maxDelayMs']).toBeLessThan(1_000);
  }, 120_000);

  it('a workspace making objects in a loop builds once per version, never slows another, and never shows it its objects', async () => {
    const churner = await workspaceWith([]);
    const bystander = await workspaceWith([{ singular: 'ticket', plural: 'tickets', fields: [] }]);
    const ROUNDS = 8;
    const before = await statsOf(api, 'reset');
    for (let round = 1; round <= ROUNDS; round++) {
      const made = await call(churner.keys.Admin, 'POST', '/rest/metadata/objects', {
        nameSingular: `thing${round}`,
        namePlural: `things${round}`,
        labelSingular: 'Thing',
        labelPlural: 'Things',
      });
      expect(made.status).toBe(201);
      const [mine, theirs] = await Promise.all([
        gql(churner.keys.Admin, `{ things${round} { totalCount } }`),
        gql(bystander.keys.Admin, `{ tickets { totalCount } things${round} { totalCount } }`),
      ]);
      expect(mine.body).toEqual({ data: { [`things${round}`]: { totalCount: 0 } } });
      expect([theirs.status, theirs.body.errors[0].extensions.code]).toEqual([400, 'GRAPHQL_VALIDATION_FAILED']);
      expect(JSON.stringify(theirs.body)).not.toMatch(new RegExp(`Thing${round}`));
    }
    const after = await statsOf(api);
    expect(api.child.exitCode).toBeNull();
    // One build per version of the churner, and the bystander's one.
    expect(after['graphqlSchemas.builds'] - before['graphqlSchemas.builds']).toBe(ROUNDS + 1);
    expect(after['graphqlSchemas.bytes']).toBeLessThanOrEqual(after['graphqlSchemas.budgetBytes']);
    expect(after['eventLoop.maxDelayMs']).toBeLessThan(1_000);
  }, 180_000);
});
