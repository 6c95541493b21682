import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Filter + default order: a list filtered on a person's last name reads the matching rows
 * already in `createdAt` order (backwards for AscNullsFirst, forwards for DescNullsLast)
 * instead of walking every person of the workspace and discarding the others.
 */
export class FilterOrderIndexes1764100000000 implements MigrationInterface {
  name = 'FilterOrderIndexes1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX people_last_name_created_idx ON people (workspace_id, last_name, created_at DESC NULLS LAST, id DESC)
        WHERE deleted_at IS NULL;
      CREATE INDEX companies_name_created_idx ON companies (workspace_id, name, created_at DESC NULLS LAST, id DESC)
        WHERE deleted_at IS NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX people_last_name_created_idx, companies_name_created_idx');
  }
}
