/*
 * Composite field types, each declared once (Twenty's LINKS, FULL_NAME, EMAILS,
 * CURRENCY): their sub-fields with the rules every transport reads, and the names each
 * transport gives them. Objects use them through a `composite` field.
 */

export type SubFieldKind =
  /** A string, nullable. */
  | 'text'
  /** A list of strings (jsonb), never null: `[]` when empty. */
  | 'textList'
  /** A list of `{url, label}` (jsonb), never null. */
  | 'linkList'
  /** An integer (bigint column), nullable; JSON number within ±(2^53 − 1). */
  | 'bigint';

export interface SubField {
  name: string;
  kind: SubFieldKind;
  maxLength?: number;
  /** `email`: an e-mail address; `url`: a URL or a bare domain; `currency`: ISO 4217 (three capitals). */
  format?: 'email' | 'url' | 'currency';
  maxItems?: number;
  /** Filterable and sortable through the list parameters. */
  sortable: boolean;
  filterable: boolean;
  /** Texts per surface (REST model, GraphQL object, REST input, GraphQL input, MCP input); rules are not repeated here. */
  docs?: {
    model?: string;
    graphql?: string;
    restInput?: string;
    graphqlInput?: string;
    tool?: string;
    example?: unknown;
    inputExample?: unknown;
  };
}

export interface CompositeType {
  name: string;
  subFields: SubField[];
  /** Type names per transport (Twenty's for GraphQL; the REST names the OpenAPI document always had). */
  graphql: { object: string; input: string; filter: string; orderBy: string };
  rest: { input: string; model: string };
  /** The sub-fields a composite sort key orders by (`name` → firstName, lastName). */
  sortBy: string[];
}

/** A link as stored in `secondaryLinks`. */
export const LINK = {
  url: {
    maxLength: 2048,
    description: 'A URL; a bare domain such as acme.com is kept as given.',
    tool: 'A URL; a bare domain such as acme.com is accepted and kept as given.',
  },
  label: { maxLength: 200 },
};

export const COMPOSITES: Record<string, CompositeType> = {
  LINKS: {
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
  FULL_NAME: {
    name: 'FULL_NAME',
    subFields: [
      { name: 'firstName', kind: 'text', maxLength: 200, sortable: true, filterable: true, docs: { example: 'Ada' } },
      { name: 'lastName', kind: 'text', maxLength: 200, sortable: true, filterable: true, docs: { example: 'Lovelace' } },
    ],
    graphql: { object: 'FullName', input: 'FullNameInput', filter: 'FullNameFilter', orderBy: 'FullNameOrderByInput' },
    rest: { input: 'FullNameInput', model: 'FullNameModel' },
    sortBy: ['firstName', 'lastName'],
  },
  EMAILS: {
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
  CURRENCY: {
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
};

export function composite(type: string): CompositeType {
  const found = COMPOSITES[type];
  if (!found) throw new Error(`unknown composite type ${type}`);
  return found;
}
