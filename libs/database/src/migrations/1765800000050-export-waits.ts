import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `export_waits`: workspaces refused an export for want of a slot, in the order they were
 * first refused (docs/decisions/0050-exports-fair-safe-patient.md). Every records API
 * instance reads it when an export starts, so a freed slot goes to the workspace that has
 * waited longest (holding the fewest exports) rather than to whoever asks next.
 *
 * Compared across workspaces by design, so it is no tenant table: keyed by `workspace`
 * (not `workspace_id`) and kept local on a Citus coordinator, like `rate_limits`. UNLOGGED
 * for the same reason: waits last seconds and need no crash safety. A row is deleted when
 * its workspace is served, and ignored once it has not been refreshed for a while.
 */
export class ExportWaits1765800000050 implements MigrationInterface {
  name = 'ExportWaits1765800000050';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE UNLOGGED TABLE IF NOT EXISTS export_waits (
        workspace uuid PRIMARY KEY,
        holding integer NOT NULL,
        since timestamptz NOT NULL DEFAULT now(),
        seen timestamptz NOT NULL DEFAULT now()
      )
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS export_waits');
  }
}
