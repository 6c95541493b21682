import type { Type } from '@nestjs/common';
import { Args, Context, Info, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { CurrentPrincipal } from '#auth/auth.guard.js';
import type { Principal } from '#auth/principal.js';
import { OBJECTS, type ObjectDeclaration } from '#records/objects/index.js';
import { embeddedConnection, toConnection } from './connections.js';
import type { GraphqlContext } from './graphql-context.js';
import { toFilterNode, toListArgs, type GraphqlListInput } from './list-args.js';
import { batchCost, connectionCost, singleRecordCost } from './query-limits.js';
import { onlyId, plain, selectedFields, selectedFieldsAt } from './resolver-utils.js';
import { UUIDScalar } from './types/scalars.js';
import { EMBEDDED_PER_RECORD } from '../records/constants.js';
import { method, serviceHolder } from '../records/decorate.js';
import { GRAPHQL_TYPES } from './graphql-types.js';
import { keyedCreate } from './graphql-idempotency.js';
import type { AnyRecord } from '../records/object-definitions.js';
import { serviceFor, type ObjectService } from '../records/object-service.js';
import { inversesOf } from '../records/records.service.js';
import { parseAggregates, parseGroupBy, type AggregateGroup } from '../records/group-by.js';
import { GroupByResultType } from './group-by.types.js';

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

type Self = { service: ObjectService };

const LIST_ARGS = ['first', 'after', 'last', 'before', 'filter', 'orderBy'] as const;

/**
 * The GraphQL fields of one object (docs/graphql.md; docs/architecture.md), a thin transport over RecordsService:
 * `<plural>`, `<singular>`, the four mutations, and the relation fields (`Person.company`,
 * `Company.people`, …) batched through the request's DataLoaders.
 */
/** `upsert: true` on creates (docs/graphql.md, "Upsert"): match by id, then by the object's unique fields; update or create. */
const UPSERT_ARG = {
  type: () => Boolean,
  nullable: true,
  defaultValue: false,
  description:
    'true: a record matching a live one by id, then by a unique field, updates it with the fields given; otherwise it is created.',
};

export function objectResolver(object: ObjectDeclaration): Type<unknown> {
  const { plural, singular, typeName, pluralType } = object;
  const types = GRAPHQL_TYPES.get(plural)!;
  const cls = serviceHolder<ObjectService>(`${pluralType}Resolver`, serviceFor(plural));
  const P = CurrentPrincipal();

  method(
    cls,
    'list',
    async function (this: Self, principal: Principal, args: Record<string, unknown>, info: GraphQLResolveInfo) {
      const withCount = selectedFields(info).has('totalCount');
      // Only the columns of the selected record fields are read (and those the order needs).
      const fields = selectedFieldsAt(info, ['edges', 'node']);
      return toConnection(
        await this.service.list(principal, { ...toListArgs(args, await this.service.schema(principal), withCount), fields }),
      );
    },
    [Query(() => types.connection, { name: plural, complexity: connectionCost })],
    [P, Args(), Info()],
    [Object, types.args, Object],
  );

  method(
    cls,
    'groupBy',
    async function (this: Self, principal: Principal, groupBy: unknown, aggregate: unknown, filter: object | null) {
      const groups = await this.service.groupBy(principal, (schema) => ({
        groupBy: parseGroupBy(groupBy, schema, 'groupBy'),
        aggregates: parseAggregates(aggregate, schema),
        filter: toFilterNode(filter, schema),
      }));
      return graphqlGroups(groups);
    },
    [
      Query(() => GroupByResultType, {
        name: `${plural}GroupBy`,
        description:
          `Groups the live ${plural} the filter keeps and aggregates each group, as GET /rest/${plural}/groupBy: ` +
          'groupBy ["stage", "closeDate:month"], aggregate ["count", "sum:amount.amountMicros", "min:closeDate"].',
      }),
    ],
    [
      P,
      Args('groupBy', { type: () => [String], nullable: true }),
      Args('aggregate', { type: () => [String], nullable: true }),
      Args('filter', { type: () => types.filter, nullable: true }),
    ],
  );

  method(
    cls,
    'one',
    async function (this: Self, principal: Principal, filter: object) {
      const page = await this.service.list(principal, toListArgs({ filter, first: 1 }, await this.service.schema(principal), false));
      return page.records[0] ?? null;
    },
    [
      Query(() => types.object, {
        name: singular,
        nullable: true,
        complexity: singleRecordCost,
        description: `The first ${singular} matching the filter, or null.`,
      }),
    ],
    [P, Args('filter', { type: () => types.filter })],
  );

  /** The arguments of the two create mutations, as their parameter decorators give them. */
  type CreateArgs = [principal: Principal, data: unknown, upsert: boolean | null, context: GraphqlContext, info: GraphQLResolveInfo];

  method(
    cls,
    'create',
    async function (this: Self, ...[principal, data, upsert, context, info]: CreateArgs) {
      const record = plain(data);
      const keyed = keyedCreate(context, String(info.path.key), principal, [record], Boolean(upsert));
      if (!upsert) return this.service.create(keyed, record);
      return (await this.service.upsertMany(keyed, [record], null)).records[0];
    },
    [Mutation(() => types.object, { name: `create${typeName}`, complexity: singleRecordCost })],
    [P, Args('data', { type: () => types.create }), Args('upsert', UPSERT_ARG), Context(), Info()],
  );

  method(
    cls,
    'createMany',
    async function (this: Self, ...[principal, data, upsert, context, info]: CreateArgs) {
      const records = plain(data);
      const keyed = Array.isArray(records) ? keyedCreate(context, String(info.path.key), principal, records, Boolean(upsert)) : principal;
      if (!upsert) return this.service.createMany(keyed, records, 'data');
      return (await this.service.upsertMany(keyed, records, 'data')).records;
    },
    [
      Mutation(() => [types.object], {
        name: `create${pluralType}`,
        complexity: batchCost,
        description: `All or none; 1 to 60 ${plural}.`,
      }),
    ],
    [P, Args('data', { type: () => [types.create] }), Args('upsert', UPSERT_ARG), Context(), Info()],
  );

  method(
    cls,
    'update',
    function (this: Self, principal: Principal, id: string, data: unknown) {
      return this.service.update(principal, id, plain(data));
    },
    [Mutation(() => types.object, { name: `update${typeName}`, complexity: singleRecordCost })],
    [P, Args('id', { type: () => UUIDScalar }), Args('data', { type: () => types.update })],
  );

  method(
    cls,
    'remove',
    async function (this: Self, principal: Principal, id: string, info: GraphQLResolveInfo) {
      const deleted = await this.service.delete(principal, id);
      if (onlyId(info)) return deleted;
      const page = await this.service.list(
        principal,
        toListArgs({ filter: { id: { eq: id }, deletedAt: { is: 'NOT_NULL' } }, first: 1 }, await this.service.schema(principal), false),
      );
      return page.records[0] ?? deleted;
    },
    [
      Mutation(() => types.object, {
        name: `delete${typeName}`,
        complexity: singleRecordCost,
        description: `Soft delete: returns the ${singular} with deletedAt set.`,
      }),
    ],
    [P, Args('id', { type: () => UUIDScalar }), Info()],
  );

  method(
    cls,
    'restore',
    function (this: Self, principal: Principal, id: string) {
      return this.service.restore(principal, id);
    },
    [
      Mutation(() => types.object, {
        name: `restore${typeName}`,
        complexity: singleRecordCost,
        description: `Brings a soft-deleted ${singular} back (deletedAt null); a live one is a CONFLICT.`,
      }),
    ],
    [P, Args('id', { type: () => UUIDScalar })],
  );

  // Person.company, Opportunity.pointOfContact, …: one batched read per relation and request.
  for (const field of object.fields) {
    if (field.kind !== 'relation') continue;
    const target = GRAPHQL_TYPES.get(field.target)!;
    method(
      cls,
      `relation_${field.relation}`,
      function (record: AnyRecord, context: GraphqlContext) {
        const id = record[field.name];
        return id ? context.loaders.byId(field.target).load(id) : null;
      },
      [ResolveField(field.relation, () => target.object, { nullable: true, complexity: singleRecordCost })],
      [Parent(), Context()],
    );
  }

  // Company.people, Company.opportunities, Person.pointOfContactForOpportunities: the 60
  // oldest by default; with list arguments (`people(first: 3, filter: …)`) a page per parent.
  for (const { source, field } of inversesOf(plural)) {
    const sourceTypes = GRAPHQL_TYPES.get(source.plural)!;
    method(
      cls,
      `inverse_${field.inverse}`,
      async function (record: AnyRecord, args: GraphqlListInput, context: GraphqlContext, info: GraphQLResolveInfo) {
        if (!LIST_ARGS.some((name) => args[name] != null)) {
          return embeddedConnection(
            (await context.loaders.children(source.plural, field.column).load(record.id)) as {
              records: { id: string; createdAt: string }[];
              total: number;
            },
          );
        }
        const withCount = selectedFields(info).has('totalCount');
        const listArgs = toListArgs(args, (await context.records.definitionFor(source.plural, context.principal)).schema, withCount);
        const key = `${withCount}:${JSON.stringify(args)}`;
        return toConnection(await context.loaders.pages(source.plural, field.column, key, listArgs).load(record.id));
      },
      [
        ResolveField(field.inverse, () => sourceTypes.connection, {
          complexity: connectionCost,
          description:
            `The ${EMBEDDED_PER_RECORD} oldest ${source.plural} of the ${singular}; read on with ` +
            `${source.plural}(filter: {${field.name}: {eq: id}}, after: pageInfo.endCursor).`,
        }),
      ],
      [Parent(), Args(), Context(), Info()],
      [Object, sourceTypes.args, Object, Object],
    );
  }

  Resolver(() => types.object)(cls);
  return cls as Type<unknown>;
}

export const OBJECT_RESOLVERS = OBJECTS.map(objectResolver);
