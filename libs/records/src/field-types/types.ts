import type { z } from 'zod';
import type { FieldDef } from '../query/types.js';

/*
 * The module a field type implements, once (docs/decisions/0056-field-type-registry.md):
 * everything a surface needs to know about a value of that type. REST and the records
 * layer (validation, stored form, filter and order leaves), GraphQL, OpenAPI, MCP, CSV and
 * NDJSON exports, imports, search, unique keys, indexes, the docs' words and the settings
 * page all read it from here; none of them switches on a type name.
 */

/** How a composite's sub-field is held. */
export type SubFieldKind =
  /** A string, nullable. */
  | 'text'
  /** A list of strings (jsonb), never null: `[]` when empty. */
  | 'textList'
  /** A list of `{url, label}` (jsonb), never null. */
  | 'linkList'
  /** An integer (bigint column), nullable; JSON number within ±(2^53 − 1). */
  | 'bigint'
  /** A double (a JSON number), nullable, within `min`…`max` when given. */
  | 'number';

export interface SubField {
  name: string;
  kind: SubFieldKind;
  maxLength?: number;
  /** `email`: an e-mail address; `url`: a URL or a bare domain; `currency`: ISO 4217 (three capitals). */
  format?: 'email' | 'url' | 'currency';
  maxItems?: number;
  /** `number`: the bounds of a value (a latitude is -90…90). */
  min?: number;
  max?: number;
  /**
   * A CSV export cell of this text that a spreadsheet would run as a formula gets a `'`
   * (csv-formulas.ts); `callingCode` keeps a calling code such as `+33` as it is.
   */
  formula?: 'callingCode';
  /** Filterable and sortable through the list parameters. */
  sortable: boolean;
  filterable: boolean;
  /** Texts per surface (REST model, GraphQL object, REST input, GraphQL input, MCP input); rules are not repeated here. */
  docs?: {
    model?: string;
    graphql?: string;
    restInput?: string;
    graphqlInput?: string;
    tool?: string;
    example?: unknown;
    inputExample?: unknown;
  };
}

/** A composite type's sub-fields and the names each transport gives it (standard objects' composite fields use the same). */
export interface CompositeType {
  name: string;
  subFields: SubField[];
  /** Type names per transport (Twenty's for GraphQL; the REST names the OpenAPI document always had). */
  graphql: { object: string; input: string; filter: string; orderBy: string };
  rest: { input: string; model: string };
  /** The sub-fields a composite sort key orders by (`name` → firstName, lastName). */
  sortBy: string[];
}

/** What deleting a record does to the records that link to it through a custom relation (docs/decisions/0066-relations.md). */
export const ON_DELETE = ['SET_NULL', 'CASCADE', 'RESTRICT'] as const;
export type OnDelete = (typeof ON_DELETE)[number];

/**
 * A RELATION field's settings (Twenty's names): a many-to-one link, its target, and the names
 * each end shows. A custom relation is two fields (docs/decisions/0066-relations.md): its
 * `MANY_TO_ONE` side, whose `targetObject` is the object linked to, and its `ONE_TO_MANY`
 * inverse on that object, whose `targetObject` is the linking object; each names the other.
 */
export interface RelationSettings {
  relationType: 'MANY_TO_ONE' | 'ONE_TO_MANY';
  /** The plural name of the object at the other end (`companies` for a person's company). */
  targetObject: string;
  /** The linked record as embedded at depth=1 and in GraphQL (`company`); a custom field's own name. */
  relationName: string;
  /** The name of the other end (a company's `people`). */
  inverseName: string;
  /** A custom relation: the other end's field id. */
  inverseFieldId?: string;
  /** A custom relation (default SET_NULL). */
  onDelete?: OnDelete;
}

/** A field's settings: NUMBER's `decimals`, a standard TEXT field's `maxLength`, a RELATION's link. */
export type FieldSettings = { decimals?: number; maxLength?: number } & Partial<RelationSettings>;

/** What a type's module reads of a field: a custom field (a `CustomField` is one) or a standard object's. */
export interface FieldOf {
  name: string;
  type: string;
  label?: string;
  description?: string | null;
  options: readonly { value: string; label: string }[] | null;
  settings: FieldSettings | null;
}

/** Texts a field shows on each surface; a rule (lengths, formats, values) is never repeated here. */
export interface FieldDocs {
  /** On the record (GraphQL type, REST model, MCP output). */
  description?: string;
  /** On REST/GraphQL create and update inputs (`update` defaults to `create` only when `sameOnUpdate`). */
  create?: string;
  update?: string;
  /** GraphQL input descriptions, when they differ from `create`/`update`. */
  graphqlCreate?: string;
  graphqlUpdate?: string;
  /** MCP tool input description (one for create and update). */
  tool?: string;
  /** Examples for the OpenAPI document. */
  example?: unknown;
  updateExample?: unknown;
}

/**
 * A field held in columns of its own (a standard object's field): the metadata a custom
 * field has (name, type, whether it may be null, its default, options and settings), where
 * it is stored (`column` for a single value, `columns`, one per sub-field, for a composite)
 * and its texts per surface (docs/decisions/0062-standard-fields-in-the-registry.md).
 */
export interface ColumnField extends FieldOf {
  /** False: never null; with no `defaultValue`, required on create too (TEXT: non-empty). */
  isNullable: boolean;
  /** The value a create that leaves the field out gets (a SELECT's). */
  defaultValue?: string;
  column?: string;
  columns?: Readonly<Record<string, string>>;
  docs?: FieldDocs & {
    /** RELATION: the embedded record (REST depth=1, GraphQL field). */
    relation?: string;
    /** RELATION: the inverse list on the target. */
    inverse?: string;
  };
}

export type JsonSchema = Record<string, unknown>;

/** A field's GraphQL types, and the definitions they need beyond the base schema by type name (each written once per schema). */
export interface GraphqlTypes {
  output: string;
  input: string;
  filter: string;
  /** Absent: the field cannot be sorted. */
  order?: string;
  sdl?: Record<string, string>;
  /** The enum the types name, when they name one (a select's): its name and values, for code-first schemas (graphql-types.ts). */
  enum?: { name: string; values: string[] };
}

/** How a CSV cell reads back into a value on import: `json` holds JSON text (lists, multi-selects). */
export type CellKind = 'text' | 'integer' | 'number' | 'boolean' | 'json';

/** One CSV column of a field: its sub-field for a composite, how its cell reads, and its formula guard if it is free text. */
export interface CsvLeaf {
  sub?: string;
  cell: CellKind;
  guard?: 'text' | 'callingCode';
}

/** How a unique field's values are compared (unique-fields.ts), and which sub-field holds it. */
export interface UniqueRule {
  sub?: string;
  normalize: 'exact' | 'lower' | 'url';
}

/** A property of a REST body class or response model: the type tsc would emit for it, and its decorators (class-validator, OpenAPI). */
export interface RestProperty {
  design: unknown;
  decorators: PropertyDecorator[];
}

/**
 * What a type does for a field held in columns of its own (a standard object's) on the
 * surfaces whose form for those fields predates the registry and stays as it was to the
 * byte (docs/decisions/0062-standard-fields-in-the-registry.md): the REST body classes and
 * models (class-validator rules, OpenAPI), and the check of a body certainly valid.
 */
export interface ColumnSurface {
  /** `description`: the field's text for this mode, if any. */
  restInput(field: ColumnField, mode: 'create' | 'update', description: string | undefined): RestProperty;
  restModel(field: ColumnField): RestProperty;
  /** True only for a value the `restInput` rules accept (input-fast-check.ts): the same rules with class-validator's functions. */
  fastCheck(field: ColumnField, mode: 'create' | 'update'): (value: unknown) => boolean;
  /** MCP tool input (types and shapes; values are checked by the REST rules), with its description. */
  toolInput(field: ColumnField, mode: 'create' | 'update'): z.ZodType;
  /** MCP tool output of its value as records show it. */
  toolOutput(field: ColumnField): z.ZodType;
  /** Its export SQL over `t` (export-sql.ts): one leaf for a single value, one per sub-field (`sub`) for a composite. */
  exportLeaves(field: ColumnField): ExportLeaf[];
  /** Its rows of the docs' field tables (field-tables.ts): path, type in words, rule in words (markdown). */
  tableRows(field: ColumnField, object: TableContext): { path: string; type: string; rule: string }[];
}

/** What a field table's rows may name beyond the field: its object's GraphQL type name, and another object's singular name. */
export interface TableContext {
  typeName: string;
  singularOf(plural: string): string;
}

/** A value in an export: its CSV cell's SQL, its JSON text's SQL, and the formula guard of free text (csv-formulas.ts). */
export interface ExportLeaf {
  sub?: string;
  text: string;
  json: string;
  guard?: 'text' | 'callingCode';
}

export interface FieldType {
  /** Twenty's name: `TEXT`, `CURRENCY`, … */
  readonly name: string;
  /** A value in words, as messages and tool descriptions say it: "a string". */
  readonly word: string;
  /** What a value holds, in the settings page's type list: "text". */
  readonly pageWord: string;
  /** A composite: its sub-fields (the same definition the standard objects' composite fields use). */
  readonly composite?: CompositeType;
  /** The field's options are its values: `one` (a value is one of them) or `many` (a list of them). */
  readonly options?: 'one' | 'many';
  /** The type's own fixed values (RATING). */
  readonly values?: readonly string[];
  /** The field may be unique, compared so. */
  readonly unique?: UniqueRule;
  /** The kind of shared index that serves filters and order on it (custom-field-indexes); none: filtered without one. */
  readonly indexKind?: 'text' | 'number';
  /** The sub-fields a composite sorts by when named whole. */
  readonly sortBy?: readonly string[];
  /**
   * Searchable: the SQL text of a stored value's words, from `v`, the SQL of its jsonb
   * value (the search functions are generated from these: search-sql.ts). Only built-in
   * functions, so the search trigger stays one expression.
   */
  readonly search?: (v: string) => string;
  /** The field's `settings`, checked (a type without this takes none). */
  settings?(raw: Record<string, unknown>, problems: string[]): { decimals?: number };
  /** The stored form of a non-null value, or undefined with a problem pushed (naming `path`). */
  check(field: FieldOf, value: unknown, path: string, problems: string[]): unknown;
  /** The value a record shows for no value: null, `[]`, or a composite with every sub-field empty. */
  empty(): unknown;
  /** A stored value as records show it (a composite with every sub-field). */
  shown(value: unknown): unknown;
  /** The filterable and sortable leaves of the field, over the record's `custom` column. */
  leaves(field: FieldOf): FieldDef[];
  /** The same leaves of a field held in columns of its own (a standard object's). */
  columnLeaves(field: ColumnField): FieldDef[];
  /** Held in columns of its own: its columns, in sub-field order; `json`: only those holding a jsonb list. */
  storedColumns(field: ColumnField, only?: 'json'): string[];
  /** Held in columns of its own: the JS source of its value in a record, `read(column)` being a column's in the row (compiled once: object-definitions.ts). */
  recordSource(field: ColumnField, read: (column: string) => string): string;
  /** Held in columns of its own: the columns a validated input value (null included) writes, set in `columns`. */
  writeColumns(field: ColumnField, value: unknown, columns: Record<string, unknown>): void;
  /** `typeName`: the object's GraphQL type, which names a select's enum (`CompanyTierEnum`). */
  graphql(field: FieldOf, typeName: string): GraphqlTypes;
  /** JSON Schema of a value in a record (`model`) or a create/update body (`input`), without a description. */
  jsonSchema(field: FieldOf, mode: 'model' | 'input'): JsonSchema;
  /** MCP tool input (types and shapes only; values are checked by `check`), not yet nullable. */
  mcpInput(field: FieldOf): z.ZodType;
  /** MCP tool output of a value as records show it. */
  mcpOutput(field: FieldOf): z.ZodType;
  /** CSV columns: one for a scalar, one per sub-field for a composite. */
  readonly csv: readonly CsvLeaf[];
  /** The type as a standard object's field (absent: no standard field has it). */
  readonly column?: ColumnSurface;
}
