import type { MigrationInterface, QueryRunner } from 'typeorm';
import { split } from './1764700000000-search.js';

const SEARCHED_TYPES = `('TEXT', 'EMAILS', 'LINKS', 'PHONES')`;
const normalized = (sql: string) => `lower(public.unaccent('public.unaccent'::regdictionary, ${sql}))`;

/**
 * Search in custom objects (docs/rest.md "Search"; docs/decisions/0060-custom-objects-data-surfaces.md),
 * as the standard tables have it (docs/decisions/0030-search.md):
 *
 * - `custom_records.search_vector`, kept by a BEFORE row trigger: the record's label identifier
 *   (its object's `label_identifier`: a TEXT value, or a FULL_NAME's first and last names) at
 *   weight A, the values of the object's other active TEXT, EMAILS, LINKS and PHONES fields at
 *   weight C (the same text per type as on the standard tables, `search_custom_value`).
 * - One GIN index for every custom object of every workspace, `(workspace_id, object_id,
 *   search_vector)`, partial on live records: a search reads one object of one workspace
 *   from the index alone, and creating an object adds no index.
 * - The lexicon (`search_words`) keys a custom object's words by its id, never its name: a
 *   deleted object's words are not a later object's of the same name, and its sweep removes them.
 * - Changing an object's label identifier re-indexes its records, as turning a field on or
 *   off does; `custom_fields_search_trigger` now re-indexes a custom object's records in
 *   `custom_records` (it named a table after the object, which fails for a custom object).
 */
export class CustomObjectsSearch1765912000000 implements MigrationInterface {
  name = 'CustomObjectsSearch1765912000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE custom_records ADD COLUMN search_vector tsvector NOT NULL DEFAULT ''::tsvector;

      -- Built-in functions only, as on the standard tables, besides two index probes: the
      -- record's object (primary key) and, for a record holding values, its object's fields.
      CREATE FUNCTION custom_records_search_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        o record;
        label jsonb;
        names text := '';
        custom_text text;
      BEGIN
        SELECT name_plural, label_identifier INTO o FROM objects WHERE workspace_id = NEW.workspace_id AND id = NEW.object_id;
        IF NOT FOUND THEN
          -- Its object was deleted: the record waits for the sweep, found by nothing.
          NEW.search_vector := ''::tsvector;
          RETURN NEW;
        END IF;
        label := NEW.custom -> o.label_identifier;
        names := CASE jsonb_typeof(label)
                   WHEN 'string' THEN label #>> '{}'
                   WHEN 'object' THEN coalesce(label ->> 'firstName', '') || ' ' || coalesce(label ->> 'lastName', '')
                   ELSE '' END;
        IF NEW.custom <> '{}'::jsonb THEN
          SELECT nullif(btrim(string_agg(search_custom_value(f.type, NEW.custom -> f.name), ' ')), '') INTO custom_text
            FROM custom_fields f
           WHERE f.workspace_id = NEW.workspace_id AND f.object = o.name_plural AND f.is_active
             AND f.type IN ${SEARCHED_TYPES} AND f.name <> o.label_identifier AND NEW.custom ? f.name;
        END IF;
        NEW.search_vector :=
          setweight(to_tsvector('simple', ${split(normalized('names'))}), 'A')
          || CASE WHEN custom_text IS NULL THEN ''::tsvector
                  ELSE setweight(to_tsvector('simple', ${split(normalized('custom_text'))}), 'C') END;
        RETURN NEW;
      END $$;
      CREATE TRIGGER custom_records_search BEFORE INSERT OR UPDATE OF custom ON custom_records
        FOR EACH ROW EXECUTE FUNCTION custom_records_search_trigger();

      -- The lexicon of the statement's rows, keyed by object id (see the class comment), one
      -- statement per INSERT or UPDATE whatever its row count, as search_words_after_insert/update.
      CREATE FUNCTION custom_records_words_after_insert() RETURNS trigger
        LANGUAGE plpgsql SET enable_seqscan = off
        AS $$
        BEGIN
          INSERT INTO search_words (workspace_id, object, word)
          SELECT DISTINCT n.workspace_id, n.object_id::text, w
            FROM new_rows n CROSS JOIN LATERAL unnest(tsvector_to_array(n.search_vector)) w
           WHERE search_lexicon_word(w)
             AND NOT EXISTS (SELECT 1 FROM search_words s
                              WHERE s.workspace_id = n.workspace_id AND s.word = w COLLATE "C" AND s.object = n.object_id::text);
          RETURN NULL;
        END $$;
      CREATE FUNCTION custom_records_words_after_update() RETURNS trigger
        LANGUAGE plpgsql SET enable_seqscan = off
        AS $$
        BEGIN
          INSERT INTO search_words (workspace_id, object, word)
          SELECT c.workspace_id, c.object_id::text, c.w
            FROM (SELECT n.workspace_id, n.object_id, w FROM new_rows n CROSS JOIN LATERAL unnest(tsvector_to_array(n.search_vector)) w
                  EXCEPT
                  SELECT o.workspace_id, o.object_id, w FROM old_rows o CROSS JOIN LATERAL unnest(tsvector_to_array(o.search_vector)) w) c
           WHERE search_lexicon_word(c.w)
             AND NOT EXISTS (SELECT 1 FROM search_words s
                              WHERE s.workspace_id = c.workspace_id AND s.word = c.w COLLATE "C" AND s.object = c.object_id::text);
          RETURN NULL;
        END $$;
      CREATE TRIGGER custom_records_words_insert AFTER INSERT ON custom_records
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_records_words_after_insert();
      CREATE TRIGGER custom_records_words_update AFTER UPDATE ON custom_records
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_records_words_after_update();

      -- Records written before this migration, set-based (the triggers above index them).
      UPDATE custom_records SET custom = custom;
      CREATE INDEX custom_records_search_idx ON custom_records USING gin (workspace_id, object_id, search_vector) WHERE deleted_at IS NULL;

      -- A new label identifier: the object's records are indexed again, in the change's transaction.
      CREATE FUNCTION objects_search_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.is_custom AND NEW.label_identifier IS DISTINCT FROM OLD.label_identifier THEN
          UPDATE custom_records SET custom = custom WHERE workspace_id = NEW.workspace_id AND object_id = NEW.id;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER objects_search AFTER UPDATE OF label_identifier ON objects
        FOR EACH ROW EXECUTE FUNCTION objects_search_trigger();

      -- A field turned on or off: its object's records holding a value are indexed again, in
      -- custom_records for a custom object, in the standard object's own table otherwise.
      CREATE OR REPLACE FUNCTION custom_fields_search_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        o record;
      BEGIN
        IF NEW.type IN ${SEARCHED_TYPES} AND NEW.is_active IS DISTINCT FROM OLD.is_active THEN
          SELECT id, is_custom INTO o FROM objects WHERE workspace_id = NEW.workspace_id AND name_plural = NEW.object;
          IF NOT FOUND THEN
            RETURN NULL;
          ELSIF o.is_custom THEN
            UPDATE custom_records SET custom = custom WHERE workspace_id = NEW.workspace_id AND object_id = o.id AND custom ? NEW.name;
          ELSE
            EXECUTE format('UPDATE %I SET custom = custom WHERE workspace_id = $1 AND custom ? $2', NEW.object)
              USING NEW.workspace_id, NEW.name;
          END IF;
        END IF;
        RETURN NULL;
      END $$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION custom_fields_search_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type IN ${SEARCHED_TYPES} AND NEW.is_active IS DISTINCT FROM OLD.is_active THEN
          EXECUTE format('UPDATE %I SET custom = custom WHERE workspace_id = $1 AND custom ? $2', NEW.object)
            USING NEW.workspace_id, NEW.name;
        END IF;
        RETURN NULL;
      END $$;
      DROP TRIGGER objects_search ON objects;
      DROP FUNCTION objects_search_trigger();
      DROP TRIGGER custom_records_search ON custom_records;
      DROP TRIGGER custom_records_words_insert ON custom_records;
      DROP TRIGGER custom_records_words_update ON custom_records;
      DROP FUNCTION custom_records_search_trigger(), custom_records_words_after_insert(), custom_records_words_after_update();
      ALTER TABLE custom_records DROP COLUMN search_vector;
      DELETE FROM search_words WHERE object NOT IN ('companies', 'people', 'opportunities');
    `);
  }
}
