import { z } from 'zod';
import { checkText, indexedValue, scalar, TEXT_GRAPHQL } from './shared.js';

/** Markdown of at most 100 KB: filtered with the text operators and searched, never sorted or indexed (a B-tree entry holds ~2.7 KB). */
export const MAX_RICH_TEXT = 102_400;

/** RICH_TEXT: Markdown text (Twenty's RICH_TEXT), kept as given. */
export const richText = scalar({
  name: 'RICH_TEXT',
  word: 'a string of Markdown',
  pageWord: 'formatted text (Markdown)',
  search: (v) => `${v} #>> '{}'`,
  check: (_field, value, path, problems) => checkText(value, path, MAX_RICH_TEXT, problems),
  leaf: (field) => ({ type: 'text', sql: indexedValue(field.name, 'text', 't.'), sortable: false }),
  graphql: () => ({ ...TEXT_GRAPHQL, order: undefined }),
  jsonSchema: () => ({ type: 'string', maxLength: MAX_RICH_TEXT, contentMediaType: 'text/markdown' }),
  mcpInput: () => z.string(),
  csv: { cell: 'text', guard: 'text' },
});
