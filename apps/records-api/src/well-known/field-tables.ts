import { columnSurface, fieldType } from '#records/field-types/index.js';
import { OBJECTS, type ObjectDeclaration, type StandardField } from '#records/objects/index.js';
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

/** The rows of a field, as its registry type words them, with the operators and sortability of each leaf. */
function rows(object: ObjectDeclaration, field: StandardField): string[][] {
  const schema = querySchemaOf(object);
  const sortable = new Set(sortableFields(schema));
  const ops = (path: string) =>
    Object.hasOwn(schema.fields, path) ? OPS_BY_TYPE[schema.fields[path].type].map((o) => `\`${o}\``).join(' ') : '—';
  const sort = (path: string) => (sortable.has(path) ? 'yes' : '—');
  const context = { typeName: object.typeName, singularOf: (plural: string) => OBJECTS.find((o) => o.plural === plural)!.singular };
  return columnSurface(field.type)
    .tableRows(field, context)
    .map((row) => [`\`${row.path}\``, row.type, row.rule, ops(row.path), sort(row.path)]);
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
    const composites = object.fields.filter((f) => fieldType(f.type).composite).map((f) => `\`${f.name}\``);
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
