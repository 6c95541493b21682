import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { expiryFromChoice } from '#identity/api-key-expiry.js';
import type { CreatedApiKey } from '#identity/accounts.js';
import { loadConfig } from '#config/config.js';
import { AppError } from '#errors/errors.js';
import { apiKeyCreatedPage, apiKeysPage, revokeApiKeyPage, secretGonePage } from '../../views/settings/api-keys.js';
import { OneTimeSecrets } from '../one-time-secrets.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import { ApiKeysService } from './api-keys.service.js';

/** /settings/api-keys: list, create (secret shown once), revoke with confirmation. Plain forms, no JavaScript needed. */
@Controller('settings/api-keys')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('API_KEYS_AND_WEBHOOKS')
export class ApiKeysController {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly secrets: OneTimeSecrets,
  ) {}

  @Get()
  async list(@CurrentSettings() ctx: SettingsContext, @Query('revoked') revoked: unknown, @Res() res: Response) {
    const keys = await this.keys.list(ctx);
    const gone = typeof revoked === 'string' ? keys.find((k) => k.id === revoked) : undefined;
    res.send(apiKeysPage(ctx, { keys, roles: await this.keys.roles(ctx), notice: gone && `API key "${gone.name}" revoked.` }));
  }

  @Post()
  async create(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Res() res: Response) {
    const body = (req.body ?? {}) as Record<string, string>;
    let key: CreatedApiKey;
    try {
      key = await this.keys.create(ctx, {
        name: String(body.name ?? ''),
        role: { id: body.role || undefined },
        expiresAt: expiryFromChoice(body.expiration),
      });
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      const page = apiKeysPage(ctx, {
        keys: await this.keys.list(ctx),
        roles: await this.keys.roles(ctx),
        error: err.messages.join(' '),
        values: body,
      });
      return res.status(err.status).send(page);
    }
    const flash = await this.secrets.put(req, 'api-key', { ...key });
    res.redirect(303, `/settings/api-keys/created/${flash}`);
  }

  @Get('created/:flash')
  async created(@CurrentSettings() ctx: SettingsContext, @Param('flash') flash: string, @Req() req: Request, @Res() res: Response) {
    const key = await this.secrets.take<Record<string, unknown>>(req, 'api-key', flash);
    if (!key) return res.status(410).send(secretGonePage(ctx, { what: 'API key secret', active: 'api-keys', back: '/settings/api-keys' }));
    res.send(apiKeyCreatedPage(ctx, key as unknown as CreatedApiKey, loadConfig().publicUrl));
  }

  @Get(':id/revoke')
  async confirmRevoke(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    const key = await this.keys.find(ctx, id);
    if (key.status === 'revoked') return res.redirect(303, '/settings/api-keys');
    res.send(revokeApiKeyPage(ctx, key));
  }

  @Post(':id/revoke')
  async revoke(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    const key = await this.keys.revoke(ctx, id);
    res.redirect(303, `/settings/api-keys?revoked=${key.id}`);
  }
}
