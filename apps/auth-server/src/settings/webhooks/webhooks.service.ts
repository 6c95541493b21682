import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { ForbiddenError } from '#errors/errors.js';
import { referencedNames } from '#webhooks/headers.js';
import { webhookSettings } from '#webhooks/settings.js';
import { eventTypes } from '#webhooks/operations.js';
import {
  createWebhook,
  deleteWebhook,
  eventObjectsOf,
  findWebhook,
  listAttempts,
  listWebhooks,
  redeliver,
  revealWebhookSecret,
  sendTestEvent,
  updateWebhook,
  type CreatedWebhook,
  type VaultUse,
  type WebhookAttempt,
  type WebhookInput,
  type WebhookSummary,
} from '#webhooks/webhooks.js';
import { RecentPassword } from '../../sessions/recent-password.js';
import { audited } from '../audited.js';
import { allows, type SettingsContext } from '../settings-context.js';

/** The same words whichever secrets are named and whether they exist: the refusal is no oracle of the vault. */
export const NEEDS_VAULT =
  'Headers that name vault secrets ({{vault.NAME}}) need the Vault secrets permission: to add them, to change the URL or headers of a webhook that has them, and to redeliver its events or send it a test event. Ask a member who has it.';

/**
 * Webhooks of the current workspace (README "Webhooks"), for the page and its JSON API. Every
 * change and every reveal of a secret is audited (never with the secret). A webhook delivers
 * as the role of whoever made or last changed it. Sending vault secrets somewhere new (a
 * webhook naming them, a new URL or headers of one, a redelivery) needs VAULT and the
 * password typed within 5 minutes, like a reveal (docs/vault.md).
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly ds: DataSource,
    private readonly password: RecentPassword,
  ) {}

  list(ctx: SettingsContext): Promise<WebhookSummary[]> {
    return listWebhooks(this.ds, ctx.workspace.id);
  }

  /** The event types the workspace's webhooks may select: its active objects' (its own included), then `import.completed`. */
  async eventTypes(ctx: SettingsContext): Promise<string[]> {
    return eventTypes(await eventObjectsOf(this.ds, ctx.workspace.id));
  }

  find(ctx: SettingsContext, id: string): Promise<WebhookSummary> {
    return findWebhook(this.ds, ctx.workspace.id, id);
  }

  attempts(ctx: SettingsContext, id: string): Promise<WebhookAttempt[]> {
    return listAttempts(this.ds, ctx.workspace.id, id);
  }

  /** Whether sending vault secrets needs the password now (the page asks for it only then). */
  passwordFresh(req: Request): Promise<boolean> {
    return this.password.fresh(req);
  }

  /** The password for what follows, when the member typed one (a wrong one refuses). */
  confirmPassword(ctx: SettingsContext, req: Request, password: unknown, outcome = 'nothing was saved'): Promise<void> {
    return this.password.confirm(ctx, req, password, outcome);
  }

  async create(ctx: SettingsContext, input: WebhookInput, req: Request, password?: unknown): Promise<CreatedWebhook> {
    await this.confirmPassword(ctx, req, password);
    return audited(this.ds, ctx, async (tx) => {
      const webhook = await createWebhook(tx, ctx.workspace.id, input, {
        allowPrivate: webhookSettings().allowPrivate,
        createdByUserId: ctx.userId,
        roleId: ctx.role.id,
        vaultUse: this.vaultUse(ctx, req),
      });
      const vaultSecrets = referencedNames(webhook.headers);
      return {
        result: webhook,
        audit: {
          action: 'webhook.create',
          target: { type: 'webhook', id: webhook.id, label: webhook.url },
          // Header names only: a value typed in by hand is not for the audit log.
          details: {
            operations: webhook.operations,
            enabled: webhook.enabled,
            headers: webhook.headers.map((h) => h.name),
            role: webhook.role.name,
            ...(vaultSecrets.length ? { vaultSecrets } : {}),
          },
        },
      };
    });
  }

  async update(ctx: SettingsContext, id: string, input: WebhookInput, req: Request, password?: unknown): Promise<WebhookSummary> {
    await this.confirmPassword(ctx, req, password);
    return audited(this.ds, ctx, async (tx) => {
      const { before, after, vaultSecrets } = await updateWebhook(tx, ctx.workspace.id, id, input, {
        allowPrivate: webhookSettings().allowPrivate,
        roleId: ctx.role.id,
        vaultUse: this.vaultUse(ctx, req),
      });
      const changed = (['url', 'description', 'operations', 'headers', 'enabled'] as const).filter(
        (k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]),
      );
      if (!changed.length && before.role.id === after.role.id) return { result: after };
      const details: Record<string, unknown> = Object.fromEntries(
        changed.map((k) => [k, k === 'headers' ? after.headers.map((h) => h.name) : after[k]]),
      );
      if (before.role.id !== after.role.id) details.role = after.role.name;
      if (vaultSecrets.length) details.vaultSecrets = vaultSecrets;
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

  async redeliver(
    ctx: SettingsContext,
    id: string,
    deliveryId: string,
    req: Request,
    password?: unknown,
  ): Promise<{ deliveryId: string; eventId: string }> {
    await this.confirmPassword(ctx, req, password, 'nothing was sent');
    return audited(this.ds, ctx, async (tx) => {
      const webhook = await findWebhook(tx, ctx.workspace.id, id);
      const { vaultSecrets, ...queued } = await redeliver(tx, ctx.workspace.id, id, deliveryId, { vaultUse: this.vaultUse(ctx, req) });
      return {
        result: queued,
        audit: {
          action: 'webhook.redeliver',
          target: { type: 'webhook', id, label: webhook.url },
          details: { eventId: queued.eventId, ...(vaultSecrets.length ? { vaultSecrets } : {}) },
        },
      };
    });
  }

  /** A signed `webhook.test` event to this webhook only; gated and audited as a redelivery (it sends the vault secrets its headers name). */
  async test(ctx: SettingsContext, id: string, req: Request, password?: unknown): Promise<{ deliveryId: string; eventId: string }> {
    await this.confirmPassword(ctx, req, password, 'nothing was sent');
    return audited(this.ds, ctx, async (tx) => {
      const { vaultSecrets, url, ...queued } = await sendTestEvent(tx, ctx.workspace.id, id, { vaultUse: this.vaultUse(ctx, req) });
      return {
        result: queued,
        audit: {
          action: 'webhook.test',
          target: { type: 'webhook', id, label: url },
          details: { eventId: queued.eventId, ...(vaultSecrets.length ? { vaultSecrets } : {}) },
        },
      };
    });
  }

  /** Sending vault secrets somewhere new: VAULT first (so a refusal tells nothing of the names), then the recent password. */
  private vaultUse(ctx: SettingsContext, req: Request): VaultUse {
    return async () => {
      if (!allows(ctx.role, 'VAULT')) throw new ForbiddenError(NEEDS_VAULT);
      await this.password.require(req, 'send vault secrets from this webhook');
    };
  }
}
