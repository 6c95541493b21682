import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { sessionConnection } from '#database/connections.js';
import { QueueWorker } from '#database/job-queue.js';
import { addReadinessCheck } from '#ops/readiness.js';
import { deliverOnce, requeueStranded, type DeliverJob } from '#webhooks/delivery.js';
import { webhookSettings } from '#webhooks/settings.js';
import { DELIVER_TASK } from '#webhooks/webhook-outbox.js';
import { WorkspaceShares } from '#webhooks/workspace-shares.js';

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
 * then on: an event whose worker was SIGKILLed is sent again within seconds. A worker that
 * graphile-worker stopped (Postgres went away before it could record an outcome) is
 * replaced, and its job released at once (QueueWorker).
 *
 * On application shutdown the runner stops taking jobs and waits for the attempts in
 * flight (each at most 10 s), then the process's heartbeat row goes and the pool closes.
 */
@Injectable()
export class WebhooksWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('webhooks');
  private worker?: QueueWorker;
  private removeReadiness?: () => void;

  constructor(private readonly ds: DataSource) {}

  async onApplicationBootstrap(): Promise<void> {
    const settings = webhookSettings();
    if (!settings.worker) return;
    const shares = new WorkspaceShares(settings.concurrency);
    this.worker = await QueueWorker.start({
      name: 'webhook',
      jobs: 'webhook jobs',
      connection: sessionConnection((this.ds.options as { url: string }).url),
      concurrency: settings.concurrency,
      heartbeatMs: settings.heartbeatMs,
      taskIdentifier: DELIVER_TASK,
      taskList: (pool) => ({
        [DELIVER_TASK]: (payload, helpers) => deliverOnce(pool, payload as DeliverJob, { jobId: helpers.job.id, settings, shares }),
      }),
      log: this.log,
      // A pending delivery without a job would never be sent: it gets one (delivery.ts, requeueStranded).
      afterBeat: async (pool) => {
        const queued = await requeueStranded(pool, settings.strandedAfterMs);
        if (queued) this.log.warn(`queued ${queued} pending webhook deliveries that had no job`);
      },
    });
    this.removeReadiness = addReadinessCheck('webhookWorkers', () => this.worker?.ready ?? true);
  }

  async onApplicationShutdown(): Promise<void> {
    this.removeReadiness?.();
    const worker = this.worker;
    this.worker = undefined;
    await worker?.stop();
  }
}
