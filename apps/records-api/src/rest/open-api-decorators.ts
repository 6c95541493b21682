import { applyDecorators } from '@nestjs/common';
import {
  ApiBody,
  ApiParam,
  ApiProperty,
  ApiQuery,
  ApiResponse,
  getSchemaPath,
  type ApiParamOptions,
  type ApiQueryOptions,
} from '@nestjs/swagger';
import { ErrorCode } from '#errors/errors.js';
import {
  DEFAULT_LIMIT,
  DIRECTIONS,
  MAX_LIMIT,
  OPS_BY_TYPE,
  relationFilterNote,
  sortableFields,
  type ObjectSchema,
} from '#records/query/index.js';
import { MAX_BATCH } from '#records/service/records.service.js';
import type { AnyClass } from '#records/service/decorate.js';

/*
 * OpenAPI descriptions shared by the object controllers (rest/object.controller.ts): list parameters,
 * response envelopes (docs/rest.md) and the error shape. Plain decorators, so the document is
 * built from the controllers as they are, without the Nest CLI plugin.
 */

export class PageInfoModel {
  @ApiProperty()
  hasNextPage: boolean;

  @ApiProperty()
  hasPreviousPage: boolean;

  @ApiProperty({ type: String, nullable: true, description: 'Pass as ending_before to read the page before this one.' })
  startCursor: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Pass as starting_after to read the page after this one.' })
  endCursor: string | null;
}

export class DeletedModel {
  @ApiProperty({ format: 'uuid' })
  id: string;
}

export class ErrorModel {
  @ApiProperty({ type: 'integer', example: 400 })
  statusCode: number;

  @ApiProperty({ example: 'Bad Request', description: 'The HTTP reason phrase of statusCode.' })
  error: string;

  @ApiProperty({ enum: Object.values(ErrorCode), example: ErrorCode.INVALID_FILTER, description: 'Stable code to branch on.' })
  code: string;

  @ApiProperty({
    type: [String],
    example: ['filter: unknown field "nme"; allowed fields: id, name, …'],
    description: 'What is wrong, naming the parameter or field.',
  })
  messages: string[];

  @ApiProperty({ example: 'f3b9c6d2-…', description: 'Also in the X-Request-Id response header.' })
  requestId: string;
}

/** Models referenced only from raw schemas; register them on the controllers with ApiExtraModels. */
export const SHARED_MODELS = [PageInfoModel, DeletedModel, ErrorModel];

const REQUEST_ID = {
  'X-Request-Id': { description: 'Your X-Request-Id if you sent a sane one, else a new one.', schema: { type: 'string' } },
};

/** What each error status means on these routes, with the codes it carries. */
const ERRORS: Record<number, { description: string; headers?: Record<string, { description: string; schema: { type: string } }> }> = {
  400: {
    description:
      'Bad input; the message names the parameter or field and what is allowed. Codes: VALIDATION_FAILED, INVALID_LIMIT, ' +
      'INVALID_ORDER_BY, INVALID_FILTER, INVALID_CURSOR, INVALID_DEPTH, INVALID_ID, INVALID_JSON.',
  },
  401: {
    description: 'UNAUTHENTICATED: no, invalid, expired or revoked credentials.',
    headers: {
      'WWW-Authenticate': {
        description:
          'Bearer realm="…", resource_metadata="<PUBLIC_URL>/.well-known/oauth-protected-resource" (and error="invalid_token" when a token was sent).',
        schema: { type: 'string' },
      },
    },
  },
  403: { description: 'FORBIDDEN: the role of the credential does not allow this action on this object.' },
  404: { description: 'NOT_FOUND: no live record with this id in the workspace of the credential.' },
  409: { description: 'CONFLICT: a record with this id exists already (or the batch holds the same id twice).' },
  413: { description: 'PAYLOAD_TOO_LARGE: the body is larger than 1 MB.' },
  415: { description: 'UNSUPPORTED_MEDIA_TYPE: the body is not application/json.' },
  429: {
    description: 'RATE_LIMITED: too many requests for this credential.',
    headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
  },
};

export function ApiErrors(...statuses: number[]) {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: ERRORS[status].description,
        headers: { ...REQUEST_ID, ...ERRORS[status].headers },
        schema: { $ref: getSchemaPath(ErrorModel) },
      }),
    ),
  );
}

const ref = (model: AnyClass) => ({ $ref: getSchemaPath(model) });

/** `{data: {<key>: <record>}}` (or a list of records with `array`). */
export function ApiDataResponse(status: number, description: string, key: string, model: AnyClass, array = false) {
  return ApiResponse({
    status,
    description,
    headers: REQUEST_ID,
    schema: {
      type: 'object',
      required: ['data'],
      properties: {
        data: {
          type: 'object',
          required: [key],
          properties: { [key]: array ? { type: 'array', items: ref(model) } : ref(model) },
        },
      },
    },
  });
}

/** `{data: {<plural>: [...]}, totalCount, pageInfo}`. */
export function ApiListResponse(plural: string, model: AnyClass) {
  return ApiResponse({
    status: 200,
    description: 'One page of records, the number matching the filter, and cursors to the neighbouring pages.',
    headers: REQUEST_ID,
    schema: {
      type: 'object',
      required: ['data', 'totalCount', 'pageInfo'],
      properties: {
        data: { type: 'object', required: [plural], properties: { [plural]: { type: 'array', items: ref(model) } } },
        totalCount: { type: 'integer', description: 'Records matching the filter, across all pages.' },
        pageInfo: ref(PageInfoModel),
      },
    },
  });
}

export const idParam = (singular: string): ApiParamOptions => ({
  name: 'id',
  description: `The ${singular}'s id.`,
  schema: { type: 'string', format: 'uuid' },
});
export const ApiIdParam = (singular: string) => ApiParam(idParam(singular));

export const depthQuery = (embedded: string): ApiQueryOptions => ({
  name: 'depth',
  required: false,
  description: `0 (default): relation ids only. 1: also embed ${embedded}; that needs read permission on the embedded object too.`,
  schema: { type: 'integer', enum: [0, 1], default: 0 },
});
export const ApiDepthQuery = (embedded: string) => ApiQuery(depthQuery(embedded));

export const ApiFieldsQuery = () =>
  ApiQuery({
    name: 'fields',
    required: false,
    description:
      'Comma list of field names (custom fields included): only those fields, and `id`, are read and returned. ' +
      'With depth=1, the embedded relations to include are named here too. An unknown name → 400 INVALID_FIELDS.',
    schema: { type: 'string' },
    example: 'id,name',
  });

/**
 * The list parameters of one object that name its fields (order_by, filter) and what depth
 * embeds; the workspace's document (well-known/open-api-custom-objects.ts) describes its own
 * objects with them too.
 */
export function listQueries(
  schema: ObjectSchema,
  embedded: string,
  examples: { filter: Record<string, string>; orderBy: Record<string, string> },
): ApiQueryOptions[] {
  const fields = Object.values(schema.fields)
    .map((f) => `\`${f.path}\` (${OPS_BY_TYPE[f.type].join(', ')})`)
    .join('; ');
  // Absent for an object without relations (a custom object's), which leaves no gap in the text.
  const across = relationFilterNote(schema);
  const asExamples = (values: Record<string, string>) =>
    Object.fromEntries(Object.entries(values).map(([summary, value], i) => [`example${i + 1}`, { summary, value }]));
  return [
    {
      name: 'order_by',
      required: false,
      description:
        `Comma list of \`field[Direction]\` in priority order; Direction one of ${DIRECTIONS.join(', ')} (default AscNullsFirst). ` +
        `Sortable: ${sortableFields(schema).join(', ')}. \`id\` always breaks ties. Default \`createdAt[AscNullsFirst]\`.`,
      schema: { type: 'string' },
      examples: asExamples(examples.orderBy),
    },
    {
      name: 'filter',
      required: false,
      description:
        '`field[op]:value` conditions; a comma list is AND; `and(…)`, `or(…)`, `not(…)` nest. Strings are double-quoted; ' +
        '`in`/`containsAny` take `["a","b"]`; `is` takes `NULL` or `NOT_NULL`; dates are ISO 8601. ' +
        `Fields (operators): ${fields}. ${across}${across ? ' ' : ''}` +
        'Deleted records are listed only when the filter mentions `deletedAt`.',
      schema: { type: 'string' },
      examples: asExamples(examples.filter),
    },
    depthQuery(embedded),
  ];
}

/** The REST list parameters (docs/rest.md) of one object: its filterable and sortable fields. */
export function ApiListQuery(
  schema: ObjectSchema,
  embedded: string,
  examples: { filter: Record<string, string>; orderBy: Record<string, string> },
) {
  const [orderBy, filter, depth] = listQueries(schema, embedded, examples);
  return applyDecorators(
    ApiQuery({
      name: 'limit',
      required: false,
      description: `Page size. Default ${DEFAULT_LIMIT}; values above ${MAX_LIMIT} are cut to ${MAX_LIMIT}; not a non-negative integer → 400 INVALID_LIMIT.`,
      schema: { type: 'integer', minimum: 0, default: DEFAULT_LIMIT },
    }),
    ApiQuery(orderBy),
    ApiQuery(filter),
    ApiQuery({
      name: 'starting_after',
      required: false,
      description: '`pageInfo.endCursor` of a previous page: the page after it (same filter and order_by).',
      schema: { type: 'string' },
    }),
    ApiQuery({
      name: 'ending_before',
      required: false,
      description: '`pageInfo.startCursor` of a previous page: the page before it (same filter and order_by).',
      schema: { type: 'string' },
    }),
    ApiQuery(depth),
    ApiFieldsQuery(),
  );
}

export const ApiRecordBody = (model: AnyClass, description?: string) => ApiBody({ type: model, description, required: true });

export const ApiBatchBody = (model: AnyClass) =>
  ApiBody({
    required: true,
    description: `1 to ${MAX_BATCH} records, created all or none.`,
    schema: { type: 'array', minItems: 1, maxItems: MAX_BATCH, items: ref(model) },
  });

/** `GET /rest/<plural>/groupBy` parameters (docs/rest.md "Aggregates"). */
export function groupByQueries(
  schema: ObjectSchema,
  example: { groupBy: string; aggregate: string } = { groupBy: 'createdAt:month', aggregate: 'count' },
): ApiQueryOptions[] {
  const fields = Object.values(schema.fields);
  const of = (types: string[]) =>
    fields
      .filter((f) => types.includes(f.type))
      .map((f) => f.path)
      .join(', ') || 'none';
  return [
    {
      name: 'group_by',
      required: false,
      description:
        `Comma list of up to 3 fields to group by, dates as field:granularity (day, week, month, quarter, year; UTC; default day). ` +
        `Fields that group: ${of(['enum', 'boolean', 'text', 'date', 'timestamp'])}. None: one group of every record.`,
      schema: { type: 'string' },
      example: example.groupBy,
    },
    {
      name: 'aggregate',
      required: false,
      description:
        `Comma list of count, sum:<field>, avg:<field> (${of(['bigint', 'number'])}), min:<field>, max:<field> ` +
        `(${of(['bigint', 'number', 'timestamp', 'date'])}). Default count. Sums and averages are exact decimal strings.`,
      schema: { type: 'string' },
      example: example.aggregate,
    },
    {
      name: 'filter',
      required: false,
      description: 'The list filter (docs/rest.md): only the records it keeps are grouped.',
      schema: { type: 'string' },
    },
  ];
}

export const ApiGroupByQuery = (schema: ObjectSchema, example?: { groupBy: string; aggregate: string }) =>
  applyDecorators(...groupByQueries(schema, example).map((options) => ApiQuery(options)));

/** `{data: {groups: [{by, count, sum, avg, min, max}]}}`. */
export function ApiGroupByResponse() {
  const byField = (description: string) => ({ type: 'object', description, additionalProperties: true });
  return ApiResponse({
    status: 200,
    description: 'The groups, ordered by their keys (nulls last); at most 1000.',
    headers: REQUEST_ID,
    schema: {
      type: 'object',
      required: ['data'],
      properties: {
        data: {
          type: 'object',
          required: ['groups'],
          properties: {
            groups: {
              type: 'array',
              items: {
                type: 'object',
                required: ['by'],
                properties: {
                  by: byField('The group key: each group_by field and its value (a date bucket as YYYY-MM-DD), null for no value.'),
                  count: { type: 'integer', description: 'Records in the group (with aggregate=count).' },
                  sum: byField('Field → exact sum as a decimal string (null when no record has a value).'),
                  avg: byField('Field → exact average as a decimal string, 6 decimals at most.'),
                  min: byField('Field → the smallest value.'),
                  max: byField('Field → the largest value.'),
                },
              },
            },
          },
        },
      },
    },
  });
}

/** `upsert` and `match` on creates (docs/rest.md, "Upsert"). */
export function ApiUpsertQuery() {
  return applyDecorators(
    ApiQuery({
      name: 'upsert',
      required: false,
      description:
        'true: a record that matches a live one by `id`, then by a unique field (`emails.primaryEmail`, `domainName.primaryLinkUrl`, ' +
        'unique custom fields), updates it with the fields sent; no match creates. 201 when all were created, else 200; ' +
        '`meta.created` and `meta.updated` list the ids.',
      schema: { type: 'boolean', default: false },
    }),
    ApiQuery({
      name: 'match',
      required: false,
      description: 'With upsert=true: the one unique field (or `id`) to match on. Not unique → 400.',
      schema: { type: 'string' },
      example: 'emails.primaryEmail',
    }),
  );
}

/** `hard=true` on a delete (docs/rest.md, "Erasure"). */
export const ApiHardQuery = () =>
  ApiQuery({
    name: 'hard',
    required: false,
    description:
      'true: erase the record (live or deleted) and every stored webhook event carrying it, for erasure requests. ' +
      'Needs the destroy permission (Admin only). Records other records link to → 409.',
    schema: { type: 'boolean', default: false },
  });

/** The required `filter` of a change by filter. */
export const filterOnlyQuery = (schema: ObjectSchema): ApiQueryOptions => ({
  name: 'filter',
  required: true,
  description: `Required; the list syntax (docs/rest.md). Fields: ${Object.keys(schema.fields).join(', ')}.`,
  schema: { type: 'string' },
  example: 'id[in]:[0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10]',
});
export const ApiFilterOnlyQuery = (schema: ObjectSchema) => ApiQuery(filterOnlyQuery(schema));

/** `{data: {<key>: {count, ids}}}`. */
export function ApiChangedResponse(key: string) {
  return ApiResponse({
    status: 200,
    description: 'How many records changed, and their ids.',
    headers: REQUEST_ID,
    schema: {
      type: 'object',
      required: ['data'],
      properties: {
        data: {
          type: 'object',
          required: [key],
          properties: {
            [key]: {
              type: 'object',
              required: ['count', 'ids'],
              properties: { count: { type: 'integer' }, ids: { type: 'array', items: { type: 'string', format: 'uuid' } } },
            },
          },
        },
      },
    },
  });
}

/** `GET /rest/<plural>/export` parameters (docs/rest.md "Exports"). */
export function ApiExportQuery() {
  return applyDecorators(
    ApiQuery({
      name: 'format',
      required: true,
      description: '`csv` (RFC 4180, UTF-8, LF line ends, a header row of field paths) or `ndjson` (one REST record per line).',
      schema: { type: 'string', enum: ['csv', 'ndjson'] },
    }),
    ApiQuery({
      name: 'filter',
      required: false,
      description:
        'The list filter (docs/rest.md): only the records it keeps are exported. Exports hold live records only, ' +
        'whatever the filter says about `deletedAt`.',
      schema: { type: 'string' },
    }),
    ApiQuery({
      name: 'fields',
      required: false,
      description:
        'Comma list of field names (custom fields included): only those fields, and `id`, are written. ' +
        'An unknown name → 400 INVALID_FIELDS.',
      schema: { type: 'string' },
      example: 'id,name',
    }),
    ApiQuery({
      name: 'formulas',
      required: false,
      description:
        "CSV only. `escaped` (the default): a text cell that starts with `=`, `+`, `-`, `@`, a tab or a CR gets a leading `'` " +
        '(OWASP CSV injection), which CSV imports take off again. `raw`: every cell as it is. NDJSON is never changed.',
      schema: { type: 'string', enum: ['escaped', 'raw'], default: 'escaped' },
    }),
  );
}

/** The streamed file, and the 429 of the concurrency limit. */
export function ApiExportResponses() {
  return applyDecorators(
    ApiResponse({
      status: 200,
      description:
        'Every matching live record, oldest first (createdAt, then id), streamed. A transfer that breaks off ' +
        '(no final chunk) is an incomplete export: retry it.',
      headers: {
        ...REQUEST_ID,
        'Content-Disposition': { description: 'attachment; filename="<object>-<YYYY-MM-DD>.<format>"', schema: { type: 'string' } },
      },
      content: {
        'text/csv': { schema: { type: 'string', description: 'A header row of field paths, then one row per record.' } },
        'application/x-ndjson': {
          schema: { type: 'string', description: 'One JSON record per line, as GET /rest/<plural>/{id} returns it.' },
        },
      },
    }),
    ApiResponse({
      status: 429,
      description: 'RATE_LIMITED: too many requests for this credential, or too many exports of this workspace running at once.',
      headers: { ...REQUEST_ID, 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
      schema: { $ref: getSchemaPath(ErrorModel) },
    }),
  );
}
