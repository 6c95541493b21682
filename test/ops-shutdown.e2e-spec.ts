import pg from 'pg';
import { httpJson, ownPostgresWithKey, spawnApp, waitUntil, type OwnPostgres } from './processes.js';

/**
 * SIGTERM (README "Shutdown"): requests in flight get their normal answers. To have requests
 * provably in flight, the test holds a lock that makes every company INSERT wait, sends
 * SIGTERM, and only then lets them go.
 */
describe('SIGTERM with requests in flight', () => {
  let pgOwn: OwnPostgres;
  let key: string;
  let workspaceId: string;

  beforeAll(async () => {
    ({ pg: pgOwn, key, workspaceId } = await ownPostgresWithKey('shutdown'));
  }, 60_000);
  afterAll(async () => pgOwn?.remove());

  it('lets the requests in flight finish, answers readiness and new work with 503 meanwhile, then exits 0', async () => {
    const api = await spawnApp('records-api', { DATABASE_URL: pgOwn.url, SHUTDOWN_GRACE_MS: '20000' });
    const locker = new pg.Client({ connectionString: pgOwn.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE companies IN EXCLUSIVE MODE'); // reads pass, inserts wait

      const N = 12; // below the pool size (20), so every one of them holds a connection and waits
      const batch = (i: number) => Array.from({ length: 60 }, (_, j) => ({ name: `c${i}-${j}` }));
      const pending = Array.from({ length: N }, (_, i) =>
        httpJson(`${api.url}/rest/batch/companies`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: batch(i) }).catch(
          (err) => ({ status: 0, body: String(err) }),
        ),
      );
      await waitUntil(
        // pg_stat_activity is snapshotted once per transaction: clear it to see the waits now.
        async () =>
          (await locker.query('SELECT pg_stat_clear_snapshot()'),
          await locker.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%INSERT INTO companies %'`,
          )).rows[0].n === N,
        15_000,
        () => `${N} inserts waiting on the lock`,
      );

      api.child.kill('SIGTERM');
      // Draining: readiness answers 503 (a load balancer takes the instance out instead of
      // seeing refused connections), new API work is turned away with a retryable 503.
      await waitUntil(
        async () => (await httpJson(`${api.url}/health/ready`).catch(() => ({ status: 0 }))).status === 503,
        5_000,
        () => 'readiness 503 while draining',
      );
      expect((await httpJson(`${api.url}/health/ready`)).body).toEqual({ status: 'unavailable', checks: { database: 'draining' } });
      expect((await httpJson(`${api.url}/health/live`)).status).toBe(200);
      const late = await httpJson(`${api.url}/rest/companies`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}` },
        body: { name: 'too late' },
      });
      expect(late.status).toBe(503);
      expect(late.headers['retry-after']).toMatch(/^\d+$/);
      expect(late.body).toMatchObject({ statusCode: 503, code: 'SERVICE_UNAVAILABLE' });
      expect(api.child.exitCode).toBeNull(); // still draining

      await locker.query('COMMIT');
      const answers = await Promise.all(pending);
      expect(answers.map((a) => a.status)).toEqual(Array(N).fill(201));
      expect(await api.exited).toEqual({ code: 0, signal: null });

      const { rows } = await locker.query('SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1', [workspaceId]);
      expect(rows[0].n).toBe(N * 60);
    } finally {
      await locker.end();
      api.child.kill('SIGKILL');
    }
  }, 60_000);
});
