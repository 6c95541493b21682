import { composite, OBJECTS, type FieldDeclaration, type ObjectDeclaration, type SubField } from '#records/objects/index.js';
import { querySchemaOf } from '#records/objects/query-schema.js';
import { OPS_BY_TYPE, sortableFields } from '#records/query/index.js';

/*
 * The docs' field tables, written from the declarations (issue 11): a docs page holding
 * `<!-- field-tables -->` gets one table per object in its place when served, so the rules
 * a page states are the rules the API enforces.
 */

export const FIELD_TABLES_MARKER = '<!-- field-tables -->';

/** "Companies, people and opportunities". */
export function objectList(capitalized = true): string {
  const names = OBJECTS.map((o) => o.plural);
  const text = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0];
  return capitalized ? text.charAt(0).toUpperCase() + text.slice(1) : text;
}

function subRule(sub: SubField): string {
  switch (sub.kind) {
    case 'text':
      if (sub.format === 'email') return `an e-mail address, at most ${sub.maxLength} characters`;
      if (sub.format === 'url')
        return `a URL (\`http\`/\`https\`) or a bare domain such as \`acme.com\`, kept as given; at most ${sub.maxLength}`;
      if (sub.format === 'currency') return 'ISO 4217 code: three capital letters (`USD`, `EUR`)';
      return `at most ${sub.maxLength} characters`;
    case 'bigint':
      return 'an integer (JSON number) from -9007199254740991 to 9007199254740991; GraphQL `BigFloat`';
    case 'number':
      return `a number${sub.min !== undefined && sub.max !== undefined ? ` from ${sub.min} to ${sub.max}` : ''}; GraphQL \`Float\``;
    case 'textList':
      return `at most ${sub.maxItems} e-mail addresses; never null (\`[]\`)`;
    case 'linkList':
      return `at most ${sub.maxItems} \`{url, label}\` (url as a URL above, label at most 200); never null (\`[]\`)`;
  }
}

function rows(object: ObjectDeclaration, field: FieldDeclaration): string[][] {
  const schema = querySchemaOf(object);
  const sortable = new Set(sortableFields(schema));
  const ops = (path: string) =>
    Object.hasOwn(schema.fields, path) ? OPS_BY_TYPE[schema.fields[path].type].map((o) => `\`${o}\``).join(' ') : '—';
  const sort = (path: string) => (sortable.has(path) ? 'yes' : '—');
  switch (field.kind) {
    case 'text':
      return [
        [
          `\`${field.name}\``,
          'text',
          `${field.required ? 'required on create, non-empty, ' : ''}at most ${field.maxLength} characters`,
          ops(field.name),
          sort(field.name),
        ],
      ];
    case 'enum':
      return [
        [
          `\`${field.name}\``,
          `enum \`${field.enumName}\``,
          `one of ${field.values.map((v) => `\`${v}\``).join(', ')}; default \`${field.default}\``,
          ops(field.name),
          sort(field.name),
        ],
      ];
    case 'timestamp':
      return [
        [
          `\`${field.name}\``,
          'timestamp',
          'ISO 8601 date or date-time (a date is midnight UTC), or `null`',
          ops(field.name),
          sort(field.name),
        ],
      ];
    case 'relation': {
      const target = OBJECTS.find((o) => o.plural === field.target)!;
      return [
        [
          `\`${field.name}\``,
          'uuid',
          `a live ${target.singular} of the same workspace (else \`400 VALIDATION_FAILED\`), or \`null\`; \`depth=1\` embeds \`${field.relation}\``,
          ops(field.name),
          sort(field.name),
        ],
      ];
    }
    case 'composite':
      return composite(field.type).subFields.map((sub) => {
        const path = `${field.name}.${sub.name}`;
        const type = sub.kind === 'bigint' ? 'integer' : sub.kind === 'number' ? 'number' : sub.kind === 'text' ? 'text' : 'list';
        return [`\`${path}\``, type, subRule(sub), ops(path), sort(path)];
      });
  }
}

/** One markdown table per object: field, type, rule, filter operators, sortable. */
export function fieldTables(): string {
  return OBJECTS.map((object) => {
    const header = ['| field | type | rule | filter operators | sortable |', '|---|---|---|---|---|'];
    const body = [
      [
        '`id`',
        'uuid',
        'optional on create (a UUID of your choosing; one that exists already is `409 CONFLICT`)',
        '`eq` `neq` `in` `is`',
        'yes',
      ],
      ...object.fields.flatMap((field) => rows(object, field)),
      ['`createdAt`, `updatedAt`', 'timestamp', 'set by the server', '`eq` `neq` `in` `is` `gt` `gte` `lt` `lte`', 'yes'],
      [
        '`deletedAt`',
        'timestamp',
        'set by a delete (soft delete); naming it in a filter lists deleted records',
        '`eq` `neq` `in` `is` `gt` `gte` `lt` `lte`',
        'yes',
      ],
    ].map((cells) => `| ${cells.join(' | ')} |`);
    const composites = object.fields.filter((f) => f.kind === 'composite').map((f) => `\`${f.name}\``);
    const note = composites.length
      ? `\n\nSort by ${composites.join(', ')} as a whole: ${Object.entries(querySchemaOf(object).compositeSort)
          .map(([k, leaves]) => `\`${k}\` = ${leaves.map((l) => `\`${l}\``).join(', then ')}`)
          .join('; ')}.`
      : '';
    return (
      [
        `**${object.typeName}** (\`/rest/${object.plural}\`, GraphQL \`${object.typeName}\`, MCP \`list_${object.plural}\` …)`,
        '',
        ...header,
        ...body,
      ].join('\n') + note
    );
  })
    .concat(
      'These are the built-in fields. A workspace may add its own custom fields, which then behave like these for that workspace only: list them with `GET /rest/metadata/fields`, or read them from `/rest/open-api` called with your credential, GraphQL introspection or MCP `tools/list` (docs/data-model.md).',
    )
    .join('\n\n');
}
