import { compositeType } from './composite.js';

/** LINKS: a primary URL and label, and more links (companies' domainName is one). */
export const links = compositeType(
  {
    name: 'LINKS',
    subFields: [
      {
        name: 'primaryLinkUrl',
        kind: 'text',
        maxLength: 2048,
        format: 'url',
        sortable: true,
        filterable: true,
        docs: {
          model: 'A URL, or a bare domain kept as given.',
          graphql: 'A URL; a bare domain such as acme.com is kept as given.',
          restInput: 'The main website: a URL, or a bare domain such as acme.com (kept as given).',
          tool: 'The main website: a URL, or a bare domain such as acme.com (kept as given).',
          example: 'acme.com',
        },
      },
      {
        name: 'primaryLinkLabel',
        kind: 'text',
        maxLength: 200,
        sortable: true,
        filterable: true,
        docs: { example: null, inputExample: 'Website' },
      },
      {
        name: 'secondaryLinks',
        kind: 'linkList',
        maxItems: 20,
        sortable: false,
        filterable: false,
        docs: { restInput: 'Replaces the whole list.', tool: 'At most 20 links; replaces the whole list.' },
      },
    ],
    graphql: { object: 'Links', input: 'LinksInput', filter: 'LinksFilter', orderBy: 'LinksOrderByInput' },
    rest: { input: 'DomainNameInput', model: 'LinksModel' },
    sortBy: ['primaryLinkUrl'],
  },
  { pageWord: 'links', unique: { sub: 'primaryLinkUrl', normalize: 'url' }, search: 'words' },
);
