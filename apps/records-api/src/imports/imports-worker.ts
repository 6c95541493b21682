import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import graphileWorker, { type Runner, type WorkerEvents } from 'graphile-worker';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '#config/config.js';
import { sessionOptions } from '#database/data-source.js';
import { beatAndReleaseDead } from '#database/job-queue.js';
import { Sql } from '#database/sql.js';
import { DataModel } from '../records/data-model.js';
import { RecordsService } from '../records/records.service.js';
import { IMPORT_TASK, ImportRunner, type ImportJob } from './import-runner.js';

/** A locked import whose worker never sent a heartbeat (it died in its first moments) is released after this. */
const UNKNOWN_WORKER_GRACE_MS = 60_000;

/**
 * Runs imports from graphile-worker's queue in this process unless `IMPORTS_WORKER=off`
 * (docs/decisions/0035-imports.md): at most IMPORTS_CONCURRENCY at once here, and one per
 * workspace anywhere (each workspace's imports share a named queue). A runner of its own, so
 * long imports never take the webhook deliveries' slots. Like the webhook worker, it sends a
 * heartbeat every IMPORTS_HEARTBEAT_MS and releases the imports of workers that stopped
 * sending one (SIGKILL, a lost host): the import goes on from its last committed batch
 * within a few intervals instead of graphile-worker's 4 hours.
 */
@Injectable()
export class ImportsWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('imports');
  private runner?: Runner;
  private importRunner?: ImportRunner;
  private pool?: pg.Pool;
  private heartbeat?: NodeJS.Timeout;
  private readonly processId = randomUUID();
  private readonly workerIds = new Set<string>();

  constructor(
    private readonly ds: DataSource,
    private readonly sql: Sql,
    private readonly records: RecordsService,
    private readonly dataModel: DataModel,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const settings = loadConfig().imports;
    if (!settings.worker) return;
    const url = (this.ds.options as { url?: string }).url;
    this.pool = new pg.Pool({ connectionString: url, max: settings.concurrency + 2, options: sessionOptions() });
    this.pool.on('error', (err) => this.log.warn(`queue connection: ${err.message}`));
    const runner = new ImportRunner(this.sql, this.records, this.dataModel);
    this.importRunner = runner;
    const log = this.log;
    const events: WorkerEvents = new EventEmitter();
    events.on('worker:create', ({ worker }) => this.workerIds.add(worker.workerId));
    events.on('worker:stop', ({ worker }) => this.workerIds.delete(worker.workerId));
    this.runner = await graphileWorker.run({
      pgPool: this.pool,
      concurrency: settings.concurrency,
      noHandleSignals: true,
      pollInterval: 2000,
      events,
      logger: new graphileWorker.Logger(() => (level, message) => {
        if (level === 'error') log.error(message);
        else if (level === 'warning') log.warn(message);
      }),
      taskList: {
        [IMPORT_TASK]: (payload, helpers) =>
          runner.run(payload as ImportJob, { attempts: helpers.job.attempts, maxAttempts: helpers.job.max_attempts }),
      },
    });
    await this.beat(settings.heartbeatMs);
    this.heartbeat = setInterval(() => void this.beat(settings.heartbeatMs), settings.heartbeatMs);
    this.heartbeat.unref();
  }

  private async beat(heartbeatMs: number): Promise<void> {
    const pool = this.pool;
    if (!pool) return;
    try {
      const released = await beatAndReleaseDead(pool, {
        processId: this.processId,
        workerIds: [...this.workerIds],
        heartbeatMs,
        taskIdentifier: IMPORT_TASK,
        unknownGraceMs: UNKNOWN_WORKER_GRACE_MS,
      });
      if (released) this.log.warn(`released the imports of ${released} worker(s) that stopped sending heartbeats`);
      // An upload whose instance died mid-request left an `uploading` import and its chunks.
      await pool.query(`DELETE FROM imports WHERE status = 'uploading' AND updated_at < now() - interval '1 hour'`);
    } catch (err) {
      this.log.warn(`import worker heartbeat: ${(err as Error).message}`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.heartbeat);
    if (this.importRunner) this.importRunner.stopping = true;
    const runner = this.runner;
    this.runner = undefined;
    await runner?.stop().catch((err) => this.log.warn(`stopping the import worker: ${err.message}`));
    await this.pool?.query('DELETE FROM webhook_workers WHERE process_id = $1', [this.processId]).catch(() => undefined);
    await this.pool?.end().catch(() => undefined);
    this.pool = undefined;
  }
}
