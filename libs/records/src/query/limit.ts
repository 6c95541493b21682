import { BadInputError, ErrorCode } from '#errors/errors.js';

export const DEFAULT_LIMIT = 60;
export const MAX_LIMIT = 200;

/**
 * `limit` list parameter (docs/rest.md): default 60, values above 200 are cut to 200.
 * A query string gives digits; GraphQL and MCP may pass a number, held to the same rule.
 */
export function parseLimit(raw: unknown, param = 'limit'): number {
  if (raw === undefined || raw === '') return DEFAULT_LIMIT;
  const ok = typeof raw === 'string' ? /^\d+$/.test(raw) : Number.isSafeInteger(raw) && (raw as number) >= 0;
  if (!ok) {
    throw new BadInputError(
      ErrorCode.INVALID_LIMIT,
      `${param} must be a non-negative integer (0 to ${MAX_LIMIT}); got ${describeInput(raw)}`,
    );
  }
  return Math.min(Number(raw), MAX_LIMIT);
}

/** How a rejected input is shown in a message: quoted and shortened; a repeated query parameter arrives as an array. */
export function describeInput(raw: unknown): string {
  if (typeof raw === 'string') return JSON.stringify(raw.length > 60 ? `${raw.slice(0, 60)}…` : raw);
  if (Array.isArray(raw)) return 'the parameter more than once';
  if (raw === null) return 'null';
  return typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : `a value of type ${typeof raw}`;
}
