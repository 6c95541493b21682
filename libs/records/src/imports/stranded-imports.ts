import type { Pool } from 'pg';
import { IMPORT_TASK } from './import-runner.js';
import { MAX_ATTEMPTS } from './imports.service.js';

/** At most this many unfinished imports are looked at per heartbeat, the longest untouched first. */
const STRANDED_BATCH = 100;

/** The sweep's first statement, across workspaces by design (see MULTI_SHARD_BY_DESIGN in libs/database/src/tenant-scope.ts). */
export const UNFINISHED_IMPORTS = `SELECT workspace_id, id FROM imports WHERE status IN ('queued', 'running') ORDER BY updated_at LIMIT $1`;

/**
 * A safety net of the import worker's heartbeat (docs/decisions/0051-queue-workers-that-outlive-postgres.md):
 * an import that is queued or running must have a job that can still run, or nothing ever
 * runs or ends it. A job whose workers died `max_attempts` times (each death spends an
 * attempt that no failure records) is such a dead end, and so is a job removed by hand: the
 * import gets a new job, and the spent one is removed. Its own count of runs that imported
 * nothing still ends it `failed` when it cannot go on (import-runner.ts).
 * Two statements: the candidates (every workspace's, through the partial index of
 * unfinished imports), then, on the queue's own tables, the new jobs. An import that ended
 * in between gets a job that finds it ended and does nothing. Returns how many jobs it queued.
 */
export async function requeueStrandedImports(pool: Pick<Pool, 'query'>): Promise<number> {
  const { rows } = await pool.query<{ workspace_id: string; id: string }>(UNFINISHED_IMPORTS, [STRANDED_BATCH]);
  if (!rows.length) return 0;
  const queued = await pool.query(
    `WITH mine AS (
       SELECT j.id, j.payload->>'importId' AS import_id, j.locked_by IS NOT NULL OR j.attempts < j.max_attempts AS can_run
         FROM graphile_worker._private_jobs j
        WHERE j.task_id = (SELECT t.id FROM graphile_worker._private_tasks t WHERE t.identifier = $1)
     ), stranded AS (
       SELECT c.workspace_id, c.id FROM unnest($2::uuid[], $3::uuid[]) AS c(workspace_id, id)
        WHERE NOT EXISTS (SELECT 1 FROM mine m WHERE m.import_id = c.id::text AND m.can_run)
     ), spent AS (
       SELECT count(*) AS n FROM graphile_worker.complete_jobs(ARRAY(SELECT m.id FROM mine m JOIN stranded s ON m.import_id = s.id::text))
     )
     SELECT graphile_worker.add_job($1, json_build_object('workspaceId', s.workspace_id, 'importId', s.id),
              queue_name => 'imports:' || s.workspace_id, max_attempts => $4)
       FROM stranded s WHERE (SELECT n FROM spent) IS NOT NULL`,
    [IMPORT_TASK, rows.map((r) => r.workspace_id), rows.map((r) => r.id), MAX_ATTEMPTS],
  );
  return queued.rowCount ?? 0;
}
