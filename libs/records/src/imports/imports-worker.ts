import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { loadConfig } from '#config/config.js';
import { sessionConnection } from '#database/connections.js';
import { QueueWorker } from '#database/job-queue.js';
import { Sql } from '#database/sql.js';
import { addReadinessCheck } from '#ops/readiness.js';
import { DataModel } from '../service/data-model.js';
import { RecordWriter } from '../service/record-writer.js';
import { IMPORT_TASK, ImportRunner, type ImportJob } from './import-runner.js';
import { requeueStrandedImports } from './stranded-imports.js';

/**
 * Runs imports from graphile-worker's queue in this process unless `IMPORTS_WORKER=off`
 * (docs/decisions/0035-imports.md): at most IMPORTS_CONCURRENCY at once here, and one per
 * workspace anywhere (each workspace's imports share a named queue). A runner of its own, so
 * long imports never take the webhook deliveries' slots. Like the webhook worker, it sends a
 * heartbeat every IMPORTS_HEARTBEAT_MS and releases the imports of workers that stopped
 * sending one (SIGKILL, a lost host): the import goes on from its last committed batch
 * within a few intervals instead of graphile-worker's 4 hours. A worker stopped by a
 * Postgres crash is replaced, and an import left without a job that can run gets one
 * (docs/decisions/0051-queue-workers-that-outlive-postgres.md).
 */
@Injectable()
export class ImportsWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('imports');
  private worker?: QueueWorker;
  private importRunner?: ImportRunner;
  private removeReadiness?: () => void;

  constructor(
    private readonly ds: DataSource,
    private readonly sql: Sql,
    private readonly writer: RecordWriter,
    private readonly dataModel: DataModel,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const settings = loadConfig().imports;
    if (!settings.worker) return;
    const runner = new ImportRunner(this.sql, this.writer, this.dataModel);
    this.importRunner = runner;
    this.worker = await QueueWorker.start({
      name: 'import',
      jobs: 'imports',
      connection: sessionConnection((this.ds.options as { url: string }).url),
      concurrency: settings.concurrency,
      heartbeatMs: settings.heartbeatMs,
      taskIdentifier: IMPORT_TASK,
      taskList: () => ({
        [IMPORT_TASK]: (payload, helpers) => runner.run(payload as ImportJob, { maxAttempts: helpers.job.max_attempts }),
      }),
      log: this.log,
      // An upload whose instance died mid-request left an `uploading` import and its chunks.
      afterBeat: async (pool) => {
        await pool.query(`DELETE FROM imports WHERE status = 'uploading' AND updated_at < now() - interval '1 hour'`);
        const queued = await requeueStrandedImports(pool);
        if (queued) this.log.warn(`queued ${queued} imports whose jobs could not run any more`);
      },
    });
    this.removeReadiness = addReadinessCheck('importWorkers', () => this.worker?.ready ?? true);
  }

  async onApplicationShutdown(): Promise<void> {
    this.removeReadiness?.();
    if (this.importRunner) this.importRunner.stopping = true;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.stop();
  }
}
