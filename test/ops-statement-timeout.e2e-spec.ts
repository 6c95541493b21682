import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '#database/data-source.js';
import { newWorkspace, type TestWorkspace } from './factories.js';
import { spawnApp, type AppProcess } from './processes.js';

/**
 * DATABASE_STATEMENT_TIMEOUT_MS: no statement holds a Postgres backend (and a request, and a
 * shutdown) for longer; one that runs past it is cancelled by Postgres (SQLSTATE 57014,
 * query_canceled) and answered as a clear, retryable error, and the pool goes on serving.
 * Migrations are not bound by it.
 */
describe('statement timeout', () => {
  const url = process.env.DATABASE_URL!;
  let ds: DataSource;
  let ws: TestWorkspace;
  let api: AppProcess;
  let locker: pg.Client;

  beforeAll(async () => {
    ds = await new DataSource(dataSourceOptions(url, 2)).initialize();
    ws = await newWorkspace(ds, 'timeout');
    api = await spawnApp('records-api', { DATABASE_URL: url, DATABASE_STATEMENT_TIMEOUT_MS: '300' });
    locker = new pg.Client({ connectionString: url });
    await locker.connect();
  }, 60_000);
  afterAll(async () => {
    api?.child.kill('SIGKILL');
    await locker?.end();
    await ds?.destroy();
  });

  const headers = () => ({ Authorization: `Bearer ${ws.keys.Admin}`, 'Content-Type': 'application/json' });
  const rename = (id: string, name: string) =>
    fetch(`${api.url}/rest/companies/${id}`, { method: 'PATCH', headers: headers(), body: JSON.stringify({ name }) });

  it('cancels a statement past the limit: 503 QUERY_TIMEOUT with Retry-After on REST, GraphQL and MCP; the pool then serves on', async () => {
    const created = await fetch(`${api.url}/rest/companies`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ name: 'Slowco' }),
    });
    expect(created.status).toBe(201);
    const { id } = ((await created.json()) as { data: { createCompany: { id: string } } }).data.createCompany;

    // The row is locked: an UPDATE of it waits until its statement times out.
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM companies WHERE id = $1 FOR UPDATE', [id]);
    try {
      const startedAt = Date.now();
      const r = await rename(id, 'Renamed');
      expect(Date.now() - startedAt).toBeLessThan(5_000);
      const body = (await r.json()) as any;
      expect({ status: r.status, body }).toMatchObject({
        status: 503,
        body: { statusCode: 503, code: 'QUERY_TIMEOUT', requestId: expect.any(String) },
      });
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(body.messages[0]).toMatch(/longer than 300 ms/);

      const g = await fetch(`${api.url}/graphql`, {
        method: 'POST',
        headers: headers(),
        body: JSON.stringify({ query: `mutation { updateCompany(id: "${id}", data: {name: "G"}) { id } }` }),
      });
      expect(g.status).toBe(503);
      expect(g.headers.get('retry-after')).toMatch(/^\d+$/);
      const gBody = (await g.json()) as any;
      expect(gBody.errors[0].extensions.code).toBe('QUERY_TIMEOUT');
      expect(gBody.errors[0].message).toMatch(/longer than 300 ms/);

      const m = await fetch(`${api.url}/mcp`, {
        method: 'POST',
        headers: { ...headers(), Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'update_company', arguments: { id, name: 'M' } },
        }),
      });
      const mBody = (await m.json()) as any;
      expect(mBody.result.isError).toBe(true);
      expect(mBody.result.content[0].text).toMatch(/^QUERY_TIMEOUT: .*longer than 300 ms/);

      // Postgres let go of every one of them: nothing of the app's still waits on the lock. (Other
      // test files' custom-field index builds, CREATE INDEX CONCURRENTLY, wait for this open
      // transaction too, by design; they are not the app's requests and are not counted.)
      await locker.query('SELECT pg_stat_clear_snapshot()');
      const waiting = await locker.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND datname = current_database()
            AND application_name <> 'custom-field indexes'`,
      );
      expect(waiting.rows[0].n).toBe(0);
    } finally {
      await locker.query('ROLLBACK');
    }

    // More requests than the pool has connections, one after another: every one is usable.
    for (let i = 0; i < 25; i++) expect((await rename(id, `Renamed ${i}`)).status).toBe(200);
    const read = await fetch(`${api.url}/rest/companies/${id}`, { headers: headers() });
    expect(((await read.json()) as any).data.company.name).toBe('Renamed 24');
  }, 60_000);

  it('bounds every pooled connection, and not the migrations', async () => {
    process.env.DATABASE_STATEMENT_TIMEOUT_MS = '200';
    const bounded = await new DataSource(dataSourceOptions(url, 2)).initialize();
    try {
      expect((await bounded.query('SHOW statement_timeout'))[0].statement_timeout).toBe('200ms');
      await expect(bounded.query('SELECT pg_sleep(1)')).rejects.toMatchObject({ driverError: { code: '57014' } });
      expect(await bounded.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);

      // Another starter holds the migration lock for longer than the limit: this one waits for it.
      await locker.query('SELECT pg_advisory_lock(727274)');
      const migrating = runMigrations(bounded);
      await new Promise((r) => setTimeout(r, 800));
      await locker.query('SELECT pg_advisory_unlock(727274)');
      await expect(migrating).resolves.toBeUndefined();
      expect((await bounded.query('SHOW statement_timeout'))[0].statement_timeout).toBe('200ms');
    } finally {
      await bounded.destroy();
      delete process.env.DATABASE_STATEMENT_TIMEOUT_MS;
    }
  }, 30_000);
});
