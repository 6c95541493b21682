import { columnSurface, fieldType, type CsvLeaf } from '../field-types/index.js';
import { isoOf, jsonPlain, listText, lit, orNull } from '../field-types/column-sql.js';
import type { CustomField } from '../objects/index.js';
import { csvCell, guardedCellSql, type FormulaGuard } from './csv-formulas.js';
import type { ObjectDefinition } from './object-definitions.js';

/*
 * What an export writes per record, as SQL over the table alias `t`, so that Postgres
 * writes the bytes and the records API only passes them on (docs/rest.md "Exports";
 * docs/decisions/0033-streamed-exports.md). Both formats follow the REST record
 * (object-definitions.ts `toRecord`, data-model.ts for custom fields): the same fields in
 * the same order (id, the declared fields, createdAt, updatedAt, deletedAt, then the
 * workspace's custom fields), the same values.
 *
 * - NDJSON: one JSON object per line, built as text with `||` (no argument limit, unlike
 *   json_build_object's 100) and to_json for every string, so escaping is Postgres's.
 * - CSV: one column per leaf: a composite's sub-fields as `domainName.primaryLinkUrl`,
 *   lists (and multi-selects) as their JSON text in one cell, no value as an empty cell,
 *   text that a spreadsheet would run as a formula after a `'` (csv-formulas.ts).
 */

/** A column of the CSV: its header (the field path) and its text. */
export interface ExportColumn {
  path: string;
  sql: string;
  /** Set on text columns: how a formula in them is neutralised (csv-formulas.ts). */
  guard?: FormulaGuard;
}

/** `formulas=`: `escaped` (the default) puts a `'` before formula text cells; `raw` writes them as they are. */
export type FormulaMode = 'escaped' | 'raw';

/** One field of the record: its JSON value as SQL text, and its CSV columns. */
interface ExportField {
  name: string;
  json: string;
  columns: ExportColumn[];
}

function scalar(name: string, path: string, text: string, json: string, guard?: FormulaGuard): ExportField {
  return { name, json, columns: [{ path, sql: text, guard }] };
}

/** `{"a":…,"b":…}` from each part's JSON text, in order. */
function objectOf(parts: { key: string; json: string }[]): string {
  return parts.map((p, i) => `${lit(`${i ? ',' : '{'}${JSON.stringify(p.key)}:`)} || ${p.json}`).join(' || ') + ` || '}'`;
}

/** A composite: one JSON object, a CSV column per sub-field. */
function compositeField(name: string, subs: { name: string; text: string; json: string; guard?: FormulaGuard }[]): ExportField {
  return {
    name,
    json: objectOf(subs.map((s) => ({ key: s.name, json: s.json }))),
    columns: subs.map((s) => ({ path: `${name}.${s.name}`, sql: s.text, guard: s.guard })),
  };
}

function builtInFields(def: ObjectDefinition): ExportField[] {
  const fields: ExportField[] = [scalar('id', 'id', 't.id', jsonPlain('t.id', false))];
  for (const field of def.declaration.fields) {
    const leaves = columnSurface(field.type).exportLeaves(field);
    const [only] = leaves;
    fields.push(
      only.sub === undefined
        ? scalar(field.name, field.name, only.text, only.json, only.guard)
        : compositeField(
            field.name,
            leaves.map((leaf) => ({ name: leaf.sub!, text: leaf.text, json: leaf.json, guard: leaf.guard })),
          ),
    );
  }
  for (const [name, column] of [
    ['createdAt', 'created_at'],
    ['updatedAt', 'updated_at'],
  ]) {
    fields.push(scalar(name, name, isoOf(`t.${column}`), jsonPlain(isoOf(`t.${column}`), false)));
  }
  // An export holds live records only (exports.service.ts): deletedAt is always null.
  fields.push(scalar('deletedAt', 'deletedAt', 'NULL', `'null'`));
  return fields;
}

/**
 * A custom field as data-model.ts's toRecord shows it, column by column as its type lists
 * them: the stored JSON value, a list (JSON text in its cell) `[]` when empty, a composite
 * every sub-field.
 */
function customField(field: CustomField): ExportField {
  const type = fieldType(field.type);
  const value = `(t.custom->${lit(field.name)})`;
  const leafOf = (leaf: CsvLeaf, json: string, text: string) =>
    leaf.cell === 'json' ? { text: listText(json), json: listText(json) } : { text, json: orNull(`${json}::text`), guard: leaf.guard };
  if (!type.composite) {
    const { text, json, guard } = leafOf(type.csv[0], value, `(t.custom->>${lit(field.name)})`);
    return scalar(field.name, field.name, text, json, guard);
  }
  return compositeField(
    field.name,
    type.csv.map((leaf) => ({ name: leaf.sub!, ...leafOf(leaf, `(${value}->${lit(leaf.sub!)})`, `(${value}->>${lit(leaf.sub!)})`) })),
  );
}

/** The record's fields in the REST record's order, only those of `selected` (`fields=`; `id` always) when given. */
function exportFields(def: ObjectDefinition, selected?: ReadonlySet<string>): ExportField[] {
  const all = [...builtInFields(def), ...(def.custom ?? []).map(customField)];
  return selected ? all.filter((f) => f.name === 'id' || selected.has(f.name)) : all;
}

/** The CSV's columns: header paths and their SQL, in order; formula text cells escaped unless `formulas` is `raw`. */
export function csvColumns(def: ObjectDefinition, selected?: ReadonlySet<string>, formulas: FormulaMode = 'escaped'): ExportColumn[] {
  const columns = exportFields(def, selected).flatMap((f) => f.columns);
  return formulas === 'raw' ? columns : columns.map((c) => (c.guard ? { ...c, sql: guardedCellSql(c.sql, c.guard) } : c));
}

/** The whole record's line of each definition (a workspace's definitions are kept, so this is built once per definition). */
const wholeLines = new WeakMap<ObjectDefinition, string>();

/**
 * The SQL of one NDJSON line (without its newline): the record as the REST API writes it,
 * compact. A watched create builds its events with the whole record's (records.service.ts).
 */
export function ndjsonLine(def: ObjectDefinition, selected?: ReadonlySet<string>): string {
  const line = (fields?: ReadonlySet<string>) => objectOf(exportFields(def, fields).map((f) => ({ key: f.name, json: f.json })));
  if (selected) return line(selected);
  let whole = wholeLines.get(def);
  if (whole === undefined) wholeLines.set(def, (whole = line()));
  return whole;
}

/** A CSV header row (RFC 4180): the paths, quoted only when they need it (they never do: names are identifiers). */
export function csvHeader(columns: readonly ExportColumn[]): string {
  return columns.map((c) => csvCell(c.path)).join(',') + '\n';
}
