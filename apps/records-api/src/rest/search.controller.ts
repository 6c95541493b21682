import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '#auth/auth.guard.js';
import type { Principal } from '#auth/principal.js';
import { BadInputError, ErrorCode } from '#errors/errors.js';
import { FIELD_TYPES } from '#records/field-types/index.js';
import { ApiErrors } from './open-api-decorators.js';
import {
  DEFAULT_SEARCH_LIMIT,
  MAX_QUERY_LENGTH,
  MAX_SEARCH_LIMIT,
  SEARCHABLE_OBJECTS,
  SearchService,
} from '#records/service/search.service.js';

const PARAMS = ['q', 'objects', 'limit', 'starting_after'];
/** "TEXT, RICH_TEXT, … and ADDRESS": the custom field types search reads (their modules' `search`). */
const SEARCHED = FIELD_TYPES.filter((t) => t.search).map((t) => t.name);
const SEARCHED_TYPES = `${SEARCHED.slice(0, -1).join(', ')} and ${SEARCHED.at(-1)}`;

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new BadInputError(ErrorCode.VALIDATION_FAILED, `${name} must be given once, as a plain string`);
  return value;
}

/** `objects=companies,people` → the names; absent → undefined (every readable object). */
export function parseObjects(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function parseSearchLimit(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_SEARCH_LIMIT;
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_SEARCH_LIMIT) {
    throw new BadInputError(ErrorCode.INVALID_LIMIT, `limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}; got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

/** `GET /rest/search` (docs/rest.md "Search"): one call into SearchService. */
@ApiTags('search')
@ApiBearerAuth('bearer')
@Controller('rest')
export class SearchController {
  constructor(private readonly search: SearchService) {}

  @Get('search')
  @ApiOperation({
    operationId: 'search',
    summary: 'Search across objects',
    description:
      'Every word of q matches by prefix, in any case and with or without accents; words of 4 or more letters also match with one typo. ' +
      `Searches names, e-mails, domains and custom ${SEARCHED_TYPES} fields. Best first: exact, then prefix, then typo matches.`,
  })
  @ApiQuery({ name: 'q', required: true, description: `1 to ${MAX_QUERY_LENGTH} characters.`, example: 'acme' })
  @ApiQuery({
    name: 'objects',
    required: false,
    description: `Comma-separated, of ${SEARCHABLE_OBJECTS.join(', ')}. Default: every object the role can read; naming one it cannot read is 403.`,
    example: 'companies,people',
  })
  @ApiQuery({ name: 'limit', required: false, description: `1 to ${MAX_SEARCH_LIMIT}; default ${DEFAULT_SEARCH_LIMIT}.`, example: 20 })
  @ApiQuery({ name: 'starting_after', required: false, description: 'pageInfo.endCursor of the previous page of the same search.' })
  @ApiResponse({ status: 200, description: '`{data: {search: [{object, id, label, score, record}]}, pageInfo}`, best first.' })
  @ApiErrors(400, 401, 403, 429)
  async run(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    const unknown = Object.keys(query).filter((key) => !PARAMS.includes(key));
    if (unknown.length) {
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        `unknown query parameter ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${PARAMS.join(', ')})`,
      );
    }
    const result = await this.search.search(principal, {
      q: single(query, 'q') ?? '',
      objects: parseObjects(single(query, 'objects')),
      limit: parseSearchLimit(single(query, 'limit')),
      after: single(query, 'starting_after') || undefined,
      afterParam: 'starting_after',
    });
    return {
      data: { search: result.hits.map(({ object, id, label, score, record }) => ({ object, id, label, score, record })) },
      pageInfo: result.pageInfo,
    };
  }
}
