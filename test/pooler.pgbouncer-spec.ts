import type { INestApplication } from '@nestjs/common';
import pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { CREDENTIAL_POLL_MS, CredentialCache } from '#auth/credential-cache.js';
import { ConfigError, loadConfig } from '#config/config.js';
import { dataSourceOptions, runMigrations } from '#database/data-source.js';
import { Sql } from '#database/sql.js';
import { revokeApiKey } from '#identity/accounts.js';
import { createRecordsApi } from '../apps/records-api/src/bootstrap.js';
import { createWebhook } from '#webhooks/webhooks.js';
import { bearer, newWorkspace } from './factories.js';
import { Receiver, TEST_WORKER_ENV } from './webhook-receiver.js';
// @ts-expect-error plain ESM helper shared with the Jest global setup
import { pgbouncerAvailable, PGBOUNCER } from './pgbouncer.mjs';

/**
 * The service behind a real PgBouncer 1.18 in transaction mode with 3 server connections
 * (jest.pgbouncer.config.js; docs/scaling.md "Behind PgBouncer"): DATABASE_URL is PgBouncer,
 * DATABASE_SESSION_URL the database itself, DATABASE_POOLER=transaction. The records suites
 * run through it too; this file checks what is particular to the pooler.
 */
const pooled = Boolean(process.env.WRS_PGBOUNCER_URL) && pgbouncerAvailable();
if (!pooled) {
  process.stderr.write(`pooler.pgbouncer-spec: ${PGBOUNCER} not found, skipped (apt-get install -y pgbouncer)\n`);
}
const describePooled = pooled ? describe : describe.skip;

/** The test database itself (DATABASE_SESSION_URL, set by test/pgbouncer-env.ts). */
const directUrlOf = () => process.env.DATABASE_SESSION_URL!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function client(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

describePooled('PgBouncer in transaction mode', () => {
  const pooledUrl = () => process.env.DATABASE_URL!;
  const directUrl = () => process.env.DATABASE_SESSION_URL!;

  it('shares 3 server sessions among many clients, so session state does not carry over', async () => {
    const clients = await Promise.all(Array.from({ length: 8 }, () => client(pooledUrl())));
    try {
      const pids = new Set<number>();
      for (let round = 0; round < 3; round++) {
        const rows = await Promise.all(clients.map((c) => c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')));
        for (const r of rows) pids.add(r.rows[0].pid);
      }
      expect(pids.size).toBeLessThanOrEqual(3);
      // What PgBouncer sets on each server connection (the ini of docs/scaling.md), whichever one a client gets.
      const { rows } = await clients[0].query<{ tz: string; timeout: string }>(
        `SELECT current_setting('TimeZone') AS tz, current_setting('statement_timeout') AS timeout`,
      );
      expect(rows[0]).toEqual({ tz: 'UTC', timeout: '15s' });
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });

  it('refuses startup options, so the pools send none with DATABASE_POOLER=transaction', async () => {
    const withOptions = new pg.Client({ connectionString: pooledUrl(), options: '-c statement_timeout=1000' });
    await expect(withOptions.connect()).rejects.toThrow(/unsupported startup parameter: options/);
    await withOptions.end().catch(() => undefined);
    expect((dataSourceOptions(pooledUrl()).extra as pg.PoolConfig).options).toBeUndefined();
    // Any other URL (the session one) keeps them.
    expect((dataSourceOptions(directUrl()).extra as pg.PoolConfig).options).toMatch(/statement_timeout/);
  });

  it('loses a named prepared statement between transactions (PgBouncer 1.18), so the app prepares none', async () => {
    // A statement prepared on one server session, then every other session made the only free one.
    const a = await client(pooledUrl());
    const probes: { c: pg.Client; pid: number }[] = [];
    try {
      await a.query('BEGIN');
      const { rows } = await a.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await a.query({ name: 'pooler_probe', text: 'SELECT 1 AS one' });
      await a.query('COMMIT');
      // Three open transactions take PgBouncer's three server sessions, so one of them is the
      // session that knows the statement. Ending each probe that missed it before opening the
      // next did not ensure that: another test file's transaction could hold that session
      // meanwhile, and the next probe got a missed one again.
      for (let i = 0; i < 3; i++) {
        const c = await client(pooledUrl());
        await c.query('BEGIN');
        probes.push({ c, pid: (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid });
      }
      const holders = probes.filter((p) => p.pid === rows[0].pid);
      for (const p of probes.filter((p) => !holders.includes(p))) await p.c.query('COMMIT');
      expect(holders).toHaveLength(1); // the session that knows the statement is busy
      await expect(a.query({ name: 'pooler_probe', text: 'SELECT 1 AS one' })).rejects.toThrow(
        /prepared statement "pooler_probe" does not exist/,
      );
    } finally {
      for (const p of probes) await p.c.end().catch(() => undefined);
      await a.end().catch(() => undefined);
    }

    // The app's hot statements (prepared: true) under the same shuffling: none is named, all answer.
    expect(loadConfig().database.preparedStatements).toBe(false);
    const ds = await new DataSource(dataSourceOptions(pooledUrl(), 8)).initialize();
    try {
      const sql = new Sql(ds);
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => sql.rows<{ n: number }>('SELECT $1::int AS n', [i], { prepared: true })),
      );
      expect(results.map((r) => r[0].n)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      const inTx = await sql.transaction((tx) => tx.rows<{ n: number }>('SELECT $1::int + 1 AS n', [1], { prepared: true }));
      expect(inTx[0].n).toBe(2);
    } finally {
      await ds.destroy();
    }
  });

  it('runs migrations on the session URL (advisory lock, SET) and leaves no lock on a pooled session', async () => {
    const ds = await new DataSource(dataSourceOptions(pooledUrl(), 2)).initialize();
    try {
      await runMigrations(ds);
    } finally {
      await ds.destroy();
    }
    // The pids of PgBouncer's 3 server sessions: 3 clients each hold a transaction, so each gets its own.
    // Another test file may be running migrations (and hold the lock on its own direct session) right
    // now, so only a lock held by one of these sessions counts.
    const held = await Promise.all(Array.from({ length: 3 }, () => client(pooledUrl())));
    const direct = await client(directUrl());
    try {
      const pids = await Promise.all(
        held.map(async (c) => {
          await c.query('BEGIN');
          return (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
        }),
      );
      expect(new Set(pids).size).toBe(3);
      const { rows } = await direct.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 727274 AND pid = ANY($1::int[])
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [pids],
      );
      expect(rows[0].n).toBe(0);
    } finally {
      await direct.end();
      await Promise.all(
        held.map((c) =>
          c
            .query('COMMIT')
            .then(() => c.end())
            .catch(() => c.end()),
        ),
      );
    }
  });

  it('refuses DATABASE_POOLER=transaction without DATABASE_SESSION_URL, and an unknown pooler mode', () => {
    const saved = { ...process.env };
    try {
      delete process.env.DATABASE_SESSION_URL;
      expect(() => loadConfig()).toThrow(ConfigError);
      expect(() => loadConfig()).toThrow(/DATABASE_POOLER=transaction needs DATABASE_SESSION_URL/);
      process.env.DATABASE_SESSION_URL = saved.DATABASE_SESSION_URL;
      process.env.DATABASE_POOLER = 'statement';
      expect(() => loadConfig()).toThrow(/DATABASE_POOLER must be none or transaction/);
    } finally {
      process.env = saved;
    }
  });
});

describePooled('the records API behind PgBouncer', () => {
  // A database of its own (reached through PgBouncer's fallback entry): no other suite's
  // writes move the credential version here.
  const name = `pooler_${Date.now()}`;
  let app: INestApplication;
  let admin: pg.Client;
  const saved = { ...process.env };

  beforeAll(async () => {
    const direct = new URL(directUrlOf());
    const pooledDb = new URL(process.env.WRS_PGBOUNCER_URL!);
    direct.pathname = pooledDb.pathname = `/${name}`;
    const server = await client(directUrlOf());
    await server.query(`CREATE DATABASE ${name}`);
    await server.end();
    const ds = await new DataSource(dataSourceOptions(direct.toString(), 1)).initialize();
    await runMigrations(ds);
    await ds.destroy();
    // This database's own webhook worker (no other suite's queue here): graphile-worker on the session URL.
    Object.assign(process.env, {
      DATABASE_URL: pooledDb.toString(),
      DATABASE_SESSION_URL: direct.toString(),
      EXPORTS_PER_WORKSPACE: '1',
      ...TEST_WORKER_ENV,
    });
    app = await createRecordsApi();
    await app.init();
    admin = await client(direct.toString());
  });
  afterAll(async () => {
    await admin?.end();
    await app?.close();
    process.env = saved;
    const server = await client(directUrlOf());
    await server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.end();
  });

  const cache = () => app.get(CredentialCache);

  it('keeps credentials without LISTEN: a version poll drops them, and a revoked key is refused on the next request', async () => {
    expect(cache().invalidation).toBe('poll');
    for (let i = 0; i < 50 && !cache().active; i++) await sleep(50);
    expect(cache().active).toBe(true);
    // The cache's connection never LISTENs (it would sit on a shared server session).
    const { rows } = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN wrs_credentials%'`,
    );
    expect(rows[0].n).toBe(0);

    const ws = await newWorkspace(app.get(DataSource), 'pooled');
    const http = app.getHttpServer();
    expect((await request(http).get('/rest/companies').set(bearer(ws.keys.Admin))).status).toBe(200);
    // Served from memory: a revocation written with triggers off (nothing announced) is not seen...
    const [{ id }] = (await admin.query<{ id: string }>(`SELECT id FROM api_keys WHERE workspace_id = $1 AND name = 'Admin key'`, [ws.id]))
      .rows;
    await admin.query('SET session_replication_role = replica');
    await admin.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [id]);
    await admin.query('SET session_replication_role = DEFAULT');
    expect((await request(http).get('/rest/companies').set(bearer(ws.keys.Admin))).status).toBe(200);
    expect(cache().size).toBeGreaterThan(0);
    // ...until the version moves: the poll drops every entry without any request.
    await admin.query('UPDATE credential_changes SET version = version + 1');
    for (let i = 0; i < 3 * (CREDENTIAL_POLL_MS / 50) && cache().size > 0; i++) await sleep(50);
    expect(cache().size).toBe(0);
    expect((await request(http).get('/rest/companies').set(bearer(ws.keys.Admin))).status).toBe(401);

    // A revocation as the settings pages make it: refused on the very next request.
    const viewer = ws.keys.Viewer;
    expect((await request(http).get('/rest/companies').set(bearer(viewer))).status).toBe(200);
    expect((await request(http).get('/rest/companies').set(bearer(viewer))).status).toBe(200);
    const [{ id: viewerId }] = (
      await admin.query<{ id: string }>(`SELECT id FROM api_keys WHERE workspace_id = $1 AND name = 'Viewer key'`, [ws.id])
    ).rows;
    await revokeApiKey(app.get(DataSource), viewerId, ws.id);
    const refused = await request(http).get('/rest/companies').set(bearer(viewer));
    expect(refused.status).toBe(401);
  });

  it('delivers a webhook: the job is added in the write transaction through PgBouncer, the worker takes it on the session URL', async () => {
    const receiver = await new Receiver().start();
    try {
      const ws = await newWorkspace(app.get(DataSource), 'hooks');
      await createWebhook(app.get(DataSource), ws.id, { url: receiver.url, operations: ['company.created'] }, { allowPrivate: true });
      const res = await request(app.getHttpServer()).post('/rest/companies').set(bearer(ws.keys.Admin)).send({ name: 'Hooked' });
      expect(res.status).toBe(201);
      await receiver.waitFor(1, 20_000);
      expect(receiver.receipts[0].json).toMatchObject({
        type: 'company.created',
        workspaceId: ws.id,
        data: { record: { id: res.body.data.createCompany.id } },
      });
      // graphile-worker LISTENs on a session of the database itself, not through PgBouncer.
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
      );
      expect(rows[0].n).toBeGreaterThan(0);
    } finally {
      await receiver.close();
    }
  });

  it('streams an export over the session URL, its workspace slot a session advisory lock', async () => {
    const ws = await newWorkspace(app.get(DataSource), 'export');
    const http = app.getHttpServer();
    for (const name of ['Alpha', 'Beta']) {
      expect((await request(http).post('/rest/companies').set(bearer(ws.keys.Admin)).send({ name })).status).toBe(201);
    }
    const res = await request(http).get('/rest/companies/export?format=csv').set(bearer(ws.keys.Admin));
    expect(res.status).toBe(200);
    expect(res.text.split('\n').filter(Boolean)).toHaveLength(3);
    // The slot was released on the session that took it: the workspace's one slot is free again.
    const again = await request(http).get('/rest/companies/export?format=ndjson').set(bearer(ws.keys.Admin));
    expect(again.status).toBe(200);
    expect(again.text.split('\n').filter(Boolean)).toHaveLength(2);
  });
});
