import type { MigrationInterface, QueryRunner } from 'typeorm';

/** At most this many webhooks per workspace (README "Webhooks"); the trigger below holds it. */
export const MAX_WEBHOOKS_PER_WORKSPACE = 20;

/**
 * Delivery without a long transaction, across workspaces and crashes (README "Webhooks"):
 * - `claim_job`/`claimed_until` on a delivery: the queue job whose attempt is out, and until
 *   when at most. The POST runs with no transaction open; the claim keeps a duplicate job or
 *   a second worker from sending the same attempt, while the same job, run again after its
 *   worker died, takes its attempt over.
 * - `webhook_workers`: each worker process's graphile-worker ids and until when it counts
 *   as alive (its heartbeat), so the jobs of a worker that died (SIGKILL, lost host) are
 *   released within seconds instead of graphile-worker's 4 hours.
 * - a cap of 20 webhooks per workspace, in the database so every path (settings page, JSON
 *   API, CLI) and two creates at once keep it: the per-workspace advisory lock orders them.
 */
export class WebhookFairDelivery1764500000100 implements MigrationInterface {
  name = 'WebhookFairDelivery1764500000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhook_deliveries ADD COLUMN claim_job bigint, ADD COLUMN claimed_until timestamptz(3);

      CREATE TABLE webhook_workers (
        process_id text PRIMARY KEY,
        worker_ids text[] NOT NULL,
        alive_until timestamptz(3) NOT NULL
      );

      CREATE FUNCTION webhooks_per_workspace_cap() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended('webhooks of ' || NEW.workspace_id::text, 0));
        IF (SELECT count(*) FROM webhooks WHERE workspace_id = NEW.workspace_id) >= ${MAX_WEBHOOKS_PER_WORKSPACE} THEN
          RAISE EXCEPTION 'a workspace has at most ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks' USING ERRCODE = 'WH001';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER webhooks_per_workspace_cap BEFORE INSERT ON webhooks FOR EACH ROW EXECUTE FUNCTION webhooks_per_workspace_cap();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER webhooks_per_workspace_cap ON webhooks;
      DROP FUNCTION webhooks_per_workspace_cap();
      DROP TABLE webhook_workers;
      ALTER TABLE webhook_deliveries DROP COLUMN claim_job, DROP COLUMN claimed_until;
    `);
  }
}
