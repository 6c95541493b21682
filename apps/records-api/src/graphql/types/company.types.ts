import { ArgsType, Field, InputType, Int, ObjectType } from '@nestjs/graphql';
import { DateFilter, OrderByDirection, StringFilter, UUIDFilter, Connection } from './common.types.js';
import { PageArgs } from './page.args.js';
import { DateTimeScalar, UUIDScalar } from './scalars.js';

/*
 * GraphQL shapes of a company (SPEC §4, type names as in Twenty). They mirror
 * CompanyRecord but are declared apart from it and from the REST DTOs; the service layer
 * validates `data` with the REST input classes, so both transports share one set of rules.
 * `Company.people` is added by CompaniesResolver (a batched field resolver).
 */

@ObjectType('LinkMetadata')
export class LinkMetadata {
  @Field(() => String)
  url: string;

  @Field(() => String, { nullable: true })
  label: string | null;
}

@ObjectType('Links')
export class Links {
  @Field(() => String, { nullable: true, description: 'A URL; a bare domain such as acme.com is kept as given.' })
  primaryLinkUrl: string | null;

  @Field(() => String, { nullable: true })
  primaryLinkLabel: string | null;

  @Field(() => [LinkMetadata])
  secondaryLinks: LinkMetadata[];
}

@ObjectType('Company')
export class Company {
  @Field(() => UUIDScalar)
  id: string;

  @Field(() => String)
  name: string;

  @Field(() => Links)
  domainName: Links;

  @Field(() => DateTimeScalar)
  createdAt: string;

  @Field(() => DateTimeScalar)
  updatedAt: string;

  @Field(() => DateTimeScalar, { nullable: true, description: 'Set when the company was deleted (soft delete).' })
  deletedAt: string | null;
}

@ObjectType('CompanyConnection')
export class CompanyConnection extends Connection(Company, 'Company', 'Companies') {}

// Inputs

@InputType('LinkMetadataInput')
export class LinkMetadataInput {
  @Field(() => String)
  url: string;

  @Field(() => String, { nullable: true })
  label?: string | null;
}

@InputType('LinksInput')
export class LinksInput {
  @Field(() => String, { nullable: true })
  primaryLinkUrl?: string | null;

  @Field(() => String, { nullable: true })
  primaryLinkLabel?: string | null;

  @Field(() => [LinkMetadataInput], { nullable: true })
  secondaryLinks?: LinkMetadataInput[] | null;
}

@InputType('CompanyCreateInput')
export class CompanyCreateInput {
  @Field(() => UUIDScalar, { nullable: true, description: 'Optional client-chosen id; a taken id is a CONFLICT.' })
  id?: string | null;

  @Field(() => String)
  name: string;

  @Field(() => LinksInput, { nullable: true })
  domainName?: LinksInput | null;
}

@InputType('CompanyUpdateInput', { description: 'Partial update: fields left out keep their value.' })
export class CompanyUpdateInput {
  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => LinksInput, { nullable: true, description: 'Sub-fields left out keep their value; null clears the whole field.' })
  domainName?: LinksInput | null;
}

// Filter and order

@InputType('LinksFilter')
export class LinksFilter {
  @Field(() => StringFilter, { nullable: true })
  primaryLinkUrl?: StringFilter | null;

  @Field(() => StringFilter, { nullable: true })
  primaryLinkLabel?: StringFilter | null;
}

@InputType('CompanyFilterInput', {
  description: 'Conditions on several fields, and the operators inside one field, all have to hold (AND).',
})
export class CompanyFilterInput {
  @Field(() => UUIDFilter, { nullable: true })
  id?: UUIDFilter | null;

  @Field(() => StringFilter, { nullable: true })
  name?: StringFilter | null;

  @Field(() => LinksFilter, { nullable: true })
  domainName?: LinksFilter | null;

  @Field(() => DateFilter, { nullable: true })
  createdAt?: DateFilter | null;

  @Field(() => DateFilter, { nullable: true })
  updatedAt?: DateFilter | null;

  @Field(() => DateFilter, { nullable: true, description: 'Deleted companies are listed only when the filter mentions deletedAt.' })
  deletedAt?: DateFilter | null;

  @Field(() => [CompanyFilterInput], { nullable: true })
  and?: CompanyFilterInput[] | null;

  @Field(() => [CompanyFilterInput], { nullable: true })
  or?: CompanyFilterInput[] | null;

  @Field(() => CompanyFilterInput, { nullable: true })
  not?: CompanyFilterInput | null;
}

@InputType('LinksOrderByInput')
export class LinksOrderByInput {
  @Field(() => OrderByDirection, { nullable: true })
  primaryLinkUrl?: OrderByDirection | null;

  @Field(() => OrderByDirection, { nullable: true })
  primaryLinkLabel?: OrderByDirection | null;
}

@InputType('CompanyOrderByInput', {
  description: 'One field per item, in priority order: [{name: AscNullsFirst}, {createdAt: DescNullsLast}]. id always breaks ties.',
})
export class CompanyOrderByInput {
  @Field(() => OrderByDirection, { nullable: true })
  id?: OrderByDirection | null;

  @Field(() => OrderByDirection, { nullable: true })
  name?: OrderByDirection | null;

  @Field(() => LinksOrderByInput, { nullable: true })
  domainName?: LinksOrderByInput | null;

  @Field(() => OrderByDirection, { nullable: true })
  createdAt?: OrderByDirection | null;

  @Field(() => OrderByDirection, { nullable: true })
  updatedAt?: OrderByDirection | null;

  @Field(() => OrderByDirection, { nullable: true })
  deletedAt?: OrderByDirection | null;
}

@ArgsType()
export class CompaniesArgs extends PageArgs {
  @Field(() => CompanyFilterInput, { nullable: true })
  filter?: CompanyFilterInput | null;

  @Field(() => [CompanyOrderByInput], { nullable: true, description: 'Default: [{createdAt: AscNullsFirst}].' })
  orderBy?: CompanyOrderByInput[] | null;
}
