import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError } from '#errors/errors.js';
import { confirmDeleteSecretPage, vaultPage, vaultRevealedPage, vaultSecretPage } from '../../views/settings/vault.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import { PasswordRequired, WrongPassword } from '../../sessions/recent-password.js';
import { REVEAL_SHOWN_SECONDS, VaultService } from './vault.service.js';

const NOTICES: Record<string, string> = {
  created: 'Secret added.',
  rotated: 'Secret rotated: webhooks send the new value from their next delivery.',
  saved: 'Saved.',
};

/**
 * /settings/vault (VAULT): list, add, rotate, describe, delete, and reveal a value after the
 * password (docs/vault.md). A value typed in a form is never written back into a page, not
 * even beside an error.
 */
@Controller('settings/vault')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('VAULT')
export class VaultController {
  constructor(private readonly vault: VaultService) {}

  @Get()
  async list(@CurrentSettings() ctx: SettingsContext, @Query('deleted') deleted: unknown, @Res() res: Response) {
    const notice = typeof deleted === 'string' ? `Secret ${deleted.slice(0, 64)} deleted.` : undefined;
    res.send(vaultPage(ctx, { secrets: await this.vault.list(ctx), notice }));
  }

  @Post()
  async create(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Res() res: Response) {
    const body = (req.body ?? {}) as Record<string, unknown>;
    try {
      const created = await this.vault.create(ctx, { name: body.name, value: body.value, description: body.description });
      return res.redirect(303, `/settings/vault/${created.name}?notice=created`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      const values = { name: String(body.name ?? ''), description: String(body.description ?? '') };
      const page = vaultPage(ctx, { secrets: await this.vault.list(ctx), error: err.messages.join(' '), values });
      return res.status(err.status).send(page);
    }
  }

  @Get(':name')
  async show(
    @CurrentSettings() ctx: SettingsContext,
    @Param('name') name: string,
    @Query('notice') notice: unknown,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    const secret = await this.vault.find(ctx, name);
    const passwordFresh = await this.vault.passwordFresh(req);
    res.send(vaultSecretPage(ctx, { secret, passwordFresh, notice: typeof notice === 'string' ? NOTICES[notice] : undefined }));
  }

  @Post(':name/reveal')
  async reveal(@CurrentSettings() ctx: SettingsContext, @Param('name') name: string, @Req() req: Request, @Res() res: Response) {
    try {
      const { secret, value } = await this.vault.reveal(ctx, req, name, (req.body as Record<string, unknown> | undefined)?.password ?? '');
      res.send(vaultRevealedPage(ctx, { secret, value, hideAfterSeconds: REVEAL_SHOWN_SECONDS }));
    } catch (err) {
      if (!(err instanceof PasswordRequired || err instanceof WrongPassword)) throw err;
      const secret = await this.vault.find(ctx, name);
      res.status(err.status).send(vaultSecretPage(ctx, { secret, passwordFresh: false, revealError: err.messages.join(' ') }));
    }
  }

  @Post(':name/rotate')
  async rotate(@CurrentSettings() ctx: SettingsContext, @Param('name') name: string, @Req() req: Request, @Res() res: Response) {
    try {
      await this.vault.update(ctx, name, { value: (req.body as Record<string, unknown> | undefined)?.value });
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500 || err.status === 404) throw err;
      const secret = await this.vault.find(ctx, name);
      const passwordFresh = await this.vault.passwordFresh(req);
      return res.status(err.status).send(vaultSecretPage(ctx, { secret, passwordFresh, error: err.messages.join(' ') }));
    }
    res.redirect(303, `/settings/vault/${name}?notice=rotated`);
  }

  @Post(':name')
  async describe(@CurrentSettings() ctx: SettingsContext, @Param('name') name: string, @Req() req: Request, @Res() res: Response) {
    await this.vault.update(ctx, name, { description: String((req.body as Record<string, unknown> | undefined)?.description ?? '') });
    res.redirect(303, `/settings/vault/${name}?notice=saved`);
  }

  @Get(':name/delete')
  async confirmDelete(@CurrentSettings() ctx: SettingsContext, @Param('name') name: string, @Res() res: Response) {
    res.send(confirmDeleteSecretPage(ctx, await this.vault.find(ctx, name)));
  }

  @Post(':name/delete')
  async remove(@CurrentSettings() ctx: SettingsContext, @Param('name') name: string, @Res() res: Response) {
    const deleted = await this.vault.delete(ctx, name);
    res.redirect(303, `/settings/vault?deleted=${deleted.name}`);
  }
}
