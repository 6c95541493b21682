import { BadInputError, ErrorCode } from '#errors/errors.js';
import { describeInput } from './limit.js';
import { DIRECTIONS, type Direction, type ObjectSchema, type OrderTerm } from './types.js';

export const DEFAULT_ORDER: readonly OrderTerm[] = [{ field: 'createdAt', direction: 'AscNullsFirst' }];
export const MAX_ORDER_TERMS = 5;

const TERM = /^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\[([^\][]*)\])?$/;

/** Fields a client may sort by: sortable leaves and composite sort keys. */
export function sortableFields(schema: ObjectSchema): string[] {
  const leaves = Object.values(schema.fields)
    .filter((f) => f.sortable)
    .map((f) => f.path);
  return [...leaves, ...Object.keys(schema.compositeSort)];
}

/**
 * `order_by` (docs/rest.md): comma list of `field[Direction]` or bare `field` (AscNullsFirst).
 * Composite keys expand to their leaves, each with the term's direction.
 */
export function parseOrderBy(raw: unknown, schema: ObjectSchema): OrderTerm[] {
  if (raw === undefined || raw === '') return DEFAULT_ORDER.map((t) => ({ ...t }));
  const allowed = () => `sortable fields: ${sortableFields(schema).join(', ')}`;
  const bad = (msg: string) => new BadInputError(ErrorCode.INVALID_ORDER_BY, `order_by: ${msg}`);
  if (typeof raw !== 'string') {
    throw bad(`must be a comma list of field[Direction]; got ${describeInput(raw)}`);
  }
  const terms = raw.split(',').map((t) => t.trim());
  if (terms.length > MAX_ORDER_TERMS) throw bad(`at most ${MAX_ORDER_TERMS} terms are allowed; got ${terms.length}`);

  const out: OrderTerm[] = [];
  for (const term of terms) {
    const m = TERM.exec(term);
    if (!m) {
      throw bad(
        `term ${describeInput(term)} is malformed; expected field or field[Direction] ` + `with Direction one of ${DIRECTIONS.join(', ')}`,
      );
    }
    const [, field, dir] = m;
    if (dir !== undefined && !(DIRECTIONS as readonly string[]).includes(dir)) {
      throw bad(`unknown direction "${dir}" for field "${field}"; allowed: ${DIRECTIONS.join(', ')} (case-sensitive)`);
    }
    const direction = (dir ?? 'AscNullsFirst') as Direction;
    // hasOwn: a field named `constructor` or `__proto__` must not reach Object.prototype.
    let leaves = Object.hasOwn(schema.compositeSort, field) ? schema.compositeSort[field] : undefined;
    if (!leaves) {
      const def = Object.hasOwn(schema.fields, field) ? schema.fields[field] : undefined;
      if (!def) throw bad(`unknown field "${field}"; ${allowed()}`);
      if (!def.sortable) throw bad(`field "${field}" cannot be sorted; ${allowed()}`);
      leaves = [field];
    }
    for (const leaf of leaves) {
      if (out.some((t) => t.field === leaf)) {
        throw bad(`field "${field}" is sorted more than once${leaf === field ? '' : ` (through ${leaf})`}; list each field once`);
      }
      out.push({ field: leaf, direction });
    }
  }
  return out;
}
