import { z } from 'zod';
import { columnSurface, fieldType } from '#records/field-types/index.js';
import {
  describeField,
  OBJECTS,
  relationFields,
  type CustomField,
  type ObjectDeclaration,
  type StandardField,
} from '#records/objects/index.js';
import {
  MAX_LIMIT,
  DEFAULT_LIMIT,
  DIRECTIONS,
  OPS_BY_TYPE,
  relationFilterNote,
  sortableFields,
  type ObjectSchema,
} from '#records/query/index.js';
import { EMBEDDED_PER_RECORD } from '#records/service/constants.js';

/*
 * Tool input and output schemas (zod, turned into JSON Schema by the SDK). Inputs check
 * types only, and refuse unknown keys; values (filter syntax, uuids, e-mails, URLs) are
 * checked by the shared parsers and the service layer, so an MCP client gets the same
 * messages as a REST client.
 */

// Inputs, from the object declarations: each field's as its registry type gives it (ColumnSurface.toolInput).

function fieldInput(field: StandardField, mode: 'create' | 'update'): z.ZodType {
  return columnSurface(field.type).toolInput(field, mode);
}

const idInput = (singular: string) => z.string().meta({ description: `The ${singular}'s id (a UUID).` });
const chosenId = () =>
  z.string().optional().meta({ description: 'Optional UUID of your choosing; one that exists already is a CONFLICT.' });

/** A workspace's custom field as a tool input (docs/data-model.md): its type's shape; values are checked by the service. */
function customFieldInput(field: CustomField, mode: 'create' | 'update'): z.ZodType {
  const text = [field.description ?? field.label, describeField(field)].join(' — ');
  const schema = fieldType(field.type).mcpInput(field);
  const required = mode === 'create' && !field.isNullable && field.defaultValue == null;
  return (required ? schema : schema.nullable().optional()).meta({ description: text });
}

export function createInput(object: ObjectDeclaration, custom: readonly CustomField[] = []) {
  const fields = Object.fromEntries(object.fields.map((f) => [f.name, fieldInput(f, 'create')]));
  const extra = Object.fromEntries(custom.map((f) => [f.name, customFieldInput(f, 'create')]));
  return z.strictObject({ ...fields, ...extra, id: chosenId() });
}

export function updateInput(object: ObjectDeclaration, custom: readonly CustomField[] = []) {
  const fields = Object.fromEntries(object.fields.map((f) => [f.name, fieldInput(f, 'update')]));
  const extra = Object.fromEntries(custom.map((f) => [f.name, customFieldInput(f, 'update')]));
  return z.strictObject({ id: idInput(object.singular), ...fields, ...extra });
}

/** Upsert: every field optional (a match is updated with what is given), an id to match on, and `match`. */
export function upsertInput(object: ObjectDeclaration, custom: readonly CustomField[] = []) {
  const fields = Object.fromEntries(object.fields.map((f) => [f.name, fieldInput(f, 'update')]));
  const extra = Object.fromEntries(custom.map((f) => [f.name, customFieldInput(f, 'update')]));
  return z.strictObject({
    id: z
      .string()
      .optional()
      .meta({ description: `UUID of the ${object.singular} to update; created with this id when there is none.` }),
    ...fields,
    ...extra,
    match: z
      .string()
      .optional()
      .meta({ description: 'The one unique field (or "id") to match on; without it: id, then every unique field.' }),
  });
}

const depthInput = (embedded: string) =>
  z
    .literal([0, 1])
    .optional()
    .meta({ description: `0 (default): relation ids only. 1: embed ${embedded}.` });

/** REST's `fields=` (docs/rest.md): a comma list of field names. */
const fieldsInput = (embedded: string) =>
  z
    .string()
    .optional()
    .meta({
      description:
        'Comma list of field names, as REST fields= (e.g. "name,domainName"; custom fields too): only those fields, and id, are read ' +
        `and returned. With depth 1, name the embedded relations to keep as well (${embedded}). An unknown name is INVALID_FIELDS.`,
    });

export function getInput(singular: string, embedded: string) {
  return z.strictObject({ id: idInput(singular), depth: depthInput(embedded), fields: fieldsInput(embedded) });
}

export function deleteInput(singular: string) {
  return z.strictObject({ id: idInput(singular) });
}

/** What a list tool's `filter` accepts for one object: each field with its operators. */
function filterFields(schema: ObjectSchema): string {
  return Object.values(schema.fields)
    .map((f) => `${f.path} (${OPS_BY_TYPE[f.type].join(' ')})`)
    .join('; ');
}

export interface ListExamples {
  filter: string[];
  orderBy: string[];
}

/** Sortable fields, composites with what they sort by: `name (= name.firstName, name.lastName)`. */
function sortable(schema: ObjectSchema): string {
  return sortableFields(schema)
    .map((f) => (Object.hasOwn(schema.compositeSort, f) ? `${f} (= ${schema.compositeSort[f].join(', ')})` : f))
    .join(', ');
}

/** The REST list parameters (docs/rest.md), with the same names and syntax. */
export function listInput(schema: ObjectSchema, embedded: string, examples: ListExamples) {
  // Absent for an object without relations (a custom object's), which leaves no gap in the text.
  const across = relationFilterNote(schema);
  return z.strictObject({
    limit: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: `Page size, default ${DEFAULT_LIMIT}; values above ${MAX_LIMIT} are cut to ${MAX_LIMIT}.` }),
    order_by: z
      .string()
      .optional()
      .meta({
        description:
          `Comma list of field[Direction], in priority order. Direction: ${DIRECTIONS.join(', ')} ` +
          `(default AscNullsFirst). Sortable fields: ${sortable(schema)}. ` +
          'id always breaks ties. Default: createdAt[AscNullsFirst].',
        examples: examples.orderBy,
      }),
    filter: z
      .string()
      .optional()
      .meta({
        description:
          'Conditions field[op]:value; a comma list means AND; and(…), or(…), not(…) nest. ' +
          'Strings are double-quoted ("Acme"); in and containsAny take a list ["a","b"]; is takes NULL or NOT_NULL; ' +
          'dates are ISO 8601 (2024-01-31 or 2024-01-31T12:00:00Z); like/ilike use % and _. ' +
          `Fields (operators): ${filterFields(schema)}. ${across}${across ? ' ' : ''}` +
          'Deleted records are listed only when the filter mentions deletedAt, e.g. deletedAt[is]:NOT_NULL.',
        examples: examples.filter,
      }),
    starting_after: z
      .string()
      .optional()
      .meta({ description: 'pageInfo.endCursor of the previous result: reads the next page (same filter and order_by).' }),
    ending_before: z
      .string()
      .optional()
      .meta({ description: 'pageInfo.startCursor of the previous result: reads the page before it (same filter and order_by).' }),
    depth: depthInput(embedded),
    fields: fieldsInput(embedded),
  });
}

// Outputs (the records as REST returns them)

const nullable = z.string().nullable();

const outputs = new Map<string, z.ZodObject>();

/** A workspace's active custom fields by object (none: the built-in shapes). */
export type CustomFieldsOf = (plural: string) => readonly CustomField[];
const NO_FIELDS: CustomFieldsOf = () => [];

/** Fields a principal's role cannot read, by object (docs/authentication.md, "Field permissions"); none: every field. */
export type HiddenOf = (plural: string) => ReadonlySet<string> | undefined;

/** `schema` without the keys named (those it has): a tool schema without fields the caller may not use. */
export function without<T extends z.ZodObject>(schema: T, names: ReadonlySet<string> | undefined): T {
  const present = [...(names ?? [])].filter((name) => Object.hasOwn(schema.shape, name));
  const mask = Object.fromEntries(present.map((name) => [name, true])) as Record<string, true> & Record<number, never>;
  return present.length ? (schema.omit(mask) as unknown as T) : schema;
}

/** A record of the object, as list/get/create/update return it (depth 0), with the workspace's custom fields. */
export function recordShape(object: ObjectDeclaration, customOf: CustomFieldsOf = NO_FIELDS, hiddenOf?: HiddenOf): z.ZodObject {
  const hidden = hiddenOf?.(object.plural);
  if (hidden?.size) return without(recordShape(object, customOf), hidden);
  const custom = customOf(object.plural);
  if (custom.length) return recordShape(object).extend(Object.fromEntries(custom.map((f) => [f.name, fieldType(f.type).mcpOutput(f)])));
  let found = outputs.get(object.plural);
  if (!found) {
    const fields: Record<string, z.ZodType> = { id: z.string() };
    for (const field of object.fields) fields[field.name] = columnSurface(field.type).toolOutput(field);
    found = z.object({ ...fields, createdAt: z.string(), updatedAt: z.string(), deletedAt: nullable });
    // Kept for the standard objects only: a workspace's own object names are anyone's to choose, without end.
    if (OBJECTS.includes(object)) outputs.set(object.plural, found);
  }
  return found;
}

/** The record with what depth 1 embeds: linked records, and the inverse lists declared for depth 1. */
export function recordWithEmbedded(object: ObjectDeclaration, customOf: CustomFieldsOf = NO_FIELDS, hiddenOf?: HiddenOf): z.ZodObject {
  const extra: Record<string, z.ZodType> = {};
  for (const field of relationFields(object)) {
    const target = OBJECTS.find((o) => o.plural === field.target)!;
    extra[field.relation] = recordShape(target, customOf, hiddenOf)
      .nullable()
      .optional()
      .meta({ description: `With depth 1: the linked ${target.singular}, or null.` });
  }
  for (const source of OBJECTS) {
    for (const field of relationFields(source)) {
      if (field.target !== object.plural) continue;
      extra[field.inverse] = z
        .array(recordShape(source, customOf, hiddenOf))
        .optional()
        .meta({ description: `With depth 1: the ${object.singular}'s oldest ${EMBEDDED_PER_RECORD} ${source.plural}.` });
    }
  }
  return recordShape(object, customOf, hiddenOf).extend(extra);
}

const pageInfoOutput = z.object({
  hasNextPage: z.boolean(),
  hasPreviousPage: z.boolean(),
  startCursor: nullable,
  endCursor: nullable.meta({ description: 'Pass as starting_after to read the next page.' }),
});

export function listOutput<K extends string>(plural: K, record: z.ZodType) {
  return z.object({
    [plural]: z.array(record),
    totalCount: z.number().int().meta({ description: 'Records matching the filter, across all pages.' }),
    pageInfo: pageInfoOutput,
  } as Record<K, z.ZodType> & { totalCount: z.ZodType; pageInfo: z.ZodType });
}

export function recordOutput<K extends string>(singular: K, record: z.ZodType) {
  return z.object({ [singular]: record } as Record<K, z.ZodType>);
}

export function upsertOutput<K extends string>(singular: K, record: z.ZodType) {
  return z.object({
    [singular]: record,
    outcome: z.enum(['created', 'updated']).meta({ description: 'Whether the record was created or a match was updated.' }),
  } as Record<K, z.ZodType>);
}

export const deletedOutput = z.object({ id: z.string().meta({ description: 'The id of the deleted record (soft delete).' }) });

/** aggregate_records: one object, REST's group_by, aggregate and filter (docs/rest.md "Aggregates"). */
/** `open`: the workspace has objects of its own, named by describe_object rather than listed here (up to 50 of them). */
export function aggregateInput(plurals: readonly string[], open = false) {
  return z.strictObject({
    object: open
      ? z.string().meta({ description: 'Plural name (describe_object lists them)' })
      : z.enum(plurals as [string, ...string[]]).meta({ description: 'The object whose records are grouped.' }),
    group_by: z
      .string()
      .optional()
      .meta({ description: 'Comma list of up to 3 fields; dates as field:granularity.', examples: ['stage,closeDate:month'] }),
    aggregate: z
      .string()
      .optional()
      .meta({
        description: 'Comma list of count, sum:<field>, avg:<field>, min:<field>, max:<field>; default count.',
        examples: ['count,sum:amount.amountMicros,max:closeDate'],
      }),
    filter: z.string().optional().meta({ description: 'The list filter (field[op]:value, and/or/not); only those records are grouped.' }),
  });
}

/** Open objects keyed by field: as small as JSON Schema says it (aggregate_records is in every tools/list). */
const byField = z.looseObject({});

export const aggregateOutput = z.object({
  groups: z.array(
    z.object({
      by: byField.meta({ description: 'Each group_by field and its value (a date bucket as YYYY-MM-DD).' }),
      count: z.number().optional(),
      sum: z.record(z.string(), z.string().nullable()).optional().meta({ description: 'Exact sums as decimal strings.' }),
      avg: z.record(z.string(), z.string().nullable()).optional().meta({ description: 'Exact averages as decimal strings.' }),
      min: byField.optional(),
      max: byField.optional(),
    }),
  ),
});
