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
} from './list-query.js';
import { pickFields } from '#records/service/read-args.js';
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
import { classDecorators, method, serviceHolder } from '#records/service/decorate.js';
import { embeddedText } from '#records/service/embedded-text.js';
import { ExportsService } from '#records/service/exports.service.js';
import { definitionFor } from '#records/service/object-definitions.js';
import { serviceFor, type ObjectService } from '#records/service/object-service.js';
import { restClasses } from '#records/service/rest-classes.js';
import { restOperations } from './rest-operations.js';

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
  const { plural, singular, pluralType } = object;
  const { create, update, model } = restClasses(object, OBJECTS);
  const schema = definitionFor(plural).schema;
  const embedded = embeddedText(object, 'rest');
  const ops = restOperations(object);

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
      ApiOperation(ops.list.operation),
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
      ApiOperation(ops.groupBy.operation),
      ApiGroupByQuery(schema, object.docs.groupByExample),
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
    [Get(`${plural}/export`), ApiOperation(ops.export.operation), ApiExportQuery(), ApiExportResponses(), ApiErrors(400, 401, 403)],
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
      ApiOperation(ops.get.operation),
      // Listed in the order swagger keeps them: path id first (as the hand-written controllers had it).
      ApiDepthQuery(embedded),
      ApiFieldsQuery(),
      ApiIdParam(singular),
      ApiDataResponse(200, ops.get.response, ops.get.key, model),
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
      ApiOperation(ops.create.operation),
      ApiRecordBody(create),
      ApiDataResponse(201, ops.create.response, ops.create.key, model),
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
      ApiOperation(ops.createMany.operation),
      ApiBatchBody(create),
      ApiDataResponse(201, ops.createMany.response, ops.createMany.key, model, true),
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
      ApiOperation(ops.update.operation),
      ApiIdParam(singular),
      ApiRecordBody(update),
      ApiDataResponse(200, ops.update.response, ops.update.key, model),
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
      ApiOperation(ops.delete.operation),
      ApiIdParam(singular),
      ApiHardQuery(),
      ApiDataResponse(200, ops.delete.response, ops.delete.key, DeletedModel),
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
      ApiOperation(ops.updateByFilter.operation),
      ApiFilterOnlyQuery(schema),
      ApiRecordBody(update),
      ApiChangedResponse(ops.updateByFilter.key),
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
      ApiOperation(ops.deleteByFilter.operation),
      ApiFilterOnlyQuery(schema),
      ApiChangedResponse(ops.deleteByFilter.key),
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
      ApiOperation(ops.restore.operation),
      ApiIdParam(singular),
      ApiDataResponse(200, ops.restore.response, ops.restore.key, model),
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
