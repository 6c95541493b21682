import type { INestApplication } from '@nestjs/common';
import request, { type Response } from 'supertest';
import type { DataSource } from 'typeorm';
import { BearerAuthGuard } from '#auth/auth.guard.js';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import type { Http } from './rest-helpers.js';

/**
 * `POST /rest/<plural>` without a query string is answered before Nest's routing
 * (apps/records-api/src/rest/create-fast-path.ts). Every answer must be the one Nest's route
 * gives: the same requests go to an app with the fast path and to one started with
 * REST_FAST_PATH=off, each in a workspace of its own, and the answers (status, the headers a
 * client reads, body) are compared once ids, timestamps and request ids are made alike.
 * Nest's guard is counted (not replaced) to tell which path answered.
 */
describe('single REST creates without Nest routing', () => {
  let fast: { app: INestApplication; http: Http };
  let slow: { app: INestApplication; http: Http };
  let ds: DataSource;
  let guardCalls = 0;
  const original = BearerAuthGuard.prototype.canActivate;

  beforeAll(async () => {
    BearerAuthGuard.prototype.canActivate = function (...args) {
      guardCalls++;
      return original.apply(this, args);
    };
    const a = await startApi();
    fast = { app: a.app, http: a.http };
    ds = a.ds;
    process.env.REST_FAST_PATH = 'off';
    try {
      const b = await startApi();
      slow = { app: b.app, http: b.http };
    } finally {
      delete process.env.REST_FAST_PATH;
    }
  });
  afterAll(async () => {
    BearerAuthGuard.prototype.canActivate = original;
    await fast?.app.close();
    await slow?.app.close();
  });

  type Send = (http: Http, ws: TestWorkspace, ids: Record<string, string>) => request.Test;
  const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g;

  /** What a client sees of an answer, with the values that differ between two workspaces made alike. */
  function seen(res: Response, ws: TestWorkspace) {
    const text = res.text
      .split(ws.id)
      .join('<workspace>')
      .replace(res.headers['x-request-id'] ?? '<none>', '<request>')
      .replace(UUID, '<uuid>')
      .replace(TIME, '<time>');
    return {
      status: res.status,
      type: res.headers['content-type'],
      wwwAuthenticate: res.headers['www-authenticate'],
      body: text,
    };
  }

  /** The same requests to both apps; returns the fast app's answers and how many went through Nest's guard there. */
  async function both(label: string, steps: Send[]) {
    const wsFast = await newWorkspace(ds, `${label}-f`);
    const wsSlow = await newWorkspace(ds, `${label}-s`);
    const idsFast: Record<string, string> = {};
    const idsSlow: Record<string, string> = {};
    const answers: Response[] = [];
    let throughNest = 0;
    for (const step of steps) {
      const before = guardCalls;
      const a = await step(fast.http, wsFast, idsFast);
      throughNest += guardCalls - before;
      const b = await step(slow.http, wsSlow, idsSlow);
      expect(seen(a, wsFast)).toEqual(seen(b, wsSlow));
      for (const [ids, res] of [
        [idsFast, a],
        [idsSlow, b],
      ] as const) {
        const created = res.body?.data && Object.values(res.body.data)[0];
        if (created && typeof created === 'object' && 'id' in created)
          ids[`last${res.body.data.createPerson ? 'Person' : 'Company'}`] = created.id;
      }
      answers.push(a);
    }
    return { answers, throughNest };
  }

  const post = (path: string, body: unknown, secret?: (ws: TestWorkspace) => string | undefined): Send => {
    return (http, ws) => {
      const key = secret ? secret(ws) : ws.keys.Admin;
      const r = request(http).post(path);
      return (key ? r.set(bearer(key)) : r).send(body as object);
    };
  };

  it('answers successes, bad input, conflicts and missing links exactly as the route does, without the route', async () => {
    const { answers, throughNest } = await both('parity', [
      post('/rest/companies', {
        name: 'Acme',
        domainName: { primaryLinkUrl: 'https://acme.example', secondaryLinks: [{ url: 'a.example' }] },
      }),
      (http, ws, ids) =>
        request(http)
          .post('/rest/people')
          .set(bearer(ws.keys.Admin))
          .send({ name: { firstName: 'Ada', lastName: 'L' }, emails: { primaryEmail: 'ada@example.com' }, companyId: ids.lastCompany }),
      post('/rest/people', { name: { firstName: 'No company' }, companyId: '0b6f1c1e-7f5a-4c3e-9a57-3f0f2a9d8e11' }),
      post('/rest/companies', { name: 'x', unknownField: 1 }),
      post('/rest/companies', { name: '' }),
      post('/rest/companies', {}),
      post('/rest/companies', [{ name: 'an array' }]),
      post('/rest/companies', { name: 'nul \u0000 char' }),
      post('/rest/companies', { name: 'x', domainName: { secondaryLinks: [[]] } }),
      (http, ws, ids) => request(http).post('/rest/companies').set(bearer(ws.keys.Admin)).send({ id: ids.lastCompany, name: 'taken id' }),
      post('/rest/opportunities', { name: 'Deal', amount: { amountMicros: 1_500_000, currencyCode: 'usd' } }),
      post('/rest/opportunities', { name: 'Deal', amount: { amountMicros: 1_500_000, currencyCode: 'USD' }, stage: 'MEETING' }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([201, 201, 400, 400, 400, 400, 400, 400, 400, 409, 400, 201]);
    expect(throughNest).toBe(0);
  });

  it('answers missing, wrong and under-privileged credentials exactly as the route does', async () => {
    const { answers, throughNest } = await both('auth', [
      post('/rest/companies', { name: 'no key' }, () => undefined),
      post('/rest/companies', { name: 'bad key' }, () => 'wrs_live_not_a_real_key'),
      post('/rest/companies', { name: 'viewer' }, (ws) => ws.keys.Viewer),
      (http, ws) => request(http).post('/rest/companies').set({ authorization: 'Basic abc' }).send({ name: ws.name }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([401, 401, 403, 401]);
    expect(answers[0].headers['www-authenticate']).toMatch(/^Bearer /);
    expect(throughNest).toBe(0);
  });

  it('leaves every other request to Nest: a query string, a trailing slash, other methods, batches', async () => {
    const { answers, throughNest } = await both('others', [
      post('/rest/companies?upsert=true', { name: 'Upserted', domainName: { primaryLinkUrl: 'up.example' } }),
      post('/rest/companies?upsert=true', { name: 'Upserted again', domainName: { primaryLinkUrl: 'up.example' } }),
      post('/rest/companies/', { name: 'Trailing slash' }),
      post('/rest/companies?unknown=1', { name: 'Unknown parameter' }),
      post('/rest/batch/companies', [{ name: 'Batch' }]),
      (http, ws) => request(http).delete('/rest/companies/0b6f1c1e-7f5a-4c3e-9a57-3f0f2a9d8e11').set(bearer(ws.keys.Admin)),
    ]);
    expect(answers.map((a) => a.status)).toEqual([201, 200, 201, 400, 201, 404]);
    expect(throughNest).toBe(answers.length);
  });

  it('keeps what the middlewares before it do: body limits and types, request ids, Idempotency-Key replays', async () => {
    const key = `fast-${Date.now()}`;
    const { answers } = await both('middlewares', [
      (http, ws) => request(http).post('/rest/companies').set(bearer(ws.keys.Admin)).set('content-type', 'text/plain').send('name=x'),
      (http, ws) =>
        request(http).post('/rest/companies').set(bearer(ws.keys.Admin)).set('content-type', 'application/json').send('{"name": '),
      (http, ws) =>
        request(http)
          .post('/rest/companies')
          .set(bearer(ws.keys.Admin))
          .send({ name: 'x'.repeat(1_100_000) }),
      (http, ws) =>
        request(http).post('/rest/companies').set(bearer(ws.keys.Admin)).set('Idempotency-Key', `${key}-${ws.id}`).send({ name: 'Once' }),
      (http, ws) =>
        request(http).post('/rest/companies').set(bearer(ws.keys.Admin)).set('Idempotency-Key', `${key}-${ws.id}`).send({ name: 'Once' }),
      (http, ws) =>
        request(http).post('/rest/companies').set(bearer(ws.keys.Admin)).set('X-Request-Id', 'caller-chosen-id').send({ name: 'Named' }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([415, 400, 413, 201, 201, 201]);
    // The replay is the first answer, not a second company.
    expect(answers[4].body).toEqual(answers[3].body);
    expect(answers[5].headers['x-request-id']).toBe('caller-chosen-id');
  });

  it('writes custom fields and refuses bad custom values as the route does', async () => {
    const addTier = (http: Http, ws: TestWorkspace) =>
      request(http)
        .post('/rest/metadata/fields')
        .set(bearer(ws.keys.Admin))
        .send({ object: 'companies', name: 'tier', label: 'Tier', type: 'SELECT', options: [{ value: 'GOLD', label: 'Gold' }] });
    const { answers, throughNest } = await both('custom', [
      addTier,
      post('/rest/companies', { name: 'Gold', tier: 'GOLD' }),
      post('/rest/companies', { name: 'Tin', tier: 'TIN' }),
      post('/rest/companies', { name: 'Tin', tier: 'TIN', unknownField: true }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([201, 201, 400, 400]);
    expect(answers[1].body.data.createCompany.tier).toBe('GOLD');
    expect(throughNest).toBe(1); // only the field's creation
  });

  it("treats another workspace's company as missing, and leaves that workspace alone", async () => {
    const other = await newWorkspace(ds, 'fast-other');
    const theirs = await request(fast.http).post('/rest/companies').set(bearer(other.keys.Admin)).send({ name: 'Theirs' });
    expect(theirs.status).toBe(201);
    const theirId = theirs.body.data.createCompany.id;
    const { answers, throughNest } = await both('tenant', [
      post('/rest/people', { name: { firstName: 'Cross' }, companyId: theirId }),
      post('/rest/companies', { id: theirId, name: 'Same id, other workspace' }),
    ]);
    expect(answers[0].status).toBe(400);
    expect(answers[0].body.messages.join(' ')).toContain(theirId);
    // Another workspace's id behaves as missing: taking it here is no conflict, and theirs is untouched.
    expect(answers[1].status).toBe(201);
    expect(throughNest).toBe(0);
    const rows = await ds.query(`SELECT id, name FROM companies WHERE workspace_id = $1`, [other.id]);
    expect(rows).toEqual([{ id: theirId, name: 'Theirs' }]);
  });

  it('survives concurrent creates of one workspace and answers each its own record', async () => {
    const ws = await newWorkspace(ds, 'fast-concurrent');
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        request(fast.http)
          .post('/rest/companies')
          .set(bearer(ws.keys.Admin))
          .send({ name: `C${i}` }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
    expect(results.map((r) => r.body.data.createCompany.name)).toEqual(results.map((_, i) => `C${i}`));
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1`, [ws.id]);
    expect(n).toBe(40);
  });
});
