import { fieldType } from '../field-types/index.js';
import {
  customObjectDeclaration,
  inversesOf,
  OBJECTS,
  relationFields,
  type ObjectDeclaration,
  type WorkspaceObject,
} from '../objects/index.js';
import { querySchemaOf, relationsOf } from '../objects/query-schema.js';
import type { RecordDefinition } from './record-definition.js';
import { fastInputCheck } from './input-fast-check.js';
import { restClasses } from './rest-classes.js';

/*
 * The SQL mapping of each object, generated once at start from its declaration: the row →
 * record function is compiled from source (one object literal, no loop over fields per
 * row), which keeps list pages on the fast path the hand-written mappers had.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a record's fields are typed by its declaration, not here
export type AnyRecord = Record<string, any> & { id: string };
export type ObjectDefinition = RecordDefinition<AnyRecord, object, object>;

const str = (column: string) => `row[${JSON.stringify(column)}]`;

function recordSource(object: ObjectDeclaration): string {
  const parts = ['id: row.id'];
  for (const field of object.fields) parts.push(`${JSON.stringify(field.name)}: ${fieldType(field.type).recordSource(field, str)}`);
  // Timestamps arrive as ISO strings (libs/database/src/sql.ts).
  parts.push('createdAt: row.created_at', 'updatedAt: row.updated_at', 'deletedAt: row.deleted_at ?? null');
  return `return { ${parts.join(', ')} };`;
}

/** API field name (and relation name: `company`) → the columns it is read from. */
function fieldColumnsOf(object: ObjectDeclaration): Map<string, string[]> {
  const byField = new Map<string, string[]>([
    ['id', ['id']],
    ['createdAt', ['created_at']],
    ['updatedAt', ['updated_at']],
    ['deletedAt', ['deleted_at']],
  ]);
  for (const field of object.fields) byField.set(field.name, fieldType(field.type).storedColumns(field));
  for (const link of relationFields(object)) byField.set(link.relation, [link.column]);
  return byField;
}

/** Every column of a record: id, the declared fields' in order, then the timestamps. */
function columnsOf(object: ObjectDeclaration): string[] {
  const byField = fieldColumnsOf(object);
  return ['id', ...object.fields.flatMap((field) => byField.get(field.name)!), 'created_at', 'updated_at', 'deleted_at'];
}

function columnsForOf(object: ObjectDeclaration) {
  const byField = fieldColumnsOf(object);
  return (fields: ReadonlySet<string>): string[] => {
    const columns = new Set(['id', 'created_at']);
    for (const name of fields) for (const column of byField.get(name) ?? []) columns.add(column);
    return [...columns];
  };
}

/** Validated input → the columns it writes; keys left out of the input are left out here. */
function toColumnsOf(object: ObjectDeclaration) {
  const fields = object.fields.map((field) => ({ field, type: fieldType(field.type) }));
  return (input: Record<string, unknown>): Record<string, unknown> => {
    const columns: Record<string, unknown> = {};
    if (input.id !== undefined) columns.id = input.id;
    for (const { field, type } of fields) {
      const value = input[field.name];
      if (value !== undefined) type.writeColumns(field, value, columns);
    }
    return columns;
  };
}

function definitionOf(object: ObjectDeclaration): ObjectDefinition {
  const classes = restClasses(object, OBJECTS);
  return {
    object: object.plural,
    singular: object.singular,
    declaration: object,
    schema: { ...querySchemaOf(object), relations: relationsOf(object.plural, (plural) => definitionFor(plural).schema) },
    columns: columnsOf(object),
    columnsFor: columnsForOf(object),
    toRecord: new Function('row', recordSource(object)) as (row: Record<string, unknown>) => AnyRecord,
    createInput: classes.create as new () => object,
    updateInput: classes.update as new () => object,
    acceptsAsIs: { create: fastInputCheck(object, 'create'), update: fastInputCheck(object, 'update') },
    toColumns: toColumnsOf(object),
    relations: relationFields(object).map((field) => {
      const target = OBJECTS.find((o) => o.plural === field.target);
      if (!target) throw new Error(`${object.plural}.${field.name} links to unknown object ${field.target}`);
      return { field, targetTable: target.table, targetSingular: target.singular };
    }),
    inverses: inversesOf(object.plural),
  };
}

/**
 * A custom object's definition (docs/data-model.md "Custom objects"): made as a standard
 * object's from its declaration, which has no declared field; its fields come with the
 * workspace's custom fields (libs/records/src/service/data-model.ts). Its records are in `custom_records`.
 */
export function customObjectDefinition(object: WorkspaceObject): ObjectDefinition {
  const declaration = customObjectDeclaration(object);
  return {
    ...definitionOf(declaration),
    schema: querySchemaOf(declaration),
    relations: [],
    inverses: [],
    objectId: object.id,
  };
}

/** Every object's definition, by plural name. */
export const DEFINITIONS: ReadonlyMap<string, ObjectDefinition> = new Map(OBJECTS.map((o) => [o.plural, definitionOf(o)]));

export function definitionFor(plural: string): ObjectDefinition {
  const found = DEFINITIONS.get(plural);
  if (!found) throw new Error(`no record object ${plural}`);
  return found;
}

/** A record's label: the first of the object's label paths with a value (a composite joins its text parts); '' when none has one. */
export function labelOf(object: ObjectDeclaration, record: AnyRecord): string {
  for (const path of object.label) {
    const value = path.split('.').reduce<unknown>((v, key) => (v as Record<string, unknown> | null)?.[key], record);
    const text =
      value !== null && typeof value === 'object'
        ? Object.values(value)
            .filter((v) => typeof v === 'string' && v)
            .join(' ')
        : typeof value === 'string'
          ? value
          : '';
    if (text) return text;
  }
  return '';
}

export { inversesOf, type InverseRelation } from '../objects/index.js';
