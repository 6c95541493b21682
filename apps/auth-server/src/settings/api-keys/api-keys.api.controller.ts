import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, UseFilters, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import { isISO8601 } from 'class-validator';
import { API_KEY_EXPIRY_CHOICES, expiryFromChoice } from '#identity/api-key-expiry.js';
import { AppError, BadInputError, ErrorCode } from '#errors/errors.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import { ApiKeysService, includeRevoked, type NewApiKey } from './api-keys.service.js';

const CREATE_FIELDS = new Set(['name', 'roleId', 'role', 'expiresAt', 'expiresIn', '_csrf']);

/**
 * The settings JSON API (docs/authentication.md): the signed-in session cookie plus the CSRF token in
 * X-CSRF-Token, never a bearer token. Errors have the REST shape.
 */
@Controller('settings/api')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
export class SettingsApiController {
  constructor(private readonly keys: ApiKeysService) {}

  /** Who is signed in, where, and the CSRF token to send with writes. */
  @Get('session')
  session(@CurrentSettings() ctx: SettingsContext) {
    return {
      data: {
        session: {
          user: { id: ctx.userId, email: ctx.email },
          workspace: ctx.workspace,
          role: { id: ctx.role.id, name: ctx.role.name, settingsPermissions: ctx.role.settingsPermissions },
          csrfToken: ctx.csrf,
        },
      },
    };
  }

  @Get('api-keys')
  @Requires('API_KEYS_AND_WEBHOOKS')
  async list(@CurrentSettings() ctx: SettingsContext, @Query('include') include: unknown) {
    const apiKeys = await this.keys.list(ctx, { revoked: includeRevoked(include) });
    return { data: { apiKeys }, totalCount: apiKeys.length };
  }

  @Post('api-keys')
  @Requires('API_KEYS_AND_WEBHOOKS')
  @HttpCode(201)
  async create(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Body() body: unknown) {
    requireJson(req);
    return { data: { createApiKey: await this.keys.create(ctx, parseCreate(body)) } };
  }

  @Post('api-keys/:id/revoke')
  @Requires('API_KEYS_AND_WEBHOOKS')
  @HttpCode(200)
  async revoke(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string) {
    const { name: _name, ...revoked } = await this.keys.revoke(ctx, id);
    return { data: { revokeApiKey: revoked } };
  }
}

function requireJson(req: Request): void {
  if (!req.is('application/json')) {
    throw new AppError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, [
      `Content-Type must be application/json; got "${req.headers['content-type'] ?? 'none'}"`,
    ]);
  }
}

/** `{name, roleId | role, expiresAt | expiresIn}`; no expiry → 90 days; later than a year → one year (docs/authentication.md). */
export function parseCreate(body: unknown): NewApiKey {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'The body must be a JSON object');
  const b = body as Record<string, unknown>;
  const problems: string[] = [];
  const unknown = Object.keys(b).filter((k) => !CREATE_FIELDS.has(k));
  if (unknown.length)
    problems.push(
      `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; allowed: name, roleId or role, expiresAt or expiresIn`,
    );
  if (typeof b.name !== 'string') problems.push('name is required: a string of 1 to 100 characters');
  for (const field of ['roleId', 'role', 'expiresAt', 'expiresIn']) {
    if (b[field] !== undefined && typeof b[field] !== 'string') problems.push(`${field} must be a string`);
  }
  if (b.roleId === undefined && b.role === undefined) problems.push('roleId (a role id) or role (a role name) is required');
  if (b.roleId !== undefined && b.role !== undefined) problems.push('send roleId or role, not both');
  if (b.expiresAt !== undefined && b.expiresIn !== undefined) problems.push('send expiresAt or expiresIn, not both');
  if (typeof b.expiresIn === 'string' && !(b.expiresIn in API_KEY_EXPIRY_CHOICES)) {
    problems.push(`expiresIn must be one of ${Object.keys(API_KEY_EXPIRY_CHOICES).join(', ')}; got "${b.expiresIn}"`);
  }
  if (typeof b.expiresAt === 'string' && !isISO8601(b.expiresAt, { strict: true }))
    problems.push(`expiresAt must be an ISO 8601 date-time; got "${b.expiresAt}"`);
  if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
  const expiresAt = typeof b.expiresAt === 'string' ? new Date(b.expiresAt) : expiryFromChoice(b.expiresIn as string | undefined);
  return { name: b.name as string, role: { id: b.roleId as string | undefined, name: b.role as string | undefined }, expiresAt };
}
