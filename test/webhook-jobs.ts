import pg from 'pg';
import type { DataSource } from 'typeorm';
import type { DeliverJob } from '#webhooks/delivery.js';
import { DELIVER_TASK } from '#webhooks/webhook-outbox.js';
import { startApi, useEmptyDatabase } from './factories.js';
import type { Http } from './rest-helpers.js';

export interface WorkerlessApi {
  readonly ds: DataSource;
  readonly http: Http;
  /** For `deliverOnce`, as the worker's own pool would be. */
  readonly pool: pg.Pool;
  /** The workspace's delivery jobs on graphile-worker's queue, oldest first. */
  jobsOf(workspaceId: string): Promise<{ id: string; payload: DeliverJob }[]>;
}

/**
 * The records API with no webhook worker (`WEBHOOKS_WORKER=off`), for suites that run the
 * delivery jobs themselves, on a database of its own: the suites that do run workers share
 * the suite's database and so its queue, and would take these jobs. Call in a describe body.
 */
export function useWorkerlessApi(label: string): WorkerlessApi {
  const db = useEmptyDatabase(label);
  let ds: DataSource;
  let http: Http;
  let pool: pg.Pool;
  beforeAll(async () => {
    const saved = { url: process.env.DATABASE_URL, worker: process.env.WEBHOOKS_WORKER };
    Object.assign(process.env, { DATABASE_URL: db.url, WEBHOOKS_WORKER: 'off' });
    try {
      const started = await startApi();
      ({ ds, http } = started);
      pool = new pg.Pool({ connectionString: db.url, max: 3 });
      db.beforeDrop(async () => {
        await pool.end();
        await started.app.close();
      });
    } finally {
      process.env.DATABASE_URL = saved.url;
      if (saved.worker === undefined) delete process.env.WEBHOOKS_WORKER;
      else process.env.WEBHOOKS_WORKER = saved.worker;
    }
  });
  return {
    get ds() {
      return ds;
    },
    get http() {
      return http;
    },
    get pool() {
      return pool;
    },
    jobsOf: (workspaceId) =>
      ds.query(
        `SELECT j.id::text AS id, j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
          WHERE t.identifier = $1 AND j.payload->>'workspaceId' = $2 ORDER BY j.id`,
        [DELIVER_TASK, workspaceId],
      ),
  };
}
