import graphileWorker, { type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg, { type Pool } from 'pg';

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

/** A locked job whose worker never sent a heartbeat (it died in its first moments) is released after this. */
const UNKNOWN_WORKER_GRACE_MS = 60_000;

export interface QueueWorkerOptions {
  /** How log lines name this worker ("webhook", "import") and its jobs ("webhook jobs", "imports"). */
  name: string;
  jobs: string;
  /** The pool's connection: the application's URL and session options. */
  connection: pg.PoolConfig;
  concurrency: number;
  heartbeatMs: number;
  /** The one task this worker runs (its jobs are the ones released when their worker dies). */
  taskIdentifier: string;
  taskList: (pool: Pool) => TaskList;
  log: { warn(message: string): void; error(message: string): void };
  /** More upkeep with each heartbeat, on the worker's pool. */
  afterBeat?: (pool: Pool) => Promise<void>;
}

/**
 * A graphile-worker runner of one task on a pool of its own, with the heartbeat that makes a
 * dead worker's jobs come back within seconds (beatAndReleaseDead): at start, then every
 * `heartbeatMs`. `stop` stops taking jobs, waits for those running, removes this process's
 * heartbeat row and closes the pool. The webhook and import workers are each one of these.
 */
export class QueueWorker {
  private readonly processId = randomUUID();
  private readonly workerIds = new Set<string>();
  private heartbeat?: NodeJS.Timeout;
  private runner?: Runner;

  private constructor(
    private readonly o: QueueWorkerOptions,
    private readonly pool: Pool,
  ) {}

  static async start(o: QueueWorkerOptions): Promise<QueueWorker> {
    const pool = new pg.Pool({ ...o.connection, max: o.concurrency + 2 });
    pool.on('error', (err) => o.log.warn(`queue connection: ${err.message}`));
    const worker = new QueueWorker(o, pool);
    const events: WorkerEvents = new EventEmitter();
    events.on('worker:create', ({ worker: w }) => worker.workerIds.add(w.workerId));
    events.on('worker:stop', ({ worker: w }) => worker.workerIds.delete(w.workerId));
    worker.runner = await graphileWorker.run({
      pgPool: pool,
      concurrency: o.concurrency,
      noHandleSignals: true,
      pollInterval: 2000,
      events,
      logger: new graphileWorker.Logger(() => (level, message) => {
        if (level === 'error') o.log.error(message);
        else if (level === 'warning') o.log.warn(message);
      }),
      taskList: o.taskList(pool),
    });
    await worker.beat();
    worker.heartbeat = setInterval(() => void worker.beat(), o.heartbeatMs);
    worker.heartbeat.unref();
    return worker;
  }

  /** Records this process as alive, then releases the jobs of workers that are not. */
  private async beat(): Promise<void> {
    try {
      const released = await beatAndReleaseDead(this.pool, {
        processId: this.processId,
        workerIds: [...this.workerIds],
        heartbeatMs: this.o.heartbeatMs,
        taskIdentifier: this.o.taskIdentifier,
        unknownGraceMs: UNKNOWN_WORKER_GRACE_MS,
      });
      if (released) this.o.log.warn(`released the ${this.o.jobs} of ${released} worker(s) that stopped sending heartbeats`);
      await this.o.afterBeat?.(this.pool);
    } catch (err) {
      this.o.log.warn(`${this.o.name} worker heartbeat: ${(err as Error).message}`);
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.heartbeat);
    const runner = this.runner;
    this.runner = undefined;
    await runner?.stop().catch((err) => this.o.log.warn(`stopping the ${this.o.name} worker: ${err.message}`));
    await this.pool.query('DELETE FROM webhook_workers WHERE process_id = $1', [this.processId]).catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}
