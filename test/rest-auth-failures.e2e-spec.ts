import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi } from './factories.js';
import type { Http } from './rest-helpers.js';

/** Made-up tokens each get a request budget of their own; failed authentications per address are capped. */
const FAILURES = 3;

describe('failed authentications per client address', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  const previous = { ...process.env };

  beforeAll(async () => {
    Object.assign(process.env, {
      AUTH_FAILURES_PER_MINUTE: String(FAILURES),
      RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_WORKSPACE_PER_MINUTE: '0',
    });
    ({ app, ds, http } = await startApi());
  });
  afterAll(async () => {
    await app.close();
    process.env = previous;
  });

  it('counts only failures, then answers 429 to that address whatever token comes next', async () => {
    const ws = await newWorkspace(ds, 'authfail');
    // Successes do not count.
    for (let i = 0; i < FAILURES + 2; i++)
      expect((await request(http).get('/rest/companies').set(bearer(ws.keys.Viewer))).status).toBe(200);
    for (let i = 0; i < FAILURES; i++) {
      const res = await request(http)
        .get('/rest/companies')
        .set(bearer(`wrs_made-up-${i}`));
      expect(res.status).toBe(401);
    }
    const refused = await request(http).get('/rest/people').set(bearer('wrs_yet-another'));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', messages: [expect.stringMatching(/3 failed authentications per minute/)] });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await request(http).post('/graphql').send({ query: '{ companies { totalCount } }' })).status).toBe(429);
    expect((await request(http).get('/rest/companies').set(bearer(ws.keys.Viewer))).status).toBe(429);
  });
});
