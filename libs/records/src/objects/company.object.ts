import type { ObjectDeclaration, StandardField } from './declaration.js';

/** docs/rest.md. */
export const companyObject: ObjectDeclaration<StandardField> = {
  plural: 'companies',
  singular: 'company',
  typeName: 'Company',
  pluralType: 'Companies',
  table: 'companies',
  article: 'a',
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
      docs: { example: 'Acme', updateExample: 'Acme Corporation' },
    },
    {
      name: 'domainName',
      type: 'LINKS',
      isNullable: true,
      options: null,
      settings: null,
      search: 'b',
      columns: {
        primaryLinkUrl: 'domain_primary_link_url',
        primaryLinkLabel: 'domain_primary_link_label',
        secondaryLinks: 'domain_secondary_links',
      },
      docs: {
        update: 'Sub-fields left out keep their value; null clears the whole field.',
        tool: 'The website. On update, sub-fields left out keep their value and null clears the whole field.',
      },
    },
  ],
  label: ['name'],
  docs: {
    tag: 'Companies: name, domainName; soft-deleted with deletedAt.',
    deleteNote: 'Its people stay, still linked.',
    createTool: 'Creates a company. name is required; domainName.primaryLinkUrl takes a URL or a bare domain (acme.com).',
    updateTool: 'Changes the given fields of a company (partial update); fields left out keep their value.',
    filterExamples: {
      'Name contains "acme", any case': 'name[ilike]:"%acme%"',
      'By domain': 'domainName.primaryLinkUrl[eq]:"acme.com"',
      'Either condition': 'or(name[startsWith]:"A",createdAt[gte]:"2025-01-01")',
      'Deleted companies': 'deletedAt[is]:NOT_NULL',
    },
    orderByExamples: { 'By name': 'name[AscNullsFirst]', 'Newest first': 'createdAt[DescNullsLast]' },
    toolFilterExamples: [
      'name[ilike]:"%acme%"',
      'domainName.primaryLinkUrl[eq]:"acme.com"',
      'or(name[startsWith]:"A",createdAt[gte]:"2024-01-01")',
      'deletedAt[is]:NOT_NULL',
    ],
    toolOrderByExamples: ['name[AscNullsFirst]', 'createdAt[DescNullsLast]', 'domainName[AscNullsLast],name'],
    idExample: '0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10',
  },
};
