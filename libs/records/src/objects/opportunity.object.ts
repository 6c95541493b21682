import type { ObjectDeclaration, StandardField } from './declaration.js';

/** docs/architecture.md: Twenty's standard opportunity, names as there. */
export const opportunityObject: ObjectDeclaration<StandardField> = {
  plural: 'opportunities',
  singular: 'opportunity',
  typeName: 'Opportunity',
  pluralType: 'Opportunities',
  table: 'opportunities',
  sparsePermissions: true,
  article: 'an',
  pronoun: 'it',
  fields: [
    {
      name: 'name',
      type: 'TEXT',
      isNullable: false,
      options: null,
      settings: { maxLength: 500 },
      search: 'a',
      column: 'name',
      docs: { example: 'Acme renewal 2027', updateExample: 'Acme renewal 2027 (3 years)' },
    },
    {
      name: 'amount',
      type: 'CURRENCY',
      isNullable: true,
      options: null,
      settings: null,
      columns: { amountMicros: 'amount_micros', currencyCode: 'amount_currency_code' },
      docs: {
        update: 'Sub-fields left out keep their value; null clears both.',
        tool: 'The value of the deal. On update, a sub-field left out keeps its value; null clears both.',
      },
    },
    {
      name: 'closeDate',
      type: 'DATE_TIME',
      isNullable: true,
      options: null,
      settings: null,
      column: 'close_date',
      docs: {
        description: 'When the deal is expected to close (or closed).',
        create: 'An ISO 8601 date or date-time; null clears it.',
        example: '2026-12-31T00:00:00.000Z',
      },
    },
    {
      name: 'stage',
      type: 'SELECT',
      isNullable: false,
      defaultValue: 'NEW',
      options: [
        { value: 'NEW', label: 'New' },
        { value: 'SCREENING', label: 'Screening' },
        { value: 'MEETING', label: 'Meeting' },
        { value: 'PROPOSAL', label: 'Proposal' },
        { value: 'CUSTOMER', label: 'Customer' },
      ],
      settings: null,
      column: 'stage',
      docs: { example: 'MEETING' },
    },
    {
      name: 'companyId',
      type: 'RELATION',
      isNullable: true,
      options: null,
      settings: { relationType: 'MANY_TO_ONE', targetObject: 'companies', relationName: 'company', inverseName: 'opportunities' },
      column: 'company_id',
      docs: {
        create: 'A company of the same workspace; null unlinks.',
        tool: 'The id of a company of this workspace; null unlinks.',
        example: '0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10',
      },
    },
    {
      name: 'pointOfContactId',
      type: 'RELATION',
      isNullable: true,
      options: null,
      settings: {
        relationType: 'MANY_TO_ONE',
        targetObject: 'people',
        relationName: 'pointOfContact',
        inverseName: 'pointOfContactForOpportunities',
      },
      column: 'point_of_contact_id',
      docs: {
        create: 'A person of the same workspace; null unlinks.',
        tool: 'The id of a person of this workspace; null unlinks.',
        example: '7d4f8a52-1c3b-4e2f-9a6d-5b8c0e1f2a3b',
      },
    },
  ],
  label: ['name'],
  docs: {
    tag: 'Opportunities (deals): name, amount, closeDate, stage, companyId, pointOfContactId; soft-deleted with deletedAt.',
    createTool:
      'Creates an opportunity. name is required; stage defaults to NEW; amount.amountMicros is an integer in millionths ' +
      '(1500 USD = 1500000000) with amount.currencyCode such as "USD"; companyId and pointOfContactId link a company ' +
      'and a person of this workspace (find them with list_companies and list_people).',
    updateTool:
      'Changes the given fields of an opportunity (partial update); fields left out keep their value; null unlinks companyId or pointOfContactId.',
    filterExamples: {
      'Early stages': 'stage[in]:["NEW","MEETING"]',
      'At least 1 000 000 micros (1 unit)': 'amount.amountMicros[gte]:1000000',
      'Closing this year': 'closeDate[lte]:"2026-12-31"',
      'Deals of a company': 'companyId[eq]:"0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10"',
    },
    orderByExamples: { 'Largest first': 'amount.amountMicros[DescNullsLast]', 'Closing soonest': 'closeDate[AscNullsLast]' },
    groupByExample: {
      groupBy: 'stage,closeDate:month',
      aggregate: 'count,sum:amount.amountMicros,avg:amount.amountMicros,min:closeDate,max:closeDate',
    },
    idExample: '3f2a9c1d-8b7e-4d6a-9c5b-1e2f3a4b5c6d',
  },
};
