import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook subscriptions per workspace (README "Webhooks"); the outbox (`webhook_events`), one
 * delivery per (event, webhook) and every attempt. Events and deliveries are written in
 * the transaction of the record change; the queue jobs that drive delivery live in
 * graphile-worker's own schema (installed by its migrations, see data-source.ts).
 * The payload is `json`, not `jsonb`, so the body keeps its key order as written.
 * `webhook_secret_keys` held the AES-256-GCM key that sealed signing secrets at rest (until
 * 1764500000000-vault-master-key re-wrapped them with VAULT_MASTER_KEY and dropped it).
 */
export class Webhooks1764300000000 implements MigrationInterface {
  name = 'Webhooks1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_secret_keys (
        id smallint PRIMARY KEY,
        key bytea NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      );

      CREATE TABLE webhooks (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        url text NOT NULL,
        description varchar(500) NOT NULL DEFAULT '',
        operations text[] NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        secret_sealed text NOT NULL,
        failing_since timestamptz(3),
        disabled_reason text,
        disabled_at timestamptz(3),
        created_by_user_id uuid,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, id)
      );

      CREATE TABLE webhook_events (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL,
        type varchar(100) NOT NULL,
        payload json NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, id)
      );

      CREATE TABLE webhook_deliveries (
        workspace_id uuid NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        webhook_id uuid NOT NULL,
        event_id uuid NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        manual boolean NOT NULL DEFAULT false,
        next_attempt_at timestamptz(3),
        delivered_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, id),
        FOREIGN KEY (workspace_id, webhook_id) REFERENCES webhooks (workspace_id, id) ON DELETE CASCADE,
        FOREIGN KEY (workspace_id, event_id) REFERENCES webhook_events (workspace_id, id) ON DELETE CASCADE
      );
      CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (workspace_id, webhook_id, created_at DESC);
      CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (workspace_id, event_id);

      CREATE TABLE webhook_attempts (
        workspace_id uuid NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        webhook_id uuid NOT NULL,
        delivery_id uuid NOT NULL,
        attempt integer NOT NULL,
        attempted_at timestamptz(3) NOT NULL,
        status_code integer,
        duration_ms integer NOT NULL,
        response_excerpt text NOT NULL DEFAULT '',
        error text,
        PRIMARY KEY (workspace_id, id),
        UNIQUE (workspace_id, delivery_id, attempt),
        FOREIGN KEY (workspace_id, delivery_id) REFERENCES webhook_deliveries (workspace_id, id) ON DELETE CASCADE
      );
      CREATE INDEX webhook_attempts_webhook_idx ON webhook_attempts (workspace_id, webhook_id, attempted_at DESC);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE webhook_attempts, webhook_deliveries, webhook_events, webhooks, webhook_secret_keys');
  }
}
