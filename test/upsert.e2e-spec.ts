import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { allPermissions, client, expectError, keyWithRole, type Client, type Http } from './rest-helpers.js';

/** Unique fields and upsert by natural key (docs/data-model.md "Unique fields"; docs/rest.md "Upsert"). */
describe('unique fields and upsert', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  async function admin(label = 'uq'): Promise<{ ws: TestWorkspace; api: Client }> {
    const ws = await newWorkspace(ds, label);
    return { ws, api: client(http, ws.keys.Admin) };
  }

  const put = (secret: string, path: string) => request(http).put(path).set(bearer(secret));

  it('a new workspace starts with the built-in unique fields', async () => {
    const { api } = await admin();
    const res = await api.get('/rest/metadata/unique-fields');
    expect(res.status).toBe(200);
    expect(
      res.body.data.uniqueFields.map((u: { object: string; field: string; builtIn: boolean }) => [u.object, u.field, u.builtIn]),
    ).toEqual([
      ['companies', 'domainName.primaryLinkUrl', true],
      ['people', 'emails.primaryEmail', true],
    ]);
  });

  it('a create that collides is 409 naming the field and the existing id; e-mails compare case-insensitively', async () => {
    const { api } = await admin();
    const first = await api.post('/rest/people', { name: { firstName: 'Ann' }, emails: { primaryEmail: 'ann@example.com' } });
    expect(first.status).toBe(201);
    const id = first.body.data.createPerson.id;
    const again = await api.post('/rest/people', { name: { firstName: 'Other' }, emails: { primaryEmail: 'ANN@Example.com' } });
    const message = expectError(again, 409, 'CONFLICT');
    expect(message).toContain('emails.primaryEmail');
    expect(message).toContain(id);
    // A batch holding a duplicate writes nothing.
    const batch = await api.post('/rest/batch/people', [
      { name: { firstName: 'New' }, emails: { primaryEmail: 'new@example.com' } },
      { name: { firstName: 'Dup' }, emails: { primaryEmail: 'ann@example.com' } },
    ]);
    expectError(batch, 409, 'CONFLICT');
    const list = await api.get('/rest/people', { filter: 'emails.primaryEmail[eq]:new@example.com' });
    expect(list.body.totalCount).toBe(0);
    // An update onto another record's value is refused too.
    const other = await api.post('/rest/people', { emails: { primaryEmail: 'bob@example.com' } });
    const moved = await api.patch(`/rest/people/${other.body.data.createPerson.id}`, { emails: { primaryEmail: 'Ann@example.com' } });
    expect(expectError(moved, 409, 'CONFLICT')).toContain(id);
  });

  it('domains compare without scheme, www. and trailing slash', async () => {
    const { api } = await admin();
    expect((await api.post('/rest/companies', { name: 'Acme', domainName: { primaryLinkUrl: 'https://www.acme.com/' } })).status).toBe(201);
    for (const url of ['acme.com', 'http://acme.com', 'ACME.com//', 'www.acme.com']) {
      expectError(await api.post('/rest/companies', { name: 'Acme 2', domainName: { primaryLinkUrl: url } }), 409, 'CONFLICT');
    }
    expect((await api.post('/rest/companies', { name: 'Acme EU', domainName: { primaryLinkUrl: 'acme.eu' } })).status).toBe(201);
  });

  it('a deleted record frees its value; another workspace never collides', async () => {
    const { api } = await admin();
    const first = await api.post('/rest/people', { emails: { primaryEmail: 'free@example.com' } });
    expect((await api.delete(`/rest/people/${first.body.data.createPerson.id}`)).status).toBe(200);
    expect((await api.post('/rest/people', { emails: { primaryEmail: 'free@example.com' } })).status).toBe(201);
    const { api: stranger } = await admin('uq-other');
    expect((await stranger.post('/rest/people', { emails: { primaryEmail: 'free@example.com' } })).status).toBe(201);
  });

  it('upsert updates the match with only the fields sent and creates when there is none', async () => {
    const { api } = await admin();
    const made = await api.post('/rest/people', {
      name: { firstName: 'Cy', lastName: 'Twombly' },
      emails: { primaryEmail: 'cy@example.com' },
    });
    const id = made.body.data.createPerson.id;
    const updated = await api.post('/rest/people?upsert=true', {
      emails: { primaryEmail: 'CY@example.com' },
      name: { lastName: 'Artist' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.meta).toEqual({ created: [], updated: [id] });
    expect(updated.body.data.createPerson).toMatchObject({ id, name: { firstName: 'Cy', lastName: 'Artist' } });

    const created = await api.post('/rest/people?upsert=true', { emails: { primaryEmail: 'dee@example.com' }, name: { firstName: 'Dee' } });
    expect(created.status).toBe(201);
    expect(created.body.meta).toEqual({ created: [created.body.data.createPerson.id], updated: [] });

    // By id first: the id's record is updated even with a new e-mail.
    const byId = await api.post('/rest/people?upsert=true', { id, emails: { primaryEmail: 'cy.t@example.com' } });
    expect(byId.status).toBe(200);
    expect(byId.body.data.createPerson).toMatchObject({ id, emails: { primaryEmail: 'cy.t@example.com' } });
    // An unknown id with no other match creates with that id.
    const chosen = randomUUID();
    const fresh = await api.post('/rest/people?upsert=true', { id: chosen, emails: { primaryEmail: 'eve@example.com' } });
    expect(fresh.status).toBe(201);
    expect(fresh.body.data.createPerson.id).toBe(chosen);
  });

  it('batch upsert says which records were created and which updated, in order', async () => {
    const { api } = await admin();
    const a = (await api.post('/rest/companies', { name: 'A', domainName: { primaryLinkUrl: 'a.io' } })).body.data.createCompany;
    const res = await api.post('/rest/batch/companies?upsert=true', [
      { name: 'B', domainName: { primaryLinkUrl: 'b.io' } },
      { name: 'A renamed', domainName: { primaryLinkUrl: 'https://a.io/' } },
    ]);
    expect(res.status).toBe(200);
    const [b, a2] = res.body.data.createCompanies;
    expect(a2).toMatchObject({ id: a.id, name: 'A renamed' });
    expect(res.body.meta).toEqual({ created: [b.id], updated: [a.id] });
    const all = await api.post('/rest/batch/companies?upsert=true', [{ name: 'C', domainName: { primaryLinkUrl: 'c.io' } }]);
    expect(all.status).toBe(201);
    // Re-running the same batch changes nothing but the updated time.
    const again = await api.post('/rest/batch/companies?upsert=true', [
      { name: 'B', domainName: { primaryLinkUrl: 'b.io' } },
      { name: 'A renamed', domainName: { primaryLinkUrl: 'https://a.io/' } },
    ]);
    expect(again.status).toBe(200);
    expect(again.body.meta).toEqual({ created: [], updated: [b.id, a.id] });
    expect((await api.get('/rest/companies')).body.totalCount).toBe(3);
  });

  it('match names the one unique field to match on', async () => {
    const { api } = await admin();
    const p = (await api.post('/rest/people', { emails: { primaryEmail: 'm@example.com' }, name: { firstName: 'x' } })).body.data
      .createPerson;
    const res = await api.post('/rest/people?upsert=true&match=emails.primaryEmail', {
      emails: { primaryEmail: 'm@example.com' },
      name: { firstName: 'y' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.createPerson).toMatchObject({ id: p.id, name: { firstName: 'y' } });
    // The top-level name of a composite names it too.
    expect((await api.post('/rest/people?upsert=true&match=emails', { emails: { primaryEmail: 'm@example.com' } })).status).toBe(200);
    // With match=emails, an id in the body does not match.
    const other = randomUUID();
    expectError(
      await api.post('/rest/people?upsert=true&match=emails', { id: other, emails: { primaryEmail: 'm@example.com' } }),
      409,
      'CONFLICT',
    );
  });

  it('bad upsert parameters are 400: a non-unique match, match without upsert, a missing match value, a bad upsert value', async () => {
    const { api } = await admin();
    expect(
      expectError(await api.post('/rest/people?upsert=true&match=name', { name: { firstName: 'x' } }), 400, 'VALIDATION_FAILED'),
    ).toContain('not a unique field');
    expectError(await api.post('/rest/people?match=emails', { name: { firstName: 'x' } }), 400, 'VALIDATION_FAILED');
    expect(
      expectError(await api.post('/rest/people?upsert=true&match=emails', { name: { firstName: 'x' } }), 400, 'VALIDATION_FAILED'),
    ).toContain('missing');
    expectError(await api.post('/rest/people?upsert=yes', { name: { firstName: 'x' } }), 400, 'VALIDATION_FAILED');
    // A bad value in an upsert writes nothing.
    expectError(
      await api.post('/rest/people?upsert=true', { emails: { primaryEmail: 'q@example.com' }, name: { firstName: 7 } }),
      400,
      'VALIDATION_FAILED',
    );
    expect((await api.get('/rest/people')).body.totalCount).toBe(0);
  });

  it('concurrent upserts of one key give one record', async () => {
    const { api } = await admin();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        api.post('/rest/people?upsert=true', { emails: { primaryEmail: 'race@example.com' }, name: { lastName: `t${i}` } }),
      ),
    );
    expect(results.map((r) => r.status).every((s) => s === 200 || s === 201)).toBe(true);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    const ids = new Set(results.map((r) => r.body.data.createPerson.id));
    expect(ids.size).toBe(1);
    const list = await api.get('/rest/people', { filter: 'emails.primaryEmail[eq]:race@example.com' });
    expect(list.body.totalCount).toBe(1);
  });

  it('permissions: upsert needs create and update', async () => {
    const { ws } = await admin();
    const createOnly = allPermissions();
    createOnly.people.update = false;
    const { secret } = await keyWithRole(ds, ws.id, 'create only', createOnly);
    expectError(
      await client(http, secret).post('/rest/people?upsert=true', { emails: { primaryEmail: 'p@example.com' } }),
      403,
      'FORBIDDEN',
    );
    expectError(await client(http, ws.keys.Viewer).post('/rest/people?upsert=true', {}), 403, 'FORBIDDEN');
    expectError(await client(http).post('/rest/people?upsert=true', {}), 401, 'UNAUTHENTICATED');
  });

  it('making a field unique with duplicates is 409 listing them; switching off and on again works', async () => {
    const { ws, api } = await admin();
    const off = await request(http).delete('/rest/metadata/unique-fields/people/emails.primaryEmail').set(bearer(ws.keys.Admin));
    expect(off.status).toBe(200);
    for (const email of ['d1@example.com', 'D1@example.com', 'd2@example.com', 'd2@example.com', 'ok@example.com']) {
      expect((await api.post('/rest/people', { emails: { primaryEmail: email } })).status).toBe(201);
    }
    const refused = await put(ws.keys.Admin, '/rest/metadata/unique-fields/people/emails.primaryEmail');
    const message = expectError(refused, 409, 'CONFLICT');
    expect(message).toContain('"d1@example.com"');
    expect(message).toContain('"d2@example.com"');
    expect(message).not.toContain('ok@example.com');
    // Still not unique: a third duplicate is accepted.
    expect((await api.post('/rest/people', { emails: { primaryEmail: 'd2@example.com' } })).status).toBe(201);
    const list = await api.get('/rest/people', { limit: 50 });
    for (const person of list.body.data.people) {
      if (['d1@example.com', 'd2@example.com'].includes(person.emails.primaryEmail))
        expect((await api.delete(`/rest/people/${person.id}`)).status).toBe(200);
    }
    const made = await put(ws.keys.Admin, '/rest/metadata/unique-fields/people/emails');
    expect(made.status).toBe(200);
    expectError(await api.post('/rest/people', { emails: { primaryEmail: 'ok@EXAMPLE.com' } }), 409, 'CONFLICT');
    expectError(await api.post('/rest/people', { emails: { primaryEmail: 'd1@example.com' } }), 409, 'CONFLICT');
    // Bad names: 400; without DATA_MODEL: 403.
    expectError(await put(ws.keys.Admin, '/rest/metadata/unique-fields/people/name'), 400, 'VALIDATION_FAILED');
    expectError(await put(ws.keys.Admin, '/rest/metadata/unique-fields/planets/name'), 400, 'VALIDATION_FAILED');
    expectError(await put(ws.keys.Viewer, '/rest/metadata/unique-fields/people/emails'), 403, 'FORBIDDEN');
    const audit = await ds.query(`SELECT details FROM audit_log WHERE workspace_id = $1 AND action = 'field.unique' ORDER BY created_at`, [
      ws.id,
    ]);
    expect(audit.map((a: { details: { unique: boolean } }) => a.details.unique)).toEqual([false, true]);
  });

  it('a unique custom field: refused duplicates, upsert by it, and no default value', async () => {
    const { api } = await admin();
    const field = await api.post('/rest/metadata/fields', { object: 'companies', name: 'erpCode', type: 'TEXT', isUnique: true });
    expect(field.status).toBe(201);
    expect(field.body.data.createField.isUnique).toBe(true);
    const a = (await api.post('/rest/companies', { name: 'A', erpCode: 'E-1' })).body.data.createCompany;
    expectError(await api.post('/rest/companies', { name: 'B', erpCode: 'E-1' }), 409, 'CONFLICT');
    const up = await api.post('/rest/companies?upsert=true&match=erpCode', { name: 'A2', erpCode: 'E-1' });
    expect(up.status).toBe(200);
    expect(up.body.data.createCompany).toMatchObject({ id: a.id, name: 'A2', erpCode: 'E-1' });
    // Not unique any more: duplicates go in; unique again with duplicates: 409.
    expect((await api.patch(`/rest/metadata/fields/${field.body.data.createField.id}`, { isUnique: false })).status).toBe(200);
    expect((await api.post('/rest/companies', { name: 'B', erpCode: 'E-1' })).status).toBe(201);
    expectError(await api.patch(`/rest/metadata/fields/${field.body.data.createField.id}`, { isUnique: true }), 409, 'CONFLICT');
    // A unique field cannot be deactivated, take a default, or be of a type that cannot be unique.
    const sel = await api.post('/rest/metadata/fields', {
      object: 'companies',
      name: 'tier',
      type: 'SELECT',
      options: [{ value: 'A', label: 'A' }],
      isUnique: true,
    });
    expectError(sel, 400, 'VALIDATION_FAILED');
    expectError(
      await api.post('/rest/metadata/fields', { object: 'companies', name: 'code2', type: 'TEXT', isUnique: true, defaultValue: 'x' }),
      400,
      'VALIDATION_FAILED',
    );
    const email = await api.post('/rest/metadata/fields', { object: 'people', name: 'work', type: 'EMAILS', isUnique: true });
    expect(email.status).toBe(201);
    expectError(await api.patch(`/rest/metadata/fields/${email.body.data.createField.id}`, { isActive: false }), 409, 'CONFLICT');
    expect((await api.post('/rest/people', { work: { primaryEmail: 'W@x.io' } })).status).toBe(201);
    expectError(await api.post('/rest/people', { work: { primaryEmail: 'w@X.io' } }), 409, 'CONFLICT');
  });

  it('GraphQL createPerson(upsert: true) and createPeople(upsert: true)', async () => {
    const { ws } = await admin();
    const gql = (query: string, variables?: unknown) =>
      request(http).post('/graphql').set(bearer(ws.keys.Admin)).send({ query, variables });
    const one = await gql(
      `mutation { createPerson(data: {emails: {primaryEmail: "g@example.com"}, name: {lastName: "a"}}, upsert: true) { id name { lastName } } }`,
    );
    expect(one.body.errors).toBeUndefined();
    const id = one.body.data.createPerson.id;
    const two = await gql(
      `mutation { createPerson(data: {emails: {primaryEmail: "G@example.com"}, name: {lastName: "b"}}, upsert: true) { id name { lastName } } }`,
    );
    expect(two.body.data.createPerson).toEqual({ id, name: { lastName: 'b' } });
    const many = await gql(
      `mutation { createPeople(data: [{emails: {primaryEmail: "g@example.com"}, name: {lastName: "c"}}, {emails: {primaryEmail: "h@example.com"}}], upsert: true) { id name { lastName } } }`,
    );
    expect(many.body.data.createPeople[0]).toEqual({ id, name: { lastName: 'c' } });
    const dup = await gql(`mutation { createPerson(data: {emails: {primaryEmail: "h@example.com"}}) { id } }`);
    expect(dup.body.errors[0].extensions).toMatchObject({
      code: 'CONFLICT',
      details: { field: 'emails.primaryEmail', existingId: many.body.data.createPeople[1].id },
    });
  });

  it('MCP upsert_person: created, then updated, and listed only for roles that create and update', async () => {
    const { ws } = await admin();
    const mcp = async (secret: string, method: string, params: Record<string, unknown>) => {
      const res = await request(http)
        .post('/mcp')
        .set(bearer(secret))
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method, params });
      expect(res.status).toBe(200);
      return res.body.result;
    };
    const first = await mcp(ws.keys.Admin, 'tools/call', {
      name: 'upsert_person',
      arguments: { emails: { primaryEmail: 'agent@example.com' }, name: { firstName: 'Al' } },
    });
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent.outcome).toBe('created');
    const second = await mcp(ws.keys.Admin, 'tools/call', {
      name: 'upsert_person',
      arguments: { emails: { primaryEmail: 'AGENT@example.com' }, name: { lastName: 'Gent' }, match: 'emails' },
    });
    expect(second.structuredContent).toMatchObject({
      outcome: 'updated',
      person: { id: first.structuredContent.person.id, name: { firstName: 'Al', lastName: 'Gent' } },
    });
    const viewerTools = (await mcp(ws.keys.Viewer, 'tools/list', {})).tools.map((t: { name: string }) => t.name);
    expect(viewerTools).not.toContain('upsert_person');
    const bad = await mcp(ws.keys.Admin, 'tools/call', { name: 'upsert_person', arguments: { name: { firstName: 'x' }, match: 'name' } });
    expect(bad.isError).toBe(true);
    expect(bad.content[0].text).toContain('not a unique field');
  });
});
