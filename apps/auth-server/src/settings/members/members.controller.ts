import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { loadConfig } from '#config/config.js';
import { AppError } from '#errors/errors.js';
import { secretGonePage } from '../../views/settings/api-keys.js';
import { inviteCreatedPage, membersPage, removeMemberPage } from '../../views/settings/members.js';
import { OneTimeSecrets } from '../one-time-secrets.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import { MembersService } from './members.service.js';

const NOTICES: Record<string, string> = {
  role: 'Role changed.',
  removed: 'Member removed.',
  cancelled: 'Invite cancelled.',
};

/** /settings/members: members and their roles, role changes, removal, invite links (WORKSPACE_MEMBERS). */
@Controller('settings/members')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('WORKSPACE_MEMBERS')
export class MembersController {
  constructor(
    private readonly members: MembersService,
    private readonly secrets: OneTimeSecrets,
  ) {}

  @Get()
  async list(@CurrentSettings() ctx: SettingsContext, @Query('done') done: unknown, @Res() res: Response) {
    res.send(await this.page(ctx, { notice: typeof done === 'string' ? NOTICES[done] : undefined }));
  }

  @Post(':userId/role')
  async changeRole(@CurrentSettings() ctx: SettingsContext, @Param('userId') userId: string, @Req() req: Request, @Res() res: Response) {
    try {
      await this.members.changeRole(ctx, userId, String(req.body?.role ?? ''));
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500 || err.status === 404) throw err;
      return res.status(err.status).send(await this.page(ctx, { error: err.messages.join(' ') }));
    }
    res.redirect(303, userId === ctx.userId ? '/settings' : '/settings/members?done=role');
  }

  @Get(':userId/remove')
  async confirmRemove(@CurrentSettings() ctx: SettingsContext, @Param('userId') userId: string, @Res() res: Response) {
    res.send(removeMemberPage(ctx, await this.members.find(ctx, userId)));
  }

  @Post(':userId/remove')
  async remove(@CurrentSettings() ctx: SettingsContext, @Param('userId') userId: string, @Res() res: Response) {
    await this.members.remove(ctx, userId);
    res.redirect(303, userId === ctx.userId ? '/settings' : '/settings/members?done=removed');
  }

  @Post('invites')
  async invite(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Res() res: Response) {
    let invite;
    try {
      invite = await this.members.invite(ctx, String(req.body?.role ?? ''));
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      return res.status(err.status).send(await this.page(ctx, { error: err.messages.join(' ') }));
    }
    const link = `${loadConfig().publicUrl}/settings/invites/${invite.token}`;
    const flash = await this.secrets.put(req, 'invite', { link, role: invite.role, expiresAt: new Date(invite.expiresAt).toISOString() });
    res.redirect(303, `/settings/members/invites/created/${flash}`);
  }

  @Get('invites/created/:flash')
  async inviteCreated(@CurrentSettings() ctx: SettingsContext, @Param('flash') flash: string, @Req() req: Request, @Res() res: Response) {
    const shown = await this.secrets.take<{ link: string; role: string; expiresAt: string }>(req, 'invite', flash);
    if (!shown) return res.status(410).send(secretGonePage(ctx, { what: 'invite link', active: 'members', back: '/settings/members' }));
    res.send(inviteCreatedPage(ctx, shown));
  }

  @Post('invites/:id/revoke')
  async revokeInvite(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    await this.members.revokeInvite(ctx, id);
    res.redirect(303, '/settings/members?done=cancelled');
  }

  private async page(ctx: SettingsContext, o: { error?: string; notice?: string }): Promise<string> {
    const [members, invites, roles] = await Promise.all([this.members.list(ctx), this.members.invites(ctx), this.members.roles(ctx)]);
    return membersPage(ctx, { members, invites, roles, ...o });
  }
}
