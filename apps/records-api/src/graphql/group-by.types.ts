import { Field, Int, ObjectType } from '@nestjs/graphql';

/*
 * The result of `<plural>GroupBy` (docs/graphql.md "Aggregates"): the same groups as REST's
 * `/rest/<plural>/groupBy`, with each keyed map as a list of {field, value} (GraphQL has no
 * maps). Values are strings: a date bucket as YYYY-MM-DD, booleans as "true"/"false", and
 * sums and averages as exact decimal strings.
 */

@ObjectType('GroupKey', { description: 'One group_by field and its value in this group (null: no value).' })
export class GroupKeyType {
  @Field(() => String)
  field: string;

  @Field(() => String, { nullable: true })
  value: string | null;
}

@ObjectType('AggregateValue', { description: 'An aggregate of one field over the group; sums and averages are exact decimal strings.' })
export class AggregateValueType {
  @Field(() => String)
  field: string;

  @Field(() => String, { nullable: true })
  value: string | null;
}

@ObjectType('AggregateGroup')
export class AggregateGroupType {
  @Field(() => [GroupKeyType])
  by: GroupKeyType[];

  @Field(() => Int, { nullable: true, description: 'Records in the group, when count is asked for.' })
  count: number | null;

  @Field(() => [AggregateValueType])
  sum: AggregateValueType[];

  @Field(() => [AggregateValueType])
  avg: AggregateValueType[];

  @Field(() => [AggregateValueType])
  min: AggregateValueType[];

  @Field(() => [AggregateValueType])
  max: AggregateValueType[];
}

@ObjectType('GroupByResult', { description: 'Groups ordered by their keys (nulls last); at most 1000.' })
export class GroupByResultType {
  @Field(() => [AggregateGroupType])
  groups: AggregateGroupType[];
}
