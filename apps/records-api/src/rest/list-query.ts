import { BadInputError, ErrorCode } from '#errors/errors.js';
import { parseFilter, parseLimit, parseOrderBy } from '#records/query/index.js';
import type { ObjectSchema } from '#records/query/types.js';
import type { ListArgs } from '../records/records.service.js';

const LIST_PARAMS = ['limit', 'order_by', 'filter', 'starting_after', 'ending_before', 'depth'];

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `${name} must be given once, as a plain string`);
  }
  return value;
}

export function parseDepth(raw: unknown): 0 | 1 {
  if (raw === undefined || raw === '' || raw === '0') return 0;
  if (raw === '1') return 1;
  throw new BadInputError(ErrorCode.INVALID_DEPTH, `depth must be 0 or 1; got ${JSON.stringify(raw)}`);
}

/** REST list parameters (docs/rest.md) → the shared list arguments. Unknown parameters are refused. */
export function parseRestListQuery(query: Record<string, unknown>, schema: ObjectSchema): ListArgs & { depth: 0 | 1 } {
  const unknown = Object.keys(query).filter((key) => !LIST_PARAMS.includes(key));
  if (unknown.length) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `unknown query parameter ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${LIST_PARAMS.join(', ')})`,
    );
  }
  return {
    limit: parseLimit(query.limit),
    orderBy: parseOrderBy(query.order_by, schema),
    filter: parseFilter(query.filter, schema),
    startingAfter: single(query, 'starting_after') || undefined,
    endingBefore: single(query, 'ending_before') || undefined,
    depth: parseDepth(query.depth),
  };
}

export function parseRestGetQuery(query: Record<string, unknown>): 0 | 1 {
  const unknown = Object.keys(query).filter((key) => key !== 'depth');
  if (unknown.length) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `unknown query parameter "${unknown[0]}" (allowed: depth)`);
  }
  return parseDepth(query.depth);
}
