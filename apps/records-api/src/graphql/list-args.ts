import { BadInputError, ErrorCode } from '#errors/errors.js';
import {
  DEFAULT_ORDER,
  DIRECTIONS,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LENGTH,
  MAX_ORDER_TERMS,
  parseLimit,
  sortableFields,
  validateCondition,
  type Direction,
  type FilterNode,
  type ObjectSchema,
  type OrderTerm,
} from '#records/query/index.js';
import type { ListArgs } from '#records/service/records.service.js';

/*
 * GraphQL list arguments → the shared ListArgs, checked by the same rules (and with the
 * same messages) as REST `limit`, `order_by` and `filter`. The GraphQL schema already
 * limits field and operator names; values, nesting and sizes are checked here.
 */

/** Input objects after GraphQL coercion: absent fields are missing, explicit nulls are null. */
type Input = { readonly [key: string]: unknown };

export interface GraphqlListInput {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
  filter?: object | null;
  orderBy?: readonly object[] | object | null;
}

const GROUPS = ['and', 'or', 'not'];

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/**
 * Relay pagination on keyset cursors: `first` (+ `after`) reads forward, `last` + `before`
 * backward. `last` without `before` is refused rather than read as "the last page":
 * cursors belong to one order, and a last page would have to be read in the reverse
 * order and hand out cursors the forward order does not accept. To read from the end,
 * reverse `orderBy` and use `first`.
 */
export function toListArgs(input: GraphqlListInput, schema: ObjectSchema, withCount: boolean): ListArgs {
  const { first, after, last, before } = input;
  const bad = (message: string) => new BadInputError(ErrorCode.INVALID_CURSOR, message);
  if (present(first) && present(last)) throw new BadInputError(ErrorCode.INVALID_LIMIT, 'first and last cannot be used together');
  if (present(last) && !before) {
    throw bad('last reads backward from before: pass a cursor as before, or reverse orderBy and use first to read from the end');
  }
  if (present(first) && before) throw bad('first reads forward and cannot be used with before; use last with before');
  if (present(last) && after) throw bad('last reads backward and cannot be used with after; use first with after');
  return {
    limit: present(last) ? parseLimit(last, 'last') : parseLimit(first ?? undefined, 'first'),
    orderBy: toOrderTerms(input.orderBy, schema),
    filter: toFilterNode(input.filter, schema),
    startingAfter: after || undefined,
    endingBefore: before || undefined,
    cursorParams: { after: 'after', before: 'before' },
    withCount,
  };
}

/**
 * `[{createdAt: DescNullsLast}, {name: {lastName: AscNullsFirst}}]`: one field per item, so
 * the priority is the list order (GraphQL does not keep the key order inside an object).
 */
export function toOrderTerms(orderBy: GraphqlListInput['orderBy'], schema: ObjectSchema): OrderTerm[] {
  const items = orderBy == null ? [] : Array.isArray(orderBy) ? (orderBy as Input[]) : [orderBy as Input];
  const bad = (message: string) => new BadInputError(ErrorCode.INVALID_ORDER_BY, `orderBy: ${message}`);
  if (items.length === 0) return DEFAULT_ORDER.map((term) => ({ ...term }));
  if (items.length > MAX_ORDER_TERMS) throw bad(`at most ${MAX_ORDER_TERMS} items are allowed; got ${items.length}`);

  const terms: OrderTerm[] = [];
  items.forEach((item, i) => {
    let path = '';
    let value: unknown = item;
    do {
      const keys = value !== null && typeof value === 'object' ? Object.keys(value).filter((key) => present((value as Input)[key])) : [];
      if (keys.length !== 1) {
        throw bad(
          `item ${i}${path ? ` (${path})` : ''} must name exactly one field, as in [{createdAt: DescNullsLast}]; ` +
            `list several fields as several items, in priority order`,
        );
      }
      path = path ? `${path}.${keys[0]}` : keys[0];
      value = (value as Input)[keys[0]];
    } while (typeof value === 'object');
    const def = Object.hasOwn(schema.fields, path) ? schema.fields[path] : undefined;
    if (!def?.sortable) throw bad(`"${path}" cannot be sorted; sortable fields: ${sortableFields(schema).join(', ')}`);
    if (!(DIRECTIONS as readonly unknown[]).includes(value))
      throw bad(`unknown direction for "${path}"; allowed: ${DIRECTIONS.join(', ')}`);
    if (terms.some((t) => t.field === path)) throw bad(`"${path}" is sorted more than once; list each field once`);
    terms.push({ field: path, direction: value as Direction });
  });
  return terms;
}

/**
 * `{name: {ilike: "%ac%"}, domainName: {primaryLinkUrl: {eq: "…"}}, or: [..], not: {..}}`.
 * Several fields, or several operators on one field, are ANDed. An empty filter is no filter;
 * an empty `and`/`or` list or an empty object inside a group is refused as a likely mistake.
 */
export function toFilterNode(filter: object | null | undefined, rootSchema: ObjectSchema): FilterNode | undefined {
  if (filter == null) return undefined;
  const bad = (message: string) => new BadInputError(ErrorCode.INVALID_FILTER, `filter: ${message}`);
  let conditions = 0;
  // REST bounds its whole filter text; here the values are what can be long (an `ilike` of 100 000 characters held a backend for 41 s).
  let characters = 0;

  const fieldConditions = (input: Input, prefix: string, where: string, out: FilterNode[], schema: ObjectSchema, hop: string): void => {
    for (const [key, value] of Object.entries(input)) {
      if (value === undefined || (!prefix && GROUPS.includes(key))) continue;
      const path = prefix ? `${prefix}.${key}` : key;
      if (value === null) continue; // `{name: null}`: no condition on that field
      if (typeof value !== 'object' || Array.isArray(value)) throw bad(`${path} takes an object of operators, as in {eq: "…"}`);
      if (!prefix && schema.relations && Object.hasOwn(schema.relations, key)) {
        // `{company: {name: {ilike: …}}}`: one hop across a relation (docs/graphql.md).
        if (hop) throw bad(`${hop}.${key} crosses two relations; a filter crosses one relation only`);
        const child = node(value as Input, at(where, key), 1, schema.relations[key].target, key);
        if (child) out.push({ kind: 'relation', relation: key, child });
        continue;
      }
      if (Object.hasOwn(schema.fields, path)) {
        for (const [op, operand] of Object.entries(value as Input)) {
          if (operand === undefined) continue;
          if (operand === null) throw bad(`${path}.${op}${where ? ` in ${where}` : ''} is null; to match a missing value use {is: NULL}`);
          if (++conditions > MAX_FILTER_CONDITIONS)
            throw bad(`more than ${MAX_FILTER_CONDITIONS} conditions; at most ${MAX_FILTER_CONDITIONS} are allowed`);
          // BigFloat and Float operands arrive as numbers, Boolean ones as booleans; the shared rules read every value as text.
          const text =
            typeof operand === 'number' || typeof operand === 'boolean'
              ? String(operand)
              : Array.isArray(operand)
                ? operand.map((v) => (typeof v === 'number' ? String(v) : v))
                : operand;
          for (const v of Array.isArray(text) ? text : [text]) characters += typeof v === 'string' ? v.length : 0;
          if (characters > MAX_FILTER_LENGTH)
            throw bad(`its values hold more than ${MAX_FILTER_LENGTH} characters in all; at most ${MAX_FILTER_LENGTH} are allowed`);
          out.push(validateCondition(path, op, text, schema, where ? ` in ${where}` : ''));
        }
      } else if (Object.keys(schema.fields).some((p) => p.startsWith(`${path}.`))) {
        fieldConditions(value as Input, path, where, out, schema, hop);
      } else {
        throw bad(`unknown field "${path}"; allowed fields: ${Object.keys(schema.fields).join(', ')}`);
      }
    }
  };

  const at = (where: string, key: string) => (where ? `${where}.${key}` : key);

  const node = (input: Input, where: string, depth: number, schema: ObjectSchema, hop: string): FilterNode | undefined => {
    if (depth > MAX_FILTER_DEPTH) throw bad(`${where} nests deeper than ${MAX_FILTER_DEPTH} levels of and/or/not, the most allowed`);
    const children: FilterNode[] = [];
    fieldConditions(input, '', where, children, schema, hop);
    for (const kind of ['and', 'or'] as const) {
      const list = input[kind];
      if (list == null) continue;
      const items = Array.isArray(list) ? (list as Input[]) : [list as Input];
      if (items.length === 0) throw bad(`${at(where, kind)} is empty; put at least one condition inside`);
      const nodes = items.map((item, i) => required(item, `${at(where, kind)}[${i}]`, depth + 1, schema, hop));
      children.push(nodes.length === 1 ? nodes[0] : { kind, children: nodes });
    }
    if (input.not != null) children.push({ kind: 'not', child: required(input.not as Input, at(where, 'not'), depth + 1, schema, hop) });
    return children.length <= 1 ? children[0] : { kind: 'and', children };
  };

  const required = (input: Input | null, where: string, depth: number, schema: ObjectSchema, hop: string): FilterNode => {
    const found = input == null ? undefined : node(input, where, depth, schema, hop);
    if (!found) throw bad(`${where} holds no condition; remove it or add one`);
    return found;
  };

  return node(filter as Input, '', 0, rootSchema, '');
}
