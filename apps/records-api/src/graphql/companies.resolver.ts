import { Args, Context, Info, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { CurrentPrincipal } from '../../../../libs/auth/src/auth.guard.js';
import type { Principal } from '../../../../libs/auth/src/principal.js';
import { companySchema } from '../../../../libs/records/src/schemas.js';
import { CompaniesService } from '../companies/companies.service.js';
import type { CompanyRecord } from '../companies/company.definition.js';
import { embeddedPeopleConnection, toConnection } from './connections.js';
import type { GraphqlContext } from './graphql-context.js';
import { toListArgs } from './list-args.js';
import { batchCost, connectionCost, embeddedPeopleCost, singleRecordCost } from './query-limits.js';
import { onlyId, plain, selectedFields } from './resolver-utils.js';
import {
  CompaniesArgs,
  Company,
  CompanyConnection,
  CompanyCreateInput,
  CompanyFilterInput,
  CompanyUpdateInput,
} from './types/company.types.js';
import { PersonConnection } from './types/person.types.js';
import { UUIDScalar } from './types/scalars.js';

/** Thin transport over CompaniesService: permissions, validation and errors live there. */
@Resolver(() => Company)
export class CompaniesResolver {
  constructor(private readonly service: CompaniesService) {}

  @Query(() => CompanyConnection, { complexity: connectionCost })
  async companies(@CurrentPrincipal() principal: Principal, @Args() args: CompaniesArgs, @Info() info: GraphQLResolveInfo) {
    const withCount = selectedFields(info).has('totalCount');
    return toConnection(await this.service.list(principal, toListArgs(args, companySchema, withCount)));
  }

  @Query(() => Company, { nullable: true, complexity: singleRecordCost, description: 'The first company matching the filter, or null.' })
  async company(@CurrentPrincipal() principal: Principal, @Args('filter', { type: () => CompanyFilterInput }) filter: CompanyFilterInput) {
    const page = await this.service.list(principal, toListArgs({ filter, first: 1 }, companySchema, false));
    return page.records[0] ?? null;
  }

  @Mutation(() => Company, { complexity: singleRecordCost })
  createCompany(@CurrentPrincipal() principal: Principal, @Args('data', { type: () => CompanyCreateInput }) data: CompanyCreateInput) {
    return this.service.create(principal, plain(data));
  }

  @Mutation(() => [Company], { complexity: batchCost, description: 'All or none; 1 to 60 companies.' })
  createCompanies(
    @CurrentPrincipal() principal: Principal,
    @Args('data', { type: () => [CompanyCreateInput] }) data: CompanyCreateInput[],
  ) {
    return this.service.createMany(principal, plain(data), 'data');
  }

  @Mutation(() => Company, { complexity: singleRecordCost })
  updateCompany(
    @CurrentPrincipal() principal: Principal,
    @Args('id', { type: () => UUIDScalar }) id: string,
    @Args('data', { type: () => CompanyUpdateInput }) data: CompanyUpdateInput,
  ) {
    return this.service.update(principal, id, plain(data));
  }

  @Mutation(() => Company, { complexity: singleRecordCost, description: 'Soft delete: returns the company with deletedAt set.' })
  async deleteCompany(@CurrentPrincipal() principal: Principal, @Args('id', { type: () => UUIDScalar }) id: string, @Info() info: GraphQLResolveInfo) {
    const deleted = await this.service.delete(principal, id);
    if (onlyId(info)) return deleted;
    const page = await this.service.list(
      principal,
      toListArgs({ filter: { id: { eq: id }, deletedAt: { is: 'NOT_NULL' } }, first: 1 }, companySchema, false),
    );
    return page.records[0] ?? deleted;
  }

  @ResolveField('people', () => PersonConnection, {
    complexity: embeddedPeopleCost,
    description: 'The 60 oldest people of the company; read on with people(filter: {companyId: {eq: id}}, after: pageInfo.endCursor).',
  })
  async people(@Parent() company: CompanyRecord, @Context() context: GraphqlContext) {
    return embeddedPeopleConnection(await context.loaders.peopleByCompany.load(company.id));
  }
}
