import { compositeType } from './composite.js';

/**
 * FULL_NAME: a first and a last name (people's name is one). Sorted by first name, then last
 * name, wherever it is (docs/data-model.md "Types").
 */
export const fullName = compositeType(
  {
    name: 'FULL_NAME',
    subFields: [
      { name: 'firstName', kind: 'text', maxLength: 200, sortable: true, filterable: true, docs: { example: 'Ada' } },
      { name: 'lastName', kind: 'text', maxLength: 200, sortable: true, filterable: true, docs: { example: 'Lovelace' } },
    ],
    graphql: { object: 'FullName', input: 'FullNameInput', filter: 'FullNameFilter', orderBy: 'FullNameOrderByInput' },
    rest: { input: 'FullNameInput', model: 'FullNameModel' },
    sortBy: ['firstName', 'lastName'],
  },
  { pageWord: 'a first and last name', search: 'words' },
);
