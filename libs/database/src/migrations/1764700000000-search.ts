import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search across objects (docs/decisions/0030-search.md). Each record table gains
 * `search_vector`, a tsvector of its searchable text (names weight A; e-mails, domains and
 * links weight B; the values of the workspace's active custom fields of type TEXT, EMAILS,
 * LINKS and PHONES weight C), lower-cased and unaccented, kept by a BEFORE trigger so
 * every write path (REST, GraphQL, MCP, batches, imports, the metadata API's value updates)
 * keeps it current in its own transaction. One GIN index per table on (workspace_id,
 * search_vector) (btree_gin), partial on live rows, serves the word, prefix and typo queries.
 * A custom field turned on or off re-indexes the rows holding a value for it. The same
 * triggers keep `search_words`, the lexicon the typo search probes.
 * The backfill rewrites every row once (the trigger fills the column).
 */
export class Search1764700000000 implements MigrationInterface {
  name = 'Search1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public;
      CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public;

      -- unaccent() is STABLE (it reads its dictionary by name through search_path); with the
      -- dictionary named by schema it gives the same answer for the same text, so the wrapper
      -- can be IMMUTABLE (PostgreSQL docs, F.48 unaccent).
      CREATE FUNCTION search_normalize(text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, $1)) $$;

      -- A text and its words split at every non-alphanumeric character: "ada@acme.com" is found
      -- by "ada@acme.com", "ada" and "acme"; "+33 6 12" also by its digits run together.
      CREATE FUNCTION search_split(text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ SELECT $1 || ' ' || regexp_replace($1, '[^[:alnum:]]+', ' ', 'g') $$;

      CREATE FUNCTION search_vector_of(names text, contacts text, custom_text text) RETURNS tsvector
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $$
          SELECT setweight(to_tsvector('simple', coalesce(search_normalize(names), '')), 'A')
              || setweight(to_tsvector('simple', coalesce(search_split(search_normalize(nullif(contacts, ''))), '')), 'B')
              || setweight(to_tsvector('simple', coalesce(search_split(search_normalize(nullif(custom_text, ''))), '')), 'C')
        $$;

      -- The searchable text of a record's custom values: only the workspace's active fields of
      -- a searchable type (SELECT option values, numbers and dates are not searched). Costs no
      -- read of custom_fields when the record has no custom value.
      CREATE FUNCTION search_custom_text(p_workspace uuid, p_object text, p_custom jsonb) RETURNS text
        LANGUAGE plpgsql STABLE
        AS $$
        DECLARE
          result text;
        BEGIN
          IF p_custom IS NULL OR p_custom = '{}'::jsonb THEN
            RETURN '';
          END IF;
          SELECT string_agg(
                   CASE f.type
                     WHEN 'TEXT' THEN p_custom->>f.name
                     WHEN 'EMAILS' THEN concat_ws(' ', p_custom->f.name->>'primaryEmail',
                       (SELECT string_agg(e, ' ') FROM jsonb_array_elements_text(
                          CASE WHEN jsonb_typeof(p_custom->f.name->'additionalEmails') = 'array'
                               THEN p_custom->f.name->'additionalEmails' ELSE '[]'::jsonb END) e))
                     WHEN 'LINKS' THEN concat_ws(' ', p_custom->f.name->>'primaryLinkUrl', p_custom->f.name->>'primaryLinkLabel',
                       (SELECT string_agg(concat_ws(' ', l->>'url', l->>'label'), ' ') FROM jsonb_array_elements(
                          CASE WHEN jsonb_typeof(p_custom->f.name->'secondaryLinks') = 'array'
                               THEN p_custom->f.name->'secondaryLinks' ELSE '[]'::jsonb END) l))
                     WHEN 'PHONES' THEN concat_ws(' ', p_custom->f.name->>'primaryPhoneNumber',
                       regexp_replace(coalesce(p_custom->f.name->>'primaryPhoneNumber', ''), '[^0-9]', '', 'g'),
                       nullif(regexp_replace(coalesce(p_custom->f.name->>'primaryPhoneCallingCode', '') ||
                         regexp_replace(coalesce(p_custom->f.name->>'primaryPhoneNumber', ''), '^[^0-9]*0', ''), '[^0-9]', '', 'g'), ''))
                   END, ' ')
            INTO result
            FROM custom_fields f
           WHERE f.workspace_id = p_workspace AND f.object = p_object AND f.is_active
             AND f.type IN ('TEXT', 'EMAILS', 'LINKS', 'PHONES') AND p_custom ? f.name
             AND jsonb_typeof(p_custom->f.name) IN ('string', 'object');
          RETURN coalesce(result, '');
        END
        $$;

      -- The lexicon of typo search: the distinct words of each workspace's records per object,
      -- added by the search triggers below (never removed: a stale word only costs a candidate
      -- that matches nothing). A query word's one-edit spellings are probed here, by index, so
      -- the ranked statement carries the few that exist instead of hundreds. No unique index:
      -- two transactions adding the same new word never wait on each other (nor deadlock in
      -- batches); a rare duplicate is harmless.
      CREATE TABLE search_words (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        object text NOT NULL,
        word text COLLATE "C" NOT NULL
      );
      CREATE INDEX search_words_idx ON search_words (workspace_id, word, object);

      -- The words of a vector not yet in the lexicon (words of 3+ characters: no typo
      -- candidate is shorter). PL/pgSQL, so its statement's plan is cached across rows (a SQL
      -- function called from a trigger is planned again on every call: 2.4x slower measured).
      CREATE FUNCTION search_words_add(p_workspace uuid, p_object text, p_vector tsvector) RETURNS void
        LANGUAGE plpgsql
        AS $$
        BEGIN
          INSERT INTO search_words (workspace_id, object, word)
          SELECT p_workspace, p_object, w FROM unnest(tsvector_to_array(p_vector)) w
           WHERE length(w) >= 3
             AND NOT EXISTS (SELECT 1 FROM search_words s
                              WHERE s.workspace_id = p_workspace AND s.word = w COLLATE "C" AND s.object = p_object);
        END $$;

      ALTER TABLE companies ADD COLUMN search_vector tsvector NOT NULL DEFAULT ''::tsvector;
      ALTER TABLE people ADD COLUMN search_vector tsvector NOT NULL DEFAULT ''::tsvector;
      ALTER TABLE opportunities ADD COLUMN search_vector tsvector NOT NULL DEFAULT ''::tsvector;

      CREATE FUNCTION companies_search_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.search_vector := search_vector_of(
          NEW.name,
          concat_ws(' ', NEW.domain_primary_link_url, NEW.domain_primary_link_label,
            (SELECT string_agg(concat_ws(' ', l->>'url', l->>'label'), ' ')
               FROM jsonb_array_elements(CASE WHEN jsonb_typeof(NEW.domain_secondary_links) = 'array'
                                              THEN NEW.domain_secondary_links ELSE '[]'::jsonb END) l)),
          search_custom_text(NEW.workspace_id, 'companies', NEW.custom));
        IF TG_OP = 'INSERT' OR NEW.search_vector IS DISTINCT FROM OLD.search_vector THEN
          PERFORM search_words_add(NEW.workspace_id, 'companies', NEW.search_vector);
        END IF;
        RETURN NEW;
      END $$;
      CREATE FUNCTION people_search_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.search_vector := search_vector_of(
          concat_ws(' ', NEW.first_name, NEW.last_name),
          concat_ws(' ', NEW.primary_email,
            (SELECT string_agg(e, ' ') FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(NEW.additional_emails) = 'array'
                                                                          THEN NEW.additional_emails ELSE '[]'::jsonb END) e)),
          search_custom_text(NEW.workspace_id, 'people', NEW.custom));
        IF TG_OP = 'INSERT' OR NEW.search_vector IS DISTINCT FROM OLD.search_vector THEN
          PERFORM search_words_add(NEW.workspace_id, 'people', NEW.search_vector);
        END IF;
        RETURN NEW;
      END $$;
      CREATE FUNCTION opportunities_search_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.search_vector := search_vector_of(NEW.name, NULL, search_custom_text(NEW.workspace_id, 'opportunities', NEW.custom));
        IF TG_OP = 'INSERT' OR NEW.search_vector IS DISTINCT FROM OLD.search_vector THEN
          PERFORM search_words_add(NEW.workspace_id, 'opportunities', NEW.search_vector);
        END IF;
        RETURN NEW;
      END $$;

      CREATE TRIGGER companies_search BEFORE INSERT OR UPDATE OF name, domain_primary_link_url, domain_primary_link_label,
        domain_secondary_links, custom ON companies FOR EACH ROW EXECUTE FUNCTION companies_search_trigger();
      CREATE TRIGGER people_search BEFORE INSERT OR UPDATE OF first_name, last_name, primary_email, additional_emails, custom
        ON people FOR EACH ROW EXECUTE FUNCTION people_search_trigger();
      CREATE TRIGGER opportunities_search BEFORE INSERT OR UPDATE OF name, custom
        ON opportunities FOR EACH ROW EXECUTE FUNCTION opportunities_search_trigger();

      -- A field turned on or off: the rows of its workspace holding a value for it are indexed
      -- again (their custom column rewritten as is, which fires the trigger above).
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

      UPDATE companies SET name = name;
      UPDATE people SET first_name = first_name;
      UPDATE opportunities SET name = name;

      CREATE INDEX companies_search_idx ON companies USING gin (workspace_id, search_vector) WHERE deleted_at IS NULL;
      CREATE INDEX people_search_idx ON people USING gin (workspace_id, search_vector) WHERE deleted_at IS NULL;
      CREATE INDEX opportunities_search_idx ON opportunities USING gin (workspace_id, search_vector) WHERE deleted_at IS NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER custom_fields_search ON custom_fields;
      DROP FUNCTION custom_fields_search_trigger();
      DROP TRIGGER companies_search ON companies;
      DROP TRIGGER people_search ON people;
      DROP TRIGGER opportunities_search ON opportunities;
      DROP FUNCTION companies_search_trigger();
      DROP FUNCTION people_search_trigger();
      DROP FUNCTION opportunities_search_trigger();
      ALTER TABLE companies DROP COLUMN search_vector;
      ALTER TABLE people DROP COLUMN search_vector;
      ALTER TABLE opportunities DROP COLUMN search_vector;
      DROP FUNCTION search_custom_text(uuid, text, jsonb);
      DROP FUNCTION search_words_add(uuid, text, tsvector);
      DROP TABLE search_words;
      DROP FUNCTION search_vector_of(text, text, text);
      DROP FUNCTION search_split(text);
      DROP FUNCTION search_normalize(text);
    `);
  }
}
