import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The record tables and the text of their vectors, as SQL over a row alias (`NEW` in the
 * trigger, `t` in the backfill): names (weight A) and contacts (weight B: e-mails, domains,
 * links). Only built-in C functions, so the trigger calls no SQL function per row: a jsonb
 * list becomes text by dropping its JSON punctuation (`translate`), links by their values
 * (`jsonb_path_query_array`).
 */
const TABLES: { table: string; columns: string; names: (r: string) => string; contacts: (r: string) => string }[] = [
  {
    table: 'companies',
    columns: 'name, domain_primary_link_url, domain_primary_link_label, domain_secondary_links',
    names: (r) => `coalesce(${r}.name, '')`,
    contacts: (r) =>
      `coalesce(${r}.domain_primary_link_url, '') || ' ' || coalesce(${r}.domain_primary_link_label, '') || ' ' ||
       translate(jsonb_path_query_array(${r}.domain_secondary_links, 'lax $[*].*')::text, '[]",', '    ')`,
  },
  {
    table: 'people',
    columns: 'first_name, last_name, primary_email, additional_emails',
    names: (r) => `coalesce(${r}.first_name, '') || ' ' || coalesce(${r}.last_name, '')`,
    contacts: (r) => `coalesce(${r}.primary_email, '') || ' ' || translate(${r}.additional_emails::text, '[]",', '    ')`,
  },
  { table: 'opportunities', columns: 'name', names: (r) => `coalesce(${r}.name, '')`, contacts: () => `''` },
];

/**
 * The words of a text as SQL (docs/decisions/0030-search.md): runs of letters and runs of
 * digits, each a word ("emma.smith123@example.com" holds emma, smith, 123, example, com).
 * Built-in functions only, so the trigger inlines it; `search_split` is the same for queries.
 */
export const split = (sql: string) =>
  `regexp_replace(regexp_replace(${sql}, '([[:alpha:]])(?=[[:digit:]])|([[:digit:]])(?=[[:alpha:]])', '\\1\\2 ', 'g'), '[^[:alnum:]]+', ' ', 'g')`;

/**
 * Search across objects (docs/decisions/0030-search.md). Each record table gains
 * `search_vector`, a tsvector of its searchable text (names weight A; e-mails, domains and
 * links weight B; the values of the workspace's active custom fields of type TEXT, EMAILS,
 * LINKS and PHONES weight C), lower-cased and unaccented, kept by a BEFORE row trigger so
 * every write path (REST, GraphQL, MCP, batches, imports, seeds, the metadata API's value
 * updates) keeps it current in its own transaction. The trigger is one PL/pgSQL expression of
 * built-in functions (a STORED generated column would need an IMMUTABLE SQL wrapper around
 * unaccent, which is STABLE: a SQL function call per use, measured slower, see the decision);
 * it reads custom_fields only for a row holding a custom value. One GIN index per table on
 * (workspace_id, search_vector) (btree_gin), partial on live rows, serves the word, prefix and
 * typo queries. `search_words`, the lexicon the typo search probes, is kept by statement-level
 * triggers over the statement's transition tables (one call per statement, not per row).
 * The backfill is set-based: the vector added as a generated column (one table rewrite that
 * computes every row's vector), then made a plain column; the custom text in one UPDATE
 * joining custom_fields; the lexicon in one INSERT … SELECT DISTINCT per table.
 */
export class Search1764700000000 implements MigrationInterface {
  name = 'Search1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public;
      CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public;

      -- unaccent() is STABLE (it reads its dictionary by name through search_path); with the
      -- dictionary named by schema it gives the same answer for the same text, so the wrapper
      -- can be IMMUTABLE (PostgreSQL docs, F.48 unaccent), as a generated column requires.
      CREATE FUNCTION search_normalize(text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, $1)) $$;

      -- The words of a text: its runs of letters and its runs of digits ("ada.king2@acme.com" holds
      -- ada, king, 2, acme and com). Records and queries are split alike, so "ada.king2@acme.com"
      -- in q finds it word by word. Neither a whole e-mail or host nor a name with its digits
      -- ("smith123") is one word: each person's unique address made a prefix query on a first or
      -- last name scan thousands of index entries sharing those letters (50 ms at 1M people).
      CREATE FUNCTION search_split(text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ SELECT ${split('$1')} $$;

      -- The strings of a jsonb array (additional e-mails), or the values of the given keys of its
      -- objects (secondary links), space-separated; '' for anything that is not an array.
      CREATE FUNCTION search_array_text(v jsonb, keys text[] DEFAULT NULL) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $$
          SELECT coalesce(string_agg(CASE WHEN keys IS NULL THEN CASE WHEN jsonb_typeof(e) = 'string' THEN e #>> '{}' END
                                          WHEN jsonb_typeof(e) = 'object' THEN (SELECT string_agg(e ->> k, ' ') FROM unnest(keys) k)
                                     END, ' '), '')
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(v) = 'array' THEN v ELSE '[]'::jsonb END) e
        $$;

      -- The searchable text of one custom value of a field of type \`type\` (NULL for other types:
      -- SELECT option values, numbers and dates are not searched). A phone adds its digits run
      -- together, with and without the calling code.
      CREATE FUNCTION search_custom_value(type text, v jsonb) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $$
          SELECT CASE
            WHEN jsonb_typeof(v) NOT IN ('string', 'object') THEN NULL
            WHEN type = 'TEXT' THEN v #>> '{}'
            WHEN type = 'EMAILS' THEN coalesce(v ->> 'primaryEmail', '') || ' ' || search_array_text(v -> 'additionalEmails')
            WHEN type = 'LINKS' THEN coalesce(v ->> 'primaryLinkUrl', '') || ' ' || coalesce(v ->> 'primaryLinkLabel', '') || ' ' ||
                                     search_array_text(v -> 'secondaryLinks', '{url,label}')
            WHEN type = 'PHONES' THEN coalesce(v ->> 'primaryPhoneNumber', '') || ' ' ||
                                      regexp_replace(coalesce(v ->> 'primaryPhoneNumber', ''), '[^0-9]', '', 'g') || ' ' ||
                                      regexp_replace(coalesce(v ->> 'primaryPhoneCallingCode', '') ||
                                        regexp_replace(coalesce(v ->> 'primaryPhoneNumber', ''), '^[^0-9]*0', ''), '[^0-9]', '', 'g')
          END
        $$;

      -- The searchable text of a record's custom values: only the workspace's active fields of a
      -- searchable type. NULL when there is none.
      CREATE FUNCTION search_custom_text(p_workspace uuid, p_object text, p_custom jsonb) RETURNS text
        LANGUAGE sql STABLE
        AS $$
          SELECT nullif(btrim(string_agg(search_custom_value(f.type, p_custom -> f.name), ' ')), '')
            FROM custom_fields f
           WHERE f.workspace_id = p_workspace AND f.object = p_object AND f.is_active
             AND f.type IN ('TEXT', 'EMAILS', 'LINKS', 'PHONES') AND p_custom ? f.name
        $$;

      -- The lexicon of typo search: the distinct words of each workspace's records per object
      -- (never removed: a stale word only costs a candidate that matches nothing). A query word's
      -- one-edit spellings are probed here, by index, so the ranked statement carries the few that
      -- exist instead of hundreds; a query prefix expands here to the whole words it starts. Every
      -- word of 3 or more letters: no typo candidate is shorter, and numbers take no typo (a
      -- record with a unique number, an e-mail's digits, adds nothing here). No unique index: two
      -- transactions adding the same new word never wait on each other (nor deadlock in
      -- batches); a rare duplicate is harmless.
      CREATE TABLE search_words (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        object text NOT NULL,
        word text COLLATE "C" NOT NULL
      );
      CREATE INDEX search_words_idx ON search_words (workspace_id, word, object);
      CREATE FUNCTION search_lexicon_word(text) RETURNS boolean
        LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ SELECT $1 ~ '^[[:alpha:]]{3,}$' $$;

      -- Statement-level: the words of the statement's new rows not yet in the lexicon, in one
      -- INSERT whatever the number of rows (a batch or an INSERT … SELECT costs one call, not one
      -- per row). The transition table is the one the record-count triggers already capture.
      -- enable_seqscan off: the plan is cached for the session; made while search_words is small,
      -- it could pick a sequential scan of it, which grows with the lexicon (an index probe per
      -- word stays flat).
      CREATE FUNCTION search_words_after_insert() RETURNS trigger
        LANGUAGE plpgsql SET enable_seqscan = off
        AS $$
        BEGIN
          INSERT INTO search_words (workspace_id, object, word)
          SELECT DISTINCT n.workspace_id, TG_ARGV[0], w
            FROM new_rows n CROSS JOIN LATERAL unnest(tsvector_to_array(n.search_vector)) w
           WHERE search_lexicon_word(w)
             AND NOT EXISTS (SELECT 1 FROM search_words s
                              WHERE s.workspace_id = n.workspace_id AND s.word = w COLLATE "C" AND s.object = TG_ARGV[0]);
          RETURN NULL;
        END $$;
      -- On update only the words the statement brings that its rows did not hold before: an
      -- update that leaves the searchable text alone (a soft delete, a relation) probes nothing.
      CREATE FUNCTION search_words_after_update() RETURNS trigger
        LANGUAGE plpgsql SET enable_seqscan = off
        AS $$
        BEGIN
          INSERT INTO search_words (workspace_id, object, word)
          SELECT c.workspace_id, TG_ARGV[0], c.w
            FROM (SELECT n.workspace_id, w FROM new_rows n CROSS JOIN LATERAL unnest(tsvector_to_array(n.search_vector)) w
                  EXCEPT
                  SELECT o.workspace_id, w FROM old_rows o CROSS JOIN LATERAL unnest(tsvector_to_array(o.search_vector)) w) c
           WHERE search_lexicon_word(c.w)
             AND NOT EXISTS (SELECT 1 FROM search_words s
                              WHERE s.workspace_id = c.workspace_id AND s.word = c.w COLLATE "C" AND s.object = TG_ARGV[0]);
          RETURN NULL;
        END $$;

      -- A field turned on or off: the rows of its workspace holding a value for it are indexed
      -- again (their custom column rewritten as is, which fires the search trigger).
      CREATE FUNCTION custom_fields_search_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type IN ('TEXT', 'EMAILS', 'LINKS', 'PHONES') AND NEW.is_active IS DISTINCT FROM OLD.is_active THEN
          EXECUTE format('UPDATE %I SET custom = custom WHERE workspace_id = $1 AND custom ? $2', NEW.object)
            USING NEW.workspace_id, NEW.name;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER custom_fields_search AFTER UPDATE OF is_active ON custom_fields
        FOR EACH ROW EXECUTE FUNCTION custom_fields_search_trigger();
    `);

    for (const { table, columns, names, contacts } of TABLES) {
      const vector = (r: string, normalize: (sql: string) => string) => `
        setweight(to_tsvector('simple', search_split(${normalize(names(r))})), 'A')
        || setweight(to_tsvector('simple', search_split(${normalize(contacts(r))})), 'B')`;
      await q.query(`
        -- The vector computed with the built-in unaccent, once per row: the trigger's expression.
        CREATE FUNCTION ${table}_search_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          contacts text := lower(public.unaccent('public.unaccent'::regdictionary, ${contacts('NEW')}));
          custom_text text;
        BEGIN
          IF NEW.custom <> '{}'::jsonb THEN
            custom_text := search_custom_text(NEW.workspace_id, '${table}', NEW.custom);
          END IF;
          NEW.search_vector :=
            setweight(to_tsvector('simple', ${split(`lower(public.unaccent('public.unaccent'::regdictionary, ${names('NEW')}))`)}), 'A')
            || setweight(to_tsvector('simple', ${split('contacts')}), 'B')
            || CASE WHEN custom_text IS NULL THEN ''::tsvector
                    ELSE setweight(to_tsvector('simple', search_split(search_normalize(custom_text))), 'C') END;
          RETURN NEW;
        END $$;

        -- Backfill, set-based: the same vector (through the IMMUTABLE wrappers a generated column
        -- needs) computed in the one rewrite that adds the column, which then becomes a plain one.
        ALTER TABLE ${table} ADD COLUMN search_vector tsvector NOT NULL
          GENERATED ALWAYS AS (${vector(table, (sql) => `search_normalize(${sql.replaceAll(`${table}.`, '')})`)}) STORED;
        ALTER TABLE ${table} ALTER COLUMN search_vector DROP EXPRESSION;
        ALTER TABLE ${table} ALTER COLUMN search_vector SET DEFAULT ''::tsvector;
        UPDATE ${table} t SET search_vector = t.search_vector || setweight(to_tsvector('simple', search_split(search_normalize(s.text))), 'C')
          FROM (SELECT r.workspace_id, r.id, nullif(btrim(string_agg(search_custom_value(f.type, r.custom -> f.name), ' ')), '') AS text
                  FROM ${table} r
                  JOIN custom_fields f ON f.workspace_id = r.workspace_id AND f.object = '${table}' AND f.is_active
                                      AND f.type IN ('TEXT', 'EMAILS', 'LINKS', 'PHONES') AND r.custom ? f.name
                 WHERE r.custom <> '{}'::jsonb
                 GROUP BY r.workspace_id, r.id) s
         WHERE t.workspace_id = s.workspace_id AND t.id = s.id AND s.text IS NOT NULL;
        INSERT INTO search_words (workspace_id, object, word)
        SELECT DISTINCT t.workspace_id, '${table}', w
          FROM ${table} t CROSS JOIN LATERAL unnest(tsvector_to_array(t.search_vector)) w
         WHERE search_lexicon_word(w);
        CREATE INDEX ${table}_search_idx ON ${table} USING gin (workspace_id, search_vector) WHERE deleted_at IS NULL;

        CREATE TRIGGER ${table}_search BEFORE INSERT OR UPDATE OF ${columns}, custom ON ${table}
          FOR EACH ROW EXECUTE FUNCTION ${table}_search_trigger();
        CREATE TRIGGER ${table}_search_words_insert AFTER INSERT ON ${table}
          REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION search_words_after_insert('${table}');
        CREATE TRIGGER ${table}_search_words_update AFTER UPDATE ON ${table}
          REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION search_words_after_update('${table}');
      `);
    }
    await q.query('ANALYZE search_words');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { table } of TABLES) {
      await q.query(`
        DROP TRIGGER ${table}_search ON ${table};
        DROP TRIGGER ${table}_search_words_insert ON ${table};
        DROP TRIGGER ${table}_search_words_update ON ${table};
        DROP FUNCTION ${table}_search_trigger();
        ALTER TABLE ${table} DROP COLUMN search_vector;
      `);
    }
    await q.query(`
      DROP TRIGGER custom_fields_search ON custom_fields;
      DROP FUNCTION custom_fields_search_trigger();
      DROP FUNCTION search_words_after_insert();
      DROP FUNCTION search_words_after_update();
      DROP FUNCTION search_lexicon_word(text);
      DROP TABLE search_words;
      DROP FUNCTION search_custom_text(uuid, text, jsonb);
      DROP FUNCTION search_custom_value(text, jsonb);
      DROP FUNCTION search_array_text(jsonb, text[]);
      DROP FUNCTION search_split(text);
      DROP FUNCTION search_normalize(text);
    `);
  }
}
