import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Field-level permissions (docs/authentication.md, "Field permissions"): a role may keep
 * fields of an object from being read or updated. Only restrictions are stored
 * (`{object: {field: {read, update}}}`), so every role saved before reads and writes every
 * field as it did: the column starts empty and no existing role changes meaning. A change
 * of it is a change of `roles`, which moves the credential version (1764400000100): cached
 * principals are dropped and the next request reads the new restrictions.
 */
export class FieldPermissions1765300000000 implements MigrationInterface {
  name = 'FieldPermissions1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE roles ADD COLUMN IF NOT EXISTS field_permissions jsonb NOT NULL DEFAULT '{}'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE roles DROP COLUMN field_permissions`);
  }
}
