import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A delivery job sends the other first attempts of its workspace that wait together with
 * its own (libs/webhooks/src/delivery.ts, `deliverOnce`): it finds them by the workspace's
 * pending deliveries, oldest first, and takes their jobs off the queue by the job id each
 * delivery now keeps (null for deliveries made before; their jobs then find them sent).
 */
export class PendingByWorkspace1765600000000 implements MigrationInterface {
  name = 'PendingByWorkspace1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS job_id bigint`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS webhook_deliveries_pending_workspace_idx ON webhook_deliveries (workspace_id, created_at) WHERE status = 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS webhook_deliveries_pending_workspace_idx`);
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS job_id`);
  }
}
