import graphileWorker, { type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
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
 * ago, and the jobs of `stoppedWorkerIds`: workers of this process that graphile-worker
 * stopped (their job is not running, and no other process could tell they are gone).
 * graphile-worker alone takes a dead worker's jobs back only after 4 hours. Returns how
 * many workers' jobs were released.
 */
export async function beatAndReleaseDead(
  pool: Pool,
  o: {
    processId: string;
    workerIds: string[];
    stoppedWorkerIds?: string[];
    heartbeatMs: number;
    taskIdentifier: string;
    unknownGraceMs: number;
  },
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
            AND (j.locked_by = ANY ($3::text[])
                 OR NOT EXISTS (SELECT 1 FROM webhook_workers w WHERE j.locked_by = ANY (w.worker_ids) AND w.alive_until > now())
                    AND (EXISTS (SELECT 1 FROM webhook_workers w WHERE j.locked_by = ANY (w.worker_ids))
                         OR j.locked_at < now() - $2 * interval '1 millisecond'))
       ), unlocked AS (
         SELECT graphile_worker.force_unlock_workers(array_agg(locked_by)) FROM stranded HAVING count(*) > 0
       )
       SELECT (SELECT count(*) FROM stranded)::int AS released, (SELECT count(*) FROM unlocked) AS done`,
      [o.taskIdentifier, o.unknownGraceMs, o.stoppedWorkerIds ?? []],
    )
  ).rows;
  await pool.query(`DELETE FROM webhook_workers WHERE alive_until < now() - interval '1 day'`);
  return released;
}

/** A locked job whose worker never sent a heartbeat (it died in its first moments) is released after this. */
const UNKNOWN_WORKER_GRACE_MS = 60_000;
/** Waits between attempts to start workers in place of stopped ones (Postgres may still be down): doubling up to the second. */
const RESTART_FIRST_WAIT_MS = 100;
const RESTART_MOST_WAIT_MS = 1_000;

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
 * `concurrency` graphile-worker workers of one task on a pool of their own, kept at that
 * number, with the heartbeat that makes a dead worker's jobs come back within seconds
 * (beatAndReleaseDead): at start, then every `heartbeatMs`.
 *
 * A worker that cannot record its job's outcome (Postgres went away under it) is stopped
 * by graphile-worker for good and never replaced by it (docs/decisions/0051-queue-workers-
 * that-outlive-postgres.md). Here each stopped worker is replaced by a runner of as many
 * workers as are missing, started again and again until Postgres takes it, and its job is
 * released at once; a runner left without workers is stopped. `ready` is false while the
 * process has been short of workers for 3 heartbeat intervals and cannot start more.
 *
 * `stop` stops taking jobs, waits for those running, removes this process's heartbeat row
 * and closes the pool. The webhook and import workers are each one of these.
 */
export class QueueWorker {
  private readonly processId = randomUUID();
  /** The workers running now, in every runner of this process. */
  private readonly live = new Set<string>();
  /** Workers that stopped while this process goes on: their jobs are released at the next heartbeat. */
  private readonly stopped = new Set<string>();
  private readonly runners = new Set<Runner>();
  private heartbeat?: NodeJS.Timeout;
  private stopping = false;
  private replacing?: Promise<void>;
  private shortSince?: number;
  private restartFailing = false;

  private constructor(
    private readonly o: QueueWorkerOptions,
    private readonly pool: Pool,
  ) {}

  static async start(o: QueueWorkerOptions): Promise<QueueWorker> {
    // Room for one LISTEN connection per runner besides the workers' statements: replacements run beside the first runner.
    const pool = new pg.Pool({ ...o.connection, max: 2 * o.concurrency + 2 });
    pool.setMaxListeners(o.concurrency + 10);
    pool.on('error', (err) => o.log.warn(`queue connection: ${err.message}`));
    const worker = new QueueWorker(o, pool);
    await worker.addRunner(o.concurrency);
    await worker.beat();
    worker.heartbeat = setInterval(() => void worker.beat(), o.heartbeatMs);
    worker.heartbeat.unref();
    return worker;
  }

  /** False once the process has been short of workers for a while and could not start more (`/health/ready`). */
  get ready(): boolean {
    return this.shortSince === undefined || !this.restartFailing || Date.now() - this.shortSince < 3 * this.o.heartbeatMs;
  }

  /** A graphile-worker runner of `concurrency` workers, each counted while it runs. */
  private async addRunner(concurrency: number): Promise<void> {
    const events: WorkerEvents = new EventEmitter();
    const mine = new Set<string>();
    // Set once graphile-worker has started it; a worker can stop before that.
    const started: { runner?: Runner } = {};
    events.on('worker:create', ({ worker }) => {
      mine.add(worker.workerId);
      this.live.add(worker.workerId);
    });
    events.on('worker:stop', ({ worker, error }) => {
      mine.delete(worker.workerId);
      this.live.delete(worker.workerId);
      if (this.stopping) return;
      this.stopped.add(worker.workerId);
      this.o.log.warn(`a ${this.o.name} worker stopped${error ? ` (${(error as Error).message})` : ''}; starting another`);
      if (started.runner && !mine.size) this.retire(started.runner);
      this.replace();
    });
    const runner = await graphileWorker.run({
      pgPool: this.pool,
      concurrency,
      noHandleSignals: true,
      pollInterval: 2000,
      events,
      logger: new graphileWorker.Logger(() => (level, message) => {
        if (level === 'error') this.o.log.error(message);
        else if (level === 'warning') this.o.log.warn(message);
      }),
      taskList: this.o.taskList(this.pool),
    });
    started.runner = runner;
    this.runners.add(runner);
    if (this.stopping || !mine.size) this.retire(runner);
  }

  /** Stops a runner (its workers finish their jobs first). */
  private retire(runner: Runner): void {
    if (!this.runners.delete(runner)) return;
    runner.stop().catch((err) => this.o.log.warn(`stopping a ${this.o.name} runner: ${err.message}`));
  }

  /** Starts workers in place of the stopped ones until there are `concurrency` again, then releases the stopped ones' jobs. */
  private replace(): void {
    if (this.replacing || this.stopping) return;
    this.shortSince ??= Date.now();
    this.replacing = (async () => {
      for (let wait = RESTART_FIRST_WAIT_MS; !this.stopping && this.live.size < this.o.concurrency;) {
        try {
          await this.addRunner(this.o.concurrency - this.live.size);
          this.restartFailing = false;
        } catch (err) {
          this.restartFailing = true;
          this.o.log.warn(`starting ${this.o.name} workers: ${(err as Error).message}; trying again`);
          await delay(wait, undefined, { ref: false });
          wait = Math.min(2 * wait, RESTART_MOST_WAIT_MS);
        }
      }
      if (this.live.size >= this.o.concurrency) this.shortSince = undefined;
      if (!this.stopping) await this.beat();
    })().finally(() => (this.replacing = undefined));
  }

  /** Records this process as alive, then releases the jobs of workers that are not. */
  private async beat(): Promise<void> {
    const stopped = [...this.stopped];
    try {
      const released = await beatAndReleaseDead(this.pool, {
        processId: this.processId,
        workerIds: [...this.live],
        stoppedWorkerIds: stopped,
        heartbeatMs: this.o.heartbeatMs,
        taskIdentifier: this.o.taskIdentifier,
        unknownGraceMs: UNKNOWN_WORKER_GRACE_MS,
      });
      for (const id of stopped) this.stopped.delete(id);
      if (released) this.o.log.warn(`released the ${this.o.jobs} of ${released} worker(s) that stopped`);
      await this.o.afterBeat?.(this.pool);
    } catch (err) {
      this.o.log.warn(`${this.o.name} worker heartbeat: ${(err as Error).message}`);
    }
  }

  async stop(): Promise<void> {
    // A replacement still starting stops itself once started (addRunner); its connect is not waited for.
    this.stopping = true;
    clearInterval(this.heartbeat);
    const runners = [...this.runners];
    this.runners.clear();
    await Promise.all(runners.map((r) => r.stop().catch((err) => this.o.log.warn(`stopping the ${this.o.name} worker: ${err.message}`))));
    await this.pool.query('DELETE FROM webhook_workers WHERE process_id = $1', [this.processId]).catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}
