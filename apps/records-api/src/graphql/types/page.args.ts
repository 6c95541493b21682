import { ArgsType, Field, Int } from '@nestjs/graphql';
import { PAGE_ARG_DOCS } from '../object-docs.js';

/** Relay pagination: `first` (+ `after`) reads forward, `last` + `before` reads backward. */
@ArgsType()
export class PageArgs {
  @Field(() => Int, { nullable: true, description: PAGE_ARG_DOCS.first })
  first?: number | null;

  @Field(() => String, { nullable: true, description: PAGE_ARG_DOCS.after })
  after?: string | null;

  @Field(() => Int, { nullable: true, description: PAGE_ARG_DOCS.last })
  last?: number | null;

  @Field(() => String, { nullable: true, description: PAGE_ARG_DOCS.before })
  before?: string | null;
}
