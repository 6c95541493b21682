import { ArgsType, Field, InputType, Int, ObjectType } from '@nestjs/graphql';
import { ArrayFilter, DateFilter, OrderByDirection, StringFilter, UUIDFilter, Connection } from './common.types.js';
import { PageArgs } from './page.args.js';
import { DateTimeScalar, UUIDScalar } from './scalars.js';

/*
 * GraphQL shapes of a person (SPEC §4, type names as in Twenty), declared apart from
 * PersonRecord and the REST DTOs. `Person.company` is added by PeopleResolver.
 */

@ObjectType('FullName')
export class FullName {
  @Field(() => String, { nullable: true })
  firstName: string | null;

  @Field(() => String, { nullable: true })
  lastName: string | null;
}

@ObjectType('Emails')
export class Emails {
  @Field(() => String, { nullable: true })
  primaryEmail: string | null;

  @Field(() => [String])
  additionalEmails: string[];
}

@ObjectType('Person')
export class Person {
  @Field(() => UUIDScalar)
  id: string;

  @Field(() => FullName)
  name: FullName;

  @Field(() => Emails)
  emails: Emails;

  @Field(() => UUIDScalar, { nullable: true })
  companyId: string | null;

  @Field(() => DateTimeScalar)
  createdAt: string;

  @Field(() => DateTimeScalar)
  updatedAt: string;

  @Field(() => DateTimeScalar, { nullable: true, description: 'Set when the person was deleted (soft delete).' })
  deletedAt: string | null;
}

@ObjectType('PersonConnection')
export class PersonConnection extends Connection(Person, 'Person', 'People') {}

// Inputs

@InputType('FullNameInput')
export class FullNameInput {
  @Field(() => String, { nullable: true })
  firstName?: string | null;

  @Field(() => String, { nullable: true })
  lastName?: string | null;
}

@InputType('EmailsInput')
export class EmailsInput {
  @Field(() => String, { nullable: true, description: 'An e-mail address.' })
  primaryEmail?: string | null;

  @Field(() => [String], { nullable: true })
  additionalEmails?: string[] | null;
}

@InputType('PersonUpdateInput', { description: 'Partial update: fields left out keep their value.' })
export class PersonUpdateInput {
  @Field(() => FullNameInput, { nullable: true })
  name?: FullNameInput | null;

  @Field(() => EmailsInput, { nullable: true })
  emails?: EmailsInput | null;

  @Field(() => UUIDScalar, { nullable: true, description: 'A company of the same workspace; null unlinks.' })
  companyId?: string | null;
}

@InputType('PersonCreateInput')
export class PersonCreateInput {
  @Field(() => UUIDScalar, { nullable: true, description: 'Optional client-chosen id; a taken id is a CONFLICT.' })
  id?: string | null;

  @Field(() => FullNameInput, { nullable: true })
  name?: FullNameInput | null;

  @Field(() => EmailsInput, { nullable: true })
  emails?: EmailsInput | null;

  @Field(() => UUIDScalar, { nullable: true, description: 'A company of the same workspace.' })
  companyId?: string | null;
}

// Filter and order

@InputType('FullNameFilter')
export class FullNameFilter {
  @Field(() => StringFilter, { nullable: true })
  firstName?: StringFilter | null;

  @Field(() => StringFilter, { nullable: true })
  lastName?: StringFilter | null;
}

@InputType('EmailsFilter')
export class EmailsFilter {
  @Field(() => StringFilter, { nullable: true })
  primaryEmail?: StringFilter | null;

  @Field(() => ArrayFilter, { nullable: true })
  additionalEmails?: ArrayFilter | null;
}

@InputType('PersonFilterInput', {
  description: 'Conditions on several fields, and the operators inside one field, all have to hold (AND).',
})
export class PersonFilterInput {
  @Field(() => UUIDFilter, { nullable: true })
  id?: UUIDFilter | null;

  @Field(() => FullNameFilter, { nullable: true })
  name?: FullNameFilter | null;

  @Field(() => EmailsFilter, { nullable: true })
  emails?: EmailsFilter | null;

  @Field(() => UUIDFilter, { nullable: true })
  companyId?: UUIDFilter | null;

  @Field(() => DateFilter, { nullable: true })
  createdAt?: DateFilter | null;

  @Field(() => DateFilter, { nullable: true })
  updatedAt?: DateFilter | null;

  @Field(() => DateFilter, { nullable: true, description: 'Deleted people are listed only when the filter mentions deletedAt.' })
  deletedAt?: DateFilter | null;

  @Field(() => [PersonFilterInput], { nullable: true })
  and?: PersonFilterInput[] | null;

  @Field(() => [PersonFilterInput], { nullable: true })
  or?: PersonFilterInput[] | null;

  @Field(() => PersonFilterInput, { nullable: true })
  not?: PersonFilterInput | null;
}

@InputType('FullNameOrderByInput')
export class FullNameOrderByInput {
  @Field(() => OrderByDirection, { nullable: true })
  firstName?: OrderByDirection | null;

  @Field(() => OrderByDirection, { nullable: true })
  lastName?: OrderByDirection | null;
}

@InputType('EmailsOrderByInput')
export class EmailsOrderByInput {
  @Field(() => OrderByDirection, { nullable: true })
  primaryEmail?: OrderByDirection | null;
}

@InputType('PersonOrderByInput', {
  description: 'One field per item, in priority order: [{name: {lastName: AscNullsFirst}}, {createdAt: DescNullsLast}]. id always breaks ties.',
})
export class PersonOrderByInput {
  @Field(() => OrderByDirection, { nullable: true })
  id?: OrderByDirection | null;

  @Field(() => FullNameOrderByInput, { nullable: true })
  name?: FullNameOrderByInput | null;

  @Field(() => EmailsOrderByInput, { nullable: true })
  emails?: EmailsOrderByInput | null;

  @Field(() => OrderByDirection, { nullable: true })
  companyId?: OrderByDirection | null;

  @Field(() => OrderByDirection, { nullable: true })
  createdAt?: OrderByDirection | null;

  @Field(() => OrderByDirection, { nullable: true })
  updatedAt?: OrderByDirection | null;

  @Field(() => OrderByDirection, { nullable: true })
  deletedAt?: OrderByDirection | null;
}

@ArgsType()
export class PeopleArgs extends PageArgs {
  @Field(() => PersonFilterInput, { nullable: true })
  filter?: PersonFilterInput | null;

  @Field(() => [PersonOrderByInput], { nullable: true, description: 'Default: [{createdAt: AscNullsFirst}].' })
  orderBy?: PersonOrderByInput[] | null;
}
