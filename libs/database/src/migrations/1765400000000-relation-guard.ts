import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The guard of a record's link in the INSERT that creates it (libs/records/src/service/
 * records.service.ts, `insertStatement`): the linked id is written as
 * `coalesce((SELECT id FROM <target> WHERE workspace_id = $1 AND id = <id> AND deleted_at IS NULL),
 * record_missing_relation(<field>, <target>, <id>))`, so a link to a missing, deleted or other
 * workspace's record ends the statement (SQLSTATE WR001) with nothing written, and a create
 * needs no check of its own before it. VOLATILE: never evaluated while the statement is planned.
 */
export class RelationGuard1765400000000 implements MigrationInterface {
  name = 'RelationGuard1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION record_missing_relation(field text, target text, missing uuid) RETURNS uuid LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        RAISE EXCEPTION '%: no % with id % in this workspace', field, target, missing USING ERRCODE = 'WR001';
      END $$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION record_missing_relation`);
  }
}
