import { DELIVER_TASK, firstAttemptPayload } from './webhook-outbox.js';

/**
 * Queues the jobs of deliveries a create stored in its one statement (insertWithEvents),
 * with graphile-worker's public `add_jobs` (one call, one NOTIFY for the lot), and points
 * each delivery at its job (its `job_id`, so a job that sends it along with its own can take
 * this one off the queue). One workspace's deliveries per statement.
 *
 * A delivery another statement has locked is skipped, not waited for: it is being sent
 * already, by a job that took it along before its own job existed (that job's outcome
 * statement locks it, and waiting here while that statement waits for a row locked here
 * was a deadlock: the outcome was lost and the job's retry sent the events twice). Its job
 * is queued all the same; without the id kept, it is not taken off the queue, and when it
 * runs it finds its delivery sent and ends.
 */
const QUEUE_FIRST_ATTEMPTS = `WITH queued AS MATERIALIZED (
    SELECT j.id AS job_id, (j.payload->>'deliveryId')::uuid AS id
      FROM graphile_worker.add_jobs(ARRAY(
        SELECT ROW($1::text, ${firstAttemptPayload('$2', 'd.id')}, NULL, NULL, NULL, NULL, NULL, NULL)::graphile_worker.job_spec
          FROM unnest($3::uuid[]) AS d(id))) j
  ), free AS (
    SELECT x.id, q.job_id FROM webhook_deliveries x JOIN queued q ON x.id = q.id
     WHERE x.workspace_id = $2 AND x.job_id IS NULL
     FOR UPDATE OF x SKIP LOCKED
  )
  UPDATE webhook_deliveries x SET job_id = f.job_id
    FROM free f
   WHERE x.workspace_id = $2 AND x.id = f.id`;

interface Waiting {
  ids: string[];
  done: (() => void)[];
}

/**
 * The first attempts' jobs of creates in watched workspaces, queued after each create's
 * statement has committed rather than inside it (docs/decisions/0045-jobs-queued-after-the-create.md):
 * Postgres commits transactions that NOTIFY one at a time, holding a lock through the commit's
 * WAL flush, so creates that queued their own jobs committed one by one, each waiting for its
 * own flush. Here a workspace has at most one queueing statement in flight; the deliveries of
 * creates that return meanwhile wait for it and then go together in the next one, so a burst
 * of creates commits together and queues its jobs in one or two statements.
 *
 * `queue` resolves once the jobs are on the queue, so a create is answered with its
 * deliveries' jobs queued, as before. It never rejects: the create has committed, and a
 * delivery left without a job (the statement failed, or the process died before it ran) is
 * given one by the webhook worker's heartbeat sweep (delivery.ts, requeueStranded), about a
 * minute late.
 */
export class FirstAttempts {
  private readonly waiting = new Map<string, Waiting>();

  constructor(
    private readonly run: (sql: string, params: unknown[]) => Promise<unknown>,
    private readonly failed: (err: unknown, deliveries: number) => void,
  ) {}

  queue(workspaceId: string, ids: readonly string[] | null | undefined): Promise<void> {
    if (!ids?.length) return Promise.resolve();
    let w = this.waiting.get(workspaceId);
    const first = !w;
    if (!w) this.waiting.set(workspaceId, (w = { ids: [], done: [] }));
    w.ids.push(...ids);
    const queued = new Promise<void>((resolve) => w.done.push(resolve));
    if (first) void this.drain(workspaceId, w);
    return queued;
  }

  /** Runs while the workspace has deliveries waiting: one statement at a time, each with all that wait. */
  private async drain(workspaceId: string, w: Waiting): Promise<void> {
    while (w.ids.length) {
      const { ids, done } = w;
      w.ids = [];
      w.done = [];
      try {
        await this.run(QUEUE_FIRST_ATTEMPTS, [DELIVER_TASK, workspaceId, ids]);
      } catch (err) {
        this.failed(err, ids.length);
      }
      for (const resolve of done) resolve();
    }
    this.waiting.delete(workspaceId);
  }
}
