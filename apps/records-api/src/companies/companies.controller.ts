import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CurrentPrincipal } from '../../../../libs/auth/src/auth.guard.js';
import type { Principal } from '../../../../libs/auth/src/principal.js';
import { companySchema } from '../../../../libs/records/src/schemas.js';
import { parseRestGetQuery, parseRestListQuery } from '../records/list-query.js';
import { CompaniesService } from './companies.service.js';

@Controller('rest')
export class CompaniesController {
  constructor(private readonly companies: CompaniesService) {}

  @Get('companies')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    const { depth, ...args } = parseRestListQuery(query, companySchema);
    const page = await this.companies.list(principal, args, depth);
    return { data: { companies: page.records }, totalCount: page.totalCount, pageInfo: page.pageInfo };
  }

  @Get('companies/:id')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return { data: { company: await this.companies.get(principal, id, parseRestGetQuery(query)) } };
  }

  @Post('companies')
  @HttpCode(201)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    return { data: { createCompany: await this.companies.create(principal, body) } };
  }

  @Post('batch/companies')
  @HttpCode(201)
  async createMany(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    return { data: { createCompanies: await this.companies.createMany(principal, body) } };
  }

  @Patch('companies/:id')
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown) {
    return { data: { updateCompany: await this.companies.update(principal, id, body) } };
  }

  @Delete('companies/:id')
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: { deleteCompany: await this.companies.delete(principal, id) } };
  }
}
