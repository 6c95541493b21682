import type { CursorPayload, FieldDef, FieldType, FilterNode, ObjectSchema, OrderTerm } from './types.js';
import type { RecordScope } from './scope.js';

/**
 * SQL fragments over the table alias `t`. Values never enter the SQL text: each is pushed
 * onto the caller's `params` array and referenced as `$n` with an explicit cast.
 */

const CASTS: Record<FieldType, string> = {
  uuid: '::uuid',
  text: '::text',
  timestamp: '::timestamptz',
  textArray: '::jsonb',
  bigint: '::bigint',
  enum: '::text',
  number: '::float8',
  boolean: '::boolean',
  date: '::text',
};

/** The SQL of a leaf over alias `t` (or `alias`): its column, or its expression (custom fields, written over `t`). */
export function sqlOf(def: FieldDef, alias = 't'): string {
  if (alias === 't') return def.sql ?? `t.${def.column}`;
  return def.sql ? def.sql.replace(/\bt\./g, `${alias}.`) : `${alias}.${def.column}`;
}

export function castFor(type: FieldType): string {
  return CASTS[type];
}

function fieldDef(schema: ObjectSchema, path: string): FieldDef {
  if (!Object.hasOwn(schema.fields, path)) throw new Error(`${schema.name} has no field ${path}`);
  return schema.fields[path];
}

function bind(params: unknown[], value: unknown, cast: string): string {
  params.push(value);
  return `$${params.length}${cast}`;
}

/** `%`, `_` and `\` (the default LIKE escape) match themselves in startsWith/endsWith. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, '\\$&');
}

const COMPARISONS = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A filter as SQL over alias `t` (`alias` inside a relation's EXISTS). A relation filter
 * reads the target's records through `scope` (the filtered records' scope, scope.ts).
 */
export function compileFilter(node: FilterNode, schema: ObjectSchema, params: unknown[], alias = 't', scope?: RecordScope): string {
  switch (node.kind) {
    case 'and':
    case 'or':
      if (node.children.length === 0) return node.kind === 'and' ? 'TRUE' : 'FALSE';
      return `(${node.children.map((c) => compileFilter(c, schema, params, alias, scope)).join(` ${node.kind.toUpperCase()} `)})`;
    case 'not':
      return `NOT (${compileFilter(node.child, schema, params, alias, scope)})`;
    case 'cond':
      return compileCondition(node, schema, params, alias);
    case 'relation':
      return compileRelation(node, schema, params, alias, scope);
  }
}

/**
 * One hop across a relation as a semi-join the planner turns into an index lookup
 * (docs/decisions/0031-relation-filters-fields-aggregates.md): a live target record of the
 * same workspace, linked by the foreign key, that matches the condition.
 */
function compileRelation(
  node: Extract<FilterNode, { kind: 'relation' }>,
  schema: ObjectSchema,
  params: unknown[],
  alias: string,
  scope: RecordScope | undefined,
): string {
  const relation = schema.relations?.[node.relation];
  if (!relation || !Object.hasOwn(schema.relations!, node.relation)) throw new Error(`${schema.name} has no relation ${node.relation}`);
  if (alias !== 't') throw new Error('a relation filter crosses one relation only');
  if (!scope) throw new Error("a relation filter is compiled within its records' scope");
  const target = relation.target;
  // The target's records of the filtered record's own workspace: co-located, as a Citus join needs (docs/scaling.md).
  const records = scope.of({ schema: target, objectId: relation.objectId });
  const condition = compileFilter(node.child, target, params, 'r');
  if (relation.fieldId) {
    // A custom relation's links (docs/decisions/0066-relations.md), read from either end by record_links' keys.
    if (!UUID.test(relation.fieldId)) throw new Error(`not a field id: ${relation.fieldId}`);
    const [here, there] = relation.kind === 'toOne' ? ['source_id', 'target_id'] : ['target_id', 'source_id'];
    return `EXISTS (SELECT 1 FROM record_links l JOIN ${records.table} r ON r.workspace_id = l.workspace_id AND r.id = l.${there} WHERE l.workspace_id = t.workspace_id AND l.field_id = '${relation.fieldId}' AND l.${here} = t.id AND ${records.where('r.', 'live', 't.workspace_id')} AND ${condition})`;
  }
  const link = relation.kind === 'toOne' ? `r.id = t.${relation.column}` : `r.${relation.column} = t.id`;
  return `EXISTS (SELECT 1 FROM ${records.table} r WHERE ${records.where('r.', 'live', 't.workspace_id')} AND ${link} AND ${condition})`;
}

function compileCondition(node: Extract<FilterNode, { kind: 'cond' }>, schema: ObjectSchema, params: unknown[], alias: string): string {
  const def = fieldDef(schema, node.field);
  const col = sqlOf(def, alias);
  const cast = castFor(def.type);
  const { op, value } = node;
  const scalar = (): string => {
    if (typeof value !== 'string') throw new Error(`${node.field}[${op}] needs a single value`);
    return value;
  };
  const list = (): string[] => {
    if (!Array.isArray(value)) throw new Error(`${node.field}[${op}] needs an array`);
    return value;
  };

  if (def.type === 'textArray') {
    // Stored as a jsonb array of strings; an empty array counts as no value.
    if (op === 'containsAny') return `${col} ?| ${bind(params, list(), '::text[]')}`;
    if (op === 'is') {
      return value === 'NULL' ? `(${col} IS NULL OR ${col} = '[]'::jsonb)` : `(${col} IS NOT NULL AND ${col} <> '[]'::jsonb)`;
    }
    throw new Error(`${op} is not supported on ${node.field}`);
  }
  switch (op) {
    case 'eq':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return `${col} ${COMPARISONS[op]} ${bind(params, scalar(), cast)}`;
    case 'neq':
      // A missing value is "not equal" too, as a client would expect.
      return `(${col} <> ${bind(params, scalar(), cast)} OR ${col} IS NULL)`;
    case 'in':
      return `${col} = ANY(${bind(params, list(), `${cast}[]`)})`;
    case 'is':
      return `${col} IS ${value === 'NULL' ? '' : 'NOT '}NULL`;
    case 'startsWith':
      return `${col} LIKE ${bind(params, `${escapeLike(scalar())}%`, cast)}`;
    case 'endsWith':
      return `${col} LIKE ${bind(params, `%${escapeLike(scalar())}`, cast)}`;
    case 'like':
      return `${col} LIKE ${bind(params, scalar(), cast)}`;
    case 'ilike':
      return `${col} ILIKE ${bind(params, scalar(), cast)}`;
    case 'containsAny':
      throw new Error(`containsAny is not supported on ${node.field}`);
  }
}

/** `id` ends every order (docs/rest.md) so positions are unique; it takes the last term's Asc/Desc. */
export function orderWithTieBreaker(order: OrderTerm[]): OrderTerm[] {
  if (order.some((t) => t.field === 'id')) return [...order];
  const desc = order.at(-1)?.direction.startsWith('Desc') ?? false;
  return [...order, { field: 'id', direction: desc ? 'DescNullsLast' : 'AscNullsLast' }];
}

interface Placement {
  asc: boolean;
  nullsFirst: boolean;
}

function placement(term: OrderTerm, reverse: boolean): Placement {
  return {
    asc: term.direction.startsWith('Asc') !== reverse,
    nullsFirst: term.direction.endsWith('NullsFirst') !== reverse,
  };
}

/**
 * ORDER BY list, e.g. `t.created_at ASC NULLS FIRST, t.id ASC`. `id` never is NULL, so it
 * gets no NULLS clause: `id ASC`/`id DESC` then match the (…, id DESC) indexes either way.
 * `reverse` reads the same order backwards (ending_before pages).
 */
export function compileOrderBy(order: OrderTerm[], schema: ObjectSchema, reverse = false): string {
  return orderWithTieBreaker(order)
    .map((term) => {
      const def = fieldDef(schema, term.field);
      const { asc, nullsFirst } = placement(term, reverse);
      const nulls = term.field === 'id' ? '' : nullsFirst ? ' NULLS FIRST' : ' NULLS LAST';
      return `${sqlOf(def)} ${asc ? 'ASC' : 'DESC'}${nulls}`;
    })
    .join(', ');
}

/**
 * Rows strictly after (`side` 'after') or before ('before') the cursor position in `order`;
 * `inclusive` also keeps the position itself. cursor.values align with the non-id terms.
 * The cursor's values are known here, so NULL handling is decided now rather than in SQL
 * (`col IS NULL` / `col = $n` instead of IS NOT DISTINCT FROM, which no index serves).
 */
export function compileKeyset(
  order: OrderTerm[],
  schema: ObjectSchema,
  cursor: CursorPayload,
  params: unknown[],
  side: 'after' | 'before',
  inclusive = false,
): string {
  let next = 0;
  const terms = orderWithTieBreaker(order).map((term) => {
    const def = fieldDef(schema, term.field);
    const value = term.field === 'id' ? cursor.id : cursor.values[next++];
    let placeholder: string | undefined;
    return {
      def,
      col: sqlOf(def),
      value: value ?? null,
      // 'before' is 'after' in the reversed order.
      ...placement(term, side === 'before'),
      ph: () => (placeholder ??= bind(params, value, castFor(def.type))),
    };
  });
  if (next !== cursor.values.length) {
    throw new Error(`cursor has ${cursor.values.length} values for ${next} order terms`);
  }

  // Single row comparison when NULLs cannot occur and all terms run one way: a btree range.
  if (terms.every((t) => !t.def.nullable && t.value !== null && t.asc === terms[0].asc)) {
    const op = (terms[0].asc ? '>' : '<') + (inclusive ? '=' : '');
    return `(${terms.map((t) => t.col).join(', ')}) ${op} (${terms.map((t) => t.ph()).join(', ')})`;
  }

  // OR-expansion: equal on every earlier term, strictly beyond on term i.
  const beyond = (t: (typeof terms)[number]): string | undefined => {
    if (t.value === null) return t.nullsFirst ? `${t.col} IS NOT NULL` : undefined; // NULLS LAST: nothing beyond
    const cmp = `${t.col} ${t.asc ? '>' : '<'} ${t.ph()}`;
    return t.def.nullable && !t.nullsFirst ? `(${cmp} OR ${t.col} IS NULL)` : cmp;
  };
  const all = (parts: string[]) => (parts.length === 1 ? parts[0] : `(${parts.join(' AND ')})`);
  const disjuncts: string[] = [];
  const equal: string[] = [];
  for (const t of terms) {
    const b = beyond(t);
    if (b !== undefined) disjuncts.push(all([...equal, b]));
    equal.push(t.value === null ? `${t.col} IS NULL` : `${t.col} = ${t.ph()}`);
  }
  if (inclusive) disjuncts.push(all(equal));
  // The id term always yields a disjunct, so there is at least one.
  const expansion = `(${disjuncts.join(' OR ')})`;
  // A bound on the leading column lets an index on it narrow the scan.
  const lead = terms[0];
  if (disjuncts.length > 1 && !lead.def.nullable && lead.value !== null) {
    return `(${lead.col} ${lead.asc ? '>=' : '<='} ${lead.ph()} AND ${expansion})`;
  }
  return expansion;
}
