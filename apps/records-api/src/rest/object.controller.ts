import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Res, type Type } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiExtraModels, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '#auth/auth.guard.js';
import type { Principal } from '#auth/principal.js';
import { OBJECTS, type ObjectDeclaration } from '#records/objects/index.js';
import { sendExport } from './export-response.js';
import {
  parseFilterQuery,
  parseHardQuery,
  parseRestExportQuery,
  parseRestGroupByQuery,
  parseRestListQuery,
  parseRestReadQuery,
  parseUpsertQuery,
  pickFields,
} from './list-query.js';
import {
  ApiBatchBody,
  ApiDataResponse,
  ApiDepthQuery,
  ApiErrors,
  ApiExportQuery,
  ApiExportResponses,
  ApiFieldsQuery,
  ApiGroupByQuery,
  ApiGroupByResponse,
  ApiIdParam,
  ApiListQuery,
  ApiListResponse,
  ApiRecordBody,
  ApiUpsertQuery,
  ApiHardQuery,
  ApiFilterOnlyQuery,
  ApiChangedResponse,
  DeletedModel,
  SHARED_MODELS,
} from './open-api-decorators.js';
import { classDecorators, method, serviceHolder } from '../records/decorate.js';
import { embeddedText } from '../records/embedded-text.js';
import { ExportsService } from '../records/exports.service.js';
import { definitionFor } from '../records/object-definitions.js';
import { serviceFor, type ObjectService } from '../records/object-service.js';
import { restClasses } from '../records/rest-classes.js';

/** The names a REST answer keys its data by (`companies`, `company`, `createCompany`, …). */
export type RestNames = Pick<ObjectDeclaration, 'plural' | 'singular' | 'typeName' | 'pluralType'>;

/**
 * What each REST call of an object does: one call into RecordsService (through the
 * object's service) and the answer's shape. The controller of each standard object
 * (objectController) and the one that serves a workspace's own objects
 * (custom-object.controller.ts) both answer with these.
 */
export const restCalls = {
  async list(service: ObjectService, n: RestNames, principal: Principal, query: Record<string, unknown>) {
    const { depth, ...args } = parseRestListQuery(query, await service.schema(principal), await service.fieldNames(principal));
    const page = await service.list(principal, args, depth);
    const records = args.fields ? page.records.map((r) => pickFields(r, args.fields)) : page.records;
    return { data: { [n.plural]: records }, totalCount: page.totalCount, pageInfo: page.pageInfo };
  },
  async groupBy(service: ObjectService, principal: Principal, query: Record<string, unknown>) {
    return { data: { groups: await service.groupBy(principal, (workspace) => parseRestGroupByQuery(query, workspace)) } };
  },
  async export(exports: ExportsService, plural: string, principal: Principal, query: Record<string, unknown>, res: Response) {
    const running = await exports.start(plural, principal, (workspaceSchema, names) => parseRestExportQuery(query, workspaceSchema, names));
    await sendExport(res, running, exports.limits.stallTimeoutMs);
  },
  async get(service: ObjectService, n: RestNames, principal: Principal, id: string, query: Record<string, unknown>) {
    const { depth, fields } = parseRestReadQuery(query, await service.fieldNames(principal));
    return { data: { [n.singular]: pickFields(await service.get(principal, id, depth, fields), fields) } };
  },
  async create(service: ObjectService, n: RestNames, principal: Principal, body: unknown, query: Record<string, unknown>, res: Response) {
    const { upsert, match } = parseUpsertQuery(query);
    if (!upsert) return { data: { [`create${n.typeName}`]: await service.create(principal, body) } };
    const result = await service.upsertMany(principal, [body], null, match);
    if (result.updated.length) res.status(200);
    return { data: { [`create${n.typeName}`]: result.records[0] }, meta: { created: result.created, updated: result.updated } };
  },
  async createMany(
    service: ObjectService,
    n: RestNames,
    principal: Principal,
    body: unknown,
    query: Record<string, unknown>,
    res: Response,
  ) {
    const { upsert, match } = parseUpsertQuery(query);
    if (!upsert) return { data: { [`create${n.pluralType}`]: await service.createMany(principal, body) } };
    const result = await service.upsertMany(principal, body, '', match);
    if (result.updated.length) res.status(200);
    return { data: { [`create${n.pluralType}`]: result.records }, meta: { created: result.created, updated: result.updated } };
  },
  async update(service: ObjectService, n: RestNames, principal: Principal, id: string, body: unknown) {
    return { data: { [`update${n.typeName}`]: await service.update(principal, id, body) } };
  },
  async delete(service: ObjectService, n: RestNames, principal: Principal, id: string, query: Record<string, unknown>) {
    const hard = parseHardQuery(query);
    return { data: { [`delete${n.typeName}`]: await (hard ? service.destroy(principal, id) : service.delete(principal, id)) } };
  },
  async updateByFilter(service: ObjectService, n: RestNames, principal: Principal, query: Record<string, unknown>, body: unknown) {
    const filter = parseFilterQuery(query, await service.schema(principal));
    return { data: { [`update${n.pluralType}`]: await service.updateByFilter(principal, filter, body) } };
  },
  async deleteByFilter(service: ObjectService, n: RestNames, principal: Principal, query: Record<string, unknown>) {
    const filter = parseFilterQuery(query, await service.schema(principal));
    return { data: { [`delete${n.pluralType}`]: await service.deleteByFilter(principal, filter) } };
  },
  async restore(service: ObjectService, n: RestNames, principal: Principal, id: string) {
    return { data: { [`restore${n.typeName}`]: await service.restore(principal, id) } };
  },
};

/**
 * The six REST calls of one object (docs/rest.md; docs/architecture.md), each a decorator list and one call into
 * RecordsService, made from the declaration: `/rest/<plural>`, `/rest/batch/<plural>`.
 */
export function objectController(object: ObjectDeclaration): Type<unknown> {
  const { plural, singular, typeName, pluralType } = object;
  const { create, update, model } = restClasses(object, OBJECTS);
  const schema = definitionFor(plural).schema;
  const embedded = embeddedText(object, 'rest');
  const a = `${object.article} ${singular}`;
  const allOptional = !object.fields.some((f) => f.kind === 'text' && f.required);

  const cls = serviceHolder<ObjectService>(`${pluralType}Controller`, serviceFor(plural));
  Inject(ExportsService)(cls.prototype, 'exports');
  const P = CurrentPrincipal();

  method(
    cls,
    'list',
    function (this: { service: ObjectService }, principal: Principal, query: Record<string, unknown>) {
      return restCalls.list(this.service, object, principal, query);
    },
    [
      Get(plural),
      ApiOperation({
        operationId: `list${pluralType}`,
        summary: `List ${plural}`,
        description: 'Keyset-paginated; unknown query parameters are refused (400).',
      }),
      ApiListQuery(schema, embedded, { filter: object.docs.filterExamples, orderBy: object.docs.orderByExamples }),
      ApiListResponse(plural, model),
      ApiErrors(400, 401, 403, 429),
    ],
    [P, Query()],
  );

  // Before `:id`, so /groupBy is this route and not an id.
  method(
    cls,
    'groupBy',
    function (this: { service: ObjectService }, principal: Principal, query: Record<string, unknown>) {
      return restCalls.groupBy(this.service, principal, query);
    },
    [
      Get(`${plural}/groupBy`),
      ApiOperation({
        operationId: `groupBy${pluralType}`,
        summary: `Group ${plural} and aggregate`,
        description:
          'Groups the live records the filter keeps by up to 3 fields (select/enum, boolean, text, dates with :day|week|month|quarter|year, UTC) ' +
          'and aggregates each group: count, sum:<field>, avg:<field> (exact decimal strings), min:<field>, max:<field>. ' +
          'Ordered by the group keys; more than 1000 groups is 400 TOO_MANY_GROUPS.',
      }),
      ApiGroupByQuery(schema, object.docs.groupByExample ?? { groupBy: 'createdAt:month', aggregate: 'count' }),
      ApiGroupByResponse(),
      ApiErrors(400, 401, 403, 429),
    ],
    [P, Query()],
  );

  // Before `:id` too.
  method(
    cls,
    'export',
    function (this: { exports: ExportsService }, principal: Principal, query: Record<string, unknown>, res: Response) {
      return restCalls.export(this.exports, plural, principal, query, res);
    },
    [
      Get(`${plural}/export`),
      ApiOperation({
        operationId: `export${pluralType}`,
        summary: `Export ${plural} as CSV or NDJSON`,
        description:
          'Streams every live record the filter keeps (custom fields included), oldest first, as a file download. ' +
          'Needs read permission. A workspace runs at most EXPORTS_PER_WORKSPACE (2) exports at once, and a second one never takes a ' +
          "server's last free slot; one more, or one asked while workspaces refused earlier wait for a slot, is 429 with Retry-After. " +
          'Unknown query parameters are refused (400).',
      }),
      ApiExportQuery(),
      ApiExportResponses(),
      ApiErrors(400, 401, 403),
    ],
    [P, Query(), Res()],
  );

  method(
    cls,
    'get',
    function (this: { service: ObjectService }, principal: Principal, id: string, query: Record<string, unknown>) {
      return restCalls.get(this.service, object, principal, id, query);
    },
    [
      Get(`${plural}/:id`),
      ApiOperation({ operationId: `get${typeName}`, summary: `Get ${a}` }),
      // Listed in the order swagger keeps them: path id first (as the hand-written controllers had it).
      ApiDepthQuery(embedded),
      ApiFieldsQuery(),
      ApiIdParam(singular),
      ApiDataResponse(200, `The ${singular}.`, singular, model),
      ApiErrors(400, 401, 403, 404, 429),
    ],
    [P, Param('id'), Query()],
    [Object, String, Object],
  );

  method(
    cls,
    'create',
    function (this: { service: ObjectService }, principal: Principal, body: unknown, query: Record<string, unknown>, res: Response) {
      return restCalls.create(this.service, object, principal, body, query, res);
    },
    [
      Post(plural),
      HttpCode(201),
      ApiUpsertQuery(),
      ApiOperation({
        operationId: `create${typeName}`,
        summary: `Create ${a}`,
        description: allOptional ? 'Every field is optional; unknown fields are refused (400).' : 'Unknown fields are refused (400).',
      }),
      ApiRecordBody(create),
      ApiDataResponse(201, `The created ${singular}.`, `create${typeName}`, model),
      ApiErrors(400, 401, 403, 409, 413, 415, 429),
    ],
    [P, Body(), Query(), Res({ passthrough: true })],
  );

  method(
    cls,
    'createMany',
    function (this: { service: ObjectService }, principal: Principal, body: unknown, query: Record<string, unknown>, res: Response) {
      return restCalls.createMany(this.service, object, principal, body, query, res);
    },
    [
      Post(`batch/${plural}`),
      HttpCode(201),
      ApiUpsertQuery(),
      ApiOperation({ operationId: `create${pluralType}`, summary: `Create up to 60 ${plural}, all or none` }),
      ApiBatchBody(create),
      ApiDataResponse(201, `The created ${plural}, in the order given.`, `create${pluralType}`, model, true),
      ApiErrors(400, 401, 403, 409, 413, 415, 429),
    ],
    [P, Body(), Query(), Res({ passthrough: true })],
  );

  method(
    cls,
    'update',
    function (this: { service: ObjectService }, principal: Principal, id: string, body: unknown) {
      return restCalls.update(this.service, object, principal, id, body);
    },
    [
      Patch(`${plural}/:id`),
      ApiOperation({
        operationId: `update${typeName}`,
        summary: `Update ${a}`,
        description: 'Partial update: fields left out keep their value; `{}` changes nothing.',
      }),
      ApiIdParam(singular),
      ApiRecordBody(update),
      ApiDataResponse(200, `The updated ${singular}.`, `update${typeName}`, model),
      ApiErrors(400, 401, 403, 404, 413, 415, 429),
    ],
    [P, Param('id'), Body()],
    [Object, String, Object],
  );

  method(
    cls,
    'delete',
    function (this: { service: ObjectService }, principal: Principal, id: string, query: Record<string, unknown>) {
      return restCalls.delete(this.service, object, principal, id, query);
    },
    [
      Delete(`${plural}/:id`),
      ApiOperation({
        operationId: `delete${typeName}`,
        summary: `Delete ${a} (soft delete)`,
        ...(object.docs.deleteNote ? { description: object.docs.deleteNote } : {}),
      }),
      ApiIdParam(singular),
      ApiHardQuery(),
      ApiDataResponse(200, `The id of the deleted ${singular}.`, `delete${typeName}`, DeletedModel),
      ApiErrors(400, 401, 403, 404, 409, 429),
    ],
    [P, Param('id'), Query()],
    [Object, String, Object],
  );

  method(
    cls,
    'updateByFilter',
    function (this: { service: ObjectService }, principal: Principal, query: Record<string, unknown>, body: unknown) {
      return restCalls.updateByFilter(this.service, object, principal, query, body);
    },
    [
      Patch(plural),
      ApiOperation({
        operationId: `update${pluralType}`,
        summary: `Update every ${singular} a filter keeps`,
        description:
          'Sets the fields of the body on every live record the (required) filter keeps, at most 10 000, in one transaction, ' +
          'with one webhook event each. More matches → 400 with the count.',
      }),
      ApiFilterOnlyQuery(schema),
      ApiRecordBody(update),
      ApiChangedResponse(`update${pluralType}`),
      ApiErrors(400, 401, 403, 409, 413, 415, 429),
    ],
    [P, Query(), Body()],
  );

  method(
    cls,
    'deleteByFilter',
    function (this: { service: ObjectService }, principal: Principal, query: Record<string, unknown>) {
      return restCalls.deleteByFilter(this.service, object, principal, query);
    },
    [
      Delete(plural),
      ApiOperation({
        operationId: `delete${pluralType}`,
        summary: `Delete every ${singular} a filter keeps (soft delete)`,
        description: 'At most 10 000 live records the (required) filter keeps, in one transaction, with one webhook event each.',
      }),
      ApiFilterOnlyQuery(schema),
      ApiChangedResponse(`delete${pluralType}`),
      ApiErrors(400, 401, 403, 429),
    ],
    [P, Query()],
  );

  method(
    cls,
    'restore',
    function (this: { service: ObjectService }, principal: Principal, id: string) {
      return restCalls.restore(this.service, object, principal, id);
    },
    [
      Patch(`restore/${plural}/:id`),
      ApiOperation({
        operationId: `restore${typeName}`,
        summary: `Restore a deleted ${singular}`,
        description:
          'Brings a soft-deleted record back (a `restored` webhook event). A live record → 409; a unique value now held by another → 409.',
      }),
      ApiIdParam(singular),
      ApiDataResponse(200, `The restored ${singular}.`, `restore${typeName}`, model),
      ApiErrors(400, 401, 403, 404, 409, 429),
    ],
    [P, Param('id')],
    [Object, String],
  );

  classDecorators(cls, [ApiTags(plural), ApiBearerAuth('bearer'), ApiExtraModels(model, create, ...SHARED_MODELS), Controller('rest')]);
  return cls as Type<unknown>;
}

/** One controller per declared object. */
export const OBJECT_CONTROLLERS = OBJECTS.map(objectController);
