import { z } from 'zod';
import { isUuid } from '../query/filter.js';
import { quote, scalar, wrongType } from './shared.js';

/**
 * UUID: an identifier of another system, stored lower-case so that equal ids compare equal
 * (as Postgres's uuid type prints them); filtered and sorted as a uuid. Read as one only when
 * the stored text is one, so another workspace's field of the same name holding text can
 * never fail the cast.
 */
export const uuid = scalar({
  name: 'UUID',
  word: 'a UUID such as 0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10',
  pageWord: 'a UUID',
  unique: { normalize: 'exact' },
  check: (field, value, path, problems) => (isUuid(value) ? value.toLowerCase() : wrongType(uuid, field, path, problems)),
  leaf: (field) => {
    const stored = `(t.custom->>${quote(field.name)})`;
    return {
      type: 'uuid',
      sql: `(CASE WHEN ${stored} ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN ${stored}::uuid END)`,
    };
  },
  graphql: () => ({ output: 'UUID', input: 'UUID', filter: 'UUIDFilter', order: 'OrderByDirection' }),
  jsonSchema: () => ({ type: 'string', format: 'uuid' }),
  mcpInput: () => z.string(),
  csv: { cell: 'text' },
});
