import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An import's row limit, fixed when the upload is accepted (`IMPORT_MAX_ROWS` of the instance
 * that took it): whichever instance's worker runs the import, and however often it is resumed,
 * applies the same limit. NULL for imports accepted before: the running instance's limit.
 * Adding a nullable column rewrites nothing.
 */
export class ImportMaxRows1766000000200 implements MigrationInterface {
  name = 'ImportMaxRows1766000000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE imports ADD COLUMN max_rows bigint`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE imports DROP COLUMN max_rows`);
  }
}
