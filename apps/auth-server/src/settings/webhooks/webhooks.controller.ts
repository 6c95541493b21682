import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError } from '#errors/errors.js';
import { linesToHeaders } from '#webhooks/headers.js';
import { splitOperations } from '#webhooks/operations.js';
import type { CreatedWebhook, WebhookInput } from '#webhooks/webhooks.js';
import { secretGonePage } from '../../views/settings/api-keys.js';
import {
  confirmDeleteWebhookPage,
  editWebhookPage,
  webhookCreatedPage,
  webhookSecretPage,
  webhooksPage,
} from '../../views/settings/webhooks.js';
import { OneTimeSecrets } from '../one-time-secrets.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * The form's fields as the service takes them: operations one per line or comma-separated;
 * custom headers one `Name: value` per line; a checkbox for enabled.
 */
function formInput(body: Record<string, unknown>, withEnabled: boolean): WebhookInput {
  const ops = Array.isArray(body.operations) ? body.operations.join(',') : String(body.operations ?? '');
  return {
    url: String(body.url ?? ''),
    description: String(body.description ?? ''),
    operations: splitOperations(ops),
    headers: linesToHeaders(String(body.headers ?? '')),
    enabled: withEnabled ? body.enabled === 'on' : undefined,
  };
}

/** The form as typed, to show again after an error: never the password. */
function withoutPassword(body: Record<string, unknown>): Record<string, string> {
  const { password: _password, ...rest } = body;
  return rest as Record<string, string>;
}

/** /settings/webhooks: list, create (secret shown once), edit, delete, reveal the secret, attempts with Redeliver, a test event. */
@Controller('settings/webhooks')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('API_KEYS_AND_WEBHOOKS')
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly secrets: OneTimeSecrets,
  ) {}

  @Get()
  async list(@CurrentSettings() ctx: SettingsContext, @Query('deleted') deleted: unknown, @Req() req: Request, @Res() res: Response) {
    res.send(
      webhooksPage(ctx, {
        webhooks: await this.webhooks.list(ctx),
        eventTypes: await this.webhooks.eventTypes(ctx),
        passwordFresh: await this.webhooks.passwordFresh(req),
        notice: typeof deleted === 'string' ? 'Webhook deleted.' : undefined,
      }),
    );
  }

  @Post()
  async create(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Res() res: Response) {
    const body = (req.body ?? {}) as Record<string, unknown>;
    let created: CreatedWebhook;
    try {
      created = await this.webhooks.create(ctx, formInput(body, false), req, body.password);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      const page = webhooksPage(ctx, {
        webhooks: await this.webhooks.list(ctx),
        eventTypes: await this.webhooks.eventTypes(ctx),
        passwordFresh: await this.webhooks.passwordFresh(req),
        error: err.messages.join(' '),
        values: withoutPassword(body),
      });
      return res.status(err.status).send(page);
    }
    const flash = await this.secrets.put(req, 'webhook', { id: created.id, url: created.url, secret: created.secret });
    res.redirect(303, `/settings/webhooks/created/${flash}`);
  }

  @Get('created/:flash')
  async created(@CurrentSettings() ctx: SettingsContext, @Param('flash') flash: string, @Req() req: Request, @Res() res: Response) {
    const created = await this.secrets.take<{ id: string; url: string; secret: string }>(req, 'webhook', flash);
    if (!created)
      return res.status(410).send(secretGonePage(ctx, { what: 'webhook signing secret', active: 'webhooks', back: '/settings/webhooks' }));
    res.send(webhookCreatedPage(ctx, created));
  }

  @Get(':id')
  async edit(
    @CurrentSettings() ctx: SettingsContext,
    @Param('id') id: string,
    @Query('notice') notice: unknown,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    const webhook = await this.webhooks.find(ctx, id);
    const notices: Record<string, string> = {
      saved: 'Saved.',
      redelivered: 'Queued for redelivery.',
      tested: 'Test event queued: its attempt is listed below within seconds (reload the page).',
      password: 'Password confirmed for 5 minutes.',
    };
    res.send(
      editWebhookPage(ctx, {
        webhook,
        attempts: await this.webhooks.attempts(ctx, id),
        passwordFresh: await this.webhooks.passwordFresh(req),
        notice: typeof notice === 'string' ? notices[notice] : undefined,
      }),
    );
  }

  @Post(':id')
  async update(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const body = (req.body ?? {}) as Record<string, unknown>;
    try {
      await this.webhooks.update(ctx, id, formInput(body, true), req, body.password);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500 || err.status === 404) throw err;
      return this.editPageWith(ctx, id, req, res, err, withoutPassword(body));
    }
    res.redirect(303, `/settings/webhooks/${id}?notice=saved`);
  }

  /** The password typed on the webhook's page, so that Redeliver and Send test event may send its vault secrets for the next 5 minutes. */
  @Post(':id/password')
  async confirmPassword(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    await this.webhooks.find(ctx, id);
    try {
      await this.webhooks.confirmPassword(ctx, req, (req.body as Record<string, unknown> | undefined)?.password ?? '', 'nothing changed');
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      return this.editPageWith(ctx, id, req, res, err);
    }
    res.redirect(303, `/settings/webhooks/${id}?notice=password`);
  }

  /** The webhook's page again, with what went wrong (and the form's values, when a save failed). */
  private async editPageWith(
    ctx: SettingsContext,
    id: string,
    req: Request,
    res: Response,
    err: AppError,
    values?: Record<string, string>,
  ): Promise<void> {
    const page = editWebhookPage(ctx, {
      webhook: await this.webhooks.find(ctx, id),
      attempts: await this.webhooks.attempts(ctx, id),
      passwordFresh: await this.webhooks.passwordFresh(req),
      error: err.messages.join(' '),
      values,
    });
    res.status(err.status).send(page);
  }

  @Post(':id/secret')
  async reveal(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    const { webhook, secret } = await this.webhooks.reveal(ctx, id);
    res.send(webhookSecretPage(ctx, { webhook, secret }));
  }

  @Post(':id/deliveries/:deliveryId/redeliver')
  async redeliver(
    @CurrentSettings() ctx: SettingsContext,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    try {
      await this.webhooks.redeliver(ctx, id, deliveryId, req);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500 || err.status === 404) throw err;
      return this.editPageWith(ctx, id, req, res, err);
    }
    res.redirect(303, `/settings/webhooks/${id}?notice=redelivered`);
  }

  /** A signed `webhook.test` event to this webhook only, gated like Redeliver (the password form of the page). */
  @Post(':id/test')
  async test(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    try {
      await this.webhooks.test(ctx, id, req);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500 || err.status === 404) throw err;
      return this.editPageWith(ctx, id, req, res, err);
    }
    res.redirect(303, `/settings/webhooks/${id}?notice=tested`);
  }

  @Get(':id/delete')
  async confirmDelete(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    res.send(confirmDeleteWebhookPage(ctx, await this.webhooks.find(ctx, id)));
  }

  @Post(':id/delete')
  async remove(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    await this.webhooks.delete(ctx, id);
    res.redirect(303, '/settings/webhooks?deleted=1');
  }
}
