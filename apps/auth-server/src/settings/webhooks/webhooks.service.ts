import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { webhookSettings } from '#webhooks/settings.js';
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listAttempts,
  listWebhooks,
  redeliver,
  revealWebhookSecret,
  updateWebhook,
  type CreatedWebhook,
  type WebhookAttempt,
  type WebhookInput,
  type WebhookSummary,
} from '#webhooks/webhooks.js';
import { audited } from '../audited.js';
import type { SettingsContext } from '../settings-context.js';

/**
 * Webhooks of the current workspace (README "Webhooks"), for the page and its JSON API. Every
 * change and every reveal of a secret is audited (never with the secret).
 */
@Injectable()
export class WebhooksService {
  constructor(private readonly ds: DataSource) {}

  list(ctx: SettingsContext): Promise<WebhookSummary[]> {
    return listWebhooks(this.ds, ctx.workspace.id);
  }

  find(ctx: SettingsContext, id: string): Promise<WebhookSummary> {
    return findWebhook(this.ds, ctx.workspace.id, id);
  }

  attempts(ctx: SettingsContext, id: string): Promise<WebhookAttempt[]> {
    return listAttempts(this.ds, ctx.workspace.id, id);
  }

  create(ctx: SettingsContext, input: WebhookInput): Promise<CreatedWebhook> {
    return audited(this.ds, ctx, async (tx) => {
      const webhook = await createWebhook(tx, ctx.workspace.id, input, {
        allowPrivate: webhookSettings().allowPrivate,
        createdByUserId: ctx.userId,
      });
      return {
        result: webhook,
        audit: {
          action: 'webhook.create',
          target: { type: 'webhook', id: webhook.id, label: webhook.url },
          // Header names only: a value typed in by hand is not for the audit log.
          details: { operations: webhook.operations, enabled: webhook.enabled, headers: webhook.headers.map((h) => h.name) },
        },
      };
    });
  }

  update(ctx: SettingsContext, id: string, input: WebhookInput): Promise<WebhookSummary> {
    return audited(this.ds, ctx, async (tx) => {
      const { before, after } = await updateWebhook(tx, ctx.workspace.id, id, input, { allowPrivate: webhookSettings().allowPrivate });
      const changed = (['url', 'description', 'operations', 'headers', 'enabled'] as const).filter(
        (k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]),
      );
      if (!changed.length) return { result: after };
      const details = Object.fromEntries(changed.map((k) => [k, k === 'headers' ? after.headers.map((h) => h.name) : after[k]]));
      return { result: after, audit: { action: 'webhook.update', target: { type: 'webhook', id, label: after.url }, details } };
    });
  }

  delete(ctx: SettingsContext, id: string): Promise<WebhookSummary> {
    return audited(this.ds, ctx, async (tx) => {
      const webhook = await deleteWebhook(tx, ctx.workspace.id, id);
      return { result: webhook, audit: { action: 'webhook.delete', target: { type: 'webhook', id, label: webhook.url } } };
    });
  }

  reveal(ctx: SettingsContext, id: string): Promise<{ webhook: WebhookSummary; secret: string }> {
    return audited(this.ds, ctx, async (tx) => {
      const webhook = await findWebhook(tx, ctx.workspace.id, id);
      const secret = await revealWebhookSecret(tx, ctx.workspace.id, id);
      return {
        result: { webhook, secret },
        audit: { action: 'webhook.reveal_secret', target: { type: 'webhook', id, label: webhook.url } },
      };
    });
  }

  redeliver(ctx: SettingsContext, id: string, deliveryId: string): Promise<{ deliveryId: string; eventId: string }> {
    return audited(this.ds, ctx, async (tx) => {
      const webhook = await findWebhook(tx, ctx.workspace.id, id);
      const queued = await redeliver(tx, ctx.workspace.id, id, deliveryId);
      return {
        result: queued,
        audit: { action: 'webhook.redeliver', target: { type: 'webhook', id, label: webhook.url }, details: { eventId: queued.eventId } },
      };
    });
  }
}
