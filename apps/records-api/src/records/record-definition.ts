import type { RecordObject } from '../../../../libs/database/src/entities/role.entity.js';
import type { ObjectSchema } from '../../../../libs/records/src/query/types.js';

/** What the generic record store needs to know about one object (companies, people). */
export interface RecordDefinition<TRecord, TCreate, TUpdate> {
  object: RecordObject;
  /** `company`, `person`: used in messages. */
  singular: string;
  schema: ObjectSchema;
  /** Columns read for a record (the order fields are always among them). */
  columns: readonly string[];
  toRecord(row: Record<string, unknown>): TRecord;
  createInput: new () => TCreate;
  updateInput: new () => TUpdate;
  /** Column values to write for a validated input; only the keys present are written. */
  toColumns(input: TCreate | TUpdate): Record<string, unknown>;
}

/** A column value as the API shows it; timestamps already arrive as ISO strings (libs/database/src/sql.ts). */
export function iso(value: unknown): string | null {
  return value == null ? null : String(value);
}
