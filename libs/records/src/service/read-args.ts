import { BadInputError, ErrorCode, ForbiddenError } from '#errors/errors.js';
import { parseFilter, parseLimit, parseOrderBy } from '../query/index.js';
import type { ObjectSchema } from '../query/types.js';
import { parseAggregates, parseGroupBy, type GroupByArgs } from './group-by.js';
import type { ListArgs } from './records.service.js';
import type { ExportArgs } from './exports.service.js';

/*
 * What a read asks for, from typed arguments: an MCP tool's (checked by its input schema) or
 * REST's query parameters once each is known to be given once (rest/list-query.ts). The
 * list syntax (filter, order_by, group_by, aggregate) is the same language on both, parsed
 * here with the same messages and codes.
 */

/** The names `fields=` takes: the record's own fields (custom ones included), and what depth=1 embeds. */
export interface FieldNames {
  own: readonly string[];
  embedded: readonly string[];
  /** Fields the caller's role cannot read (docs/authentication.md, "Field permissions"): naming one is 403. */
  hidden?: readonly string[];
}

export function parseDepth(raw: unknown): 0 | 1 {
  if (raw === undefined || raw === '' || raw === '0' || raw === 0) return 0;
  if (raw === '1' || raw === 1) return 1;
  throw new BadInputError(ErrorCode.INVALID_DEPTH, `depth must be 0 or 1; got ${JSON.stringify(raw)}`);
}

/**
 * `fields=id,name,domainName` (docs/rest.md): the record's fields to read and return (`id`
 * always); names of embedded relations only with depth=1. Unset or empty: every field.
 */
export function parseFields(raw: unknown, names: FieldNames | undefined, depth: 0 | 1): Set<string> | undefined {
  if (raw === undefined || names === undefined) return undefined;
  if (typeof raw !== 'string')
    throw new BadInputError(ErrorCode.INVALID_FIELDS, 'fields must be given once, as a comma list of field names');
  if (raw.trim() === '') return undefined;
  const fields = new Set(['id']);
  const problems: string[] = [];
  for (const name of raw.split(',').map((n) => n.trim())) {
    if (names.hidden?.includes(name)) throw new ForbiddenError(`fields: the role does not allow read on "${name}"`);
    if (names.own.includes(name)) fields.add(name);
    else if (names.embedded.includes(name)) {
      if (depth === 1) fields.add(name);
      else problems.push(`fields: "${name}" is embedded only with depth=1`);
    } else {
      problems.push(
        `fields: unknown field "${name}"; allowed: ${names.own.join(', ')}${names.embedded.length ? `, and with depth=1 ${names.embedded.join(', ')}` : ''}`,
      );
    }
  }
  if (problems.length) throw new BadInputError(ErrorCode.INVALID_FIELDS, ...problems);
  return fields;
}

/** Only the selected fields of each record (`fields=`); every field when none were selected. */
export function pickFields<T extends Record<string, unknown>>(record: T, fields: ReadonlySet<string> | undefined): T {
  if (!fields) return record;
  return Object.fromEntries(Object.entries(record).filter(([key]) => fields.has(key))) as T;
}

/** A list's arguments; each is checked by its parser (a value of the wrong kind is refused with the list's codes). */
export interface ListInput {
  limit?: unknown;
  orderBy?: unknown;
  filter?: unknown;
  startingAfter?: string;
  endingBefore?: string;
  depth?: unknown;
  fields?: unknown;
}

export function listArgs(input: ListInput, schema: ObjectSchema, names?: FieldNames): ListArgs & { depth: 0 | 1 } {
  const depth = parseDepth(input.depth);
  return {
    limit: parseLimit(input.limit),
    orderBy: parseOrderBy(input.orderBy, schema),
    filter: parseFilter(input.filter, schema),
    startingAfter: input.startingAfter || undefined,
    endingBefore: input.endingBefore || undefined,
    depth,
    fields: parseFields(input.fields, names, depth),
  };
}

/** One record's read: depth and fields. */
export function readArgs(input: { depth?: unknown; fields?: unknown }, names: FieldNames): { depth: 0 | 1; fields?: Set<string> } {
  const depth = parseDepth(input.depth);
  return { depth, fields: parseFields(input.fields, names, depth) };
}

/** A group-by's arguments (docs/rest.md "Aggregates"). */
export function groupByArgs(input: { groupBy?: unknown; aggregate?: unknown; filter?: unknown }, schema: ObjectSchema): GroupByArgs {
  return {
    groupBy: parseGroupBy(input.groupBy, schema),
    aggregates: parseAggregates(input.aggregate, schema),
    filter: parseFilter(input.filter, schema),
  };
}

const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
const FORMULA_MODES = ['escaped', 'raw'] as const;

/** An export's arguments (docs/rest.md "Exports"): `format` (required), the list's `filter` and `fields`, and `formulas`. */
export function exportArgs(
  input: { format?: string; filter?: unknown; fields?: unknown; formulas?: string },
  schema: ObjectSchema,
  names: FieldNames,
): ExportArgs {
  const { format } = input;
  if (!EXPORT_FORMATS.includes(format as (typeof EXPORT_FORMATS)[number])) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `format must be ${EXPORT_FORMATS.join(' or ')}; got ${format === undefined ? 'nothing' : JSON.stringify(format.slice(0, 40))}`,
    );
  }
  const formulas = input.formulas ?? 'escaped';
  if (!FORMULA_MODES.includes(formulas as (typeof FORMULA_MODES)[number])) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `formulas must be ${FORMULA_MODES.join(' or ')}; got ${JSON.stringify(formulas.slice(0, 40))}`,
    );
  }
  return {
    format: format as ExportArgs['format'],
    filter: parseFilter(input.filter, schema),
    fields: parseFields(input.fields, names, 0),
    formulas: formulas as ExportArgs['formulas'],
  };
}
