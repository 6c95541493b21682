import { ApiProperty, ApiPropertyOptional } from './api-property.js';
import { IsOptional, isUUID, IsUUID } from 'class-validator';
import { z } from 'zod';
import { absent } from './fast-check.js';
import { isUuid } from '../query/filter.js';
import { jsonPlain } from './column-sql.js';
import { uuid } from './uuid.js';
import { columnOf, scalar, toolNullableText, toolText, wrongType } from './shared.js';
import type { RelationSettings } from './types.js';

/**
 * RELATION: a many-to-one link by id to a live record of the target object in the same
 * workspace (a person's `companyId`). The standard objects' links are RELATION fields with
 * their id in a column of their own (docs/decisions/0062-standard-fields-in-the-registry.md);
 * held in `custom`, the id would be read as a uuid only when it is one, as UUID's is.
 */
export const relation = scalar({
  name: 'RELATION',
  word: 'the id (a UUID) of a record of the linked object',
  pageWord: 'a link to another record',
  check: (field, value, path, problems) => (isUuid(value) ? value.toLowerCase() : wrongType(relation, field, path, problems)),
  // Held in `custom`, read as UUID's are: as a uuid only when the stored text is one.
  leaf: (field) => {
    const [read] = uuid.leaves(field);
    return { type: read.type, sql: read.sql };
  },
  graphql: uuid.graphql,
  jsonSchema: () => ({ type: 'string', format: 'uuid' }),
  mcpInput: () => z.string(),
  csv: { cell: 'text' },
  // A live record of the target in the same workspace: the records layer checks that on write (record-writer.ts).
  column: {
    restInput: (_field, _mode, description) => ({
      design: Object,
      decorators: [
        ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, ...(description ? { description } : {}) }),
        IsOptional(),
        IsUUID(),
      ],
    }),
    restModel: (field) => ({
      design: Object,
      decorators: [ApiProperty({ type: String, format: 'uuid', nullable: true, example: field.docs?.example })],
    }),
    fastCheck: () => (v) => absent(v) || isUUID(v),
    toolInput: (field) => toolNullableText(field.docs?.tool),
    toolOutput: toolText,
    exportLeaves: (field) => [{ text: `t.${columnOf(field)}`, json: jsonPlain(`t.${columnOf(field)}`) }],
    tableRows(field, object) {
      const link = relationSettings(field)!;
      return [
        {
          path: field.name,
          type: 'uuid',
          rule: `a live ${object.singularOf(link.targetObject)} of the same workspace (else \`400 VALIDATION_FAILED\`), or \`null\`; \`depth=1\` embeds \`${link.relationName}\``,
        },
      ];
    },
  },
});

/** The settings of a RELATION field (null for a field of another type). */
export function relationSettings(field: { type: string; settings?: unknown }): RelationSettings | null {
  return field.type === relation.name ? (field.settings as RelationSettings) : null;
}

/** Whether a type name is RELATION's (a field made with its relation, docs/decisions/0066-relations.md). */
export function isRelationType(type: unknown): boolean {
  return type === relation.name;
}
