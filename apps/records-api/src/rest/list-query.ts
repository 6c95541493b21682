import { BadInputError, ErrorCode } from '#errors/errors.js';
import { parseFilter } from '#records/query/index.js';
import type { ObjectSchema } from '#records/query/types.js';
import type { ListArgs } from '#records/service/records.service.js';
import type { ExportArgs } from '#records/service/exports.service.js';
import type { GroupByArgs } from '#records/service/group-by.js';
import { exportArgs, groupByArgs, listArgs, parseDepth, readArgs, type FieldNames } from '#records/service/read-args.js';

/*
 * REST's query parameters (docs/rest.md): unknown ones refused, each given once, then read
 * by the records layer's typed parsers (read-args.ts), which MCP's tools call directly.
 */

const LIST_PARAMS = ['limit', 'order_by', 'filter', 'starting_after', 'ending_before', 'depth', 'fields'];

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `${name} must be given once, as a plain string`);
  }
  return value;
}

/** REST list parameters (docs/rest.md) → the shared list arguments. Unknown parameters are refused. */
export function parseRestListQuery(query: Record<string, unknown>, schema: ObjectSchema, names?: FieldNames): ListArgs & { depth: 0 | 1 } {
  const unknown = Object.keys(query).filter((key) => !LIST_PARAMS.includes(key));
  if (unknown.length) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `unknown query parameter ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${LIST_PARAMS.join(', ')})`,
    );
  }
  return listArgs(
    {
      limit: query.limit,
      orderBy: query.order_by,
      filter: query.filter,
      startingAfter: single(query, 'starting_after'),
      endingBefore: single(query, 'ending_before'),
      depth: query.depth,
      fields: query.fields,
    },
    schema,
    names,
  );
}

export function parseRestGetQuery(query: Record<string, unknown>): 0 | 1 {
  const unknown = Object.keys(query).filter((key) => key !== 'depth');
  if (unknown.length) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `unknown query parameter "${unknown[0]}" (allowed: depth)`);
  }
  return parseDepth(query.depth);
}

/** `GET /rest/<plural>/:id` parameters: depth and fields. */
export function parseRestReadQuery(query: Record<string, unknown>, names: FieldNames): { depth: 0 | 1; fields?: Set<string> } {
  const unknown = Object.keys(query).filter((key) => key !== 'depth' && key !== 'fields');
  if (unknown.length) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `unknown query parameter "${unknown[0]}" (allowed: depth, fields)`);
  }
  return readArgs(query, names);
}

const GROUP_BY_PARAMS = ['group_by', 'aggregate', 'filter'];

/** `GET /rest/<plural>/groupBy` parameters (docs/rest.md "Aggregates"). Unknown parameters are refused. */
export function parseRestGroupByQuery(query: Record<string, unknown>, schema: ObjectSchema): GroupByArgs {
  const unknown = Object.keys(query).filter((key) => !GROUP_BY_PARAMS.includes(key));
  if (unknown.length) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `unknown query parameter ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${GROUP_BY_PARAMS.join(', ')})`,
    );
  }
  return groupByArgs({ groupBy: single(query, 'group_by'), aggregate: single(query, 'aggregate'), filter: query.filter }, schema);
}

const EXPORT_PARAMS = ['format', 'filter', 'fields', 'formulas'];

/**
 * `GET /rest/<plural>/export` parameters (docs/rest.md "Exports"): `format` (required), the
 * list's `filter` and `fields` with their rules and codes, and `formulas` (`escaped` or
 * `raw`; NDJSON takes it and never changes a value). Unknown parameters are refused, the
 * list's paging ones too: an export is every matching record.
 */
export function parseRestExportQuery(query: Record<string, unknown>, schema: ObjectSchema, names: FieldNames): ExportArgs {
  const unknown = Object.keys(query).filter((key) => !EXPORT_PARAMS.includes(key));
  if (unknown.length) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `unknown query parameter ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${EXPORT_PARAMS.join(', ')})`,
    );
  }
  return exportArgs(
    { format: single(query, 'format'), filter: query.filter, fields: query.fields, formulas: single(query, 'formulas') },
    schema,
    names,
  );
}

/** `?upsert=true[&match=field]` on a create (docs/rest.md, "Upsert"); any other parameter is refused. */
export function parseUpsertQuery(query: Record<string, unknown>): { upsert: boolean; match?: string } {
  const unknown = Object.keys(query).filter((key) => key !== 'upsert' && key !== 'match');
  if (unknown.length) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `unknown query parameter ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: upsert, match)`,
    );
  }
  const { upsert, match } = query;
  if (upsert !== undefined && upsert !== 'true' && upsert !== 'false') {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'upsert must be true or false');
  }
  if (match !== undefined && (typeof match !== 'string' || !match))
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'match must be given once');
  if (match !== undefined && upsert !== 'true') throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'match needs upsert=true');
  return { upsert: upsert === 'true', ...(match !== undefined ? { match: match as string } : {}) };
}

/** `?filter=` of a change by filter (docs/rest.md, "Changes by filter"); nothing else is taken. */
export function parseFilterQuery(query: Record<string, unknown>, schema: ObjectSchema): ListArgs['filter'] {
  const unknown = Object.keys(query).filter((key) => key !== 'filter');
  if (unknown.length) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `unknown query parameter ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: filter)`,
    );
  }
  return parseFilter(query.filter, schema);
}

/** `?hard=true` on a delete (docs/rest.md, "Erasure"). */
export function parseHardQuery(query: Record<string, unknown>): boolean {
  const unknown = Object.keys(query).filter((key) => key !== 'hard');
  if (unknown.length) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `unknown query parameter ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: hard)`,
    );
  }
  if (query.hard !== undefined && query.hard !== 'true' && query.hard !== 'false') {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'hard must be true or false');
  }
  return query.hard === 'true';
}
