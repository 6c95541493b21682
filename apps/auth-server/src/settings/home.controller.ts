import { All, Controller, Get, Header, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DataSource } from 'typeorm';
import { recentAccountNotices } from '#identity/accounts.js';
import { membershipOf } from '#identity/members.js';
import { BadInputError, ErrorCode, NotFoundError } from '#errors/errors.js';
import { WebSessions, safeReturn } from '../sessions/web-sessions.js';
import { homePage } from '../views/settings/home.js';
import { SETTINGS_JS } from '../views/settings/layout.js';
import { SECTIONS, allows, type SettingsContext } from './settings-context.js';
import { SettingsExceptionFilter } from './settings-exception.filter.js';
import { CurrentSettings, SettingsGuard } from './settings.guard.js';

/** /settings (where sign-in lands) and the workspace switcher. */
@Controller('settings')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
export class SettingsHomeController {
  constructor(
    private readonly ds: DataSource,
    private readonly sessions: WebSessions,
  ) {}

  @Get()
  async home(@CurrentSettings() ctx: SettingsContext, @Query('joined') joined: unknown, @Res() res: Response) {
    const notice = joined === ctx.workspace.id ? `Welcome to ${ctx.workspace.name}: you joined as ${ctx.role.name}.` : undefined;
    res.send(homePage(ctx, { notice, accountNotices: await recentAccountNotices(this.ds, ctx.userId) }));
  }

  /** Switches the workspace the settings act on, and goes back to the same page when the new role allows it. */
  @Post('workspace')
  async switchWorkspace(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Res() res: Response) {
    const chosen = ctx.workspaces.find((w) => w.id === req.body?.workspace);
    if (!chosen) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'Choose one of your workspaces');
    await this.sessions.setWorkspace(req, chosen.id);
    const back = safeReturn(req.body?.return) ?? '/settings';
    const section = [...SECTIONS].reverse().find((s) => back === s.href || back.startsWith(`${s.href}/`));
    const membership = await membershipOf(this.ds, ctx.userId, chosen.id);
    // Pages of one object (a key, a role) do not exist in the other workspace: go to the section's list.
    res.redirect(303, section && membership && allows(membership.role, section.requires) ? section.href : '/settings');
  }
}

/** The one script of the settings pages (copy buttons); public, like the stylesheet. */
@Controller('settings/assets')
export class SettingsAssetsController {
  @Get('settings.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=3600')
  script() {
    return SETTINGS_JS;
  }
}

/** Registered last: any other /settings path is a 404 in the settings' own shape (page, or JSON under /settings/api). */
@Controller('settings')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
export class SettingsNotFoundController {
  @All('*path')
  notFound(@Req() req: Request): never {
    throw new NotFoundError(
      req.path.startsWith('/settings/api/')
        ? `No settings API route ${req.method} ${req.path}`
        : 'There is no settings page at this address',
    );
  }
}
