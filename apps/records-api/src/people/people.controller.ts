import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CurrentPrincipal } from '../../../../libs/auth/src/auth.guard.js';
import type { Principal } from '../../../../libs/auth/src/principal.js';
import { personSchema } from '../../../../libs/records/src/schemas.js';
import { parseRestGetQuery, parseRestListQuery } from '../records/list-query.js';
import { PeopleService } from './people.service.js';

@Controller('rest')
export class PeopleController {
  constructor(private readonly people: PeopleService) {}

  @Get('people')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    const { depth, ...args } = parseRestListQuery(query, personSchema);
    const page = await this.people.list(principal, args, depth);
    return { data: { people: page.records }, totalCount: page.totalCount, pageInfo: page.pageInfo };
  }

  @Get('people/:id')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return { data: { person: await this.people.get(principal, id, parseRestGetQuery(query)) } };
  }

  @Post('people')
  @HttpCode(201)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    return { data: { createPerson: await this.people.create(principal, body) } };
  }

  @Post('batch/people')
  @HttpCode(201)
  async createMany(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    return { data: { createPeople: await this.people.createMany(principal, body) } };
  }

  @Patch('people/:id')
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown) {
    return { data: { updatePerson: await this.people.update(principal, id, body) } };
  }

  @Delete('people/:id')
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: { deletePerson: await this.people.delete(principal, id) } };
  }
}
