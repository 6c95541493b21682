import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi } from './factories.js';
import { expectError } from './rest-helpers.js';

/** README.md, Operations: two records-API instances on one database share one budget per credential. */
const LIMIT = 7;

describe('rate limits shared by instances', () => {
  let a: INestApplication;
  let b: INestApplication;
  let ds: DataSource;
  const previous = { ...process.env };

  beforeAll(async () => {
    process.env.RATE_LIMIT_PER_MINUTE = String(LIMIT);
    const first = await startApi();
    a = first.app;
    ds = first.ds;
    b = (await startApi()).app;
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    process.env = previous;
  });

  it('counts requests to either instance against one budget, with draft-7 headers, then 429 + Retry-After on both', async () => {
    const ws = await newWorkspace(ds, 'shared-rate');
    const remaining: number[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await request((i % 2 ? b : a).getHttpServer())
        .get('/rest/companies')
        .set(bearer(ws.keys.Admin));
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe(`${LIMIT};w=60`);
      const match = /^limit=(\d+), remaining=(\d+), reset=(\d+)$/.exec(res.headers['ratelimit']);
      expect(match).not.toBeNull();
      expect(Number(match![1])).toBe(LIMIT);
      expect(Number(match![3])).toBeGreaterThanOrEqual(1);
      expect(Number(match![3])).toBeLessThanOrEqual(60);
      remaining.push(Number(match![2]));
    }
    expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i));
    for (const app of [a, b]) {
      const res = await request(app.getHttpServer()).get('/rest/companies').set(bearer(ws.keys.Admin));
      expectError(res, 429, 'RATE_LIMITED');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(res.headers['ratelimit']).toMatch(/remaining=0/);
    }
    // The counter lives in Postgres, not in either process.
    const [row] = await ds.query(`SELECT count(*)::int AS n FROM rate_limits WHERE key LIKE 'req${LIMIT}:%'`);
    expect(row.n).toBeGreaterThanOrEqual(1);
  });
});
