import { z } from 'zod';
import type { FieldDef } from '../query/types.js';
import type { ColumnField, CsvLeaf, FieldOf, FieldType, GraphqlTypes, JsonSchema } from './types.js';

/*
 * What several field types share: value rules, the SQL of a value in the `custom` column,
 * and `scalar()`, which fills in what every single-valued type does alike.
 */

/** TEXT values. */
export const MAX_TEXT = 10_000;
export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** ISO 4217: three capital letters (custom CURRENCY fields and the built-in amount's currencyCode alike). */
export const CURRENCY_CODE = /^[A-Z]{3}$/;
export const URL = /^(https?:\/\/)?[^\s/$.?#][^\s]*$/i;

/** A link as stored in `secondaryLinks`. */
export const LINK = {
  url: {
    maxLength: 2048,
    description: 'A URL; a bare domain such as acme.com is kept as given.',
    tool: 'A URL; a bare domain such as acme.com is accepted and kept as given.',
  },
  label: { maxLength: 200 },
};

export type Input = Record<string, unknown>;

export function isPlain(value: unknown): value is Input {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The value `object` holds under `name` itself: a field named after an Object.prototype member
 * (made before those names were reserved) reads as absent when the object lacks it, never as
 * the inherited function.
 */
export function ownValue(object: unknown, name: string): unknown {
  return object !== null && typeof object === 'object' && Object.hasOwn(object, name) ? (object as Input)[name] : undefined;
}

/** A string of at most `max` characters without NUL (and matching `rule`), or null for no value; a problem pushed otherwise. */
export function checkText(value: unknown, path: string, max: number, problems: string[], rule?: RegExp, ruleText?: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') {
    problems.push(`${path} must be a string`);
    return null;
  }
  if (value.length > max) problems.push(`${path} must be at most ${max} characters`);
  else if (value.includes('\u0000')) problems.push(`${path} must not contain the NUL character (\\u0000)`);
  else if (rule && !rule.test(value)) problems.push(`${path} must be ${ruleText}`);
  return value;
}

/** A field's values: its type's own (RATING), else its options'. */
export function valuesOf(type: FieldType, field: Pick<FieldOf, 'options'>): string[] {
  return type.values ? [...type.values] : (field.options ?? []).map((o) => o.value);
}

/** "`path` must be <the type's word> (its values)": the message of a value of the wrong type. */
export function wrongType(type: FieldType, field: FieldOf, path: string, problems: string[]): undefined {
  problems.push(`${path} must be ${type.word}${field.options ? ` (${valuesOf(type, field).join(', ')})` : ''}`);
  return undefined;
}

// SQL of a value in the record's `custom` column, over the table alias `t.`

export const quote = (name: string) => `'${name}'`;

/**
 * The SQL of a field's indexed value over `alias` ('t.' in queries, '' in the index): the
 * same text in both, so the planner matches them. A number is read only from a JSON number,
 * so another workspace's field of the same name holding text can never fail the cast.
 */
export function indexedValue(name: string, kind: 'text' | 'number', alias: string): string {
  if (kind === 'text') return `(${alias}custom->>${quote(name)})`;
  return `(CASE WHEN jsonb_typeof(${alias}custom->${quote(name)}) = 'number' THEN (${alias}custom->>${quote(name)})::float8 END)`;
}

/** The jsonb value of a field in a record, over `t`. */
export const jsonOf = (field: Pick<FieldOf, 'name'>) => `t.custom->${quote(field.name)}`;

/** A leaf of a field as the list parameters see it, read back from a row's `custom` (for cursors). */
export function leaf(field: Pick<FieldOf, 'name'>, def: Pick<FieldDef, 'type' | 'sql'> & Partial<FieldDef>): FieldDef {
  const read = (row: Record<string, unknown>) => ownValue(row.custom, field.name) ?? null;
  return { path: field.name, column: 'custom', nullable: true, sortable: true, read, ...def };
}

/** The column a single-valued field is stored in (a standard object's field declares it). */
export function columnOf(field: ColumnField): string {
  if (!field.column) throw new Error(`${field.name}: a ${field.type} field is stored in a column of its own, and names none`);
  return field.column;
}

/** Never null and without a default: required on create (TEXT: non-empty too). */
export const requiredOnCreate = (field: Pick<ColumnField, 'isNullable' | 'defaultValue'>) =>
  !field.isNullable && field.defaultValue === undefined;

/** A leaf of a field stored in a column of its own: null only when the field may be. */
export function columnLeaf(field: ColumnField, def: Pick<FieldDef, 'type'> & Partial<FieldDef>): FieldDef {
  return {
    path: field.name,
    column: columnOf(field),
    type: def.type,
    nullable: field.isNullable,
    sortable: def.sortable ?? true,
    ...(def.values ? { values: def.values } : {}),
  };
}

export const orNull = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });

const nullableText = z.string().nullable();

/** A standard field's value in an MCP tool output: a string, null too when the field may be. */
export const toolText = (field: Pick<ColumnField, 'isNullable'>): z.ZodType => (field.isNullable ? nullableText : z.string());

/** A standard field's MCP tool input that takes a string or null (null clears it). */
export const toolNullableText = (description?: string) =>
  description ? z.string().nullable().optional().meta({ description }) : z.string().nullable().optional();

/** The parts of a single-valued type that differ from one type to another; `scalar()` adds the rest. */
export interface ScalarSpec extends Omit<
  FieldType,
  | 'empty'
  | 'shown'
  | 'leaves'
  | 'columnLeaves'
  | 'storedColumns'
  | 'recordSource'
  | 'writeColumns'
  | 'graphql'
  | 'jsonSchema'
  | 'mcpOutput'
  | 'csv'
> {
  /** The leaf's list-parameter type, SQL over `t` and sortability. */
  leaf(field: FieldOf): Pick<FieldDef, 'type' | 'sql'> & Partial<FieldDef>;
  /** GraphQL output (= input) type, filter, and whether it sorts; `sdl` as in GraphqlTypes. */
  graphql(field: FieldOf, typeName: string): GraphqlTypes;
  /** JSON Schema of a value (without null). */
  jsonSchema(field: FieldOf): JsonSchema;
  mcpOutput?: (field: FieldOf) => z.ZodType;
  csv: CsvLeaf;
  /** The column value of a validated non-null input value, when it is not the value itself (a date-time's instant). */
  toColumn?: (value: unknown) => unknown;
}

/** A single-valued type: no value is null (in records, CSV cells and JSON Schema), one leaf, one CSV column. */
export function scalar(spec: ScalarSpec): FieldType {
  const { leaf: leafOf, jsonSchema, mcpOutput, csv, toColumn, ...rest } = spec;
  return {
    ...rest,
    empty: () => null,
    shown: (value) => value,
    leaves: (field) => [leaf(field, leafOf(field))],
    columnLeaves: (field) => [columnLeaf(field, leafOf(field))],
    storedColumns: (field, only) => (only ? [] : [columnOf(field)]),
    // A field required on create is never absent from a row (as it is read for records): read as it is.
    recordSource: (field, read) => (requiredOnCreate(field) ? read(columnOf(field)) : `(${read(columnOf(field))} ?? null)`),
    writeColumns(field, value, columns) {
      columns[columnOf(field)] = value === null || !toColumn ? value : toColumn(value);
    },
    jsonSchema: (field) => orNull(jsonSchema(field)),
    mcpOutput: mcpOutput ?? (() => nullableText),
    csv: [csv],
  };
}

export const TEXT_GRAPHQL: GraphqlTypes = { output: 'String', input: 'String', filter: 'StringFilter', order: 'OrderByDirection' };

/** Options of a SELECT or MULTI_SELECT field, and values of a MULTI_SELECT one. */
export const MAX_OPTIONS = 100;

const cap = (name: string) => name[0].toUpperCase() + name.slice(1);
const doc = (text: string | null | undefined) => (text ? `${JSON.stringify(text)} ` : '');

/** The GraphQL enum of a field's values, named after its object and itself (`CompanyTierEnum`), an option's label as its description. */
export function enumOf(type: FieldType, field: FieldOf, typeName: string): { name: string; sdl: string } {
  const name = `${typeName}${cap(field.name)}Enum`;
  const options = type.values ? type.values.map((value) => ({ value, label: value })) : (field.options ?? []);
  return { name, sdl: `enum ${name} { ${options.map((o) => `${doc(o.label !== o.value ? o.label : undefined)}${o.value}`).join(' ')} }` };
}
