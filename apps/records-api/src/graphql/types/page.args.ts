import { ArgsType, Field, Int } from '@nestjs/graphql';

/** Relay pagination: `first` (+ `after`) reads forward, `last` + `before` reads backward. */
@ArgsType()
export class PageArgs {
  @Field(() => Int, { nullable: true, description: 'Page size reading forward: 0 to 200, default 60 (larger values are cut to 200).' })
  first?: number | null;

  @Field(() => String, { nullable: true, description: '`endCursor` of the previous page (same filter and orderBy).' })
  after?: string | null;

  @Field(() => Int, { nullable: true, description: 'Page size reading backward from `before` (required with `last`).' })
  last?: number | null;

  @Field(() => String, { nullable: true, description: '`startCursor` of the next page (same filter and orderBy).' })
  before?: string | null;
}
