import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createWebhook } from '#webhooks/webhooks.js';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { allPermissions, client, expectError, keyWithRole, type Client, type Http } from './rest-helpers.js';

/** Changes by filter, restore and erasure (docs/rest.md "Changes by filter", "Restore", "Erasure"). */
describe('changes by filter, restore and erasure', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  async function admin(label = 'bf'): Promise<{ ws: TestWorkspace; api: Client }> {
    const ws = await newWorkspace(ds, label);
    return { ws, api: client(http, ws.keys.Admin) };
  }

  const del = (secret: string, path: string) => request(http).delete(path).set(bearer(secret));
  const patch = (secret: string, path: string, body: unknown) =>
    request(http)
      .patch(path)
      .set(bearer(secret))
      .send(body as object);
  const events = async (workspaceId: string, type: string): Promise<{ id: string }[]> =>
    (await ds.query(`SELECT payload FROM webhook_events WHERE workspace_id = $1 AND type = $2`, [workspaceId, type])).map(
      (row: { payload: { data: { record: { id: string } } } }) => row.payload.data.record,
    );

  async function hook(ws: TestWorkspace): Promise<void> {
    await createWebhook(ds, ws.id, { url: 'http://127.0.0.1:9/hook', operations: ['*.*'] }, { allowPrivate: true });
  }

  it('PATCH by filter sets the fields on every match, in one call, one event each; other workspaces untouched', async () => {
    const { ws, api } = await admin();
    await hook(ws);
    const made = await api.post('/rest/batch/companies', [
      { name: 'Acme A', domainName: { primaryLinkUrl: 'a.acme.com' } },
      { name: 'Acme B' },
      { name: 'Other' },
    ]);
    const [a, b, other] = made.body.data.createCompanies;
    const { api: stranger } = await admin('bf-other');
    const foreign = (await stranger.post('/rest/companies', { name: 'Acme Foreign' })).body.data.createCompany;

    const res = await patch(ws.keys.Admin, '/rest/companies?filter=name[startsWith]:Acme', {
      domainName: { primaryLinkLabel: 'Acme group' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.updateCompanies.count).toBe(2);
    expect(res.body.data.updateCompanies.ids.sort()).toEqual([a.id, b.id].sort());
    const after = (await api.get(`/rest/companies/${a.id}`)).body.data.company;
    // A composite's other sub-fields keep their values.
    expect(after.domainName).toMatchObject({ primaryLinkUrl: 'a.acme.com', primaryLinkLabel: 'Acme group' });
    expect((await api.get(`/rest/companies/${other.id}`)).body.data.company.domainName.primaryLinkLabel).toBeNull();
    expect((await stranger.get(`/rest/companies/${foreign.id}`)).body.data.company.domainName.primaryLinkLabel).toBeNull();
    const updated = await events(ws.id, 'company.updated');
    expect(updated.map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
  });

  it('DELETE by filter soft-deletes every match with one event each', async () => {
    const { ws, api } = await admin();
    await hook(ws);
    await api.post('/rest/batch/people', [{ name: { lastName: 'Gone' } }, { name: { lastName: 'Gone' } }, { name: { lastName: 'Kept' } }]);
    const res = await del(ws.keys.Admin, '/rest/people?filter=name.lastName[eq]:Gone');
    expect(res.status).toBe(200);
    expect(res.body.data.deletePeople.count).toBe(2);
    expect((await api.get('/rest/people')).body.totalCount).toBe(1);
    expect(await events(ws.id, 'person.deleted')).toHaveLength(2);
    // Nothing left to match: 0, not an error.
    expect((await del(ws.keys.Admin, '/rest/people?filter=name.lastName[eq]:Gone')).body.data.deletePeople).toEqual({ count: 0, ids: [] });
  });

  it('bad input: no filter, a body that sets nothing, a bad field, unknown parameters, more than 10 000 matches', async () => {
    const { ws, api } = await admin();
    expect(expectError(await patch(ws.keys.Admin, '/rest/people', { name: { lastName: 'x' } }), 400, 'VALIDATION_FAILED')).toContain(
      'filter is required',
    );
    expectError(await del(ws.keys.Admin, '/rest/people'), 400, 'VALIDATION_FAILED');
    expectError(await del(ws.keys.Admin, '/rest/people?filter='), 400, 'VALIDATION_FAILED');
    expectError(await patch(ws.keys.Admin, '/rest/people?filter=id[is]:NOT_NULL', {}), 400, 'VALIDATION_FAILED');
    expectError(await patch(ws.keys.Admin, '/rest/people?filter=id[is]:NOT_NULL', { nope: 1 }), 400, 'VALIDATION_FAILED');
    expectError(await patch(ws.keys.Admin, '/rest/people?filter=bogus[eq]:1', { name: { lastName: 'x' } }), 400, 'INVALID_FILTER');
    expectError(await del(ws.keys.Admin, '/rest/people?filter=id[is]:NOT_NULL&limit=5'), 400, 'VALIDATION_FAILED');
    await ds.query(
      `INSERT INTO people (workspace_id, first_name, last_name) SELECT $1, 'Bulk', 'P' || g FROM generate_series(1, 10001) g`,
      [ws.id],
    );
    const tooMany = await patch(ws.keys.Admin, '/rest/people?filter=name.firstName[eq]:Bulk', { name: { lastName: 'x' } });
    expect(expectError(tooMany, 400, 'VALIDATION_FAILED')).toContain('10001');
    expectError(await del(ws.keys.Admin, '/rest/people?filter=name.firstName[eq]:Bulk'), 400, 'VALIDATION_FAILED');
    expect((await api.get('/rest/people', { filter: 'name.lastName[eq]:x' })).body.totalCount).toBe(0);
    // Exactly 10 000 is allowed.
    const [{ id }] = await ds.query(`SELECT id FROM people WHERE workspace_id = $1 LIMIT 1`, [ws.id]);
    expect((await api.delete(`/rest/people/${id}`)).status).toBe(200);
    const ok = await patch(ws.keys.Admin, '/rest/people?filter=name.firstName[eq]:Bulk', { name: { lastName: 'x' } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.updatePeople.count).toBe(10000);
  });

  it('all or none: a unique value given to two matches is 409 and changes nothing', async () => {
    const { ws, api } = await admin();
    await api.post('/rest/batch/people', [
      { name: { lastName: 'Twin' }, emails: { primaryEmail: 't1@example.com' } },
      { name: { lastName: 'Twin' }, emails: { primaryEmail: 't2@example.com' } },
    ]);
    const res = await patch(ws.keys.Admin, '/rest/people?filter=name.lastName[eq]:Twin', { emails: { primaryEmail: 'same@example.com' } });
    expectError(res, 409, 'CONFLICT');
    const list = await api.get('/rest/people', { filter: 'emails.primaryEmail[eq]:same@example.com' });
    expect(list.body.totalCount).toBe(0);
  });

  it('permissions: update and delete by filter need those permissions', async () => {
    const { ws } = await admin();
    expectError(await patch(ws.keys.Viewer, '/rest/people?filter=id[is]:NOT_NULL', { name: { lastName: 'x' } }), 403, 'FORBIDDEN');
    expectError(await del(ws.keys.Viewer, '/rest/people?filter=id[is]:NOT_NULL'), 403, 'FORBIDDEN');
    expectError(await request(http).delete('/rest/people?filter=id[is]:NOT_NULL'), 401, 'UNAUTHENTICATED');
  });

  it('restore brings a deleted record back with a restored event; a live one is 409; REST and GraphQL', async () => {
    const { ws, api } = await admin();
    await hook(ws);
    const p = (await api.post('/rest/people', { emails: { primaryEmail: 'back@example.com' } })).body.data.createPerson;
    expectError(await patch(ws.keys.Admin, `/rest/restore/people/${p.id}`, {}), 409, 'CONFLICT');
    await api.delete(`/rest/people/${p.id}`);
    const res = await patch(ws.keys.Admin, `/rest/restore/people/${p.id}`, {});
    expect(res.status).toBe(200);
    expect(res.body.data.restorePerson).toMatchObject({ id: p.id, deletedAt: null });
    expect((await api.get(`/rest/people/${p.id}`)).status).toBe(200);
    expect((await events(ws.id, 'person.restored')).map((r) => r.id)).toEqual([p.id]);
    // Its e-mail taken by another meanwhile: 409.
    await api.delete(`/rest/people/${p.id}`);
    await api.post('/rest/people', { emails: { primaryEmail: 'back@example.com' } });
    expect(expectError(await patch(ws.keys.Admin, `/rest/restore/people/${p.id}`, {}), 409, 'CONFLICT')).toContain('emails.primaryEmail');
    // Unknown, another workspace's, malformed ids.
    const { api: stranger } = await admin('bf-other');
    const theirs = (await stranger.post('/rest/companies', { name: 'T' })).body.data.createCompany;
    await stranger.delete(`/rest/companies/${theirs.id}`);
    expectError(await patch(ws.keys.Admin, `/rest/restore/companies/${theirs.id}`, {}), 404, 'NOT_FOUND');
    expectError(await patch(ws.keys.Admin, '/rest/restore/companies/nope', {}), 400, 'INVALID_ID');
    expectError(await patch(ws.keys.Viewer, `/rest/restore/people/${p.id}`, {}), 403, 'FORBIDDEN');
    // GraphQL.
    const c = (await api.post('/rest/companies', { name: 'G' })).body.data.createCompany;
    await api.delete(`/rest/companies/${c.id}`);
    const gql = await request(http)
      .post('/graphql')
      .set(bearer(ws.keys.Admin))
      .send({ query: `mutation { restoreCompany(id: "${c.id}") { id deletedAt } }` });
    expect(gql.body).toEqual({ data: { restoreCompany: { id: c.id, deletedAt: null } } });
  });

  it('erasure: hard=true needs destroy, removes the row and its stored webhook events; linked records are 409', async () => {
    const { ws, api } = await admin();
    await hook(ws);
    const company = (await api.post('/rest/companies', { name: 'Erase Co' })).body.data.createCompany;
    const person = (await api.post('/rest/people', { emails: { primaryEmail: 'forget@example.com' }, companyId: company.id })).body.data
      .createPerson;
    await api.patch(`/rest/people/${person.id}`, { name: { firstName: 'Forget' } });
    expect((await events(ws.id, 'person.updated')).length).toBe(1);

    // Member-like role with every record action but not destroy.
    const member = await keyWithRole(ds, ws.id, 'every record action', allPermissions());
    expectError(await del(member.secret, `/rest/people/${person.id}?hard=true`), 403, 'FORBIDDEN');
    expectError(await del(ws.keys.Admin, `/rest/people/${person.id}?hard=yes`), 400, 'VALIDATION_FAILED');
    // The company is linked by the person: 409.
    expect(expectError(await del(ws.keys.Admin, `/rest/companies/${company.id}?hard=true`), 409, 'CONFLICT')).toContain('1 person');

    const res = await del(ws.keys.Admin, `/rest/people/${person.id}?hard=true`);
    expect(res.status).toBe(200);
    expect(res.body.data.deletePerson).toEqual({ id: person.id });
    expect(await ds.query('SELECT 1 FROM people WHERE workspace_id = $1 AND id = $2', [ws.id, person.id])).toEqual([]);
    const stored = await ds.query(`SELECT payload::text AS text FROM webhook_events WHERE workspace_id = $1`, [ws.id]);
    expect(stored.some((row: { text: string }) => row.text.includes('forget@example.com'))).toBe(false);
    // The erasure's own event names the id only.
    const deleted = await events(ws.id, 'person.deleted');
    expect(deleted).toEqual([{ id: person.id }]);
    expectError(await del(ws.keys.Admin, `/rest/people/${person.id}?hard=true`), 404, 'NOT_FOUND');
    // The company is free now; a soft-deleted record can be erased too.
    await api.delete(`/rest/companies/${company.id}`);
    expect((await del(ws.keys.Admin, `/rest/companies/${company.id}?hard=true`)).status).toBe(200);
    expect((await api.get('/rest/companies', { filter: 'deletedAt[is]:NOT_NULL' })).body.totalCount).toBe(0);
  });
});
