import { BadInputError, ErrorCode } from '#errors/errors.js';
import { isUuid, normalizeTimestamp, validLeafValue } from './filter.js';
import { describeInput } from './limit.js';
import { orderWithTieBreaker } from './sql.js';
import type { CursorPayload, ObjectSchema, OrderTerm } from './types.js';

/** Long enough for five long text values; bounds the work a forged cursor can cause. */
const MAX_CURSOR_LENGTH = 8192;

/** `createdAt:AscNullsFirst,id:AscNullsLast`: a cursor only fits lists in the same order. */
export function orderSignature(order: OrderTerm[]): string {
  return orderWithTieBreaker(order)
    .map((t) => `${t.field}:${t.direction}`)
    .join(',');
}

function valueCount(order: OrderTerm[]): number {
  return orderWithTieBreaker(order).filter((t) => t.field !== 'id').length;
}

/** Opaque base64url of `{o: order signature, v: values of the non-id terms, i: id}`. */
export function encodeCursor(payload: CursorPayload, order: OrderTerm[]): string {
  if (payload.values.length !== valueCount(order)) {
    throw new Error(`cursor needs ${valueCount(order)} values, got ${payload.values.length}`);
  }
  const json = JSON.stringify({ o: orderSignature(order), v: payload.values, i: payload.id });
  return Buffer.from(json, 'utf8').toString('base64url');
}

/**
 * Reads a cursor given as `param` (`starting_after` or `ending_before`). With `schema`,
 * values are also checked against their field types, so a forged cursor cannot reach SQL
 * as an unreadable timestamp or uuid.
 */
export function decodeCursor(raw: unknown, order: OrderTerm[], param: string, schema?: ObjectSchema): CursorPayload {
  const bad = (why: string) =>
    new BadInputError(
      ErrorCode.INVALID_CURSOR,
      `${param} must be a cursor from pageInfo (startCursor or endCursor) of a list with the same order_by; ${why}`,
    );
  if (raw === undefined || raw === '') throw bad('got an empty value');
  if (typeof raw !== 'string') throw bad(`got ${describeInput(raw)}`);
  if (raw.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(raw)) throw bad('this one is not a valid cursor');

  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw bad('this one is not a valid cursor');
  }
  const d = data as { o?: unknown; v?: unknown; i?: unknown };
  const shaped =
    typeof data === 'object' &&
    data !== null &&
    !Array.isArray(data) &&
    Object.keys(data).length === 3 &&
    typeof d.o === 'string' &&
    Array.isArray(d.v) &&
    typeof d.i === 'string';
  if (!shaped) throw bad('this one is not a valid cursor');
  if (d.o !== orderSignature(order)) throw bad('this one was issued for a different order_by');

  const values = d.v as unknown[];
  if (values.length !== valueCount(order)) throw bad('this one does not match the order_by');
  if (!isUuid(d.i)) throw bad('this one does not hold a valid record id');
  if (!values.every((v) => v === null || (typeof v === 'string' && !v.includes('\u0000')))) {
    throw bad('this one holds values of the wrong type');
  }

  if (schema) {
    const terms = orderWithTieBreaker(order).filter((t) => t.field !== 'id');
    terms.forEach((t, i) => {
      const v = values[i] as string | null;
      const def = Object.hasOwn(schema.fields, t.field) ? schema.fields[t.field] : undefined;
      const type = def?.type;
      if (v === null || type === 'text') return;
      const invalid = type === 'timestamp' ? normalizeTimestamp(v) === undefined : !def || type === 'textArray' || !validLeafValue(def, v);
      if (invalid) {
        throw bad(`this one holds an invalid value for ${t.field}`);
      }
    });
  }
  return { values: values as (string | null)[], id: d.i as string };
}
