import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import graphileWorker, { type Runner, type WorkerEvents } from 'graphile-worker';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { sessionOptions } from '#database/data-source.js';
import { beatAndReleaseDead } from '#database/job-queue.js';
import { deliverOnce, type DeliverJob } from '#webhooks/delivery.js';
import { webhookSettings, type WebhookSettings } from '#webhooks/settings.js';
import { DELIVER_TASK } from '#webhooks/webhook-outbox.js';
import { WorkspaceShares } from '#webhooks/workspace-shares.js';

/** A locked job whose worker never sent a heartbeat (it died in its first moments) is released after this. */
const UNKNOWN_WORKER_GRACE_MS = 60_000;

/**
 * Delivers webhook events (README "Webhooks") from graphile-worker's queue in this process,
 * unless `WEBHOOKS_WORKER=off`. Jobs are taken with `FOR UPDATE SKIP LOCKED` and new ones
 * are announced with LISTEN/NOTIFY, so any number of instances share the work; each attempt
 * claims its delivery (delivery.ts) and each workspace gets its share of the slots
 * (workspace-shares.ts).
 *
 * graphile-worker takes back the jobs of a worker that died only after 4 hours. So every
 * WEBHOOKS_HEARTBEAT_MS this process records its worker ids as alive for 3 intervals and
 * releases (`force_unlock_workers`) the jobs of workers no longer alive, at start and from
 * then on: an event whose worker was SIGKILLed is sent again within seconds.
 *
 * On application shutdown the runner stops taking jobs and waits for the attempts in
 * flight (each at most 10 s), then the process's heartbeat row goes and the pool closes.
 */
@Injectable()
export class WebhooksWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('webhooks');
  private runner?: Runner;
  private pool?: pg.Pool;
  private heartbeat?: NodeJS.Timeout;
  private readonly processId = randomUUID();
  private readonly workerIds = new Set<string>();

  constructor(private readonly ds: DataSource) {}

  async onApplicationBootstrap(): Promise<void> {
    const settings = webhookSettings();
    if (!settings.worker) return;
    const url = (this.ds.options as { url?: string }).url;
    this.pool = new pg.Pool({ connectionString: url, max: settings.concurrency + 2, options: sessionOptions() });
    this.pool.on('error', (err) => this.log.warn(`queue connection: ${err.message}`));
    const log = this.log;
    const pool = this.pool;
    const shares = new WorkspaceShares(settings.concurrency);
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
        [DELIVER_TASK]: (payload, helpers) => deliverOnce(pool, payload as DeliverJob, { jobId: helpers.job.id, settings, shares }),
      },
    });
    await this.beat(settings);
    this.heartbeat = setInterval(() => void this.beat(settings), settings.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Records this process as alive, then releases the jobs of workers that are not. */
  private async beat(settings: WebhookSettings): Promise<void> {
    const pool = this.pool;
    if (!pool) return;
    try {
      const released = await beatAndReleaseDead(pool, {
        processId: this.processId,
        workerIds: [...this.workerIds],
        heartbeatMs: settings.heartbeatMs,
        taskIdentifier: DELIVER_TASK,
        unknownGraceMs: UNKNOWN_WORKER_GRACE_MS,
      });
      if (released) this.log.warn(`released the webhook jobs of ${released} worker(s) that stopped sending heartbeats`);
    } catch (err) {
      this.log.warn(`webhook worker heartbeat: ${(err as Error).message}`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.heartbeat);
    const runner = this.runner;
    this.runner = undefined;
    await runner?.stop().catch((err) => this.log.warn(`stopping the webhook worker: ${err.message}`));
    await this.pool?.query('DELETE FROM webhook_workers WHERE process_id = $1', [this.processId]).catch(() => undefined);
    await this.pool?.end().catch(() => undefined);
    this.pool = undefined;
  }
}
