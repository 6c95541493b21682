import { ApiProperty, ApiPropertyOptional } from './api-property.js';
import { IsOptional } from 'class-validator';
import { z } from 'zod';
import { normalizeTimestamp } from '../query/filter.js';
import { IsTimestamp } from './column-rest.js';
import { absent, text } from './fast-check.js';
import { isoOf, jsonPlain } from './column-sql.js';
import { columnOf, indexedValue, scalar, toolNullableText, toolText, wrongType } from './shared.js';

/** DATE_TIME: an instant, given in ISO 8601 with any offset, kept in UTC. */
export const dateTime = scalar({
  name: 'DATE_TIME',
  word: 'an ISO 8601 date-time such as 2026-12-31T12:00:00Z',
  pageWord: 'a date and time',
  check(field, value, path, problems) {
    const ts = typeof value === 'string' ? normalizeTimestamp(value) : undefined;
    return ts === undefined ? wrongType(dateTime, field, path, problems) : new Date(ts).toISOString();
  },
  leaf: (field) => ({ type: 'timestamp', sql: `(${indexedValue(field.name, 'text', 't.')}::timestamptz)` }),
  graphql: () => ({ output: 'DateTime', input: 'DateTime', filter: 'DateFilter', order: 'OrderByDirection' }),
  jsonSchema: () => ({ type: 'string', format: 'date-time' }),
  mcpInput: () => z.string(),
  csv: { cell: 'text' },
  // In a timestamptz column of its own: as Postgres reads it (a date alone is midnight UTC).
  toColumn: (value) => normalizeTimestamp(value as string),
  column: {
    restInput: (field, _mode, description) => ({
      design: Object,
      decorators: [
        ApiPropertyOptional({
          type: String,
          format: 'date-time',
          nullable: true,
          example: field.docs?.example,
          ...(description ? { description } : {}),
        }),
        IsOptional(),
        IsTimestamp(),
      ],
    }),
    restModel: (field) => ({
      design: Object,
      decorators: [
        ApiProperty({
          type: String,
          format: 'date-time',
          nullable: true,
          example: field.docs?.example,
          description: field.docs?.description,
        }),
      ],
    }),
    fastCheck: () => (v) => absent(v) || (text(v) && normalizeTimestamp(v) !== undefined),
    toolInput: (field) => toolNullableText(field.docs?.tool ?? 'An ISO 8601 date or date-time such as 2026-12-31; null clears it.'),
    toolOutput: toolText,
    exportLeaves: (field) => [{ text: isoOf(`t.${columnOf(field)}`), json: jsonPlain(isoOf(`t.${columnOf(field)}`)) }],
    tableRows: (field) => [{ path: field.name, type: 'timestamp', rule: 'ISO 8601 date or date-time (a date is midnight UTC), or `null`' }],
  },
});
