import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { createWebhook, updateWebhook } from '#webhooks/webhooks.js';
import { newWorkspace, startApi } from './factories.js';
import { client, expectError, type Http } from './rest-helpers.js';

/**
 * A write that no enabled webhook of its workspace selects is one statement of its own; a
 * guard in it refuses it when a webhook does select it, and the write then runs with its
 * events in one transaction (libs/webhooks/src/webhook-outbox.ts, `unwatched`). Whatever
 * this instance last saw, an event exists exactly when a webhook selected it at the write.
 */
describe('writes with and without webhooks', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  // Nothing listens there: deliveries fail and are retried later; only the stored events matter here.
  const hook = (workspaceId: string, operations: string[]) =>
    createWebhook(ds, workspaceId, { url: 'http://127.0.0.1:9/hook', operations }, { allowPrivate: true });

  async function events(workspaceId: string): Promise<{ type: string; record: string; previous: unknown }[]> {
    return ds.query(
      `SELECT type, payload->'data'->'record'->>'id' AS record, payload->'data'->'previous' AS previous
         FROM webhook_events WHERE workspace_id = $1 ORDER BY created_at, type`,
      [workspaceId],
    );
  }

  it('stores no event for a workspace without webhooks, and the events of a webhook made afterwards (by any instance)', async () => {
    const ws = await newWorkspace(ds, 'unwatched');
    const api = client(http, ws.keys.Admin);
    const first = (await api.post('/rest/companies', { name: 'before the hook' }).expect(201)).body.data.createCompany;
    await api.patch(`/rest/companies/${first.id}`, { name: 'renamed before' }).expect(200);
    expect(await events(ws.id)).toEqual([]);

    // Made straight in the database, as another instance would: this one has seen none.
    await hook(ws.id, ['company.*']);
    const second = (await api.post('/rest/companies', { name: 'after the hook' }).expect(201)).body.data.createCompany;
    const renamed = (await api.patch(`/rest/companies/${first.id}`, { name: 'renamed after' }).expect(200)).body.data.updateCompany;
    await api.delete(`/rest/companies/${second.id}`).expect(200);
    const batch = (await api.post('/rest/batch/companies', [{ name: 'b1' }, { name: 'b2' }]).expect(201)).body.data.createCompanies;
    expect(renamed.name).toBe('renamed after');

    const stored = await events(ws.id);
    expect(stored.map((e) => [e.type, e.record]).sort()).toEqual(
      [
        ['company.created', second.id],
        ['company.updated', first.id],
        ['company.deleted', second.id],
        ['company.created', batch[0].id],
        ['company.created', batch[1].id],
      ].sort(),
    );
    expect(stored.find((e) => e.type === 'company.updated')!.previous).toEqual({ name: 'renamed before' });
    // Each write happened once: the refused statement wrote nothing.
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1`, [ws.id]);
    expect(n).toBe(4);
    const list = await api.get('/rest/companies').expect(200);
    expect(list.body.totalCount).toBe(3);
  });

  it('writes the events a webhook selects, and only those, when it selects some of the workspace’s writes', async () => {
    const ws = await newWorkspace(ds, 'partly');
    const api = client(http, ws.keys.Admin);
    await hook(ws.id, ['person.created']);
    const company = (await api.post('/rest/companies', { name: 'c' }).expect(201)).body.data.createCompany;
    const person = (await api.post('/rest/people', { name: { firstName: 'p' }, companyId: company.id }).expect(201)).body.data.createPerson;
    await api.patch(`/rest/people/${person.id}`, { name: { firstName: 'q' } }).expect(200);
    await api.delete(`/rest/companies/${company.id}`).expect(200);
    expect((await events(ws.id)).map((e) => [e.type, e.record])).toEqual([['person.created', person.id]]);
  });

  it('goes back to writes without events once the webhook is disabled, and refuses bad writes the same either way', async () => {
    const ws = await newWorkspace(ds, 'disabled');
    const api = client(http, ws.keys.Admin);
    const created = await hook(ws.id, ['*.*']);
    const a = (await api.post('/rest/companies', { name: 'a' }).expect(201)).body.data.createCompany;
    expect(await events(ws.id)).toHaveLength(1);
    await updateWebhook(ds, ws.id, created.id, { enabled: false }, { allowPrivate: true });
    await api.post('/rest/companies', { name: 'b' }).expect(201);
    expect(await events(ws.id)).toHaveLength(1);

    // The same answers for a duplicate id, an unknown id and a missing relation, with and without webhooks.
    for (const enabled of [false, true]) {
      await updateWebhook(ds, ws.id, created.id, { enabled }, { allowPrivate: true });
      expectError(await api.post('/rest/companies', { id: a.id, name: 'again' }), 409, 'CONFLICT');
      const unknown = '00000000-0000-4000-8000-000000000000';
      expectError(await api.patch(`/rest/companies/${unknown}`, { name: 'x' }), 404, 'NOT_FOUND');
      expectError(await api.delete(`/rest/companies/${unknown}`), 404, 'NOT_FOUND');
      expectError(await api.post('/rest/people', { companyId: unknown }), 400, 'VALIDATION_FAILED');
    }
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1`, [ws.id]);
    expect(n).toBe(2);
  });

  it('never writes another workspace’s record, with or without webhooks', async () => {
    const [mine, theirs] = [await newWorkspace(ds, 'mine'), await newWorkspace(ds, 'theirs')];
    const other = (await client(http, theirs.keys.Admin).post('/rest/companies', { name: 'theirs' }).expect(201)).body.data.createCompany;
    const api = client(http, mine.keys.Admin);
    for (const withHook of [false, true]) {
      if (withHook) await hook(mine.id, ['*.*']);
      expectError(await api.patch(`/rest/companies/${other.id}`, { name: 'taken' }), 404, 'NOT_FOUND');
      expectError(await api.delete(`/rest/companies/${other.id}`), 404, 'NOT_FOUND');
    }
    const [row] = await ds.query(`SELECT name, deleted_at FROM companies WHERE id = $1`, [other.id]);
    expect(row).toEqual({ name: 'theirs', deleted_at: null });
  });
});
