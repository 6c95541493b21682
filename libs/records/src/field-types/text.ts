import { ApiProperty, ApiPropertyOptional } from './api-property.js';
import { IsNotEmpty, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { maxLength } from 'class-validator';
import { z } from 'zod';
import { absent, text as storableText } from './fast-check.js';
import { jsonString } from './column-sql.js';
import { checkText, columnOf, indexedValue, MAX_TEXT, requiredOnCreate, scalar, TEXT_GRAPHQL, toolText } from './shared.js';
import type { ColumnField } from './types.js';

/** A standard TEXT field's most characters (its `settings.maxLength`). */
const most = (field: ColumnField) => field.settings?.maxLength ?? MAX_TEXT;

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
  column: {
    restInput(field, mode, description) {
      const required = requiredOnCreate(field);
      const max = most(field);
      const example = mode === 'update' && field.docs?.updateExample !== undefined ? field.docs.updateExample : field.docs?.example;
      const options = { minLength: required ? 1 : undefined, maxLength: max, example, ...(description ? { description } : {}) };
      if (!required) {
        return {
          design: Object,
          decorators: [ApiPropertyOptional({ type: String, nullable: true, ...options }), IsOptional(), IsString(), MaxLength(max)],
        };
      }
      const rules = [IsString(), IsNotEmpty(), MaxLength(max)];
      return mode === 'create'
        ? { design: String, decorators: [ApiProperty(options), ...rules] }
        : {
            design: String,
            decorators: [ApiPropertyOptional(options), ValidateIf((o: Record<string, unknown>) => o[field.name] !== undefined), ...rules],
          };
    },
    restModel: (field) => ({ design: String, decorators: [ApiProperty({ example: field.docs?.example })] }),
    fastCheck(field, mode) {
      const max = most(field);
      const valid = (v: unknown) => storableText(v) && v !== '' && maxLength(v, max);
      if (!requiredOnCreate(field)) return (v) => absent(v) || (storableText(v) && maxLength(v, max));
      return mode === 'create' ? valid : (v) => v === undefined || valid(v);
    },
    toolInput(field, mode) {
      const required = requiredOnCreate(field);
      const rule = `${required ? 'non-empty, ' : ''}at most ${most(field)} characters.`;
      const schema = mode === 'create' && required ? z.string() : z.string().optional();
      return schema.meta({
        description: mode === 'create' && required ? `Required, ${rule}` : rule.charAt(0).toUpperCase() + rule.slice(1),
      });
    },
    toolOutput: toolText,
    exportLeaves: (field) => [{ text: `t.${columnOf(field)}`, json: jsonString(`t.${columnOf(field)}`), guard: 'text' }],
    tableRows: (field) => [
      {
        path: field.name,
        type: 'text',
        rule: `${requiredOnCreate(field) ? 'required on create, non-empty, ' : ''}at most ${most(field)} characters`,
      },
    ],
  },
});
