import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Req, UseFilters, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import { AppError, BadInputError, ErrorCode } from '#errors/errors.js';
import type { VaultSecretInput } from '#identity/vault.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import { REVEAL_SHOWN_SECONDS, VaultService } from './vault.service.js';

/**
 * The vault part of the settings JSON API (docs/vault.md): session cookie + X-CSRF-Token,
 * never a bearer token. The one route `/rest/vault/secrets` lacks is here: reveal, with the
 * password typed again (`{"password": …}`, or within 5 minutes of the last time).
 */
@Controller('settings/api/vault/secrets')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('VAULT')
export class VaultApiController {
  constructor(private readonly vault: VaultService) {}

  @Get()
  async list(@CurrentSettings() ctx: SettingsContext) {
    const secrets = await this.vault.list(ctx);
    return { data: { vaultSecrets: secrets }, totalCount: secrets.length };
  }

  @Post()
  @HttpCode(201)
  async create(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Body() body: unknown) {
    requireJson(req);
    return { data: { createVaultSecret: await this.vault.create(ctx, parseBody(body, ['name', 'value', 'description'])) } };
  }

  @Get(':name')
  async get(@CurrentSettings() ctx: SettingsContext, @Param('name') name: string) {
    return { data: { vaultSecret: await this.vault.find(ctx, name) } };
  }

  @Patch(':name')
  async update(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Param('name') name: string, @Body() body: unknown) {
    requireJson(req);
    return { data: { updateVaultSecret: await this.vault.update(ctx, name, parseBody(body, ['value', 'description'])) } };
  }

  @Delete(':name')
  async remove(@CurrentSettings() ctx: SettingsContext, @Param('name') name: string) {
    const { name: deleted } = await this.vault.delete(ctx, name);
    return { data: { deleteVaultSecret: { name: deleted } } };
  }

  /** The value, to a member who typed the password (audited, never with the value). */
  @Post(':name/reveal')
  @HttpCode(200)
  async reveal(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Param('name') name: string, @Body() body: unknown) {
    const given = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const { secret, value } = await this.vault.reveal(ctx, req, name, given.password);
    return { data: { vaultSecretValue: { name: secret.name, value, hideAfterSeconds: REVEAL_SHOWN_SECONDS } } };
  }
}

function requireJson(req: Request): void {
  if (!req.is('application/json')) {
    throw new AppError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, [
      `Content-Type must be application/json; got "${req.headers['content-type'] ?? 'none'}"`,
    ]);
  }
}

export function parseBody(body: unknown, fields: string[]): VaultSecretInput {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'The body must be a JSON object');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !fields.includes(k) && k !== '_csrf');
  if (unknown.length)
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => k.slice(0, 64)).join(', ')}; allowed: ${fields.join(', ')}`,
    );
  return { name: b.name, value: b.value, description: b.description };
}
