import { compositeType } from './composite.js';

const line = (name: string) => ({ name, kind: 'text' as const, maxLength: 200, sortable: true, filterable: true });

/**
 * ADDRESS: a postal address with optional coordinates (Twenty's ADDRESS sub-fields).
 * Sorted by country, city, then street, the order a list of places is read in; its text
 * sub-fields are searched, the coordinates are not.
 */
export const address = compositeType(
  {
    name: 'ADDRESS',
    subFields: [
      line('addressStreet1'),
      line('addressStreet2'),
      line('addressCity'),
      line('addressPostcode'),
      line('addressState'),
      line('addressCountry'),
      { name: 'addressLat', kind: 'number', min: -90, max: 90, sortable: true, filterable: true },
      { name: 'addressLng', kind: 'number', min: -180, max: 180, sortable: true, filterable: true },
    ],
    graphql: { object: 'Address', input: 'AddressInput', filter: 'AddressFilter', orderBy: 'AddressOrderByInput' },
    rest: { input: 'AddressInput', model: 'AddressModel' },
    sortBy: ['addressCountry', 'addressCity', 'addressStreet1'],
  },
  { pageWord: 'a postal address', search: 'words' },
);
