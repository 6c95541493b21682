import { Args, Context, Info, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { CurrentPrincipal } from '../../../../libs/auth/src/auth.guard.js';
import type { Principal } from '../../../../libs/auth/src/principal.js';
import { personSchema } from '../../../../libs/records/src/schemas.js';
import { PeopleService } from '../people/people.service.js';
import type { PersonRecord } from '../people/person.definition.js';
import { toConnection } from './connections.js';
import type { GraphqlContext } from './graphql-context.js';
import { toListArgs } from './list-args.js';
import { batchCost, connectionCost, singleRecordCost } from './query-limits.js';
import { onlyId, plain, selectedFields } from './resolver-utils.js';
import { Company } from './types/company.types.js';
import { PeopleArgs, Person, PersonConnection, PersonCreateInput, PersonFilterInput, PersonUpdateInput } from './types/person.types.js';
import { UUIDScalar } from './types/scalars.js';

/** Thin transport over PeopleService: permissions, validation and errors live there. */
@Resolver(() => Person)
export class PeopleResolver {
  constructor(private readonly service: PeopleService) {}

  @Query(() => PersonConnection, { complexity: connectionCost })
  async people(@CurrentPrincipal() principal: Principal, @Args() args: PeopleArgs, @Info() info: GraphQLResolveInfo) {
    const withCount = selectedFields(info).has('totalCount');
    return toConnection(await this.service.list(principal, toListArgs(args, personSchema, withCount)));
  }

  @Query(() => Person, { nullable: true, complexity: singleRecordCost, description: 'The first person matching the filter, or null.' })
  async person(@CurrentPrincipal() principal: Principal, @Args('filter', { type: () => PersonFilterInput }) filter: PersonFilterInput) {
    const page = await this.service.list(principal, toListArgs({ filter, first: 1 }, personSchema, false));
    return page.records[0] ?? null;
  }

  @Mutation(() => Person, { complexity: singleRecordCost })
  createPerson(@CurrentPrincipal() principal: Principal, @Args('data', { type: () => PersonCreateInput }) data: PersonCreateInput) {
    return this.service.create(principal, plain(data));
  }

  @Mutation(() => [Person], { complexity: batchCost, description: 'All or none; 1 to 60 people.' })
  createPeople(@CurrentPrincipal() principal: Principal, @Args('data', { type: () => [PersonCreateInput] }) data: PersonCreateInput[]) {
    return this.service.createMany(principal, plain(data), 'data');
  }

  @Mutation(() => Person, { complexity: singleRecordCost })
  updatePerson(
    @CurrentPrincipal() principal: Principal,
    @Args('id', { type: () => UUIDScalar }) id: string,
    @Args('data', { type: () => PersonUpdateInput }) data: PersonUpdateInput,
  ) {
    return this.service.update(principal, id, plain(data));
  }

  @Mutation(() => Person, { complexity: singleRecordCost, description: 'Soft delete: returns the person with deletedAt set.' })
  async deletePerson(@CurrentPrincipal() principal: Principal, @Args('id', { type: () => UUIDScalar }) id: string, @Info() info: GraphQLResolveInfo) {
    const deleted = await this.service.delete(principal, id);
    if (onlyId(info)) return deleted;
    const page = await this.service.list(
      principal,
      toListArgs({ filter: { id: { eq: id }, deletedAt: { is: 'NOT_NULL' } }, first: 1 }, personSchema, false),
    );
    return page.records[0] ?? deleted;
  }

  @ResolveField('company', () => Company, { nullable: true, complexity: singleRecordCost })
  company(@Parent() person: PersonRecord, @Context() context: GraphqlContext) {
    return person.companyId ? context.loaders.companyById.load(person.companyId) : null;
  }
}
