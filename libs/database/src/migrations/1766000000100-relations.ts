import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ADDED, BEFORE as BEFORE_FIELD_TYPES, check } from './1765900000100-field-types.js';

/** The types a field could have before this migration: the field-types migration's. */
const BEFORE = [...BEFORE_FIELD_TYPES, ...ADDED];

const STANDARD_TABLES = ['companies', 'people', 'opportunities'];

/**
 * The relation fields of a changed row's object, for a trigger over `rows`: on a standard
 * table the object is the trigger's argument, on `custom_records` the row's `object_id`.
 */
function fieldsOf(rows: string, table: string): { from: string; where: string } {
  const relation = `f.workspace_id = ${rows}.workspace_id AND f.type = 'RELATION' AND f.settings->>'relationType' = 'MANY_TO_ONE'`;
  return table === 'custom_records'
    ? {
        from: `objects ob, custom_fields f`,
        where: `ob.workspace_id = ${rows}.workspace_id AND ob.id = ${rows}.object_id AND ${relation} AND f.object = ob.name_plural`,
      }
    : { from: 'custom_fields f', where: `${relation} AND f.object = '${table}'` };
}

/** The statement triggers that keep one record table's links (the class comment). */
function linkTriggers(table: string): string {
  const n = fieldsOf('n', table);
  const o = fieldsOf('o', table);
  const insertLinks = `
        INSERT INTO record_links (workspace_id, source_id, field_id, target_id, source_created_at)
          SELECT * FROM (
            SELECT n.workspace_id, n.id, f.id, record_link_target(n.custom, f.name) AS target, n.created_at
              FROM new_rows n, ${n.from} WHERE ${n.where}) links
           WHERE target IS NOT NULL
          ON CONFLICT (workspace_id, source_id, field_id) DO NOTHING;`;
  return `
      CREATE FUNCTION ${table}_links_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN${insertLinks}
        RETURN NULL;
      END $$;
      CREATE FUNCTION ${table}_links_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM record_links l USING new_rows n, ${n.from}
         WHERE ${n.where} AND l.workspace_id = n.workspace_id AND l.source_id = n.id AND l.field_id = f.id
           AND l.target_id IS DISTINCT FROM record_link_target(n.custom, f.name);${insertLinks}
        RETURN NULL;
      END $$;
      CREATE FUNCTION ${table}_links_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM record_links l USING old_rows o, ${o.from}
         WHERE ${o.where} AND l.workspace_id = o.workspace_id AND l.source_id = o.id AND l.field_id = f.id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER ${table}_links_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION ${table}_links_after_insert();
      CREATE TRIGGER ${table}_links_update AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION ${table}_links_after_update();
      CREATE TRIGGER ${table}_links_delete AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION ${table}_links_after_delete();`;
}

/**
 * Relations between any two objects (docs/data-model.md "Relations";
 * docs/decisions/0066-relations.md).
 *
 * - `custom_fields.type` may be `RELATION`: a relation is two rows, its `MANY_TO_ONE` side on
 *   the source object and its `ONE_TO_MANY` inverse on the target (`settings.relationType`).
 *   The CHECK is widened NOT VALID, then validated (the scan takes a lock writes pass).
 * - A source record holds the target's id in `custom` under `<name>Id`.
 * - `record_links`: one row per link of a custom relation, kept by statement triggers with
 *   transition tables on the four record tables in the writer's transaction (every write
 *   path: REST, GraphQL, MCP, imports, changes by filter, a field's upkeep), as
 *   `record_keys` is for unique fields. `(workspace_id, field_id, target_id,
 *   source_created_at, source_id)` reads a target's linking records in their list order, and
 *   serves relation filters both ways. A link whose source is soft-deleted stays (restore
 *   finds it); the writer clears the links to a record it erases. A workspace without
 *   relation fields pays one probe of the partial index on `custom_fields` per statement.
 */
export class Relations1766000000100 implements MigrationInterface {
  name = 'Relations1766000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE custom_fields DROP CONSTRAINT custom_fields_type_check,
        ADD CONSTRAINT custom_fields_type_check ${check([...BEFORE, 'RELATION'])} NOT VALID;
      ALTER TABLE custom_fields VALIDATE CONSTRAINT custom_fields_type_check;
      CREATE INDEX custom_fields_relations_idx ON custom_fields (workspace_id, object) WHERE type = 'RELATION';

      CREATE TABLE record_links (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        source_id uuid NOT NULL,
        field_id uuid NOT NULL,
        target_id uuid NOT NULL,
        source_created_at timestamptz(3) NOT NULL,
        PRIMARY KEY (workspace_id, source_id, field_id)
      );
      CREATE INDEX record_links_target_idx ON record_links (workspace_id, field_id, target_id, source_created_at, source_id);

      -- The id a record holds for relation field \`name\` (under \`<name>Id\`), or NULL.
      CREATE FUNCTION record_link_target(custom jsonb, name text) RETURNS uuid
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN pg_input_is_valid(custom->>(name || 'Id'), 'uuid') THEN (custom->>(name || 'Id'))::uuid END
      $$;
      ${[...STANDARD_TABLES, 'custom_records'].map(linkTriggers).join('\n')}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [...STANDARD_TABLES, 'custom_records']) {
      await q.query(`
        DROP TRIGGER ${table}_links_insert ON ${table};
        DROP TRIGGER ${table}_links_update ON ${table};
        DROP TRIGGER ${table}_links_delete ON ${table};
        DROP FUNCTION ${table}_links_after_insert, ${table}_links_after_update, ${table}_links_after_delete;
      `);
    }
    await q.query(`
      DROP FUNCTION record_link_target;
      DROP TABLE record_links;
      DROP INDEX custom_fields_relations_idx;
      DELETE FROM custom_fields WHERE type = 'RELATION';
      ALTER TABLE custom_fields DROP CONSTRAINT custom_fields_type_check,
        ADD CONSTRAINT custom_fields_type_check ${check(BEFORE)} NOT VALID;
    `);
  }
}
