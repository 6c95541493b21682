import type { INestApplication } from '@nestjs/common';
import pg from 'pg';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { ownPostgres, type OwnPostgres } from './processes.js';
import { expectError, type Http } from './rest-helpers.js';

/**
 * README.md, Operations: the database going away *during* a request (after authentication) is a 503 too,
 * on every transport. The test makes an INSERT wait on a lock, then terminates the
 * backend running it (SQLSTATE 57P01, as when Postgres shuts down). On a Postgres of its
 * own: locking the suite's shared tables would stall, and the backend search could pick,
 * another file's INSERT.
 */
describe('database lost in the middle of a request', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let ws: TestWorkspace;
  let locker: pg.Client;
  let own: OwnPostgres;
  const sharedUrl = process.env.DATABASE_URL;

  beforeAll(async () => {
    own = await ownPostgres('midway');
    process.env.DATABASE_URL = own.url;
    ({ app, ds, http } = await startApi());
    ws = await newWorkspace(ds, 'midway');
    locker = new pg.Client({ connectionString: own.url });
    await locker.connect();
  }, 60_000);
  afterAll(async () => {
    await locker?.end();
    await app?.close();
    process.env.DATABASE_URL = sharedUrl;
    await own?.remove();
  });

  async function terminatedMidway<T>(send: () => Promise<T>, table = 'companies'): Promise<T> {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
    try {
      const pending = send();
      let pid: number | undefined;
      for (let i = 0; i < 100 && !pid; i++) {
        await locker.query('SELECT pg_stat_clear_snapshot()');
        // The waiting INSERT of the create (matched anywhere in its text).
        const { rows } = await locker.query(
          `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%INSERT INTO ' || $1 || ' %'`,
          [table],
        );
        pid = rows[0]?.pid;
        if (!pid) await new Promise((r) => setTimeout(r, 50));
      }
      expect(pid).toBeDefined();
      await locker.query('SELECT pg_terminate_backend($1)', [pid]);
      return await pending;
    } finally {
      await locker.query('ROLLBACK');
    }
  }
  const auth = () => ({ Authorization: `Bearer ${ws.keys.Admin}` });

  it('REST: 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    const res = await terminatedMidway(() =>
      request(http)
        .post('/rest/companies')
        .set(auth())
        .send({ name: 'Midway REST' })
        .then((r) => r),
    );
    expectError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe('5');
  });

  it('GraphQL: HTTP 503, extensions.code SERVICE_UNAVAILABLE', async () => {
    const res = await terminatedMidway(() =>
      request(http)
        .post('/graphql')
        .set(auth())
        .send({ query: 'mutation { createCompany(data: {name: "Midway GQL"}) { id } }' })
        .then((r) => r),
    );
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('MCP: HTTP 503 with a JSON-RPC error', async () => {
    const res = await terminatedMidway(() =>
      request(http)
        .post('/mcp')
        .set(auth())
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'create_company', arguments: { name: 'Midway MCP' } } })
        .then((r) => r),
    );
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32000, data: { code: 'SERVICE_UNAVAILABLE' } } });
  });

  it('Idempotency-Key: losing the database while claiming the key is 503 too (REST and GraphQL)', async () => {
    const rest = await terminatedMidway(
      () =>
        request(http)
          .post('/rest/companies')
          .set(auth())
          .set('Idempotency-Key', 'midway-rest')
          .send({ name: 'Midway key' })
          .then((r) => r),
      'idempotency_keys',
    );
    expectError(rest, 503, 'SERVICE_UNAVAILABLE');
    const gql = await terminatedMidway(
      () =>
        request(http)
          .post('/graphql')
          .set(auth())
          .set('Idempotency-Key', 'midway-gql')
          .send({ query: 'mutation { createCompany(data: {name: "Midway key GQL"}) { id } }' })
          .then((r) => r),
      'idempotency_keys',
    );
    expect(gql.status).toBe(503);
    expect(gql.headers['retry-after']).toBe('5');
    expect(gql.body.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    const [row] = await ds.query(`SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1 AND name LIKE 'Midway key%'`, [ws.id]);
    expect(row.n).toBe(0);
  });
});
