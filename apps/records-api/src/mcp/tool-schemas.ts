import { z } from 'zod';
import { MAX_LIMIT, DEFAULT_LIMIT, DIRECTIONS, OPS_BY_TYPE, sortableFields, type ObjectSchema } from '../../../../libs/records/src/query/index.js';
import { EMBEDDED_PER_RECORD } from '../companies/companies.service.js';

/*
 * Tool input and output schemas (zod, turned into JSON Schema by the SDK). Inputs check
 * types only, and refuse unknown keys; values (filter syntax, uuids, e-mails, URLs) are
 * checked by the shared parsers and the service layer, so an MCP client gets the same
 * messages as a REST client.
 */

const nullableString = (description?: string) =>
  (description ? z.string().nullable().optional().meta({ description }) : z.string().nullable().optional());

// Inputs

const linkInput = z.strictObject({
  url: z.string().meta({ description: 'A URL; a bare domain such as acme.com is accepted and kept as given.' }),
  label: nullableString(),
});

const domainNameInput = z
  .strictObject({
    primaryLinkUrl: nullableString('The main website: a URL, or a bare domain such as acme.com (kept as given).'),
    primaryLinkLabel: nullableString(),
    secondaryLinks: z.array(linkInput).nullable().optional().meta({ description: 'At most 20 links; replaces the whole list.' }),
  })
  .nullable()
  .optional()
  .meta({ description: 'The website. On update, sub-fields left out keep their value and null clears the whole field.' });

const idInput = (singular: string) => z.string().meta({ description: `The ${singular}'s id (a UUID).` });

export const companyCreateInput = z.strictObject({
  name: z.string().meta({ description: 'Required, non-empty, at most 500 characters.' }),
  domainName: domainNameInput,
  id: z.string().optional().meta({ description: 'Optional UUID of your choosing; one that exists already is a CONFLICT.' }),
});

export const companyUpdateInput = z.strictObject({
  id: idInput('company'),
  name: z.string().optional().meta({ description: 'Non-empty, at most 500 characters.' }),
  domainName: domainNameInput,
});

const personFields = {
  name: z
    .strictObject({ firstName: nullableString(), lastName: nullableString() })
    .nullable()
    .optional()
    .meta({ description: 'On update, a sub-field left out keeps its value; null clears both.' }),
  emails: z
    .strictObject({
      primaryEmail: nullableString('An e-mail address.'),
      additionalEmails: z.array(z.string()).nullable().optional().meta({ description: 'At most 20 e-mail addresses; replaces the whole list.' }),
    })
    .nullable()
    .optional()
    .meta({ description: 'On update, a sub-field left out keeps its value; null clears both.' }),
  companyId: nullableString('The id of a company of this workspace; null unlinks.'),
};

export const personCreateInput = z.strictObject({
  ...personFields,
  id: z.string().optional().meta({ description: 'Optional UUID of your choosing; one that exists already is a CONFLICT.' }),
});

export const personUpdateInput = z.strictObject({ id: idInput('person'), ...personFields });

const depthInput = (embedded: string) =>
  z.literal([0, 1]).optional().meta({ description: `0 (default): relation ids only. 1: embed ${embedded}.` });

export function getInput(singular: string, embedded: string) {
  return z.strictObject({ id: idInput(singular), depth: depthInput(embedded) });
}

export function deleteInput(singular: string) {
  return z.strictObject({ id: idInput(singular) });
}

/** What a list tool's `filter` accepts for one object: each field with its operators. */
function filterFields(schema: ObjectSchema): string {
  return Object.values(schema.fields)
    .map((f) => `${f.path} (${OPS_BY_TYPE[f.type].join(' ')})`)
    .join('; ');
}

export interface ListExamples {
  filter: string[];
  orderBy: string[];
}

/** Sortable fields, composites with what they sort by: `name (= name.firstName, name.lastName)`. */
function sortable(schema: ObjectSchema): string {
  return sortableFields(schema)
    .map((f) => (Object.hasOwn(schema.compositeSort, f) ? `${f} (= ${schema.compositeSort[f].join(', ')})` : f))
    .join(', ');
}

/** The REST list parameters (SPEC §3), with the same names and syntax. */
export function listInput(schema: ObjectSchema, embedded: string, examples: ListExamples) {
  return z.strictObject({
    limit: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: `Page size, default ${DEFAULT_LIMIT}; values above ${MAX_LIMIT} are cut to ${MAX_LIMIT}.` }),
    order_by: z
      .string()
      .optional()
      .meta({
        description:
          `Comma list of field[Direction], in priority order. Direction: ${DIRECTIONS.join(', ')} ` +
          `(default AscNullsFirst). Sortable fields: ${sortable(schema)}. ` +
          'id always breaks ties. Default: createdAt[AscNullsFirst].',
        examples: examples.orderBy,
      }),
    filter: z
      .string()
      .optional()
      .meta({
        description:
          'Conditions field[op]:value; a comma list means AND; and(…), or(…), not(…) nest. ' +
          'Strings are double-quoted ("Acme"); in and containsAny take a list ["a","b"]; is takes NULL or NOT_NULL; ' +
          'dates are ISO 8601 (2024-01-31 or 2024-01-31T12:00:00Z); like/ilike use % and _. ' +
          `Fields (operators): ${filterFields(schema)}. ` +
          'Deleted records are listed only when the filter mentions deletedAt, e.g. deletedAt[is]:NOT_NULL.',
        examples: examples.filter,
      }),
    starting_after: z
      .string()
      .optional()
      .meta({ description: 'pageInfo.endCursor of the previous result: reads the next page (same filter and order_by).' }),
    ending_before: z
      .string()
      .optional()
      .meta({ description: 'pageInfo.startCursor of the previous result: reads the page before it (same filter and order_by).' }),
    depth: depthInput(embedded),
  });
}

// Outputs (the records as REST returns them)

const nullable = z.string().nullable();

export const companyOutput = z.object({
  id: z.string(),
  name: z.string(),
  domainName: z.object({
    primaryLinkUrl: nullable,
    primaryLinkLabel: nullable,
    secondaryLinks: z.array(z.object({ url: z.string(), label: nullable })),
  }),
  createdAt: z.string(),
  updatedAt: z.string(),
  deletedAt: nullable,
});

export const personOutput = z.object({
  id: z.string(),
  name: z.object({ firstName: nullable, lastName: nullable }),
  emails: z.object({ primaryEmail: nullable, additionalEmails: z.array(z.string()) }),
  companyId: nullable,
  createdAt: z.string(),
  updatedAt: z.string(),
  deletedAt: nullable,
});

export const companyWithPeopleOutput = companyOutput.extend({
  people: z.array(personOutput).optional().meta({ description: `With depth 1: the company's oldest ${EMBEDDED_PER_RECORD} people.` }),
});

export const personWithCompanyOutput = personOutput.extend({
  company: companyOutput.nullable().optional().meta({ description: 'With depth 1: the linked company, or null.' }),
});

const pageInfoOutput = z.object({
  hasNextPage: z.boolean(),
  hasPreviousPage: z.boolean(),
  startCursor: nullable,
  endCursor: nullable.meta({ description: 'Pass as starting_after to read the next page.' }),
});

export function listOutput<K extends string>(plural: K, record: z.ZodType) {
  return z.object({
    [plural]: z.array(record),
    totalCount: z.number().int().meta({ description: 'Records matching the filter, across all pages.' }),
    pageInfo: pageInfoOutput,
  } as Record<K, z.ZodType> & { totalCount: z.ZodType; pageInfo: z.ZodType });
}

export function recordOutput<K extends string>(singular: K, record: z.ZodType) {
  return z.object({ [singular]: record } as Record<K, z.ZodType>);
}

export const deletedOutput = z.object({ id: z.string().meta({ description: 'The id of the deleted record (soft delete).' }) });
