import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi } from './factories.js';
import { allPermissions, client, expectError, keyWithRole, type Http } from './rest-helpers.js';

/** 429 with Retry-After (docs/rest.md). The limit is read from the environment when the app is created. */
const LIMIT = 5;

describe('REST rate limiting', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  const previous = process.env.RATE_LIMIT_PER_MINUTE;

  beforeAll(async () => {
    process.env.RATE_LIMIT_PER_MINUTE = String(LIMIT);
    ({ app, ds, http } = await startApi());
  });
  afterAll(async () => {
    await app.close();
    if (previous === undefined) delete process.env.RATE_LIMIT_PER_MINUTE;
    else process.env.RATE_LIMIT_PER_MINUTE = previous;
  });

  function expect429(res: request.Response): number {
    expect(expectError(res, 429, 'RATE_LIMITED')).toMatch(new RegExp(`${LIMIT} requests per minute`));
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    const seconds = Number(res.headers['retry-after']);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    return seconds;
  }

  it('allows the limit per credential, then answers 429 with Retry-After; other credentials are unaffected', async () => {
    const ws = await newWorkspace(ds, 'rate');
    const api = client(http, ws.keys.Admin);
    for (let i = 0; i < LIMIT; i++) expect((await api.get('/rest/companies')).status).toBe(200);
    expect429(await api.get('/rest/companies'));
    expect429(await api.get('/rest/people'));

    // Writes are refused too, and nothing is written.
    expect429(await api.post('/rest/companies', { name: 'too many' }));
    const [row] = await ds.query('SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1', [ws.id]);
    expect(row.n).toBe(0);

    // Another key (even of the same workspace) has its own budget.
    expect((await client(http, ws.keys.Viewer).get('/rest/companies')).status).toBe(200);
  });

  it('counts one credential once however the header is spelled', async () => {
    const ws = await newWorkspace(ds, 'rate-spelling');
    const key = ws.keys.Admin;
    const spellings = [`Bearer ${key}`, `bearer ${key}`, `BEARER ${key}`, `Bearer  ${key}`, `Bearer ${key} `];
    for (const header of spellings) {
      expect((await request(http).get('/rest/companies').set('Authorization', header)).status).toBe(200);
    }
    expect429(await request(http).get('/rest/companies').set('Authorization', `Bearer   ${key}`));
    expect429(await request(http).get('/rest/companies').set(bearer(key)));
  });

  it('limits requests without credentials per client address, before authentication', async () => {
    for (let i = 0; i < LIMIT; i++) expectError(await request(http).get('/rest/companies'), 401, 'UNAUTHENTICATED');
    const res = await request(http).get('/rest/people');
    expect429(res);
    expect(res.headers['www-authenticate']).toBeUndefined();
    // Discovery documents are outside the limited paths.
    for (let i = 0; i < LIMIT + 2; i++) {
      expect((await request(http).get('/.well-known/oauth-protected-resource')).status).toBe(200);
    }
  });
});

describe('Rate limiting per workspace', () => {
  const PER_WORKSPACE = 6;
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  const previous = { ...process.env };

  beforeAll(async () => {
    Object.assign(process.env, { RATE_LIMIT_PER_MINUTE: '50', RATE_LIMIT_PER_WORKSPACE_PER_MINUTE: String(PER_WORKSPACE) });
    ({ app, ds, http } = await startApi());
  });
  afterAll(async () => {
    await app.close();
    process.env = previous;
  });

  it('counts every key of a workspace against one budget above the per-key one; other workspaces are unaffected', async () => {
    // Issue 18: each API key had its own budget, so more keys meant more requests for one tenant.
    const ws = await newWorkspace(ds, 'rate-ws');
    const third = await keyWithRole(ds, ws.id, 'third', allPermissions());
    const keys = [ws.keys.Admin, ws.keys.Viewer, third.secret];
    // A credential's workspace is learned from its first authenticated answer on this instance.
    for (const key of keys) expect((await client(http, key).get('/rest/companies')).status).toBe(200);
    const statuses: number[] = [];
    let refused: request.Response | undefined;
    for (let i = 0; i < PER_WORKSPACE + 3; i++) {
      const res = await client(http, keys[i % keys.length]).get('/rest/companies');
      statuses.push(res.status);
      if (res.status === 429) refused ??= res;
    }
    expect(statuses).toEqual([...Array(PER_WORKSPACE).fill(200), 429, 429, 429]);
    expect(expectError(refused!, 429, 'RATE_LIMITED')).toMatch(new RegExp(`${PER_WORKSPACE} requests in this workspace`));
    expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused!.headers['ratelimit-policy']).toBe(`${PER_WORKSPACE};w=60`);

    const other = await newWorkspace(ds, 'rate-ws-other');
    for (let i = 0; i < 3; i++) expect((await client(http, other.keys.Admin).get('/rest/companies')).status).toBe(200);
  });
});
