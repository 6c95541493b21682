import { z } from 'zod';
import { checkText, indexedValue, MAX_TEXT, scalar, TEXT_GRAPHQL } from './shared.js';

/** TEXT: a string of at most 10,000 characters; searched, indexed, may be unique. */
export const text = scalar({
  name: 'TEXT',
  word: 'a string',
  pageWord: 'text',
  unique: { normalize: 'exact' },
  indexKind: 'text',
  search: (v) => `${v} #>> '{}'`,
  check: (_field, value, path, problems) => checkText(value, path, MAX_TEXT, problems),
  leaf: (field) => ({ type: 'text', sql: indexedValue(field.name, 'text', 't.') }),
  graphql: () => TEXT_GRAPHQL,
  jsonSchema: () => ({ type: 'string', maxLength: MAX_TEXT }),
  mcpInput: () => z.string(),
  csv: { cell: 'text', guard: 'text' },
});
