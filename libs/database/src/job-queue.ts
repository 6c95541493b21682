import graphileWorker from 'graphile-worker';
import type { Pool } from 'pg';

/**
 * graphile-worker's schema (`graphile_worker`): the Postgres job queue behind webhook
 * delivery (SKIP LOCKED, LISTEN/NOTIFY, jobs added in the writer's transaction). Installed
 * and upgraded with our migrations so `graphile_worker.add_job` exists before any write.
 */
export async function migrateJobQueue(pool: Pool): Promise<void> {
  await graphileWorker.runMigrations({ pgPool: pool, logger: quietLogger });
}

export const quietLogger = new graphileWorker.Logger(() => () => undefined);
