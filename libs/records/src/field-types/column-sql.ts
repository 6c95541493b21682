import pg from 'pg';

/*
 * The SQL of a value in an export (docs/rest.md "Exports"; export-sql.ts): its JSON text
 * and its CSV cell, over the table alias `t`, for a field held in a column of its own or in
 * the record's `custom` column alike.
 */

export const lit = (text: string) => pg.escapeLiteral(text);
export const orNull = (jsonText: string) => `coalesce(${jsonText}, 'null')`;
/** A text value as JSON: a string (escaped by Postgres), or null. */
export const jsonString = (sql: string) => orNull(`to_json(${sql})::text`);
/** A value whose text never needs escaping in JSON (a uuid, an enum value, an ISO timestamp): quoted as it is, which is cheaper. */
export const jsonPlain = (sql: string, nullable = true) => (nullable ? orNull(`'"' || ${sql} || '"'`) : `'"' || ${sql} || '"'`);
/** A timestamptz as the API writes it: ISO 8601 in UTC with milliseconds (libs/database/src/sql.ts). */
export const isoOf = (sql: string) => `to_char(${sql} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** A jsonb list as its JSON text; a missing list reads as `[]`, as the API shows it. */
export const listText = (sql: string) => `coalesce(nullif(${sql}, 'null'::jsonb), '[]'::jsonb)::text`;
