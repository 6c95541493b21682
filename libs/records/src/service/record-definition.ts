import type { CustomField, InverseRelation, ObjectDeclaration, RelationField } from '../objects/index.js';
import type { ObjectSchema } from '../query/types.js';

/** What the records service needs to know about one object, made from its declaration (libs/records/src/service/object-definitions.ts). */
export interface RecordDefinition<TRecord, TCreate, TUpdate> {
  /** The permission object and plural name (`companies`). */
  object: string;
  /** `company`, `person`: used in messages. */
  singular: string;
  declaration: ObjectDeclaration;
  schema: ObjectSchema;
  /** Columns read for a record (the order fields are always among them). */
  columns: readonly string[];
  /**
   * The columns behind these API field names (GraphQL's selection), `id` and `created_at`
   * always among them; names that are not stored fields (inverse relations,
   * `__typename`) add nothing. A record made from these columns has only these fields.
   */
  columnsFor(fields: ReadonlySet<string>): string[];
  toRecord(row: Record<string, unknown>): TRecord;
  createInput: new () => TCreate;
  updateInput: new () => TUpdate;
  /** True only for a body the input class would accept as it is (libs/records/src/service/input-fast-check.ts); false means "run the class". */
  acceptsAsIs: { create(body: unknown): boolean; update(body: unknown): boolean };
  /** Column values to write for a validated input; only the keys present are written. */
  toColumns(input: TCreate | TUpdate): Record<string, unknown>;
  /** The links to other objects (declared, then the workspace's custom relations), each checked on write against the target's live records. */
  relations: readonly { field: RelationField; targetTable: string; targetSingular: string; targetObjectId?: string }[];
  /** The relations that link to this object's records, from their source objects (a company's `people`, its custom `tickets`). */
  inverses: readonly InverseRelation[];
  /** The workspace's active custom fields of this object (libs/records/src/service/data-model.ts); absent on the built-in definition. */
  custom?: readonly CustomField[];
  /**
   * A custom object's id: its records are the rows of `custom_records` with this `object_id`,
   * a predicate every statement carries beside `workspace_id` (libs/records/src/query/scope.ts). Absent on standard objects.
   */
  objectId?: string;
}

/** A column value as the API shows it; timestamps already arrive as ISO strings (libs/database/src/sql.ts). */
export function iso(value: unknown): string | null {
  return value == null ? null : String(value);
}
