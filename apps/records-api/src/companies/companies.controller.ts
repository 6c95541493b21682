import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../../../../libs/auth/src/auth.guard.js';
import type { Principal } from '../../../../libs/auth/src/principal.js';
import { companySchema } from '../../../../libs/records/src/schemas.js';
import { parseRestGetQuery, parseRestListQuery } from '../records/list-query.js';
import {
  ApiBatchBody,
  ApiDataResponse,
  ApiDepthQuery,
  ApiErrors,
  ApiIdParam,
  ApiListQuery,
  ApiListResponse,
  ApiRecordBody,
  DeletedModel,
  SHARED_MODELS,
} from '../records/open-api.js';
import { CompaniesService } from './companies.service.js';
import { CompanyCreateInput, CompanyUpdateInput } from './dto/company.input.js';
import { CompanyModel } from './dto/company.model.js';

const PEOPLE = 'each company\'s `people` (its 60 oldest)';

@ApiTags('companies')
@ApiBearerAuth('bearer')
@ApiExtraModels(CompanyModel, CompanyCreateInput, ...SHARED_MODELS)
@Controller('rest')
export class CompaniesController {
  constructor(private readonly companies: CompaniesService) {}

  @Get('companies')
  @ApiOperation({ operationId: 'listCompanies', summary: 'List companies', description: 'Keyset-paginated; unknown query parameters are refused (400).' })
  @ApiListQuery(companySchema, PEOPLE, {
    filter: {
      'Name contains "acme", any case': 'name[ilike]:"%acme%"',
      'By domain': 'domainName.primaryLinkUrl[eq]:"acme.com"',
      'Either condition': 'or(name[startsWith]:"A",createdAt[gte]:"2025-01-01")',
      'Deleted companies': 'deletedAt[is]:NOT_NULL',
    },
    orderBy: { 'By name': 'name[AscNullsFirst]', 'Newest first': 'createdAt[DescNullsLast]' },
  })
  @ApiListResponse('companies', CompanyModel)
  @ApiErrors(400, 401, 403, 429)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    const { depth, ...args } = parseRestListQuery(query, companySchema);
    const page = await this.companies.list(principal, args, depth);
    return { data: { companies: page.records }, totalCount: page.totalCount, pageInfo: page.pageInfo };
  }

  @Get('companies/:id')
  @ApiOperation({ operationId: 'getCompany', summary: 'Get a company' })
  @ApiIdParam('company')
  @ApiDepthQuery(PEOPLE)
  @ApiDataResponse(200, 'The company.', 'company', CompanyModel)
  @ApiErrors(400, 401, 403, 404, 429)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return { data: { company: await this.companies.get(principal, id, parseRestGetQuery(query)) } };
  }

  @Post('companies')
  @HttpCode(201)
  @ApiOperation({ operationId: 'createCompany', summary: 'Create a company', description: 'Unknown fields are refused (400).' })
  @ApiRecordBody(CompanyCreateInput)
  @ApiDataResponse(201, 'The created company.', 'createCompany', CompanyModel)
  @ApiErrors(400, 401, 403, 409, 413, 415, 429)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    return { data: { createCompany: await this.companies.create(principal, body) } };
  }

  @Post('batch/companies')
  @HttpCode(201)
  @ApiOperation({ operationId: 'createCompanies', summary: 'Create up to 60 companies, all or none' })
  @ApiBatchBody(CompanyCreateInput)
  @ApiDataResponse(201, 'The created companies, in the order given.', 'createCompanies', CompanyModel, true)
  @ApiErrors(400, 401, 403, 409, 413, 415, 429)
  async createMany(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    return { data: { createCompanies: await this.companies.createMany(principal, body) } };
  }

  @Patch('companies/:id')
  @ApiOperation({ operationId: 'updateCompany', summary: 'Update a company', description: 'Partial update: fields left out keep their value; `{}` changes nothing.' })
  @ApiIdParam('company')
  @ApiRecordBody(CompanyUpdateInput)
  @ApiDataResponse(200, 'The updated company.', 'updateCompany', CompanyModel)
  @ApiErrors(400, 401, 403, 404, 413, 415, 429)
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown) {
    return { data: { updateCompany: await this.companies.update(principal, id, body) } };
  }

  @Delete('companies/:id')
  @ApiOperation({ operationId: 'deleteCompany', summary: 'Delete a company (soft delete)', description: 'Its people stay, still linked.' })
  @ApiIdParam('company')
  @ApiDataResponse(200, 'The id of the deleted company.', 'deleteCompany', DeletedModel)
  @ApiErrors(400, 401, 403, 404, 429)
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: { deleteCompany: await this.companies.delete(principal, id) } };
  }
}
