import { BadInputError, ErrorCode } from '#errors/errors.js';
import { sqlOf, type FieldDef, type FieldType, type FilterNode, type ObjectSchema } from '../query/index.js';

/*
 * Aggregates (docs/rest.md "Aggregates"; docs/decisions/0031-relation-filters-fields-aggregates.md):
 * `group_by=stage,closeDate:month` and `aggregate=count,sum:amount.amountMicros,…` parsed against
 * the workspace's schema, and the one GROUP BY statement they make. Exact: sums and averages are
 * computed as numeric and returned as decimal strings, never through floating point.
 */

export const GRANULARITIES = ['day', 'week', 'month', 'quarter', 'year'] as const;
export type Granularity = (typeof GRANULARITIES)[number];
export const AGGREGATES = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateFn = (typeof AGGREGATES)[number];

export const MAX_GROUPS = 1000;
export const MAX_GROUP_TERMS = 3;
export const MAX_AGGREGATES = 20;

/** Field types a group may be keyed by, and those each aggregate takes. */
const GROUPABLE: readonly FieldType[] = ['enum', 'boolean', 'text', 'date', 'timestamp'];
const DATES: readonly FieldType[] = ['date', 'timestamp'];
const NUMERIC: readonly FieldType[] = ['bigint', 'number'];
const ORDERED: readonly FieldType[] = ['bigint', 'number', 'timestamp', 'date'];

export interface GroupTerm {
  field: string;
  granularity?: Granularity;
}

export interface AggregateTerm {
  fn: AggregateFn;
  field?: string;
}

export interface GroupByArgs {
  groupBy: GroupTerm[];
  aggregates: AggregateTerm[];
  filter?: FilterNode;
}

export interface AggregateGroup {
  by: Record<string, unknown>;
  count?: number;
  sum?: Record<string, string | null>;
  avg?: Record<string, string | null>;
  min?: Record<string, unknown>;
  max?: Record<string, unknown>;
}

/** A comma list (REST, MCP) or a list of strings (GraphQL), as trimmed items. */
function items(raw: unknown, name: string, code: ErrorCode): string[] {
  if (raw === undefined || raw === null || raw === '') return [];
  const list = typeof raw === 'string' ? raw.split(',') : Array.isArray(raw) && raw.every((v) => typeof v === 'string') ? raw : undefined;
  if (!list) throw new BadInputError(code, `${name} must be a comma list (or a list of strings); got ${typeof raw}`);
  return list.map((item: string) => item.trim());
}

function leaf(schema: ObjectSchema, path: string): FieldDef | undefined {
  return Object.hasOwn(schema.fields, path) ? schema.fields[path] : undefined;
}

const groupable = (schema: ObjectSchema) =>
  Object.values(schema.fields)
    .filter((f) => GROUPABLE.includes(f.type))
    .map((f) => f.path);

/** `stage,closeDate:month` → group terms; only select/enum, boolean, text and date fields group. */
export function parseGroupBy(raw: unknown, schema: ObjectSchema, name = 'group_by'): GroupTerm[] {
  const bad = (message: string) => new BadInputError(ErrorCode.INVALID_GROUP_BY, `${name}: ${message}`);
  const terms = items(raw, name, ErrorCode.INVALID_GROUP_BY).map((item): GroupTerm => {
    const [path, granularity, ...rest] = item.split(':');
    const def = leaf(schema, path);
    if (!def) throw bad(`unknown field "${path}"; fields that group: ${groupable(schema).join(', ')}`);
    if (!GROUPABLE.includes(def.type)) {
      throw bad(`"${path}" (${def.type}) cannot be grouped; fields that group: ${groupable(schema).join(', ')}`);
    }
    if (rest.length) throw bad(`"${item}" has more than one granularity`);
    if (granularity !== undefined) {
      if (!DATES.includes(def.type)) throw bad(`"${path}" is not a date; only dates take a granularity (${path} alone)`);
      if (!(GRANULARITIES as readonly string[]).includes(granularity)) {
        throw bad(`unknown granularity "${granularity}" for ${path}; one of ${GRANULARITIES.join(', ')}`);
      }
      return { field: path, granularity: granularity as Granularity };
    }
    return { field: path, ...(def.type === 'timestamp' ? { granularity: 'day' as const } : {}) };
  });
  if (terms.length > MAX_GROUP_TERMS) throw bad(`at most ${MAX_GROUP_TERMS} fields; got ${terms.length}`);
  const seen = new Set<string>();
  for (const term of terms) {
    if (seen.has(term.field)) throw bad(`"${term.field}" is grouped by more than once`);
    seen.add(term.field);
  }
  return terms;
}

/** `count,sum:amount.amountMicros,min:closeDate` → aggregate terms (default: count). */
export function parseAggregates(raw: unknown, schema: ObjectSchema, name = 'aggregate'): AggregateTerm[] {
  const bad = (message: string) => new BadInputError(ErrorCode.INVALID_AGGREGATE, `${name}: ${message}`);
  const list = items(raw, name, ErrorCode.INVALID_AGGREGATE);
  if (!list.length) return [{ fn: 'count' }];
  if (list.length > MAX_AGGREGATES) throw bad(`at most ${MAX_AGGREGATES} aggregates; got ${list.length}`);
  const fieldsOf = (types: readonly FieldType[]) =>
    Object.values(schema.fields)
      .filter((f) => types.includes(f.type))
      .map((f) => f.path)
      .join(', ') || 'none';
  const terms = list.map((item): AggregateTerm => {
    const colon = item.indexOf(':');
    const fn = colon < 0 ? item : item.slice(0, colon);
    const path = colon < 0 ? undefined : item.slice(colon + 1);
    if (!(AGGREGATES as readonly string[]).includes(fn)) throw bad(`unknown aggregate "${fn}"; one of ${AGGREGATES.join(', ')}`);
    if (fn === 'count') {
      if (path !== undefined) throw bad('count takes no field (it counts the records of each group)');
      return { fn: 'count' };
    }
    const types = fn === 'sum' || fn === 'avg' ? NUMERIC : ORDERED;
    if (!path) throw bad(`${fn} needs a field, as in ${fn}:<field>; fields: ${fieldsOf(types)}`);
    const def = leaf(schema, path);
    if (!def) throw bad(`unknown field "${path}" in ${item}; fields ${fn} takes: ${fieldsOf(types)}`);
    if (!types.includes(def.type)) throw bad(`${fn} does not take ${def.type} field ${path}; fields ${fn} takes: ${fieldsOf(types)}`);
    return { fn: fn as AggregateFn, field: path };
  });
  const seen = new Set(terms.map((t) => `${t.fn}:${t.field ?? ''}`));
  if (seen.size !== terms.length) throw bad('an aggregate is asked for twice');
  return terms;
}

/** The SQL of one group key over alias `t`: the value, or the UTC start of its date bucket as YYYY-MM-DD. */
function groupSql(term: GroupTerm, def: FieldDef): string {
  const col = sqlOf(def);
  if (!term.granularity) return col;
  const at =
    def.type === 'timestamp'
      ? `date_trunc('${term.granularity}', ${col} AT TIME ZONE 'UTC')`
      : `date_trunc('${term.granularity}', (${col})::date)`;
  return `to_char(${at}, 'YYYY-MM-DD')`;
}

function aggregateSql(term: AggregateTerm, def: FieldDef | undefined): string {
  if (term.fn === 'count') return 'count(*)::bigint';
  const col = sqlOf(def!);
  switch (term.fn) {
    case 'sum':
      return `(sum((${col})::numeric))::text`;
    case 'avg':
      return `(trim_scale(round(avg((${col})::numeric), 6)))::text`;
    default:
      // bigint as text so the driver hands it over exactly; others as their type.
      return def!.type === 'bigint' ? `(${term.fn}(${col}))::text` : `${term.fn}(${col})`;
  }
}

/** The statement of a group-by over `table` and `scope` (the WHERE of a list, parameters already bound; libs/records/src/query/scope.ts). */
export function groupByStatement(args: GroupByArgs, schema: ObjectSchema, table: string, scope: string): string {
  const keys = args.groupBy.map((term, i) => `${groupSql(term, schema.fields[term.field])} AS g${i}`);
  const aggs = args.aggregates.map((term, i) => `${aggregateSql(term, term.field ? schema.fields[term.field] : undefined)} AS a${i}`);
  const positions = args.groupBy.map((_, i) => String(i + 1));
  return `SELECT ${[...keys, ...aggs].join(', ')} FROM ${table} t WHERE ${scope}${
    positions.length ? ` GROUP BY ${positions.join(', ')} ORDER BY ${positions.map((p) => `${p} ASC NULLS LAST`).join(', ')}` : ''
  } LIMIT ${MAX_GROUPS + 1}`;
}

/** Rows of the statement → groups in the documented shape; more than MAX_GROUPS is a 400. */
export function toGroups(rows: Record<string, unknown>[], args: GroupByArgs, schema: ObjectSchema): AggregateGroup[] {
  if (rows.length > MAX_GROUPS) {
    throw new BadInputError(
      ErrorCode.TOO_MANY_GROUPS,
      `group_by makes more than ${MAX_GROUPS} groups; narrow the filter, group by fewer fields or use a coarser granularity`,
    );
  }
  return rows.map((row) => {
    const group: AggregateGroup = { by: Object.fromEntries(args.groupBy.map((term, i) => [term.field, row[`g${i}`] ?? null])) };
    args.aggregates.forEach((term, i) => {
      const value = row[`a${i}`] ?? null;
      if (term.fn === 'count') {
        group.count = Number(value);
        return;
      }
      const def = schema.fields[term.field!];
      const out = (group[term.fn] ??= {}) as Record<string, unknown>;
      out[term.field!] = (term.fn === 'min' || term.fn === 'max') && def.type === 'bigint' && value !== null ? Number(value) : value;
    });
    return group;
  });
}
