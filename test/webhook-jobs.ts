import type { INestApplication } from '@nestjs/common';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import type { DeliverJob } from '#webhooks/delivery.js';
import { DELIVER_TASK } from '#webhooks/webhook-outbox.js';
import { startApi } from './factories.js';
import type { Http } from './rest-helpers.js';

export interface WorkerlessApi {
  app: INestApplication;
  ds: DataSource;
  http: Http;
  /** For `deliverOnce`, as the worker's own pool would be. */
  pool: pg.Pool;
  close(): Promise<void>;
}

/** The records API with no webhook worker (`WEBHOOKS_WORKER=off`): the test runs the delivery jobs itself. */
export async function startWithoutWebhookWorker(): Promise<WorkerlessApi> {
  const saved = process.env.WEBHOOKS_WORKER;
  process.env.WEBHOOKS_WORKER = 'off';
  try {
    const { app, ds, http } = await startApi();
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 3 });
    return {
      app,
      ds,
      http,
      pool,
      close: async () => {
        await pool.end();
        await app.close();
      },
    };
  } finally {
    if (saved === undefined) delete process.env.WEBHOOKS_WORKER;
    else process.env.WEBHOOKS_WORKER = saved;
  }
}

/** The workspace's delivery jobs on graphile-worker's queue, oldest first. */
export function deliveryJobsOf(ds: DataSource, workspaceId: string): Promise<{ id: string; payload: DeliverJob }[]> {
  return ds.query(
    `SELECT j.id::text AS id, j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
      WHERE t.identifier = $1 AND j.payload->>'workspaceId' = $2 ORDER BY j.id`,
    [DELIVER_TASK, workspaceId],
  );
}
