import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Custom fields per workspace (docs/data-model.md). Definitions in `custom_fields`; values
 * in one `custom` jsonb column per record table, keyed by the field's API name. Adding the
 * column with a constant default is a catalog change (no table rewrite, Postgres 11+), and
 * so is every later field: a field is a row here, never an ALTER TABLE. Each change moves
 * the workspace's `data_model_version`, an UPDATE of `workspaces` whose trigger already
 * moves the credential version and notifies every instance (1764400000100), so cached
 * principals, which carry the version, are read again on the next request.
 * Admin (the built-in role) gains the DATA_MODEL settings permission.
 */
export class CustomFields1764600000000 implements MigrationInterface {
  name = 'CustomFields1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE custom_fields (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        object text NOT NULL CHECK (object IN ('companies', 'people', 'opportunities')),
        name text NOT NULL CHECK (name ~ '^[a-z][a-zA-Z0-9]{0,62}$'),
        label text NOT NULL,
        description text,
        type text NOT NULL CHECK (type IN ('TEXT', 'NUMBER', 'BOOLEAN', 'DATE', 'DATE_TIME', 'SELECT', 'MULTI_SELECT',
                                           'RATING', 'CURRENCY', 'LINKS', 'EMAILS', 'PHONES')),
        is_nullable boolean NOT NULL DEFAULT true,
        default_value jsonb,
        is_unique boolean NOT NULL DEFAULT false,
        options jsonb,
        settings jsonb,
        is_active boolean NOT NULL DEFAULT true,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT custom_fields_name_unique UNIQUE (workspace_id, object, name)
      );
      ALTER TABLE workspaces ADD COLUMN data_model_version bigint NOT NULL DEFAULT 0;
      ALTER TABLE companies ADD COLUMN custom jsonb NOT NULL DEFAULT '{}'::jsonb;
      ALTER TABLE people ADD COLUMN custom jsonb NOT NULL DEFAULT '{}'::jsonb;
      ALTER TABLE opportunities ADD COLUMN custom jsonb NOT NULL DEFAULT '{}'::jsonb;
      UPDATE roles SET settings_permissions = array_append(settings_permissions, 'DATA_MODEL')
        WHERE NOT is_editable AND NOT ('DATA_MODEL' = ANY (settings_permissions));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE roles SET settings_permissions = array_remove(settings_permissions, 'DATA_MODEL');
      ALTER TABLE opportunities DROP COLUMN custom;
      ALTER TABLE people DROP COLUMN custom;
      ALTER TABLE companies DROP COLUMN custom;
      ALTER TABLE workspaces DROP COLUMN data_model_version;
      DROP TABLE custom_fields;
    `);
  }
}
