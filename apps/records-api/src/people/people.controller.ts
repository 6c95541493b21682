import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../../../../libs/auth/src/auth.guard.js';
import type { Principal } from '../../../../libs/auth/src/principal.js';
import { personSchema } from '../../../../libs/records/src/schemas.js';
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
import { PersonCreateInput, PersonUpdateInput } from './dto/person.input.js';
import { PersonModel } from './dto/person.model.js';
import { PeopleService } from './people.service.js';

const COMPANY = "each person's `company` (or null)";

@ApiTags('people')
@ApiBearerAuth('bearer')
@ApiExtraModels(PersonModel, PersonCreateInput, ...SHARED_MODELS)
@Controller('rest')
export class PeopleController {
  constructor(private readonly people: PeopleService) {}

  @Get('people')
  @ApiOperation({ operationId: 'listPeople', summary: 'List people', description: 'Keyset-paginated; unknown query parameters are refused (400).' })
  @ApiListQuery(personSchema, COMPANY, {
    filter: {
      'By e-mail': 'emails.primaryEmail[eq]:"ada@acme.com"',
      'Last name ends with "son"': 'name.lastName[ilike]:"%son"',
      'People of a company': 'companyId[eq]:"0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10"',
      'Nested groups': 'and(companyId[is]:NOT_NULL,not(emails.primaryEmail[endsWith]:"@gmail.com"))',
    },
    orderBy: { 'By name (first, then last name)': 'name[AscNullsFirst]', 'By last name, newest first': 'name.lastName[AscNullsLast],createdAt[DescNullsLast]' },
  })
  @ApiListResponse('people', PersonModel)
  @ApiErrors(400, 401, 403, 429)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    const { depth, ...args } = parseRestListQuery(query, personSchema);
    const page = await this.people.list(principal, args, depth);
    return { data: { people: page.records }, totalCount: page.totalCount, pageInfo: page.pageInfo };
  }

  @Get('people/:id')
  @ApiOperation({ operationId: 'getPerson', summary: 'Get a person' })
  @ApiIdParam('person')
  @ApiDepthQuery(COMPANY)
  @ApiDataResponse(200, 'The person.', 'person', PersonModel)
  @ApiErrors(400, 401, 403, 404, 429)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return { data: { person: await this.people.get(principal, id, parseRestGetQuery(query)) } };
  }

  @Post('people')
  @HttpCode(201)
  @ApiOperation({ operationId: 'createPerson', summary: 'Create a person', description: 'Every field is optional; unknown fields are refused (400).' })
  @ApiRecordBody(PersonCreateInput)
  @ApiDataResponse(201, 'The created person.', 'createPerson', PersonModel)
  @ApiErrors(400, 401, 403, 409, 413, 415, 429)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    return { data: { createPerson: await this.people.create(principal, body) } };
  }

  @Post('batch/people')
  @HttpCode(201)
  @ApiOperation({ operationId: 'createPeople', summary: 'Create up to 60 people, all or none' })
  @ApiBatchBody(PersonCreateInput)
  @ApiDataResponse(201, 'The created people, in the order given.', 'createPeople', PersonModel, true)
  @ApiErrors(400, 401, 403, 409, 413, 415, 429)
  async createMany(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    return { data: { createPeople: await this.people.createMany(principal, body) } };
  }

  @Patch('people/:id')
  @ApiOperation({ operationId: 'updatePerson', summary: 'Update a person', description: 'Partial update: fields left out keep their value; `{}` changes nothing.' })
  @ApiIdParam('person')
  @ApiRecordBody(PersonUpdateInput)
  @ApiDataResponse(200, 'The updated person.', 'updatePerson', PersonModel)
  @ApiErrors(400, 401, 403, 404, 413, 415, 429)
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: unknown) {
    return { data: { updatePerson: await this.people.update(principal, id, body) } };
  }

  @Delete('people/:id')
  @ApiOperation({ operationId: 'deletePerson', summary: 'Delete a person (soft delete)' })
  @ApiIdParam('person')
  @ApiDataResponse(200, 'The id of the deleted person.', 'deletePerson', DeletedModel)
  @ApiErrors(400, 401, 403, 404, 429)
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: { deletePerson: await this.people.delete(principal, id) } };
  }
}
