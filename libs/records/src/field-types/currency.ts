import { compositeType } from './composite.js';

/** CURRENCY: an amount in millionths and its ISO 4217 code (opportunities' amount is one); not searched. */
export const currency = compositeType(
  {
    name: 'CURRENCY',
    subFields: [
      {
        name: 'amountMicros',
        kind: 'bigint',
        sortable: true,
        filterable: true,
        docs: {
          model: 'Millionths of the currency unit (1.50 USD = 1500000); an integer, null when no amount is set.',
          graphql: 'Millionths of the currency unit (1.50 USD = 1500000); an integer beyond 2^31, sent as a JSON number or string.',
          restInput: 'Millionths of the currency unit (1.50 USD = 1500000): an integer up to ±9007199254740991.',
          graphqlInput: 'Millionths of the currency unit (1.50 USD = 1500000): an integer up to ±9007199254740991.',
          tool: 'Millionths of the currency unit (1.50 USD = 1500000): an integer up to ±9007199254740991.',
          example: 1500000000,
        },
      },
      {
        name: 'currencyCode',
        kind: 'text',
        maxLength: 3,
        format: 'currency',
        sortable: true,
        filterable: true,
        docs: {
          model: 'ISO 4217 currency code (three capital letters).',
          graphql: 'ISO 4217 currency code (three capital letters).',
          restInput: 'ISO 4217 currency code: three capital letters such as USD or EUR.',
          graphqlInput: 'ISO 4217 currency code: three capital letters such as USD or EUR.',
          tool: 'ISO 4217 currency code: three capital letters such as USD or EUR.',
          example: 'USD',
        },
      },
    ],
    graphql: { object: 'Currency', input: 'CurrencyInput', filter: 'CurrencyFilter', orderBy: 'CurrencyOrderByInput' },
    rest: { input: 'CurrencyInput', model: 'CurrencyModel' },
    sortBy: ['amountMicros'],
  },
  { pageWord: 'an amount and currency' },
);
