import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiExcludeController } from '@nestjs/swagger';
import { CurrentPrincipal } from '#auth/auth.guard.js';
import type { Principal } from '#auth/principal.js';
import { ExportsService } from '#records/service/exports.service.js';
import { ObjectService } from '#records/service/object-service.js';
import { RecordsService } from '#records/service/records.service.js';
import { restCalls, type RestNames } from './object.controller.js';

/**
 * The REST calls of a workspace's own objects (docs/data-model.md "Custom objects"): the
 * same paths, parameters and answers as a standard object's (object.controller.ts), for
 * whichever active custom object of the caller's workspace the path names. Registered after
 * every other controller, so a standard object's or another resource's route always comes
 * first; an object the workspace does not have (another workspace's, a deactivated or
 * deleted one) is 404. Its OpenAPI description is the workspace's document
 * (`/rest/open-api` with a credential), never the public one.
 */
@ApiExcludeController()
@Controller('rest')
export class CustomObjectController {
  constructor(
    private readonly records: RecordsService,
    private readonly exports: ExportsService,
  ) {}

  /** The object `plural` names in the caller's workspace, or 404. */
  private async object(principal: Principal, plural: string): Promise<{ service: ObjectService; names: RestNames }> {
    const def = await this.records.definitionFor(plural, principal);
    return { service: new ObjectService(this.records, plural), names: def.declaration };
  }

  // Before `:object/:id`, so these paths are not taken for an object named `restore` or `batch` (reserved names anyway).
  @Patch('restore/:object/:id')
  async restore(@CurrentPrincipal() principal: Principal, @Param('object') plural: string, @Param('id') id: string) {
    const { service, names } = await this.object(principal, plural);
    return restCalls.restore(service, names, principal, id);
  }

  @Post('batch/:object')
  @HttpCode(201)
  async createMany(
    @CurrentPrincipal() principal: Principal,
    @Param('object') plural: string,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { service, names } = await this.object(principal, plural);
    return restCalls.createMany(service, names, principal, body, query, res);
  }

  @Get(':object')
  async list(@CurrentPrincipal() principal: Principal, @Param('object') plural: string, @Query() query: Record<string, unknown>) {
    const { service, names } = await this.object(principal, plural);
    return restCalls.list(service, names, principal, query);
  }

  @Get(':object/groupBy')
  async groupBy(@CurrentPrincipal() principal: Principal, @Param('object') plural: string, @Query() query: Record<string, unknown>) {
    const { service } = await this.object(principal, plural);
    return restCalls.groupBy(service, principal, query);
  }

  @Get(':object/export')
  async export(
    @CurrentPrincipal() principal: Principal,
    @Param('object') plural: string,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ) {
    await this.object(principal, plural);
    return restCalls.export(this.exports, plural, principal, query, res);
  }

  @Get(':object/:id')
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('object') plural: string,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    const { service, names } = await this.object(principal, plural);
    return restCalls.get(service, names, principal, id, query);
  }

  @Post(':object')
  @HttpCode(201)
  async create(
    @CurrentPrincipal() principal: Principal,
    @Param('object') plural: string,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { service, names } = await this.object(principal, plural);
    return restCalls.create(service, names, principal, body, query, res);
  }

  @Patch(':object/:id')
  async update(@CurrentPrincipal() principal: Principal, @Param('object') plural: string, @Param('id') id: string, @Body() body: unknown) {
    const { service, names } = await this.object(principal, plural);
    return restCalls.update(service, names, principal, id, body);
  }

  @Delete(':object/:id')
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('object') plural: string,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    const { service, names } = await this.object(principal, plural);
    return restCalls.delete(service, names, principal, id, query);
  }

  @Patch(':object')
  async updateByFilter(
    @CurrentPrincipal() principal: Principal,
    @Param('object') plural: string,
    @Query() query: Record<string, unknown>,
    @Body() body: unknown,
  ) {
    const { service, names } = await this.object(principal, plural);
    return restCalls.updateByFilter(service, names, principal, query, body);
  }

  @Delete(':object')
  async deleteByFilter(@CurrentPrincipal() principal: Principal, @Param('object') plural: string, @Query() query: Record<string, unknown>) {
    const { service, names } = await this.object(principal, plural);
    return restCalls.deleteByFilter(service, names, principal, query);
  }
}
