import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Shared state of several instances (README.md, Operations), in Postgres rather than process memory:
 * - `idempotency_keys`: the first response to a write sent with an `Idempotency-Key`, per
 *   workspace and key, for 24 h. `status` is NULL while the first request runs; its lease
 *   (`locked_until`) lets a retry take over from an instance that died mid-request.
 * - `rate_limits`: rate-limiter-flexible's RateLimiterPostgres table (its own layout:
 *   key, points, expire in epoch ms). UNLOGGED: counters need no crash safety, and
 *   skipping the WAL keeps the per-request upsert cheap.
 */
export class Operations1764000000100 implements MigrationInterface {
  name = 'Operations1764000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_keys (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        key text NOT NULL,
        fingerprint text NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        status integer,
        content_type text,
        body text,
        created_at timestamptz NOT NULL DEFAULT now(),
        locked_until timestamptz,
        PRIMARY KEY (workspace_id, key)
      );
      CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
      CREATE UNLOGGED TABLE rate_limits (
        key varchar(255) PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint
      );
      CREATE INDEX rate_limits_expire_idx ON rate_limits (expire);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE idempotency_keys, rate_limits');
  }
}
