import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import graphileWorker, { type Runner } from 'graphile-worker';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { deliverOnce, type DeliverJob } from '#webhooks/delivery.js';
import { webhookSettings } from '#webhooks/settings.js';
import { DELIVER_TASK } from '#webhooks/webhook-outbox.js';

/**
 * Delivers webhook events (SPEC §11) from graphile-worker's queue in this process, unless
 * `WEBHOOKS_WORKER=off`. Jobs are taken with `FOR UPDATE SKIP LOCKED` and new ones are
 * announced with LISTEN/NOTIFY, so any number of instances share the work; each attempt
 * also locks its delivery row (delivery.ts). On application shutdown the runner stops
 * taking jobs and waits for the attempts in flight (each at most 10 s), then closes its pool.
 */
@Injectable()
export class WebhooksWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('webhooks');
  private runner?: Runner;
  private pool?: pg.Pool;

  constructor(private readonly ds: DataSource) {}

  async onApplicationBootstrap(): Promise<void> {
    const settings = webhookSettings();
    if (!settings.worker) return;
    const url = (this.ds.options as { url?: string }).url;
    this.pool = new pg.Pool({ connectionString: url, max: settings.concurrency + 2, options: '-c TimeZone=UTC' });
    this.pool.on('error', (err) => this.log.warn(`queue connection: ${err.message}`));
    const log = this.log;
    this.runner = await graphileWorker.run({
      pgPool: this.pool,
      concurrency: settings.concurrency,
      noHandleSignals: true,
      pollInterval: 2000,
      logger: new graphileWorker.Logger(() => (level, message) => {
        if (level === 'error') log.error(message);
        else if (level === 'warning') log.warn(message);
      }),
      taskList: {
        [DELIVER_TASK]: async (payload, helpers) => {
          await helpers.withPgClient((client) => deliverOnce(client, payload as DeliverJob, settings));
        },
      },
    });
  }

  async onApplicationShutdown(): Promise<void> {
    const runner = this.runner;
    this.runner = undefined;
    await runner?.stop().catch((err) => this.log.warn(`stopping the webhook worker: ${err.message}`));
    await this.pool?.end().catch(() => undefined);
    this.pool = undefined;
  }
}
