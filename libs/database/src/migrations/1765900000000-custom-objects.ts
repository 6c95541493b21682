import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Custom objects (docs/data-model.md "Custom objects"; docs/decisions/0057-custom-objects-storage.md).
 *
 * - `objects`: every object of a workspace is a row, the standard ones (seeded for every
 *   workspace, `is_custom` false) and the workspace's own. Names never change.
 * - `custom_records`: the records of every custom object of every workspace, in one table:
 *   `object_id` says whose, the field values are the `custom` jsonb column as custom fields'
 *   are on the standard tables. Creating an object is a metadata row: no DDL, no lock on any
 *   shared table, and the table stays distributable by `workspace_id` (first in every key).
 *   No foreign key to `objects`: deleting an object removes its row at once and its records
 *   in the background, in batches.
 * - Counts (`record_counts`) and unique keys (`record_keys`, `unique_fields`) of a custom
 *   object are kept under its plural name, as the standard objects' are; a deleted object's
 *   names are not taken again until its records are gone (`deleted_objects`).
 * - A custom field belongs to any object of the workspace (`custom_fields.object` is its
 *   plural name), no longer to the three standard ones only.
 * - Roles: `object_permissions."*"` grants what an object the role does not name allows:
 *   the built-in Admin, Member and Viewer hold their company permissions there, so a new
 *   object is theirs as companies are; a role made by users names each object it may use.
 */
export class CustomObjects1765900000000 implements MigrationInterface {
  name = 'CustomObjects1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE objects (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        name_singular text NOT NULL CHECK (name_singular ~ '^[a-z][a-zA-Z0-9]{0,62}$'),
        name_plural text NOT NULL CHECK (name_plural ~ '^[a-z][a-zA-Z0-9]{0,62}$'),
        label_singular text NOT NULL,
        label_plural text NOT NULL,
        description text,
        label_identifier text NOT NULL DEFAULT 'name',
        is_custom boolean NOT NULL DEFAULT true,
        is_active boolean NOT NULL DEFAULT true,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, id),
        CONSTRAINT objects_singular_unique UNIQUE (workspace_id, name_singular),
        CONSTRAINT objects_plural_unique UNIQUE (workspace_id, name_plural)
      );

      -- The standard objects of every workspace, existing and new.
      CREATE FUNCTION workspaces_standard_objects() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO objects (workspace_id, name_singular, name_plural, label_singular, label_plural, label_identifier, is_custom, created_at)
        VALUES (NEW.id, 'company', 'companies', 'Company', 'Companies', 'name', false, now()),
               (NEW.id, 'person', 'people', 'Person', 'People', 'name', false, now() + interval '1 millisecond'),
               (NEW.id, 'opportunity', 'opportunities', 'Opportunity', 'Opportunities', 'name', false, now() + interval '2 milliseconds');
        RETURN NULL;
      END $$;
      CREATE TRIGGER workspaces_standard_objects AFTER INSERT ON workspaces
        FOR EACH ROW EXECUTE FUNCTION workspaces_standard_objects();
      INSERT INTO objects (workspace_id, name_singular, name_plural, label_singular, label_plural, label_identifier, is_custom, created_at)
        SELECT w.id, o.singular, o.plural, o.label_singular, o.label_plural, 'name', false, now() + o.n * interval '1 millisecond'
          FROM workspaces w
         CROSS JOIN (VALUES (0, 'company', 'companies', 'Company', 'Companies'),
                            (1, 'person', 'people', 'Person', 'People'),
                            (2, 'opportunity', 'opportunities', 'Opportunity', 'Opportunities'))
                    AS o(n, singular, plural, label_singular, label_plural);

      -- Objects deleted whose records are still being removed, in batches (sweepDeletedObjects);
      -- their names are not taken again until then.
      CREATE TABLE deleted_objects (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        object_id uuid NOT NULL,
        name_singular text NOT NULL,
        name_plural text NOT NULL,
        deleted_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, object_id)
      );

      ALTER TABLE custom_fields DROP CONSTRAINT IF EXISTS custom_fields_object_check;
      ALTER TABLE unique_fields DROP CONSTRAINT IF EXISTS unique_fields_object_check;

      CREATE TABLE custom_records (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        object_id uuid NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        custom jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        deleted_at timestamptz(3),
        PRIMARY KEY (workspace_id, id)
      );
      -- Each order a list offers (createdAt by default, updatedAt, the label identifier
      -- \`name\` every new object starts with), per object, live records only; scanned
      -- backwards for AscNullsFirst as the standard tables' are.
      CREATE INDEX custom_records_created_idx ON custom_records (workspace_id, object_id, created_at DESC NULLS LAST, id DESC)
        WHERE deleted_at IS NULL;
      CREATE INDEX custom_records_updated_idx ON custom_records (workspace_id, object_id, updated_at DESC NULLS LAST, id DESC)
        WHERE deleted_at IS NULL;
      CREATE INDEX custom_records_name_idx ON custom_records (workspace_id, object_id, (custom->>'name') DESC NULLS LAST, id DESC)
        WHERE deleted_at IS NULL;
      CREATE INDEX custom_records_deleted_idx ON custom_records (workspace_id, object_id, deleted_at) WHERE deleted_at IS NOT NULL;

      -- Counts and unique keys are kept under the object's plural name, as the standard objects'
      -- are: the records of an object deleted meanwhile (its row gone) change neither.
      CREATE FUNCTION custom_record_counts_add(changes jsonb) RETURNS void LANGUAGE sql AS $$
        SELECT record_counts_add(o.workspace_id, o.name_plural, c.delta)
          FROM jsonb_to_recordset(changes) AS c(workspace_id uuid, object_id uuid, delta bigint)
          JOIN objects o ON o.workspace_id = c.workspace_id AND o.id = c.object_id
         ORDER BY o.workspace_id, o.name_plural
      $$;
      CREATE FUNCTION custom_record_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM custom_record_counts_add(coalesce(jsonb_agg(c), '[]')) FROM (
          SELECT workspace_id, object_id, count(*) FILTER (WHERE deleted_at IS NULL) AS delta FROM new_rows GROUP BY workspace_id, object_id
        ) c;
        RETURN NULL;
      END $$;
      CREATE FUNCTION custom_record_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM custom_record_counts_add(coalesce(jsonb_agg(c), '[]')) FROM (
          SELECT workspace_id, object_id, sum(delta) AS delta FROM (
            SELECT workspace_id, object_id, CASE WHEN deleted_at IS NULL THEN 1 ELSE 0 END AS delta FROM new_rows
            UNION ALL
            SELECT workspace_id, object_id, CASE WHEN deleted_at IS NULL THEN -1 ELSE 0 END FROM old_rows
          ) changes GROUP BY workspace_id, object_id
        ) c;
        RETURN NULL;
      END $$;
      CREATE FUNCTION custom_record_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM custom_record_counts_add(coalesce(jsonb_agg(c), '[]')) FROM (
          SELECT workspace_id, object_id, -count(*) FILTER (WHERE deleted_at IS NULL) AS delta FROM old_rows GROUP BY workspace_id, object_id
        ) c;
        RETURN NULL;
      END $$;
      CREATE TRIGGER custom_records_counts_insert AFTER INSERT ON custom_records REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION custom_record_counts_after_insert();
      CREATE TRIGGER custom_records_counts_update AFTER UPDATE ON custom_records REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION custom_record_counts_after_update();
      CREATE TRIGGER custom_records_counts_delete AFTER DELETE ON custom_records REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION custom_record_counts_after_delete();

      CREATE FUNCTION custom_record_keys_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO record_keys (workspace_id, object, field, value, record_id)
          SELECT n.workspace_id, o.name_plural, u.field, k.value, n.id
            FROM new_rows n
            JOIN objects o ON o.workspace_id = n.workspace_id AND o.id = n.object_id
            JOIN unique_fields u ON u.workspace_id = n.workspace_id AND u.object = o.name_plural
            CROSS JOIN LATERAL (SELECT record_key_value(u.compare, to_jsonb(n) #>> u.source) AS value) k
           WHERE n.deleted_at IS NULL AND k.value IS NOT NULL;
        RETURN NULL;
      END $$;
      CREATE FUNCTION custom_record_keys_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM record_keys k USING old_rows r, objects o
         WHERE o.workspace_id = r.workspace_id AND o.id = r.object_id
           AND k.workspace_id = r.workspace_id AND k.record_id = r.id AND k.object = o.name_plural;
        INSERT INTO record_keys (workspace_id, object, field, value, record_id)
          SELECT n.workspace_id, o.name_plural, u.field, k.value, n.id
            FROM new_rows n
            JOIN objects o ON o.workspace_id = n.workspace_id AND o.id = n.object_id
            JOIN unique_fields u ON u.workspace_id = n.workspace_id AND u.object = o.name_plural
            CROSS JOIN LATERAL (SELECT record_key_value(u.compare, to_jsonb(n) #>> u.source) AS value) k
           WHERE n.deleted_at IS NULL AND k.value IS NOT NULL;
        RETURN NULL;
      END $$;
      CREATE FUNCTION custom_record_keys_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM record_keys k USING old_rows r, objects o
         WHERE o.workspace_id = r.workspace_id AND o.id = r.object_id
           AND k.workspace_id = r.workspace_id AND k.record_id = r.id AND k.object = o.name_plural;
        RETURN NULL;
      END $$;
      CREATE TRIGGER custom_records_keys_insert AFTER INSERT ON custom_records REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION custom_record_keys_after_insert();
      CREATE TRIGGER custom_records_keys_update AFTER UPDATE ON custom_records REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION custom_record_keys_after_update();
      CREATE TRIGGER custom_records_keys_delete AFTER DELETE ON custom_records REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION custom_record_keys_after_delete();

      -- A new object is the built-in roles' as companies are (see the class comment).
      UPDATE roles SET object_permissions = object_permissions || jsonb_build_object('*', object_permissions->'companies')
       WHERE name IN ('Admin', 'Member', 'Viewer') AND object_permissions ? 'companies' AND NOT object_permissions ? '*';
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE roles SET object_permissions = object_permissions - '*';
      DROP TABLE custom_records, deleted_objects;
      DROP FUNCTION custom_record_counts_after_insert, custom_record_counts_after_update, custom_record_counts_after_delete, custom_record_counts_add;
      DROP FUNCTION custom_record_keys_after_insert, custom_record_keys_after_update, custom_record_keys_after_delete;
      DELETE FROM record_counts WHERE object NOT IN ('companies', 'people', 'opportunities');
      DELETE FROM record_keys WHERE object NOT IN ('companies', 'people', 'opportunities');
      DELETE FROM unique_fields WHERE object NOT IN ('companies', 'people', 'opportunities');
      DELETE FROM custom_fields WHERE object NOT IN ('companies', 'people', 'opportunities');
      ALTER TABLE unique_fields ADD CONSTRAINT unique_fields_object_check CHECK (object IN ('companies', 'people', 'opportunities'));
      ALTER TABLE custom_fields ADD CONSTRAINT custom_fields_object_check CHECK (object IN ('companies', 'people', 'opportunities'));
      DROP TRIGGER workspaces_standard_objects ON workspaces;
      DROP FUNCTION workspaces_standard_objects;
      DROP TABLE objects;
    `);
  }
}
