import { ApiProperty, ApiPropertyOptional } from './api-property.js';
import { IsIn, isIn, ValidateIf } from 'class-validator';
import { z } from 'zod';
import { jsonPlain } from './column-sql.js';
import { columnOf, enumOf, indexedValue, scalar, toolText, valuesOf } from './shared.js';
import type { FieldType } from './types.js';

/** One of a field's own values (SELECT: its options; RATING: RATING_1 … RATING_5): a GraphQL enum, indexed. */
export function oneOf(spec: Pick<FieldType, 'name' | 'word' | 'pageWord' | 'options' | 'values'>): FieldType {
  const type: FieldType = scalar({
    ...spec,
    indexKind: 'text',
    check(field, value, path, problems) {
      const values = valuesOf(type, field);
      if (typeof value === 'string' && values.includes(value)) return value;
      problems.push(`${path} must be one of ${values.join(', ')}; got ${JSON.stringify(value)?.slice(0, 80)}`);
      return undefined;
    },
    leaf: (field) => ({ type: 'enum', sql: indexedValue(field.name, 'text', 't.'), values: valuesOf(type, field) }),
    graphql(field, typeName) {
      const values = enumOf(type, field, typeName);
      const filter = `${values.name}Filter`;
      const sdl = {
        [values.name]: values.sdl,
        [filter]: `input ${filter} { eq: ${values.name} neq: ${values.name} in: [${values.name}!] is: FilterIs }`,
      };
      return {
        output: values.name,
        input: values.name,
        filter,
        order: 'OrderByDirection',
        sdl,
        enum: { name: values.name, values: valuesOf(type, field) },
      };
    },
    jsonSchema: (field) => ({ type: 'string', enum: valuesOf(type, field) }),
    mcpInput: (field) => z.enum(valuesOf(type, field) as [string, ...string[]]),
    csv: { cell: 'text' },
    column: {
      restInput(field, mode, description) {
        const values = valuesOf(type, field);
        const byDefault = mode === 'create' && field.defaultValue !== undefined ? `Default ${field.defaultValue}.` : undefined;
        return {
          design: String,
          decorators: [
            ApiPropertyOptional({ enum: values, example: field.docs?.example, description: description ?? byDefault }),
            ValidateIf((o: Record<string, unknown>) => o[field.name] !== undefined),
            IsIn(values),
          ],
        };
      },
      restModel: (field) => ({ design: String, decorators: [ApiProperty({ enum: valuesOf(type, field), example: field.docs?.example })] }),
      fastCheck(field) {
        const values = valuesOf(type, field);
        return (v) => v === undefined || isIn(v, values);
      },
      toolInput: (field, mode) =>
        z
          .string()
          .optional()
          .meta({
            description: `One of ${valuesOf(type, field).join(', ')}${mode === 'create' && field.defaultValue !== undefined ? ` (default ${field.defaultValue})` : ''}.`,
          }),
      toolOutput: toolText,
      exportLeaves: (field) => [{ text: `t.${columnOf(field)}`, json: jsonPlain(`t.${columnOf(field)}`) }],
      tableRows: (field, object) => [
        {
          path: field.name,
          type: `enum \`${enumOf(type, field, object.typeName).name}\``,
          rule: `one of ${valuesOf(type, field)
            .map((v) => `\`${v}\``)
            .join(', ')}${field.defaultValue !== undefined ? `; default \`${field.defaultValue}\`` : ''}`,
        },
      ],
    },
  });
  return type;
}

/** SELECT: one of the field's options (Twenty's SELECT). */
export const select = oneOf({ name: 'SELECT', word: 'one of the options', pageWord: 'one of your options', options: 'one' });
