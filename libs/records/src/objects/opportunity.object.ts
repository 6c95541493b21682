import type { ObjectDeclaration } from './declaration.js';

/** docs/architecture.md: Twenty's standard opportunity, names as there. */
export const opportunityObject: ObjectDeclaration = {
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
      kind: 'text',
      name: 'name',
      search: 'a',
      column: 'name',
      required: true,
      maxLength: 500,
      docs: { example: 'Acme renewal 2027', updateExample: 'Acme renewal 2027 (3 years)' },
    },
    {
      kind: 'composite',
      name: 'amount',
      type: 'CURRENCY',
      columns: { amountMicros: 'amount_micros', currencyCode: 'amount_currency_code' },
      docs: {
        update: 'Sub-fields left out keep their value; null clears both.',
        tool: 'The value of the deal. On update, a sub-field left out keeps its value; null clears both.',
      },
    },
    {
      kind: 'timestamp',
      name: 'closeDate',
      column: 'close_date',
      docs: {
        description: 'When the deal is expected to close (or closed).',
        create: 'An ISO 8601 date or date-time; null clears it.',
        example: '2026-12-31T00:00:00.000Z',
      },
    },
    {
      kind: 'enum',
      name: 'stage',
      column: 'stage',
      enumName: 'OpportunityStageEnum',
      values: ['NEW', 'SCREENING', 'MEETING', 'PROPOSAL', 'CUSTOMER'],
      default: 'NEW',
      docs: { example: 'MEETING' },
    },
    {
      kind: 'relation',
      name: 'companyId',
      column: 'company_id',
      target: 'companies',
      relation: 'company',
      inverse: 'opportunities',
      docs: {
        create: 'A company of the same workspace; null unlinks.',
        tool: 'The id of a company of this workspace; null unlinks.',
        example: '0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10',
      },
    },
    {
      kind: 'relation',
      name: 'pointOfContactId',
      column: 'point_of_contact_id',
      target: 'people',
      relation: 'pointOfContact',
      inverse: 'pointOfContactForOpportunities',
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
