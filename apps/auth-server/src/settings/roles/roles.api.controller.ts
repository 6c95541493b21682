import { Body, Controller, Get, HttpCode, Param, Patch, Post, Req, UseFilters, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import type { RoleEntity } from '#database/entities/index.js';
import { AppError, BadInputError, ErrorCode } from '#errors/errors.js';
import type { RoleInput } from '#identity/roles.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import { RolesService } from './roles.service.js';

const FIELDS = [
  'name',
  'description',
  'objectPermissions',
  'fieldPermissions',
  'settingsPermissions',
  'assignableToUsers',
  'assignableToApiKeys',
] as const;

/** A role as the JSON API shows it. */
function roleJson(role: RoleEntity) {
  return {
    id: role.id,
    name: role.name,
    description: role.description,
    objectPermissions: role.objectPermissions,
    fieldPermissions: role.fieldPermissions ?? {},
    settingsPermissions: role.settingsPermissions,
    assignableToUsers: role.assignableToUsers,
    assignableToApiKeys: role.assignableToApiKeys,
    isEditable: role.isEditable,
  };
}

/**
 * The roles part of the settings JSON API (docs/settings.md): session cookie + X-CSRF-Token,
 * never a bearer token; the same service, rules and audit entries as the roles page.
 */
@Controller('settings/api/roles')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('ROLES')
export class RolesApiController {
  constructor(private readonly roles: RolesService) {}

  @Get()
  async list(@CurrentSettings() ctx: SettingsContext) {
    const roles = await this.roles.list(ctx);
    return { data: { roles: roles.map((r) => roleJson(r.role)) }, totalCount: roles.length };
  }

  @Get(':id')
  async get(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string) {
    return { data: { role: roleJson((await this.roles.find(ctx, id)).role) } };
  }

  @Post()
  @HttpCode(201)
  async create(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Body() body: unknown) {
    requireJson(req);
    return { data: { createRole: roleJson(await this.roles.create(ctx, parseBody(body) as RoleInput)) } };
  }

  /** Partial: what the body leaves out keeps its value. */
  @Patch(':id')
  async update(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Param('id') id: string, @Body() body: unknown) {
    requireJson(req);
    const given = parseBody(body);
    const { role } = await this.roles.find(ctx, id);
    const input = { ...roleJson(role), ...given } as RoleInput;
    return { data: { updateRole: roleJson(await this.roles.update(ctx, id, input)) } };
  }
}

function requireJson(req: Request): void {
  if (!req.is('application/json')) {
    throw new AppError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, [
      `Content-Type must be application/json; got "${req.headers['content-type'] ?? 'none'}"`,
    ]);
  }
}

function parseBody(body: unknown): Partial<RoleInput> {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'The body must be a JSON object');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !(FIELDS as readonly string[]).includes(k) && k !== '_csrf');
  if (unknown.length)
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => k.slice(0, 64)).join(', ')}; allowed: ${FIELDS.join(', ')}`,
    );
  return Object.fromEntries(FIELDS.filter((k) => Object.hasOwn(b, k)).map((k) => [k, b[k]])) as Partial<RoleInput>;
}
