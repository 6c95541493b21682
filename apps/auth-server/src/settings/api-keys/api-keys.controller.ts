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
import { ApiKeysService, includeRevoked } from './api-keys.service.js';

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
  async list(
    @CurrentSettings() ctx: SettingsContext,
    @Query('revoked') revoked: unknown,
    @Query('include') include: unknown,
    @Res() res: Response,
  ) {
    const gone = typeof revoked === 'string' ? await this.keys.find(ctx, revoked).catch(() => undefined) : undefined;
    res.send(
      apiKeysPage(ctx, {
        ...(await this.listed(ctx, includeRevoked(include))),
        roles: await this.keys.roles(ctx),
        notice: gone && `API key "${gone.name}" revoked.`,
      }),
    );
  }

  /** The keys the page lists, and how many revoked ones it leaves out (its "Show revoked keys" link). */
  private async listed(ctx: SettingsContext, showRevoked: boolean) {
    const keys = await this.keys.list(ctx, { revoked: showRevoked });
    return { keys, showRevoked, revokedCount: showRevoked ? 0 : await this.keys.revokedCount(ctx) };
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
        ...(await this.listed(ctx, false)),
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
