import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An import's own account of its runs (docs/decisions/0051-queue-workers-that-outlive-postgres.md):
 * `run_rows_done` is `rows_done` when the latest run started, `failed_runs` how many runs in
 * a row ended without importing a row (counted when the next one starts, so a run whose
 * worker or database died counts too), `run_error` why the latest failed run stopped. After
 * IMPORT_MAX_FAILED_RUNS of them the import ends `failed`, whatever graphile-worker's count
 * of its job's attempts. The partial index serves the heartbeat's look for imports left
 * without a job that can run.
 */
export class ImportRuns1765851000000 implements MigrationInterface {
  name = 'ImportRuns1765851000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE imports ADD COLUMN run_rows_done bigint, ADD COLUMN failed_runs integer NOT NULL DEFAULT 0, ADD COLUMN run_error text;
      CREATE INDEX imports_unfinished_idx ON imports (updated_at) WHERE status IN ('queued', 'running');
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX imports_unfinished_idx;
      ALTER TABLE imports DROP COLUMN run_rows_done, DROP COLUMN failed_runs, DROP COLUMN run_error;
    `);
  }
}
