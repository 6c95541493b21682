import {
  composite,
  customObjectDeclaration,
  OBJECTS,
  type ObjectDeclaration,
  type RelationField,
  type WorkspaceObject,
} from '../objects/index.js';
import { querySchemaOf, relationsOf } from '../objects/query-schema.js';
import { normalizeTimestamp } from '../query/index.js';
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
const nullable = (column: string) => `(${str(column)} ?? null)`;

function recordSource(object: ObjectDeclaration): string {
  const parts = ['id: row.id'];
  for (const field of object.fields) {
    const key = JSON.stringify(field.name);
    switch (field.kind) {
      case 'text':
      case 'enum':
        parts.push(`${key}: ${field.kind === 'text' && field.required ? str(field.column) : nullable(field.column)}`);
        break;
      case 'timestamp':
      case 'relation':
        parts.push(`${key}: ${nullable(field.column)}`);
        break;
      case 'composite': {
        const subs = composite(field.type).subFields.map((sub) => {
          const col = field.columns[sub.name];
          const value =
            sub.kind === 'textList' || sub.kind === 'linkList'
              ? `(${str(col)} ?? [])`
              : sub.kind === 'bigint'
                ? `(${str(col)} == null ? null : Number(${str(col)}))`
                : nullable(col);
          return `${JSON.stringify(sub.name)}: ${value}`;
        });
        parts.push(`${key}: { ${subs.join(', ')} }`);
        break;
      }
    }
  }
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
  for (const field of object.fields) {
    if (field.kind === 'composite')
      byField.set(
        field.name,
        composite(field.type).subFields.map((sub) => field.columns[sub.name]),
      );
    else byField.set(field.name, [field.column]);
    if (field.kind === 'relation') byField.set(field.relation, [field.column]);
  }
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
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- input validated by the object's classes
  return (input: Record<string, any>): Record<string, unknown> => {
    const columns: Record<string, unknown> = {};
    if (input.id !== undefined) columns.id = input.id;
    for (const field of object.fields) {
      const value = input[field.name];
      if (value === undefined) continue;
      if (field.kind === 'timestamp') columns[field.column] = value === null ? null : normalizeTimestamp(value);
      else if (field.kind !== 'composite') columns[field.column] = value;
      else {
        for (const sub of composite(field.type).subFields) {
          const col = field.columns[sub.name];
          const subValue = value === null ? null : value[sub.name];
          if (subValue === undefined) continue;
          if (sub.kind === 'linkList') {
            columns[col] = JSON.stringify(
              (subValue ?? []).map((l: { url: string; label?: string | null }) => ({ url: l.url, label: l.label ?? null })),
            );
          } else if (sub.kind === 'textList') {
            columns[col] = JSON.stringify(subValue ?? []);
          } else {
            columns[col] = subValue;
          }
        }
      }
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
    relations: object.fields.flatMap((field) => {
      if (field.kind !== 'relation') return [];
      const target = OBJECTS.find((o) => o.plural === field.target);
      if (!target) throw new Error(`${object.plural}.${field.name} links to unknown object ${field.target}`);
      return [{ field, targetTable: target.table, targetSingular: target.singular }];
    }),
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

/** A relation seen from its target: `people.companyId` seen from companies is the inverse `people`. */
export interface InverseRelation {
  source: ObjectDeclaration;
  field: RelationField;
}

/** The relations that link to `plural`'s records, from their source objects. */
export function inversesOf(plural: string): InverseRelation[] {
  return OBJECTS.flatMap((source) =>
    source.fields.filter((f): f is RelationField => f.kind === 'relation' && f.target === plural).map((field) => ({ source, field })),
  );
}
