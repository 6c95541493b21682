import type { ObjectDeclaration, StandardField } from './declaration.js';

/** name and emails: partial updates inside the composite; GraphQL inputs carry no description. */
const COMPOSITE_DOCS = {
  create: 'Sub-fields left out keep their value; null clears both.',
  update: 'Sub-fields left out keep their value; null clears both.',
  graphqlCreate: '',
  graphqlUpdate: '',
  tool: 'On update, a sub-field left out keeps its value; null clears both.',
};

/** docs/rest.md: every field optional (Twenty and HubSpot allow a person with only an e-mail). */
export const personObject: ObjectDeclaration<StandardField> = {
  plural: 'people',
  singular: 'person',
  typeName: 'Person',
  pluralType: 'People',
  table: 'people',
  article: 'a',
  pronoun: 'they',
  fields: [
    {
      name: 'name',
      type: 'FULL_NAME',
      isNullable: true,
      options: null,
      settings: null,
      search: 'a',
      columns: { firstName: 'first_name', lastName: 'last_name' },
      docs: COMPOSITE_DOCS,
    },
    {
      name: 'emails',
      type: 'EMAILS',
      isNullable: true,
      options: null,
      settings: null,
      search: 'b',
      columns: { primaryEmail: 'primary_email', additionalEmails: 'additional_emails' },
      docs: COMPOSITE_DOCS,
    },
    {
      name: 'companyId',
      type: 'RELATION',
      isNullable: true,
      options: null,
      settings: { relationType: 'MANY_TO_ONE', targetObject: 'companies', relationName: 'company', inverseName: 'people' },
      column: 'company_id',
      docs: {
        create: 'A company of the same workspace; null unlinks.',
        update: 'A company of the same workspace; null unlinks.',
        graphqlCreate: 'A company of the same workspace.',
        tool: 'The id of a company of this workspace; null unlinks.',
        example: '0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10',
      },
    },
  ],
  label: ['name', 'emails.primaryEmail'],
  docs: {
    tag: 'People: name, emails, companyId; soft-deleted with deletedAt.',
    createTool:
      'Creates a person. Every field is optional; emails.primaryEmail must be an e-mail address; ' +
      'companyId links a company of this workspace (find it with list_companies).',
    updateTool: 'Changes the given fields of a person (partial update); fields left out keep their value; companyId null unlinks.',
    filterExamples: {
      'By e-mail': 'emails.primaryEmail[eq]:"ada@acme.com"',
      'Last name ends with "son"': 'name.lastName[ilike]:"%son"',
      'People of a company': 'companyId[eq]:"0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10"',
      'Nested groups': 'and(companyId[is]:NOT_NULL,not(emails.primaryEmail[endsWith]:"@gmail.com"))',
    },
    orderByExamples: {
      'By name (first, then last name)': 'name[AscNullsFirst]',
      'By last name, newest first': 'name.lastName[AscNullsLast],createdAt[DescNullsLast]',
    },
    toolOrderByExamples: ['name[AscNullsFirst]', 'name.lastName[AscNullsLast],createdAt[DescNullsLast]', 'emails.primaryEmail'],
    idExample: '7d4f8a52-1c3b-4e2f-9a6d-5b8c0e1f2a3b',
  },
};
