import { z } from 'zod';
import { indexedValue, scalar, wrongType } from './shared.js';

/** The filter of a Float, which the base GraphQL schema has no use for (NUMBER fields, ADDRESS coordinates). */
export const FLOAT_FILTER = {
  FloatFilter: `input FloatFilter { eq: Float neq: Float in: [Float!] is: FilterIs gt: Float gte: Float lt: Float lte: Float }`,
};

/** NUMBER: a double (a JSON number), rounded to `settings.decimals` when set; indexed, may be unique. */
export const number = scalar({
  name: 'NUMBER',
  word: 'a number',
  pageWord: 'a number',
  unique: { normalize: 'exact' },
  indexKind: 'number',
  settings(raw, problems) {
    for (const key of Object.keys(raw))
      if (key !== 'decimals') problems.push(`settings.${key} is not a known setting; NUMBER takes decimals`);
    const decimals = raw.decimals;
    if (decimals !== undefined && (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 8)) {
      problems.push('settings.decimals must be an integer from 0 to 8');
    }
    return decimals === undefined ? {} : { decimals: decimals as number };
  },
  check(field, value, path, problems) {
    if (typeof value !== 'number' || !Number.isFinite(value)) return wrongType(number, field, path, problems);
    return field.settings?.decimals !== undefined ? Number(value.toFixed(field.settings.decimals)) : value;
  },
  leaf: (field) => ({ type: 'number', sql: indexedValue(field.name, 'number', 't.') }),
  graphql: () => ({ output: 'Float', input: 'Float', filter: 'FloatFilter', order: 'OrderByDirection', sdl: FLOAT_FILTER }),
  jsonSchema: () => ({ type: 'number' }),
  mcpInput: () => z.number(),
  mcpOutput: () => z.number().nullable(),
  csv: { cell: 'number' },
});
