import { z } from 'zod';
import { isDateText } from '../query/filter.js';
import { indexedValue, scalar, wrongType } from './shared.js';

/** DATE: a calendar date such as 2026-12-31 (no time, no zone), kept as given; indexed. */
export const date = scalar({
  name: 'DATE',
  word: 'a date such as 2026-12-31',
  pageWord: 'a date',
  indexKind: 'text',
  check: (field, value, path, problems) =>
    typeof value === 'string' && isDateText(value) ? value : wrongType(date, field, path, problems),
  leaf: (field) => ({ type: 'date', sql: indexedValue(field.name, 'text', 't.') }),
  graphql: () => ({
    output: 'String',
    input: 'String',
    filter: 'DateOnlyFilter',
    order: 'OrderByDirection',
    sdl: {
      DateOnlyFilter: `"A calendar date such as 2026-12-31." input DateOnlyFilter { eq: String neq: String in: [String!] is: FilterIs gt: String gte: String lt: String lte: String }`,
    },
  }),
  jsonSchema: () => ({ type: 'string', format: 'date' }),
  mcpInput: () => z.string(),
  csv: { cell: 'text' },
});
