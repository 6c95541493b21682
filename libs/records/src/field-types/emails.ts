import { compositeType } from './composite.js';

/** EMAILS: a primary e-mail address and more (people's emails is one); unique by the primary one, case-insensitive. */
export const emails = compositeType(
  {
    name: 'EMAILS',
    subFields: [
      {
        name: 'primaryEmail',
        kind: 'text',
        maxLength: 320,
        format: 'email',
        sortable: true,
        filterable: true,
        docs: { graphqlInput: 'An e-mail address.', tool: 'An e-mail address.', example: 'ada@acme.com' },
      },
      {
        name: 'additionalEmails',
        kind: 'textList',
        format: 'email',
        maxItems: 20,
        sortable: false,
        filterable: true,
        docs: {
          restInput: 'E-mail addresses; replaces the whole list.',
          tool: 'At most 20 e-mail addresses; replaces the whole list.',
          example: [],
        },
      },
    ],
    graphql: { object: 'Emails', input: 'EmailsInput', filter: 'EmailsFilter', orderBy: 'EmailsOrderByInput' },
    rest: { input: 'EmailsInput', model: 'EmailsModel' },
    sortBy: ['primaryEmail'],
  },
  { pageWord: 'e-mail addresses', unique: { sub: 'primaryEmail', normalize: 'lower' }, search: 'words' },
);
