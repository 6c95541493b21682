import { requiredOnCreate } from '#records/field-types/index.js';
import type { ObjectDeclaration } from '#records/objects/index.js';

/**
 * What the OpenAPI document says of each REST call of an object: its operation (id, summary,
 * description), the key its answer's data is under, and what its success answer is. The
 * standard objects' controllers are decorated with it, and a workspace's document describes
 * its own objects with it (well-known/open-api-custom-objects.ts).
 */
export function restOperations(object: ObjectDeclaration) {
  const { plural, singular, typeName, pluralType } = object;
  const a = `${object.article} ${singular}`;
  const allOptional = !object.fields.some(requiredOnCreate);
  return {
    list: {
      operation: {
        operationId: `list${pluralType}`,
        summary: `List ${plural}`,
        description: 'Keyset-paginated; unknown query parameters are refused (400).',
      },
      key: plural,
    },
    groupBy: {
      operation: {
        operationId: `groupBy${pluralType}`,
        summary: `Group ${plural} and aggregate`,
        description:
          'Groups the live records the filter keeps by up to 3 fields (select/enum, boolean, text, dates with :day|week|month|quarter|year, UTC) ' +
          'and aggregates each group: count, sum:<field>, avg:<field> (exact decimal strings), min:<field>, max:<field>. ' +
          'Ordered by the group keys; more than 1000 groups is 400 TOO_MANY_GROUPS.',
      },
    },
    export: {
      operation: {
        operationId: `export${pluralType}`,
        summary: `Export ${plural} as CSV or NDJSON`,
        description:
          'Streams every live record the filter keeps (custom fields included), oldest first, as a file download. ' +
          'Needs read permission. A workspace runs at most EXPORTS_PER_WORKSPACE (2) exports at once, and a second one never takes a ' +
          "server's last free slot; one more, or one asked while workspaces refused earlier wait for a slot, is 429 with Retry-After. " +
          'Unknown query parameters are refused (400).',
      },
    },
    get: { operation: { operationId: `get${typeName}`, summary: `Get ${a}` }, key: singular, response: `The ${singular}.` },
    create: {
      operation: {
        operationId: `create${typeName}`,
        summary: `Create ${a}`,
        description: allOptional ? 'Every field is optional; unknown fields are refused (400).' : 'Unknown fields are refused (400).',
      },
      key: `create${typeName}`,
      response: `The created ${singular}.`,
    },
    createMany: {
      operation: { operationId: `create${pluralType}`, summary: `Create up to 60 ${plural}, all or none` },
      key: `create${pluralType}`,
      response: `The created ${plural}, in the order given.`,
    },
    update: {
      operation: {
        operationId: `update${typeName}`,
        summary: `Update ${a}`,
        description: 'Partial update: fields left out keep their value; `{}` changes nothing.',
      },
      key: `update${typeName}`,
      response: `The updated ${singular}.`,
    },
    delete: {
      operation: {
        operationId: `delete${typeName}`,
        summary: `Delete ${a} (soft delete)`,
        ...(object.docs.deleteNote ? { description: object.docs.deleteNote } : {}),
      },
      key: `delete${typeName}`,
      response: `The id of the deleted ${singular}.`,
    },
    updateByFilter: {
      operation: {
        operationId: `update${pluralType}`,
        summary: `Update every ${singular} a filter keeps`,
        description:
          'Sets the fields of the body on every live record the (required) filter keeps, at most 10 000, in one transaction, ' +
          'with one webhook event each. More matches → 400 with the count.',
      },
      key: `update${pluralType}`,
    },
    deleteByFilter: {
      operation: {
        operationId: `delete${pluralType}`,
        summary: `Delete every ${singular} a filter keeps (soft delete)`,
        description: 'At most 10 000 live records the (required) filter keeps, in one transaction, with one webhook event each.',
      },
      key: `delete${pluralType}`,
    },
    restore: {
      operation: {
        operationId: `restore${typeName}`,
        summary: `Restore a deleted ${singular}`,
        description:
          'Brings a soft-deleted record back (a `restored` webhook event). A live record → 409; a unique value now held by another → 409.',
      },
      key: `restore${typeName}`,
      response: `The restored ${singular}.`,
    },
  };
}
