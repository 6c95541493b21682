import type { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = ['companies', 'people', 'opportunities'];

/**
 * Unique fields (docs/data-model.md, "Unique fields"). `unique_fields` says which fields of a
 * workspace's objects are unique among its live records, where a row's value is read
 * (`source`, a path into the row as JSON) and how it is compared (`compare`).
 * `record_keys` holds one row per live record and unique field, with the normalised value
 * as part of the primary key: a second live record with the same value fails on it
 * (23505), whichever path writes it, and an upsert finds its match by that key.
 *
 * Statement triggers with transition tables keep the keys in the writer's transaction, so
 * every write path (REST, GraphQL, MCP, imports, changes by filter, restore) is covered.
 * A workspace without unique fields pays one join against an empty index range.
 *
 * Workspaces created from now on start with the two built-in unique fields (a person's
 * primary e-mail, case-insensitive; a company's domain, without scheme, `www.` and trailing
 * `/`); existing ones may switch them on through the metadata API.
 */
export class UniqueFields1764650000000 implements MigrationInterface {
  name = 'UniqueFields1764650000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE unique_fields (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        object text NOT NULL CHECK (object IN ('companies', 'people', 'opportunities')),
        field text NOT NULL,
        source text[] NOT NULL,
        compare text NOT NULL CHECK (compare IN ('exact', 'lower', 'url')),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, object, field)
      );

      CREATE TABLE record_keys (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        object text NOT NULL,
        field text NOT NULL,
        value text NOT NULL,
        record_id uuid NOT NULL,
        PRIMARY KEY (workspace_id, object, field, value)
      );
      CREATE INDEX record_keys_record_idx ON record_keys (workspace_id, record_id);

      -- The compared form of a value: NULL (no key) for a missing or blank one.
      CREATE FUNCTION record_key_value(compare text, raw text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT nullif(CASE compare
          WHEN 'lower' THEN lower(btrim(raw))
          WHEN 'url' THEN regexp_replace(regexp_replace(lower(btrim(raw)), '^([a-z][a-z0-9+.-]*://)?(www\\.)?', ''), '/+$', '')
          ELSE raw END, '')
      $$;

      CREATE FUNCTION record_keys_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO record_keys (workspace_id, object, field, value, record_id)
          SELECT n.workspace_id, TG_ARGV[0], u.field, k.value, n.id
            FROM new_rows n
            JOIN unique_fields u ON u.workspace_id = n.workspace_id AND u.object = TG_ARGV[0]
            CROSS JOIN LATERAL (SELECT record_key_value(u.compare, to_jsonb(n) #>> u.source) AS value) k
           WHERE n.deleted_at IS NULL AND k.value IS NOT NULL;
        RETURN NULL;
      END $$;

      CREATE FUNCTION record_keys_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM record_keys k USING old_rows o
         WHERE k.workspace_id = o.workspace_id AND k.record_id = o.id AND k.object = TG_ARGV[0];
        INSERT INTO record_keys (workspace_id, object, field, value, record_id)
          SELECT n.workspace_id, TG_ARGV[0], u.field, k.value, n.id
            FROM new_rows n
            JOIN unique_fields u ON u.workspace_id = n.workspace_id AND u.object = TG_ARGV[0]
            CROSS JOIN LATERAL (SELECT record_key_value(u.compare, to_jsonb(n) #>> u.source) AS value) k
           WHERE n.deleted_at IS NULL AND k.value IS NOT NULL;
        RETURN NULL;
      END $$;

      CREATE FUNCTION record_keys_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM record_keys k USING old_rows o
         WHERE k.workspace_id = o.workspace_id AND k.record_id = o.id AND k.object = TG_ARGV[0];
        RETURN NULL;
      END $$;

      -- New workspaces: the built-in unique fields.
      CREATE FUNCTION workspaces_default_unique_fields() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO unique_fields (workspace_id, object, field, source, compare) VALUES
          (NEW.id, 'people', 'emails.primaryEmail', ARRAY['primary_email'], 'lower'),
          (NEW.id, 'companies', 'domainName.primaryLinkUrl', ARRAY['domain_primary_link_url'], 'url');
        RETURN NULL;
      END $$;
      CREATE TRIGGER workspaces_default_unique_fields AFTER INSERT ON workspaces
        FOR EACH ROW EXECUTE FUNCTION workspaces_default_unique_fields();
    `);
    for (const table of TABLES) {
      await q.query(`
        CREATE TRIGGER ${table}_keys_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows
          FOR EACH STATEMENT EXECUTE FUNCTION record_keys_after_insert('${table}');
        CREATE TRIGGER ${table}_keys_update AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
          FOR EACH STATEMENT EXECUTE FUNCTION record_keys_after_update('${table}');
        CREATE TRIGGER ${table}_keys_delete AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows
          FOR EACH STATEMENT EXECUTE FUNCTION record_keys_after_delete('${table}');
      `);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      await q.query(`
        DROP TRIGGER ${table}_keys_insert ON ${table};
        DROP TRIGGER ${table}_keys_update ON ${table};
        DROP TRIGGER ${table}_keys_delete ON ${table};
      `);
    }
    await q.query(`
      DROP TRIGGER workspaces_default_unique_fields ON workspaces;
      DROP FUNCTION workspaces_default_unique_fields, record_keys_after_insert, record_keys_after_update, record_keys_after_delete;
      DROP FUNCTION record_key_value;
      DROP TABLE record_keys, unique_fields;
    `);
  }
}
