/** The parsed form of list parameters, shared by REST, GraphQL and MCP. */

export const DIRECTIONS = ['AscNullsFirst', 'AscNullsLast', 'DescNullsFirst', 'DescNullsLast'] as const;
export type Direction = (typeof DIRECTIONS)[number];

export const FILTER_OPS = [
  'eq',
  'neq',
  'in',
  'containsAny',
  'is',
  'gt',
  'gte',
  'lt',
  'lte',
  'startsWith',
  'endsWith',
  'like',
  'ilike',
] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

/** `number`, `boolean` and `date` (YYYY-MM-DD text) are custom fields' (their types' modules, libs/records/src/field-types/). */
export type FieldType = 'uuid' | 'text' | 'timestamp' | 'textArray' | 'bigint' | 'enum' | 'number' | 'boolean' | 'date';

export interface FieldDef {
  /** Public dotted path, e.g. `emails.primaryEmail`. */
  path: string;
  /** SQL column (unquoted, lower snake case). */
  column: string;
  type: FieldType;
  nullable: boolean;
  sortable: boolean;
  /** `enum` (and a custom MULTI_SELECT's `textArray`): the allowed values. */
  values?: readonly string[];
  /** An SQL expression over alias `t` in place of `t.<column>` (a custom field inside the `custom` jsonb column). */
  sql?: string;
  /** The value of this leaf in a row read with `column` (for cursors), when it is not the column itself. */
  read?: (row: Record<string, unknown>) => unknown;
}

export interface ObjectSchema {
  /** Collection name: `companies`, `people`. */
  name: string;
  table: string;
  /** Leaf fields by public path. */
  fields: Record<string, FieldDef>;
  /** Composite fields that sort by several leaves, e.g. person `name` → firstName, lastName (a FULL_NAME, field-types/full-name.ts). */
  compositeSort: Record<string, string[]>;
  /**
   * The relations a filter may cross, one hop (docs/rest.md, "Relation filters"): person `company`,
   * company `people` and `opportunities`. Absent: none.
   */
  relations?: Record<string, SchemaRelation>;
}

/**
 * A relation seen from one object: `toOne` follows this object's foreign key `column` to the
 * target's `id` (person → company); `toMany` finds the target's records whose `column` holds
 * this object's `id` (company → people).
 */
export interface SchemaRelation {
  kind: 'toOne' | 'toMany';
  /** The foreign-key column: on this object (`toOne`) or on the target (`toMany`). */
  column: string;
  /** A custom relation: its MANY_TO_ONE field's id, its links in `record_links` (`column` unused; docs/decisions/0066-relations.md). */
  fieldId?: string;
  /** A custom target object's id (its records' scope). */
  objectId?: string;
  /** The target's schema as the caller's workspace sees it (custom fields included); read lazily. */
  readonly target: ObjectSchema;
}

export interface OrderTerm {
  /** A leaf path of the schema (composites are expanded by the parser). */
  field: string;
  direction: Direction;
}

export type IsValue = 'NULL' | 'NOT_NULL';

export type FilterNode =
  | { kind: 'and'; children: FilterNode[] }
  | { kind: 'or'; children: FilterNode[] }
  | { kind: 'not'; child: FilterNode }
  | { kind: 'cond'; field: string; op: FilterOp; value: string | string[] | IsValue }
  /** Some live record across `relation` matches `child` (conditions on the target's fields). */
  | { kind: 'relation'; relation: string; child: FilterNode };

/** Position of a record in a given order: the values of the order fields, then id. */
export interface CursorPayload {
  values: (string | null)[];
  id: string;
}
