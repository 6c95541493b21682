import { compositeType } from './composite.js';

const number = (v: string) => `coalesce(${v} ->> 'primaryPhoneNumber', '')`;

/**
 * PHONES: a primary phone number with its country and calling codes (Twenty's PHONES).
 * Searched by the number as written, its digits run together, and with the calling code
 * in place of a national leading 0 ("06 12 34 56 78", +33 → 33612345678).
 */
export const phones = compositeType(
  {
    name: 'PHONES',
    subFields: [
      { name: 'primaryPhoneNumber', kind: 'text', maxLength: 200, sortable: true, filterable: true },
      { name: 'primaryPhoneCountryCode', kind: 'text', maxLength: 200, sortable: true, filterable: true },
      { name: 'primaryPhoneCallingCode', kind: 'text', maxLength: 200, formula: 'callingCode', sortable: true, filterable: true },
    ],
    graphql: { object: 'Phones', input: 'PhonesInput', filter: 'PhonesFilter', orderBy: 'PhonesOrderByInput' },
    rest: { input: 'PhonesInput', model: 'PhonesModel' },
    sortBy: ['primaryPhoneNumber'],
  },
  {
    pageWord: 'phone numbers',
    search: (v) =>
      `${number(v)} || ' ' || regexp_replace(${number(v)}, '[^0-9]', '', 'g') || ' ' || ` +
      `regexp_replace(coalesce(${v} ->> 'primaryPhoneCallingCode', '') || regexp_replace(${number(v)}, '^[^0-9]*0', ''), '[^0-9]', '', 'g')`,
  },
);
