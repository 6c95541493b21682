import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pending deliveries, for the webhook worker's sweep of deliveries left without a job
 * (libs/webhooks/src/delivery.ts, `requeueStranded`): a small partial index, since a
 * delivery is pending only until it is delivered, fails or is cancelled.
 */
export class PendingDeliveries1765500000000 implements MigrationInterface {
  name = 'PendingDeliveries1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS webhook_deliveries_pending_idx ON webhook_deliveries (created_at) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS webhook_deliveries_pending_idx`);
  }
}
