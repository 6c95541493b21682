import { z } from 'zod';
import { indexedValue, scalar, wrongType } from './shared.js';

/** BOOLEAN: true or false. */
export const boolean = scalar({
  name: 'BOOLEAN',
  word: 'true or false',
  pageWord: 'yes or no',
  check: (field, value, path, problems) => (typeof value === 'boolean' ? value : wrongType(boolean, field, path, problems)),
  leaf: (field) => ({ type: 'boolean', sql: `(${indexedValue(field.name, 'text', 't.')}::boolean)` }),
  graphql: () => ({
    output: 'Boolean',
    input: 'Boolean',
    filter: 'BooleanFilter',
    order: 'OrderByDirection',
    sdl: { BooleanFilter: `input BooleanFilter { eq: Boolean neq: Boolean is: FilterIs }` },
  }),
  jsonSchema: () => ({ type: 'boolean' }),
  mcpInput: () => z.boolean(),
  mcpOutput: () => z.boolean().nullable(),
  csv: { cell: 'boolean' },
});
