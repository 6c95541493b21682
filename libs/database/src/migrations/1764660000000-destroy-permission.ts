import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Erasure (docs/rest.md, "Erasure"): `DELETE /rest/{objects}/{id}?hard=true` needs the
 * `destroy` permission, which only the built-in Admin role holds (roles made by users keep
 * the four record actions). Existing Admin roles gain it on every object.
 */
export class DestroyPermission1764660000000 implements MigrationInterface {
  name = 'DestroyPermission1764660000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE roles SET object_permissions = (
        SELECT jsonb_object_agg(key, value || '{"destroy": true}'::jsonb) FROM jsonb_each(object_permissions))
       WHERE NOT is_editable AND object_permissions <> '{}'::jsonb;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE roles SET object_permissions = (
        SELECT jsonb_object_agg(key, value - 'destroy') FROM jsonb_each(object_permissions))
       WHERE NOT is_editable AND object_permissions <> '{}'::jsonb;
    `);
  }
}
