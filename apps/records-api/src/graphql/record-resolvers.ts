import type { GraphQLResolveInfo } from 'graphql';
import type { Principal } from '#auth/principal.js';
import type { AnyRecord } from '#records/service/object-definitions.js';
import type { ObjectService } from '#records/service/object-service.js';
import { parseAggregates, parseGroupBy, type AggregateGroup } from '#records/service/group-by.js';
import type { Via } from '#records/service/records.service.js';
import { embeddedConnection, toConnection, type Connection } from './connections.js';
import type { GraphqlContext } from './graphql-context.js';
import { keyedCreate } from './graphql-idempotency.js';
import { toFilterNode, toListArgs, type GraphqlListInput } from './list-args.js';
import { onlyId, plain, selectedFields, selectedFieldsAt } from './resolver-utils.js';

const LIST_ARGS = ['first', 'after', 'last', 'before', 'filter', 'orderBy'] as const;

/*
 * What an object's root fields do (docs/graphql.md), once for every object: the standard
 * objects' Nest resolvers (object.resolver.ts) and a custom object's generated fields
 * (custom-object-schema.ts) call these with the object's service, so both answer alike.
 */

const pairs = (values: Record<string, unknown> | undefined) =>
  Object.entries(values ?? {}).map(([field, value]) => ({ field, value: value === null || value === undefined ? null : String(value) }));

/** REST's keyed groups as GraphQL lists of {field, value}. */
function graphqlGroups(groups: AggregateGroup[]) {
  return {
    groups: groups.map((g) => ({
      by: pairs(g.by),
      count: g.count ?? null,
      sum: pairs(g.sum),
      avg: pairs(g.avg),
      min: pairs(g.min),
      max: pairs(g.max),
    })),
  };
}

/** `<plural>(first, after, last, before, filter, orderBy)`. */
export async function listRecords(
  service: ObjectService,
  principal: Principal,
  args: GraphqlListInput,
  info: GraphQLResolveInfo,
): Promise<Connection<AnyRecord>> {
  const withCount = selectedFields(info).has('totalCount');
  // Only the columns of the selected record fields are read (and those the order needs).
  const fields = selectedFieldsAt(info, ['edges', 'node']);
  return toConnection(await service.list(principal, { ...toListArgs(args, await service.schema(principal), withCount), fields }));
}

/** `<plural>GroupBy(groupBy, aggregate, filter)`. */
export async function groupRecords(
  service: ObjectService,
  principal: Principal,
  groupBy: unknown,
  aggregate: unknown,
  filter: object | null,
) {
  const groups = await service.groupBy(principal, (schema) => ({
    groupBy: parseGroupBy(groupBy, schema, 'groupBy'),
    aggregates: parseAggregates(aggregate, schema),
    filter: toFilterNode(filter, schema),
  }));
  return graphqlGroups(groups);
}

/** `<singular>(filter)`: the first match, or null. */
export async function firstRecord(service: ObjectService, principal: Principal, filter: object): Promise<AnyRecord | null> {
  const page = await service.list(principal, toListArgs({ filter, first: 1 }, await service.schema(principal), false));
  return page.records[0] ?? null;
}

/** What the two create mutations get: the object's service, the caller, and their arguments, context and info. */
type CreateArgs = [
  service: ObjectService,
  principal: Principal,
  data: unknown,
  upsert: boolean | null,
  context: GraphqlContext,
  info: GraphQLResolveInfo,
];

/** `create<Singular>(data, upsert)`. */
export async function createRecord(...[service, principal, data, upsert, context, info]: CreateArgs): Promise<AnyRecord> {
  const record = plain(data);
  const keyed = keyedCreate(context, String(info.path.key), principal, [record], Boolean(upsert));
  if (!upsert) return service.create(keyed, record);
  return (await service.upsertMany(keyed, [record], null)).records[0];
}

/** `create<Plural>(data, upsert)`: all or none. */
export async function createRecords(...[service, principal, data, upsert, context, info]: CreateArgs): Promise<AnyRecord[]> {
  const records = plain(data);
  const keyed = Array.isArray(records) ? keyedCreate(context, String(info.path.key), principal, records, Boolean(upsert)) : principal;
  if (!upsert) return service.createMany(keyed, records, 'data');
  return (await service.upsertMany(keyed, records, 'data')).records;
}

/** `update<Singular>(id, data)`: a partial update. */
export function updateRecord(service: ObjectService, principal: Principal, id: string, data: unknown): Promise<AnyRecord> {
  return service.update(principal, id, plain(data));
}

/** `delete<Singular>(id)`: the soft-deleted record, read back unless only its id is selected. */
export async function deleteRecord(service: ObjectService, principal: Principal, id: string, info: GraphQLResolveInfo) {
  const deleted = await service.delete(principal, id);
  if (onlyId(info)) return deleted;
  const page = await service.list(
    principal,
    toListArgs({ filter: { id: { eq: id }, deletedAt: { is: 'NOT_NULL' } }, first: 1 }, await service.schema(principal), false),
  );
  return page.records[0] ?? deleted;
}

/** `restore<Singular>(id)`. */
export function restoreRecord(service: ObjectService, principal: Principal, id: string): Promise<AnyRecord> {
  return service.restore(principal, id);
}

/** A record's linked record (`Person.company`, a custom relation's `Ticket.company`): one batched read per relation and request. */
export function linkedRecord(target: string, id: unknown, context: GraphqlContext): Promise<AnyRecord | null> | null {
  return typeof id === 'string' ? context.loaders.byId(target).load(id) : null;
}

/**
 * A record's inverse list (`Company.people`, a custom relation's `Company.tickets`): the 60
 * oldest by default; with list arguments (`people(first: 3, filter: …)`) a page per parent.
 * Batched per relation and arguments across the request's parents (loaders.ts).
 */
export async function inverseConnection(
  source: string,
  via: Via,
  record: AnyRecord,
  args: GraphqlListInput,
  context: GraphqlContext,
  info: GraphQLResolveInfo,
): Promise<Connection<AnyRecord>> {
  if (!LIST_ARGS.some((name) => args[name] != null)) {
    const children = await context.loaders.children(source, via).load(record.id);
    return embeddedConnection(children as { records: (AnyRecord & { createdAt: string })[]; total: number });
  }
  const withCount = selectedFields(info).has('totalCount');
  const listArgs = toListArgs(args, (await context.records.definitionFor(source, context.principal)).schema, withCount);
  const key = `${withCount}:${JSON.stringify(args)}`;
  return toConnection(await context.loaders.pages(source, via, key, listArgs).load(record.id));
}
