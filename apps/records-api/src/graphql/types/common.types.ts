import type { Type } from '@nestjs/common';
import { Field, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { OBJECT_DOCS } from '../object-docs.js';
import { BigFloatScalar, DateTimeScalar, UUIDScalar } from './scalars.js';

/** Values match the shared `Direction` of libs/records (and the REST `order_by` syntax). */
export enum OrderByDirection {
  AscNullsFirst = 'AscNullsFirst',
  AscNullsLast = 'AscNullsLast',
  DescNullsFirst = 'DescNullsFirst',
  DescNullsLast = 'DescNullsLast',
}
registerEnumType(OrderByDirection, { name: 'OrderByDirection' });

export enum FilterIs {
  NULL = 'NULL',
  NOT_NULL = 'NOT_NULL',
}
registerEnumType(FilterIs, { name: 'FilterIs', description: 'For `is`: the field has no value (NULL) or has one (NOT_NULL).' });

@ObjectType('PageInfo')
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage: boolean;

  @Field(() => Boolean)
  hasPreviousPage: boolean;

  @Field(() => String, { nullable: true, description: 'Pass as `before` to read the page before this one.' })
  startCursor: string | null;

  @Field(() => String, { nullable: true, description: 'Pass as `after` to read the page after this one.' })
  endCursor: string | null;
}

/**
 * `<Name>Connection { totalCount edges { node cursor } pageInfo }` and `<Name>Edge` for a
 * node type (Relay connections, type names as in Twenty).
 */
export function Connection<T>(node: Type<T>, name: string, plural: string) {
  @ObjectType(`${name}Edge`)
  class Edge {
    @Field(() => node)
    node: T;

    @Field(() => String)
    cursor: string;
  }

  @ObjectType({ isAbstract: true })
  abstract class ConnectionType {
    @Field(() => Int, { description: OBJECT_DOCS.totalCount(plural) })
    totalCount: number | null;

    @Field(() => [Edge])
    edges: Edge[];

    @Field(() => PageInfo)
    pageInfo: PageInfo;
  }
  return ConnectionType;
}

@InputType('StringFilter')
export class StringFilter {
  @Field(() => String, { nullable: true }) eq?: string | null;
  @Field(() => String, { nullable: true }) neq?: string | null;
  @Field(() => [String], { nullable: true }) in?: string[] | null;
  @Field(() => String, { nullable: true, description: 'SQL LIKE pattern, case-sensitive: `%` any run, `_` one character.' })
  like?: string | null;
  @Field(() => String, { nullable: true, description: 'SQL LIKE pattern, case-insensitive.' })
  ilike?: string | null;
  @Field(() => String, { nullable: true }) startsWith?: string | null;
  @Field(() => String, { nullable: true }) endsWith?: string | null;
  @Field(() => String, { nullable: true }) gt?: string | null;
  @Field(() => String, { nullable: true }) gte?: string | null;
  @Field(() => String, { nullable: true }) lt?: string | null;
  @Field(() => String, { nullable: true }) lte?: string | null;
  @Field(() => FilterIs, { nullable: true }) is?: FilterIs | null;
}

@InputType('UUIDFilter')
export class UUIDFilter {
  @Field(() => UUIDScalar, { nullable: true }) eq?: string | null;
  @Field(() => UUIDScalar, { nullable: true }) neq?: string | null;
  @Field(() => [UUIDScalar], { nullable: true }) in?: string[] | null;
  @Field(() => FilterIs, { nullable: true }) is?: FilterIs | null;
}

@InputType('DateFilter')
export class DateFilter {
  @Field(() => DateTimeScalar, { nullable: true }) eq?: string | null;
  @Field(() => DateTimeScalar, { nullable: true }) neq?: string | null;
  @Field(() => [DateTimeScalar], { nullable: true }) in?: string[] | null;
  @Field(() => DateTimeScalar, { nullable: true }) gt?: string | null;
  @Field(() => DateTimeScalar, { nullable: true }) gte?: string | null;
  @Field(() => DateTimeScalar, { nullable: true }) lt?: string | null;
  @Field(() => DateTimeScalar, { nullable: true }) lte?: string | null;
  @Field(() => FilterIs, { nullable: true }) is?: FilterIs | null;
}

@InputType('ArrayFilter')
export class ArrayFilter {
  @Field(() => [String], { nullable: true, description: 'Matches when the list holds at least one of these values.' })
  containsAny?: string[] | null;
  @Field(() => FilterIs, { nullable: true, description: 'An empty list counts as NULL.' })
  is?: FilterIs | null;
}

@InputType('BigFloatFilter')
export class BigFloatFilter {
  @Field(() => BigFloatScalar, { nullable: true }) eq?: number | null;
  @Field(() => BigFloatScalar, { nullable: true }) neq?: number | null;
  @Field(() => [BigFloatScalar], { nullable: true }) in?: number[] | null;
  @Field(() => BigFloatScalar, { nullable: true }) gt?: number | null;
  @Field(() => BigFloatScalar, { nullable: true }) gte?: number | null;
  @Field(() => BigFloatScalar, { nullable: true }) lt?: number | null;
  @Field(() => BigFloatScalar, { nullable: true }) lte?: number | null;
  @Field(() => FilterIs, { nullable: true }) is?: FilterIs | null;
}
