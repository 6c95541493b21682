import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createWebhook } from '#webhooks/webhooks.js';
import { newWorkspace, startApi } from './factories.js';
import { statementsDuring } from './query-counter.js';
import { client, expectError, type Http } from './rest-helpers.js';

/**
 * A create's links are checked by its INSERT (README "Decisions", writes that scale): a link
 * to a missing, deleted or other workspace's record is 400 naming it, with nothing written,
 * on the one-statement path and on the path with webhook events alike; a create is one
 * statement on the pool.
 */
describe('Links checked by the INSERT that creates', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  async function setup(watched: boolean) {
    const ws = await newWorkspace(ds, 'link');
    const api = client(http, ws.keys.Admin);
    if (watched) await createWebhook(ds, ws.id, { url: 'http://127.0.0.1:9/hook', operations: ['*.*'] }, { allowPrivate: true });
    const live = (await api.post('/rest/companies', { name: 'Live' })).body.data.createCompany.id as string;
    const gone = (await api.post('/rest/companies', { name: 'Gone' })).body.data.createCompany.id as string;
    expect((await api.delete(`/rest/companies/${gone}`)).status).toBe(200);
    const other = await newWorkspace(ds, 'link-other');
    const foreign = (await client(http, other.keys.Admin).post('/rest/companies', { name: 'Foreign' })).body.data.createCompany
      .id as string;
    return { ws, api, live, gone, foreign };
  }

  const people = async (workspaceId: string) =>
    (await ds.query('SELECT count(*)::int AS n FROM people WHERE workspace_id = $1', [workspaceId]))[0].n as number;

  for (const watched of [false, true]) {
    describe(watched ? 'with a webhook (events in the same transaction)' : 'without a webhook (one statement)', () => {
      it('refuses a deleted, missing or other workspace’s company with 400 naming it, and writes nothing', async () => {
        const { ws, api, gone, foreign } = await setup(watched);
        const missing = randomUUID();
        for (const id of [gone, missing, foreign]) {
          const res = await api.post('/rest/people', { name: { firstName: 'Ada' }, companyId: id });
          expectError(res, 400, 'VALIDATION_FAILED');
          expect(res.body.messages).toEqual([`companyId: no company with id ${id} in this workspace`]);
        }
        expect(await people(ws.id)).toBe(0);
      });

      it('refuses a batch with one bad link whole, naming every missing id', async () => {
        const { ws, api, live, gone } = await setup(watched);
        const missing = randomUUID();
        const res = await api.post('/rest/batch/people', [
          { name: { firstName: 'A' }, companyId: live },
          { name: { firstName: 'B' }, companyId: gone },
          { name: { firstName: 'C' }, companyId: missing },
        ]);
        expectError(res, 400, 'VALIDATION_FAILED');
        expect(res.body.messages[0]).toMatch(/^companyId: no company with id /);
        expect(res.body.messages[0]).toContain(gone);
        expect(res.body.messages[0]).toContain(missing);
        expect(await people(ws.id)).toBe(0);
      });

      it('creates with a live company, with none, and with null', async () => {
        const { ws, api, live } = await setup(watched);
        const made = await api.post('/rest/batch/people', [
          { name: { firstName: 'A' }, companyId: live },
          { name: { firstName: 'B' } },
          { name: { firstName: 'C' }, companyId: null },
        ]);
        expect(made.status).toBe(201);
        expect(made.body.data.createPeople.map((p: { companyId: string | null }) => p.companyId)).toEqual([live, null, null]);
        const one = await api.post('/rest/people', { name: { firstName: 'D' }, companyId: live });
        expect(one.status).toBe(201);
        expect(one.body.data.createPerson.companyId).toBe(live);
        expect(await people(ws.id)).toBe(4);
      });
    });
  }

  it('a create with a link is one statement on the pool (no check before it)', async () => {
    const { api, live } = await setup(false);
    // The first create of a workspace learns that no webhook watches it; count the next.
    expect((await api.post('/rest/people', { name: { firstName: 'Warm' }, companyId: live })).status).toBe(201);
    let status = 0;
    const statements = await statementsDuring(ds, async () => {
      status = (await api.post('/rest/people', { name: { firstName: 'Ada' }, companyId: live })).status;
    });
    expect(status).toBe(201);
    expect(statements.filter((s) => !/credential_changes|api_keys/.test(s))).toEqual([expect.stringMatching(/INSERT INTO people/)]);
  });

  it('opportunities: two links, each checked; a deleted point of contact is refused', async () => {
    const { ws, api, live } = await setup(false);
    const person = (await api.post('/rest/people', { name: { firstName: 'P' } })).body.data.createPerson.id as string;
    expect((await api.delete(`/rest/people/${person}`)).status).toBe(200);
    const res = await api.post('/rest/opportunities', { name: 'Deal', companyId: live, pointOfContactId: person });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(res.body.messages).toEqual([`pointOfContactId: no person with id ${person} in this workspace`]);
    const [{ n }] = await ds.query('SELECT count(*)::int AS n FROM opportunities WHERE workspace_id = $1', [ws.id]);
    expect(n).toBe(0);
  });

  it('a malformed link id is 400, not a database error', async () => {
    const { api } = await setup(false);
    const res = await api.post('/rest/people', { name: { firstName: 'A' }, companyId: 'not-a-uuid' });
    expectError(res, 400, 'VALIDATION_FAILED');
  });
});
