import type { Type } from '@nestjs/common';
import { Args, Context, Info, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { CurrentPrincipal } from '#auth/auth.guard.js';
import type { Principal } from '#auth/principal.js';
import { OBJECTS, relationFields, type ObjectDeclaration } from '#records/objects/index.js';
import type { GraphqlContext } from './graphql-context.js';
import type { GraphqlListInput } from './list-args.js';
import { OBJECT_DOCS } from './object-docs.js';
import { batchCost, connectionCost, singleRecordCost } from './query-limits.js';
import {
  createRecord,
  createRecords,
  deleteRecord,
  firstRecord,
  groupRecords,
  inverseConnection,
  linkedRecord,
  listRecords,
  restoreRecord,
  updateRecord,
} from './record-resolvers.js';
import { UUIDScalar } from './types/scalars.js';
import { EMBEDDED_PER_RECORD } from '#records/service/constants.js';
import { method, serviceHolder } from '#records/service/decorate.js';
import { GRAPHQL_TYPES } from './graphql-types.js';
import type { AnyRecord } from '#records/service/object-definitions.js';
import { serviceFor, type ObjectService } from '#records/service/object-service.js';
import { inversesOf } from '#records/service/records.service.js';
import { GroupByResultType } from './group-by.types.js';

type Self = { service: ObjectService };

/** `upsert: true` on creates (docs/graphql.md, "Upsert"): match by id, then by the object's unique fields; update or create. */
const UPSERT_ARG = {
  type: () => Boolean,
  nullable: true,
  defaultValue: false,
  description: OBJECT_DOCS.upsertArg,
};

/**
 * The GraphQL fields of one object (docs/graphql.md; docs/architecture.md), a thin transport over RecordsService:
 * `<plural>`, `<singular>`, the four mutations (their bodies in record-resolvers.ts), and the
 * relation fields (`Person.company`, `Company.people`, …) batched through the request's DataLoaders.
 */
export function objectResolver(object: ObjectDeclaration): Type<unknown> {
  const { plural, singular, typeName, pluralType } = object;
  const types = GRAPHQL_TYPES.get(plural)!;
  const cls = serviceHolder<ObjectService>(`${pluralType}Resolver`, serviceFor(plural));
  const P = CurrentPrincipal();

  method(
    cls,
    'list',
    function (this: Self, principal: Principal, args: GraphqlListInput, info: GraphQLResolveInfo) {
      return listRecords(this.service, principal, args, info);
    },
    [Query(() => types.connection, { name: plural, complexity: connectionCost })],
    [P, Args(), Info()],
    [Object, types.args, Object],
  );

  method(
    cls,
    'groupBy',
    function (this: Self, principal: Principal, groupBy: unknown, aggregate: unknown, filter: object | null) {
      return groupRecords(this.service, principal, groupBy, aggregate, filter);
    },
    [
      Query(() => GroupByResultType, {
        name: `${plural}GroupBy`,
        description: OBJECT_DOCS.groupBy(plural),
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
    function (this: Self, principal: Principal, filter: object) {
      return firstRecord(this.service, principal, filter);
    },
    [
      Query(() => types.object, {
        name: singular,
        nullable: true,
        complexity: singleRecordCost,
        description: OBJECT_DOCS.one(singular),
      }),
    ],
    [P, Args('filter', { type: () => types.filter })],
  );

  /** The arguments of the two create mutations, as their parameter decorators give them. */
  type CreateArgs = [principal: Principal, data: unknown, upsert: boolean | null, context: GraphqlContext, info: GraphQLResolveInfo];

  method(
    cls,
    'create',
    function (this: Self, ...[principal, data, upsert, context, info]: CreateArgs) {
      return createRecord(this.service, principal, data, upsert, context, info);
    },
    [Mutation(() => types.object, { name: `create${typeName}`, complexity: singleRecordCost })],
    [P, Args('data', { type: () => types.create }), Args('upsert', UPSERT_ARG), Context(), Info()],
  );

  method(
    cls,
    'createMany',
    function (this: Self, ...[principal, data, upsert, context, info]: CreateArgs) {
      return createRecords(this.service, principal, data, upsert, context, info);
    },
    [
      Mutation(() => [types.object], {
        name: `create${pluralType}`,
        complexity: batchCost,
        description: OBJECT_DOCS.createMany(plural),
      }),
    ],
    [P, Args('data', { type: () => [types.create] }), Args('upsert', UPSERT_ARG), Context(), Info()],
  );

  method(
    cls,
    'update',
    function (this: Self, principal: Principal, id: string, data: unknown) {
      return updateRecord(this.service, principal, id, data);
    },
    [Mutation(() => types.object, { name: `update${typeName}`, complexity: singleRecordCost })],
    [P, Args('id', { type: () => UUIDScalar }), Args('data', { type: () => types.update })],
  );

  method(
    cls,
    'remove',
    function (this: Self, principal: Principal, id: string, info: GraphQLResolveInfo) {
      return deleteRecord(this.service, principal, id, info);
    },
    [
      Mutation(() => types.object, {
        name: `delete${typeName}`,
        complexity: singleRecordCost,
        description: OBJECT_DOCS.remove(singular),
      }),
    ],
    [P, Args('id', { type: () => UUIDScalar }), Info()],
  );

  method(
    cls,
    'restore',
    function (this: Self, principal: Principal, id: string) {
      return restoreRecord(this.service, principal, id);
    },
    [
      Mutation(() => types.object, {
        name: `restore${typeName}`,
        complexity: singleRecordCost,
        description: OBJECT_DOCS.restore(singular),
      }),
    ],
    [P, Args('id', { type: () => UUIDScalar })],
  );

  // Person.company, Opportunity.pointOfContact, …: one batched read per relation and request.
  for (const field of relationFields(object)) {
    const target = GRAPHQL_TYPES.get(field.target)!;
    method(
      cls,
      `relation_${field.relation}`,
      function (record: AnyRecord, context: GraphqlContext) {
        return linkedRecord(field.target, record[field.name], context);
      },
      [ResolveField(field.relation, () => target.object, { nullable: true, complexity: singleRecordCost })],
      [Parent(), Context()],
    );
  }

  // Company.people, Company.opportunities, Person.pointOfContactForOpportunities (inverseConnection).
  for (const { source, field } of inversesOf(plural)) {
    const sourceTypes = GRAPHQL_TYPES.get(source.plural)!;
    method(
      cls,
      `inverse_${field.inverse}`,
      function (record: AnyRecord, args: GraphqlListInput, context: GraphqlContext, info: GraphQLResolveInfo) {
        return inverseConnection(source.plural, { column: field.column }, record, args, context, info);
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
