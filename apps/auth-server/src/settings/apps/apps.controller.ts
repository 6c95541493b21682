import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { CreatedServerApp } from '#identity/server-apps.js';
import { loadConfig } from '#config/config.js';
import { AppError } from '#errors/errors.js';
import { secretGonePage } from '../../views/settings/api-keys.js';
import { appSecretPage, appsPage, confirmAppPage } from '../../views/settings/apps.js';
import { OneTimeSecrets } from '../one-time-secrets.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import { ServerAppsService } from './apps.service.js';

interface ShownSecret extends Record<string, unknown> {
  app: { name: string; clientId: string; clientSecret: string; role?: string };
  rotated: boolean;
}

/** /settings/apps: register client_credentials apps, rotate their secret, delete them (API_KEYS_AND_WEBHOOKS). */
@Controller('settings/apps')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('API_KEYS_AND_WEBHOOKS')
export class ServerAppsController {
  constructor(
    private readonly apps: ServerAppsService,
    private readonly secrets: OneTimeSecrets,
  ) {}

  @Get()
  async list(@CurrentSettings() ctx: SettingsContext, @Query('deleted') deleted: unknown, @Res() res: Response) {
    const notice = deleted === '1' ? 'Server app deleted.' : undefined;
    res.send(appsPage(ctx, { apps: await this.apps.list(ctx), roles: await this.apps.roles(ctx), notice }));
  }

  @Post()
  async create(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Res() res: Response) {
    const body = (req.body ?? {}) as Record<string, string>;
    let app: CreatedServerApp;
    try {
      app = await this.apps.create(ctx, { name: String(body.name ?? ''), roleId: String(body.role ?? '') });
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      const page = appsPage(ctx, {
        apps: await this.apps.list(ctx),
        roles: await this.apps.roles(ctx),
        error: err.messages.join(' '),
        values: body,
      });
      return res.status(err.status).send(page);
    }
    const shown: ShownSecret = {
      app: { name: app.name, clientId: app.clientId, clientSecret: app.clientSecret, role: app.role },
      rotated: false,
    };
    res.redirect(303, `/settings/apps/secret/${await this.secrets.put(req, 'server-app', shown)}`);
  }

  @Get('secret/:flash')
  async secret(@CurrentSettings() ctx: SettingsContext, @Param('flash') flash: string, @Req() req: Request, @Res() res: Response) {
    const shown = await this.secrets.take<ShownSecret>(req, 'server-app', flash);
    if (!shown) return res.status(410).send(secretGonePage(ctx, { what: 'client secret', active: 'apps', back: '/settings/apps' }));
    res.send(appSecretPage(ctx, { ...shown, publicUrl: loadConfig().publicUrl }));
  }

  @Get(':id/rotate')
  async confirmRotate(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    res.send(confirmAppPage(ctx, { app: await this.apps.find(ctx, id), action: 'rotate' }));
  }

  @Post(':id/rotate')
  async rotate(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const app = await this.apps.rotate(ctx, id);
    const shown: ShownSecret = { app: { name: app.name, clientId: app.clientId, clientSecret: app.clientSecret }, rotated: true };
    res.redirect(303, `/settings/apps/secret/${await this.secrets.put(req, 'server-app', shown)}`);
  }

  @Get(':id/delete')
  async confirmDelete(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    res.send(confirmAppPage(ctx, { app: await this.apps.find(ctx, id), action: 'delete' }));
  }

  @Post(':id/delete')
  async delete(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    await this.apps.delete(ctx, id);
    res.redirect(303, '/settings/apps?deleted=1');
  }
}
