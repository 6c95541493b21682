import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { client, expectError, keyWithRole, type Client, type Http } from './rest-helpers.js';

const ticket = { nameSingular: 'ticket', namePlural: 'tickets', labelSingular: 'Ticket', labelPlural: 'Tickets' };
const all = { read: true, create: true, update: true, delete: true };

type Hit = { object: string; id: string; label: string; score: number; record: Record<string, unknown> };

/** Search in a workspace's own objects (docs/rest.md "Search"; docs/decisions/0060-custom-objects-data-surfaces.md). */
describe('custom objects: search', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  async function search(api: Client, query: Record<string, string | number>): Promise<Hit[]> {
    const res = await api.get('/rest/search', query);
    expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
    return res.body.data.search;
  }

  /** A workspace with `tickets` (TEXT name, TEXT title, EMAILS contact, LINKS site, PHONES phone, SELECT priority, NUMBER score, TEXT secret). */
  async function withTickets(label: string): Promise<{ ws: TestWorkspace; api: Client; objectId: string; fields: Record<string, string> }> {
    const ws = await newWorkspace(ds, label);
    const api = client(http, ws.keys.Admin);
    const made = await api.post('/rest/metadata/objects', ticket);
    expect(made.status).toBe(201);
    const fields: Record<string, string> = {};
    for (const field of [
      { name: 'title', type: 'TEXT' },
      { name: 'contact', type: 'EMAILS' },
      { name: 'site', type: 'LINKS' },
      { name: 'phone', type: 'PHONES' },
      { name: 'priority', type: 'SELECT', options: [{ value: 'URGENT' }, { value: 'LOW' }] },
      { name: 'score', type: 'NUMBER' },
      { name: 'secret', type: 'TEXT' },
    ]) {
      const res = await api.post('/rest/metadata/fields', { object: 'tickets', ...field });
      expect(res.status).toBe(201);
      fields[field.name] = res.body.data.createField.id;
    }
    return { ws, api, objectId: made.body.data.createObject.id, fields };
  }

  it('finds records by their label identifier and TEXT, EMAILS, LINKS and PHONES fields, with typos and prefixes, labelled by their name', async () => {
    const { api } = await withTickets('cos-find');
    const printer = (
      await api.post('/rest/tickets', {
        name: 'Printer on fire',
        title: 'Facilities escalation',
        contact: { primaryEmail: 'zoe@initech.org', additionalEmails: ['help@helpdesk.example'] },
        site: { primaryLinkUrl: 'https://status.globex.com' },
        phone: { primaryPhoneNumber: '06 12 34 56 78', primaryPhoneCallingCode: '+33' },
        priority: 'URGENT',
        score: 4242,
      })
    ).body.data.createTicket;
    const coffee = (await api.post('/rest/tickets', { name: 'Coffee machine broken' })).body.data.createTicket;
    const company = (await api.post('/rest/companies', { name: 'Printerland' })).body.data.createCompany;

    const found = await search(api, { q: 'printer', objects: 'tickets' });
    expect(found).toEqual([
      {
        object: 'tickets',
        id: printer.id,
        label: 'Printer on fire',
        score: expect.any(Number),
        record: expect.objectContaining({ id: printer.id, name: 'Printer on fire', priority: 'URGENT' }),
      },
    ]);
    // Every readable object by default, custom ones included; names weigh more than other text.
    const everywhere = await search(api, { q: 'printer' });
    expect(everywhere.map((h) => [h.object, h.id])).toEqual(
      expect.arrayContaining([
        ['tickets', printer.id],
        ['companies', company.id],
      ]),
    );
    const ids = async (q: string) => (await search(api, { q, objects: 'tickets' })).map((h) => h.id);
    expect(await ids('escalation')).toEqual([printer.id]);
    expect(await ids('initech')).toEqual([printer.id]);
    expect(await ids('helpdesk')).toEqual([printer.id]);
    expect(await ids('globex')).toEqual([printer.id]);
    expect(await ids('0612345678')).toEqual([printer.id]);
    expect(await ids('33612345678')).toEqual([printer.id]);
    expect(await ids('cofee')).toEqual([coffee.id]); // one typo
    expect(await ids('mach brok')).toEqual([coffee.id]); // prefixes
    // Option values and numbers are not searched.
    expect(await ids('urgent')).toEqual([]);
    expect(await ids('4242')).toEqual([]);
    // Edited, the record is found by its new words only; deleted, not at all.
    expect((await api.patch(`/rest/tickets/${coffee.id}`, { name: 'Espresso machine fixed' })).status).toBe(200);
    expect(await ids('coffee')).toEqual([]);
    expect(await ids('espresso')).toEqual([coffee.id]);
    expect((await api.delete(`/rest/tickets/${coffee.id}`)).status).toBe(200);
    expect(await ids('espresso')).toEqual([]);
    // Pages of one object go on by cursor.
    for (const n of [1, 2, 3]) await api.post('/rest/tickets', { name: `Printer jam ${n}` });
    const first = await api.get('/rest/search', { q: 'printer', objects: 'tickets', limit: 2 });
    expect(first.body.data.search).toHaveLength(2);
    const next = await api.get('/rest/search', {
      q: 'printer',
      objects: 'tickets',
      limit: 2,
      starting_after: first.body.pageInfo.endCursor,
    });
    expect(next.status).toBe(200);
    const paged = [...first.body.data.search, ...next.body.data.search].map((h: Hit) => h.id);
    expect(new Set(paged).size).toBe(4);
  });

  it("never names or finds another workspace's object, a deactivated one or one the role cannot read", async () => {
    const mine = await withTickets('cos-mine');
    const theirs = await withTickets('cos-theirs');
    await theirs.api.post('/rest/metadata/objects', { ...ticket, nameSingular: 'project', namePlural: 'projects' });
    await theirs.api.post('/rest/projects', { name: 'Zeppelin project' });
    await theirs.api.post('/rest/tickets', { name: 'Zeppelin ticket' });
    const own = (await mine.api.post('/rest/tickets', { name: 'Zeppelin mine', secret: 'quartz' })).body.data.createTicket;

    const foreign = expectError(await mine.api.get('/rest/search', { q: 'zeppelin', objects: 'projects' }), 400, 'VALIDATION_FAILED');
    expect(foreign).toMatch(/objects: unknown object "projects" \(searchable: companies, people, opportunities, tickets\)/);
    expect((await search(mine.api, { q: 'zeppelin' })).map((h) => h.id)).toEqual([own.id]);
    expect((await search(mine.api, { q: 'zeppelin', objects: 'tickets' })).map((h) => h.id)).toEqual([own.id]);
    // A huge list of names is one short message.
    const many = Array.from({ length: 500 }, (_, i) => `thing${i}`).join(',');
    const huge = expectError(await mine.api.get('/rest/search', { q: 'zeppelin', objects: many }), 400, 'VALIDATION_FAILED');
    expect(huge).toMatch(/"thing9" and 490 more/);
    expect(huge.length).toBeLessThan(400);

    // A role without the object: 403 when named, left out otherwise.
    const companiesOnly = client(http, (await keyWithRole(ds, mine.ws.id, 'Companies only', { companies: all })).secret);
    expectError(await companiesOnly.get('/rest/search', { q: 'zeppelin', objects: 'tickets' }), 403, 'FORBIDDEN');
    expect(await search(companiesOnly, { q: 'zeppelin' })).toEqual([]);
    // A field the role cannot read finds nothing.
    const noSecret = await keyWithRole(ds, mine.ws.id, 'No secret', { tickets: all });
    await ds.query(
      `UPDATE roles SET field_permissions = '{"tickets": {"secret": {"read": false, "update": false}}}' WHERE workspace_id = $1 AND id = $2`,
      [mine.ws.id, noSecret.roleId],
    );
    const hidden = client(http, noSecret.secret);
    expect((await search(mine.api, { q: 'quartz' })).map((h) => h.id)).toEqual([own.id]);
    expect(await search(hidden, { q: 'quartz', objects: 'tickets' })).toEqual([]);
    expect((await search(hidden, { q: 'zeppelin', objects: 'tickets' })).map((h) => h.id)).toEqual([own.id]);

    // Deactivated: unknown when named, not searched otherwise; back with its records when reactivated.
    expect((await mine.api.patch(`/rest/metadata/objects/${mine.objectId}`, { isActive: false })).status).toBe(200);
    expect(expectError(await mine.api.get('/rest/search', { q: 'zeppelin', objects: 'tickets' }), 400, 'VALIDATION_FAILED')).toMatch(
      /unknown object "tickets" \(searchable: companies, people, opportunities\)/,
    );
    expect(await search(mine.api, { q: 'zeppelin' })).toEqual([]);
    expect((await mine.api.patch(`/rest/metadata/objects/${mine.objectId}`, { isActive: true })).status).toBe(200);
    expect((await search(mine.api, { q: 'zeppelin' })).map((h) => h.id)).toEqual([own.id]);
  });

  it('follows the label identifier and the fields turned off and on', async () => {
    const { api, objectId, fields } = await withTickets('cos-label');
    const made = (await api.post('/rest/tickets', { name: 'Printer on fire', title: 'Facilities escalation' })).body.data.createTicket;
    expect((await api.patch(`/rest/metadata/objects/${objectId}`, { labelIdentifierField: 'title' })).status).toBe(200);
    const byTitle = await search(api, { q: 'facilities', objects: 'tickets' });
    expect(byTitle.map((h) => [h.id, h.label])).toEqual([[made.id, 'Facilities escalation']]);
    // The former label is text like any other: still found, with the new label.
    expect((await search(api, { q: 'printer', objects: 'tickets' })).map((h) => h.label)).toEqual(['Facilities escalation']);
    // A TEXT field turned off no longer finds the record; on again, it does.
    const off = await api.patch(`/rest/metadata/fields/${fields.title}`, { isActive: false });
    expect(off.status).toBe(409); // the label identifier stays on
    expect((await api.patch(`/rest/metadata/objects/${objectId}`, { labelIdentifierField: 'name' })).status).toBe(200);
    expect((await api.patch(`/rest/metadata/fields/${fields.title}`, { isActive: false })).status).toBe(200);
    expect(await search(api, { q: 'facilities', objects: 'tickets' })).toEqual([]);
    expect((await api.patch(`/rest/metadata/fields/${fields.title}`, { isActive: true })).status).toBe(200);
    expect((await search(api, { q: 'facilities', objects: 'tickets' })).map((h) => h.label)).toEqual(['Printer on fire']);
  });

  it('GraphQL search reads the standard objects only (its result union has their types), without an error', async () => {
    const { ws, api } = await withTickets('cos-graphql');
    await api.post('/rest/tickets', { name: 'Acme ticket' });
    const company = (await api.post('/rest/companies', { name: 'Acme' })).body.data.createCompany;
    const res = await request(http)
      .post('/graphql')
      .set(bearer(ws.keys.Admin))
      .send({ query: '{ search(q: "acme") { edges { node { object id label record { __typename ... on Company { name } } } } } }' });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.search.edges.map((e: { node: { object: string; id: string } }) => [e.node.object, e.node.id])).toEqual([
      ['companies', company.id],
    ]);
  });
});
