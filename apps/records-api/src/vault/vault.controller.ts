import { All, Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiExcludeEndpoint,
  ApiExtraModels,
  ApiOperation,
  ApiParam,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { CurrentPrincipal } from '#auth/auth.guard.js';
import { assertSettingsPermission, type Principal } from '#auth/principal.js';
import { Sql } from '#database/sql.js';
import { AppError, BadInputError, ErrorCode } from '#errors/errors.js';
import {
  createSecret,
  deleteSecret,
  getSecret,
  listSecrets,
  MAX_DESCRIPTION,
  MAX_VALUE_BYTES,
  RevealForbidden,
  updateSecret,
  type VaultSecretInput,
} from '#identity/vault.js';
import { actorOf } from '#identity/actor.js';
import { ErrorModel } from '../rest/open-api-decorators.js';

export class VaultSecretModel {
  @ApiProperty({ example: 'CRM_TOKEN', pattern: '^[A-Z][A-Z0-9_]{0,63}$' })
  name: string;

  @ApiProperty({ example: 'Token of the CRM webhook receiver' })
  description: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When the value was last replaced.' })
  rotatedAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When a webhook delivery last sent it (to the minute).' })
  lastUsedAt: string | null;
}

export class VaultSecretCreateInput {
  @ApiProperty({ example: 'CRM_TOKEN', pattern: '^[A-Z][A-Z0-9_]{0,63}$' })
  name: string;

  @ApiProperty({ description: `1 to ${MAX_VALUE_BYTES} bytes (UTF-8). Write-only: no credential can read it back.`, writeOnly: true })
  value: string;

  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION })
  description?: string;
}

export class VaultSecretUpdateInput {
  @ApiPropertyOptional({
    description: `A new value (a rotation: rotatedAt moves). 1 to ${MAX_VALUE_BYTES} bytes; write-only.`,
    writeOnly: true,
  })
  value?: string;

  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION })
  description?: string;
}

class DeletedVaultSecretModel {
  @ApiProperty({ example: 'CRM_TOKEN' })
  name: string;
}

const error = (status: number, description: string) => ApiResponse({ status, description, schema: { $ref: getSchemaPath(ErrorModel) } });
const data = (status: number, key: string, schema: object, description: string) =>
  ApiResponse({ status, description, schema: { type: 'object', properties: { data: { type: 'object', properties: { [key]: schema } } } } });
const model = (m: new () => unknown) => ({ $ref: getSchemaPath(m) });
const NAME_PARAM = ApiParam({ name: 'name', description: 'The secret\u2019s name.', example: 'CRM_TOKEN' });
const FORBIDDEN =
  'FORBIDDEN: the role lacks the VAULT settings permission; or the request asked for a value, which no API key or access token is ever given.';

function assertVault(principal: Principal): void {
  assertSettingsPermission(
    principal,
    'VAULT',
    'the vault',
    `The role "${principal.role.name}" does not allow managing the vault (VAULT permission)`,
  );
}

/** `?reveal`, `?value=…` or anything else asking for the value is refused as a reveal; other parameters are unknown. */
function noQuery(query: Record<string, unknown>): void {
  const keys = Object.keys(query);
  if (keys.some((k) => /reveal|value|plain|decrypt|secret/i.test(k))) throw new RevealForbidden();
  if (keys.length)
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `unknown query parameter ${keys.map((k) => k.slice(0, 40)).join(', ')}`);
}

function body(given: unknown, fields: string[]): VaultSecretInput {
  if (!given || typeof given !== 'object' || Array.isArray(given))
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'The body must be a JSON object');
  const b = given as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !fields.includes(k));
  if (unknown.length)
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `unknown field ${unknown.map((k) => k.slice(0, 40)).join(', ')}; allowed: ${fields.join(', ')}`,
    );
  return { name: b.name, value: b.value, description: b.description };
}

function requireJson(req: Request): void {
  if (!req.is('application/json'))
    throw new AppError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, [
      `Content-Type must be application/json; got "${req.headers['content-type'] ?? 'none'}"`,
    ]);
}

/**
 * `/rest/vault/secrets` (docs/vault.md): for API keys and access tokens whose role holds
 * VAULT, names and dates, and write-only values: create, rotate, delete. A value is never
 * read back here, whatever the credential: asking for one (`…/value`, `…/reveal`,
 * `?reveal`) is 403 before anything else is looked at. The same rules and audit entries as
 * /settings/vault (#identity/vault.js).
 */
@ApiTags('vault')
@ApiBearerAuth('bearer')
@ApiExtraModels(VaultSecretModel, DeletedVaultSecretModel, ErrorModel)
@Controller('rest/vault/secrets')
export class VaultController {
  constructor(
    private readonly sql: Sql,
    private readonly ds: DataSource,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'listVaultSecrets', summary: 'List vault secrets (names and dates, never values)' })
  @data(200, 'vaultSecrets', { type: 'array', items: model(VaultSecretModel) }, 'Every secret of the workspace, by name.')
  @error(401, 'UNAUTHENTICATED')
  @error(403, FORBIDDEN)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: Record<string, unknown>) {
    noQuery(query);
    assertVault(principal);
    const secrets = await listSecrets(this.ds, principal.workspaceId);
    return { data: { vaultSecrets: secrets }, totalCount: secrets.length };
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ operationId: 'createVaultSecret', summary: 'Add a secret (the value is write-only)' })
  @ApiBody({ type: VaultSecretCreateInput })
  @data(201, 'createVaultSecret', model(VaultSecretModel), 'The secret, without its value.')
  @error(400, 'VALIDATION_FAILED: a name breaking the rule, a value empty or over 8192 bytes, an unknown field.')
  @error(401, 'UNAUTHENTICATED')
  @error(403, FORBIDDEN)
  @error(409, 'CONFLICT: a secret with this name exists; rotate it instead.')
  async create(
    @CurrentPrincipal() principal: Principal,
    @Req() req: Request,
    @Body() given: unknown,
    @Query() query: Record<string, unknown>,
  ) {
    noQuery(query);
    assertVault(principal);
    requireJson(req);
    const input = body(given, ['name', 'value', 'description']);
    return { data: { createVaultSecret: await createSecret(this.ds, principal.workspaceId, await actorOf(this.sql, principal), input) } };
  }

  /**
   * Any method on a value's address: refused for every bearer credential. Left out of the
   * OpenAPI document (an operation that always fails is none a client should generate);
   * docs/vault.md and docs/rest.md describe it.
   */
  @All([':name/value', ':name/reveal', ':name/plaintext'])
  @ApiExcludeEndpoint()
  reveal(): never {
    throw new RevealForbidden();
  }

  @Get(':name')
  @ApiOperation({ operationId: 'getVaultSecret', summary: 'One secret (name and dates, never the value)' })
  @NAME_PARAM
  @data(200, 'vaultSecret', model(VaultSecretModel), 'The secret, without its value.')
  @error(401, 'UNAUTHENTICATED')
  @error(403, FORBIDDEN)
  @error(404, 'NOT_FOUND: no secret with this name in the workspace of the credential.')
  async get(@CurrentPrincipal() principal: Principal, @Param('name') name: string, @Query() query: Record<string, unknown>) {
    noQuery(query);
    assertVault(principal);
    return { data: { vaultSecret: await getSecret(this.ds, principal.workspaceId, name) } };
  }

  @Patch(':name')
  @ApiOperation({ operationId: 'updateVaultSecret', summary: 'Rotate the value and/or change the description' })
  @NAME_PARAM
  @ApiBody({ type: VaultSecretUpdateInput })
  @data(200, 'updateVaultSecret', model(VaultSecretModel), 'The secret, without its value.')
  @error(400, 'VALIDATION_FAILED: neither value nor description, a value empty or over 8192 bytes, an unknown field.')
  @error(401, 'UNAUTHENTICATED')
  @error(403, FORBIDDEN)
  @error(404, 'NOT_FOUND: no secret with this name in the workspace of the credential.')
  async update(
    @CurrentPrincipal() principal: Principal,
    @Req() req: Request,
    @Param('name') name: string,
    @Body() given: unknown,
    @Query() query: Record<string, unknown>,
  ) {
    noQuery(query);
    assertVault(principal);
    requireJson(req);
    const input = body(given, ['value', 'description']);
    return {
      data: { updateVaultSecret: await updateSecret(this.ds, principal.workspaceId, await actorOf(this.sql, principal), name, input) },
    };
  }

  @Delete(':name')
  @HttpCode(200)
  @ApiOperation({ operationId: 'deleteVaultSecret', summary: 'Delete a secret' })
  @NAME_PARAM
  @data(200, 'deleteVaultSecret', model(DeletedVaultSecretModel), 'The name deleted.')
  @error(401, 'UNAUTHENTICATED')
  @error(403, FORBIDDEN)
  @error(404, 'NOT_FOUND: no secret with this name in the workspace of the credential.')
  @error(409, 'CONFLICT: a webhook header names the secret; change the webhook first.')
  async remove(@CurrentPrincipal() principal: Principal, @Param('name') name: string, @Query() query: Record<string, unknown>) {
    noQuery(query);
    assertVault(principal);
    const deleted = await deleteSecret(this.ds, principal.workspaceId, await actorOf(this.sql, principal), name);
    return { data: { deleteVaultSecret: { name: deleted.name } } };
  }
}
