import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Req, UseFilters, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import { AppError, BadInputError, ErrorCode } from '#errors/errors.js';
import type { WebhookInput } from '#webhooks/webhooks.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import { WebhooksService } from './webhooks.service.js';

const FIELDS = ['url', 'description', 'operations', 'headers', 'enabled', 'password'];

/**
 * The webhooks part of the settings JSON API: session cookie + X-CSRF-Token, never a
 * bearer token (docs/webhooks.md: API keys and OAuth tokens can neither manage nor read webhooks).
 * `password` (never stored) is the member's, typed again where vault secrets would be sent
 * somewhere new: saving headers that name them, a new URL of such a webhook, a redelivery, a test event.
 */
@Controller('settings/api/webhooks')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('API_KEYS_AND_WEBHOOKS')
export class WebhooksApiController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  async list(@CurrentSettings() ctx: SettingsContext) {
    const webhooks = await this.webhooks.list(ctx);
    return { data: { webhooks }, totalCount: webhooks.length };
  }

  @Post()
  @HttpCode(201)
  async create(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Body() body: unknown) {
    requireJson(req);
    const { password, ...input } = parseBody(body);
    if (input.url === undefined)
      throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'url is required: the https URL that receives the events');
    return { data: { createWebhook: await this.webhooks.create(ctx, input, req, password) } };
  }

  @Get(':id')
  async get(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string) {
    return { data: { webhook: await this.webhooks.find(ctx, id) } };
  }

  @Patch(':id')
  async update(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Param('id') id: string, @Body() body: unknown) {
    requireJson(req);
    const { password, ...input } = parseBody(body);
    return { data: { updateWebhook: await this.webhooks.update(ctx, id, input, req, password) } };
  }

  @Delete(':id')
  async remove(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string) {
    const { id: deleted } = await this.webhooks.delete(ctx, id);
    return { data: { deleteWebhook: { id: deleted } } };
  }

  /** The signing secret, to a signed-in member with the permission (audited). */
  @Post(':id/reveal-secret')
  @HttpCode(200)
  async reveal(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string) {
    const { webhook, secret } = await this.webhooks.reveal(ctx, id);
    return { data: { webhookSecret: { id: webhook.id, secret } } };
  }

  /** The latest 50 attempts: time, status, duration, the start of the answer. */
  @Get(':id/attempts')
  async attempts(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string) {
    const attempts = await this.webhooks.attempts(ctx, id);
    return { data: { attempts }, totalCount: attempts.length };
  }

  /** `{"password": …}` when the webhook's headers name vault secrets and the last one typed is older than 5 minutes. */
  @Post(':id/deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  async redeliver(
    @CurrentSettings() ctx: SettingsContext,
    @Req() req: Request,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
    @Body() body: unknown,
  ) {
    return { data: { redeliver: await this.webhooks.redeliver(ctx, id, deliveryId, req, passwordOf(body)) } };
  }

  /** A signed `webhook.test` event to this webhook only; `{"password": …}` as for a redelivery. */
  @Post(':id/test')
  @HttpCode(202)
  async test(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Param('id') id: string, @Body() body: unknown) {
    return { data: { testWebhook: await this.webhooks.test(ctx, id, req, passwordOf(body)) } };
  }
}

/** `password` of an optional JSON body (a redelivery's, a test event's). */
function passwordOf(body: unknown): unknown {
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).password : undefined;
}

function requireJson(req: Request): void {
  if (!req.is('application/json')) {
    throw new AppError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, [
      `Content-Type must be application/json; got "${req.headers['content-type'] ?? 'none'}"`,
    ]);
  }
}

function parseBody(body: unknown): WebhookInput & { password?: unknown } {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'The body must be a JSON object');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !FIELDS.includes(k) && k !== '_csrf');
  if (unknown.length)
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; allowed: ${FIELDS.join(', ')}`,
    );
  return { url: b.url, description: b.description, operations: b.operations, headers: b.headers, enabled: b.enabled, password: b.password };
}
