import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { CurrentPrincipal } from '#auth/auth.guard.js';
import { assertSettingsPermission, type Principal } from '#auth/principal.js';
import { Sql } from '#database/sql.js';
import { actorOf } from '#identity/actor.js';
import { createField, deleteField, getField, listFields, updateField } from '#identity/data-model.js';
import { createObject, deleteObject, getObject, listObjects, sweepDeletedObjects, updateObject } from '#identity/objects.js';
import {
  customObjectDeclaration,
  OBJECTS,
  relationSummary,
  standardFields,
  type CustomField,
  type WorkspaceObject,
} from '#records/objects/index.js';
import { listUniqueFields, makeNotUnique, makeUnique, resolveUniqueField } from '#identity/unique-fields.js';
import { BadInputError, ErrorCode } from '#errors/errors.js';

function onlyObjectParameter(query: Record<string, unknown>): string | undefined {
  const unknown = Object.keys(query).filter((key) => key !== 'object');
  if (unknown.length)
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `unknown query parameter ${unknown.join(', ')}; allowed: object`);
  if (query.object !== undefined && typeof query.object !== 'string')
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'object must be given once');
  return query.object as string | undefined;
}

/** A custom field as the metadata API shows it; a relation's side with its relation (docs/data-model.md "Relations"). */
const custom = (field: CustomField) => {
  const relation = relationSummary(field);
  return { ...field, isCustom: true, ...(relation ? { relation } : {}) };
};

function assertDataModel(principal: Principal): void {
  assertSettingsPermission(
    principal,
    'DATA_MODEL',
    'the data model',
    `The role "${principal.role.name}" does not allow changing or reading the data model (DATA_MODEL permission)`,
  );
}

/**
 * The metadata API (docs/data-model.md): a workspace's custom fields, for keys and tokens
 * whose role holds DATA_MODEL. The same rules and audit entries as /settings/data-model.
 */
// Left out of /rest/open-api, whose credential-less document stays the base one; docs/data-model.md describes it.
@ApiExcludeController()
@Controller('rest/metadata/fields')
export class MetadataController {
  constructor(
    private readonly sql: Sql,
    private readonly dataSource: DataSource,
  ) {}

  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    assertDataModel(principal);
    return { data: { fields: (await listFields(this.dataSource, principal.workspaceId, onlyObjectParameter(query))).map(custom) } };
  }

  @Get(':id')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    assertDataModel(principal);
    return { data: { field: custom(await getField(this.dataSource, principal.workspaceId, id)) } };
  }

  @Post()
  async create(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    assertDataModel(principal);
    const actor = await actorOf(this.sql, principal);
    return { data: { createField: custom(await createField(this.dataSource, principal.workspaceId, actor, body)) } };
  }

  @Patch(':id')
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown) {
    assertDataModel(principal);
    const actor = await actorOf(this.sql, principal);
    return { data: { updateField: custom(await updateField(this.dataSource, principal.workspaceId, actor, id, body)) } };
  }

  @Delete(':id')
  @HttpCode(200)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    assertDataModel(principal);
    const actor = await actorOf(this.sql, principal);
    return { data: { deleteField: await deleteField(this.dataSource, principal.workspaceId, actor, id) } };
  }
}

/** The only query parameter an objects list takes: none. */
function noParameters(query: Record<string, unknown>): void {
  const unknown = Object.keys(query);
  if (unknown.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, `unknown query parameter ${unknown.join(', ')}; none is taken`);
}

/**
 * The objects of a workspace (docs/data-model.md "Custom objects"), standard and custom,
 * for keys and tokens whose role holds DATA_MODEL; the same rules and audit entries as
 * /settings/data-model. Each object is listed with its fields: the standard fields of a
 * standard object (`isCustom: false`), then the custom fields of any object.
 */
@ApiExcludeController()
@Controller('rest/metadata/objects')
export class ObjectsMetadataController {
  constructor(
    private readonly sql: Sql,
    private readonly dataSource: DataSource,
  ) {}

  private async withFields(workspaceId: string, objects: WorkspaceObject[]) {
    const fields = await listFields(this.dataSource, workspaceId);
    return objects.map((object) => {
      const declaration = OBJECTS.find((o) => o.plural === object.namePlural) ?? customObjectDeclaration(object);
      return {
        ...object,
        fields: [...standardFields(declaration), ...fields.filter((f) => f.object === object.namePlural).map(custom)],
      };
    });
  }

  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    assertDataModel(principal);
    noParameters(query);
    const objects = await this.withFields(principal.workspaceId, await listObjects(this.dataSource, principal.workspaceId));
    return { data: { objects }, totalCount: objects.length };
  }

  @Get(':id')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    assertDataModel(principal);
    const [object] = await this.withFields(principal.workspaceId, [await getObject(this.dataSource, principal.workspaceId, id)]);
    return { data: { object } };
  }

  @Post()
  async create(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    assertDataModel(principal);
    const actor = await actorOf(this.sql, principal);
    const [createObjectResult] = await this.withFields(principal.workspaceId, [
      await createObject(this.dataSource, principal.workspaceId, actor, body),
    ]);
    return { data: { createObject: createObjectResult } };
  }

  @Patch(':id')
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown) {
    assertDataModel(principal);
    const actor = await actorOf(this.sql, principal);
    const [updated] = await this.withFields(principal.workspaceId, [
      await updateObject(this.dataSource, principal.workspaceId, actor, id, body),
    ]);
    return { data: { updateObject: updated } };
  }

  @Delete(':id')
  @HttpCode(200)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    assertDataModel(principal);
    const actor = await actorOf(this.sql, principal);
    const deleted = await deleteObject(this.dataSource, principal.workspaceId, actor, id);
    // Its records go in the background, a batch per transaction (objects.ts).
    void sweepDeletedObjects(this.dataSource).catch(() => undefined);
    return { data: { deleteObject: deleted } };
  }
}

/**
 * Which fields are unique (docs/data-model.md, "Unique fields"): built-in ones switched on or
 * off here, custom ones here or by `isUnique` on the field. Making a field unique while
 * duplicates exist is 409 with up to 10 of them.
 */
@ApiExcludeController()
@Controller('rest/metadata/unique-fields')
export class UniqueFieldsController {
  constructor(
    private readonly sql: Sql,
    private readonly dataSource: DataSource,
  ) {}

  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    assertDataModel(principal);
    return { data: { uniqueFields: await listUniqueFields(this.dataSource, principal.workspaceId, onlyObjectParameter(query)) } };
  }

  @Put(':object/:field')
  async add(@CurrentPrincipal() principal: Principal, @Param('object') object: string, @Param('field') path: string) {
    assertDataModel(principal);
    const field = await resolveUniqueField(this.dataSource, principal.workspaceId, object, path);
    const actor = await actorOf(this.sql, principal);
    return { data: { uniqueField: await makeUnique(this.dataSource, principal.workspaceId, actor, field) } };
  }

  @Delete(':object/:field')
  @HttpCode(200)
  async remove(@CurrentPrincipal() principal: Principal, @Param('object') object: string, @Param('field') path: string) {
    assertDataModel(principal);
    const field = await resolveUniqueField(this.dataSource, principal.workspaceId, object, path);
    const actor = await actorOf(this.sql, principal);
    await makeNotUnique(this.dataSource, principal.workspaceId, actor, field);
    return { data: { uniqueField: { ...field, unique: false } } };
  }
}
