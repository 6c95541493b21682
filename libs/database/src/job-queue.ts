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

/**
 * One heartbeat of a queue worker process: records its graphile-worker ids as alive for 3
 * intervals (`webhook_workers`, the registry of every queue worker process), then releases
 * (`force_unlock_workers`) the jobs of `taskIdentifier` locked by workers that are no longer
 * alive, or that never sent a heartbeat and locked their job more than `unknownGraceMs`
 * ago. graphile-worker alone takes a dead worker's jobs back only after 4 hours. Returns
 * how many workers' jobs were released.
 */
export async function beatAndReleaseDead(
  pool: Pool,
  o: { processId: string; workerIds: string[]; heartbeatMs: number; taskIdentifier: string; unknownGraceMs: number },
): Promise<number> {
  await pool.query(
    `INSERT INTO webhook_workers (process_id, worker_ids, alive_until) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
     ON CONFLICT (process_id) DO UPDATE SET worker_ids = EXCLUDED.worker_ids, alive_until = EXCLUDED.alive_until`,
    [o.processId, o.workerIds, 3 * o.heartbeatMs],
  );
  const [{ released }] = (
    await pool.query<{ released: number }>(
      `WITH stranded AS (
         SELECT DISTINCT j.locked_by FROM graphile_worker.jobs j
          WHERE j.locked_by IS NOT NULL AND j.task_identifier = $1
            AND NOT EXISTS (SELECT 1 FROM webhook_workers w WHERE j.locked_by = ANY (w.worker_ids) AND w.alive_until > now())
            AND (EXISTS (SELECT 1 FROM webhook_workers w WHERE j.locked_by = ANY (w.worker_ids))
                 OR j.locked_at < now() - $2 * interval '1 millisecond')
       ), unlocked AS (
         SELECT graphile_worker.force_unlock_workers(array_agg(locked_by)) FROM stranded HAVING count(*) > 0
       )
       SELECT (SELECT count(*) FROM stranded)::int AS released, (SELECT count(*) FROM unlocked) AS done`,
      [o.taskIdentifier, o.unknownGraceMs],
    )
  ).rows;
  await pool.query(`DELETE FROM webhook_workers WHERE alive_until < now() - interval '1 day'`);
  return released;
}
