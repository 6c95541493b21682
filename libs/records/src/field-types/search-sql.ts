import { FIELD_TYPES } from './registry.js';

/*
 * The search functions that depend on field types (docs/decisions/0030-search.md), generated
 * from the registry: each searchable type's module says which words of its value are
 * searched (`search`), and nothing else lists them. They are brought in line with this code
 * at start, under the migration lock (libs/database/src/search-functions.ts;
 * docs/decisions/0056-field-type-registry.md says why there rather than in a migration).
 */

/**
 * At most this many characters of a record's custom text are indexed (its fields in the
 * order they were added): a tsvector holds at
 * most 1 MB, and 100 fields of 100 KB of distinct words would exceed it and fail the write.
 * 100,000 characters (at most 400 KB of UTF-8, and as many bytes of lexeme entries again)
 * stay under it with the built-in fields' words.
 */
export const MAX_SEARCHED_CUSTOM_TEXT = 100_000;

export interface SearchFunction {
  /** `name(argument types)`, as `regprocedure` reads it. */
  signature: string;
  /** The body, exactly as Postgres keeps it in `pg_proc.prosrc`. */
  body: string;
  /** The statement that creates or replaces it. */
  sql: string;
}

const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The functions as this code defines them; only built-in functions inside, so the per-row trigger inlines them. */
export function searchFunctions(): SearchFunction[] {
  const searched = FIELD_TYPES.filter((type) => type.search);
  const names = searched.map((type) => lit(type.name)).join(', ');
  const valueBody = `
  SELECT CASE
    WHEN jsonb_typeof(v) NOT IN ('string', 'object') THEN NULL
    ${searched.map((type) => `WHEN type = ${lit(type.name)} THEN ${type.search!('v')}`).join('\n    ')}
  END
`;
  const textBody = `
  SELECT left(nullif(btrim(string_agg(search_custom_value(f.type, p_custom -> f.name), ' ' ORDER BY f.created_at, f.id)), ''), ${MAX_SEARCHED_CUSTOM_TEXT})
    FROM custom_fields f
   WHERE f.workspace_id = p_workspace AND f.object = p_object AND f.is_active
     AND f.type IN (${names}) AND p_custom ? f.name
`;
  const triggerBody = `
BEGIN
  IF NEW.type IN (${names}) AND NEW.is_active IS DISTINCT FROM OLD.is_active THEN
    -- A standard object's records are its own table's; a workspace's own object's are custom_records rows.
    IF EXISTS (SELECT 1 FROM objects o WHERE o.workspace_id = NEW.workspace_id AND o.name_plural = NEW.object AND NOT o.is_custom) THEN
      EXECUTE format('UPDATE %I SET custom = custom WHERE workspace_id = $1 AND custom ? $2', NEW.object)
        USING NEW.workspace_id, NEW.name;
    ELSE
      UPDATE custom_records r SET custom = r.custom
        FROM objects o
       WHERE o.workspace_id = NEW.workspace_id AND o.name_plural = NEW.object
         AND r.workspace_id = NEW.workspace_id AND r.object_id = o.id AND r.custom ? NEW.name;
    END IF;
  END IF;
  RETURN NULL;
END
`;
  return [
    {
      // The searchable text of one custom value of a field of type `type` (NULL for the other types).
      signature: 'search_custom_value(text, jsonb)',
      body: valueBody,
      sql: `CREATE OR REPLACE FUNCTION search_custom_value(type text, v jsonb) RETURNS text
              LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $body$${valueBody}$body$`,
    },
    {
      // The searchable text of a record's custom values: the workspace's active fields of a searchable type; NULL when none.
      signature: 'search_custom_text(uuid, text, jsonb)',
      body: textBody,
      sql: `CREATE OR REPLACE FUNCTION search_custom_text(p_workspace uuid, p_object text, p_custom jsonb) RETURNS text
              LANGUAGE sql STABLE AS $body$${textBody}$body$`,
    },
    {
      // A searchable field turned on or off: its workspace's rows holding a value are indexed again.
      signature: 'custom_fields_search_trigger()',
      body: triggerBody,
      sql: `CREATE OR REPLACE FUNCTION custom_fields_search_trigger() RETURNS trigger LANGUAGE plpgsql AS $body$${triggerBody}$body$`,
    },
  ];
}
