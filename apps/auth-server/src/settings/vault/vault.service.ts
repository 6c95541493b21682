import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import {
  createSecret,
  deleteSecret,
  getSecret,
  listSecrets,
  revealSecret,
  updateSecret,
  type Actor,
  type VaultSecret,
  type VaultSecretInput,
} from '#identity/vault.js';
import { RecentPassword } from '../../sessions/recent-password.js';
import type { SettingsContext } from '../settings-context.js';

/** How long the page shows a revealed value before it hides it again. */
export const REVEAL_SHOWN_SECONDS = 30;

/**
 * The vault of the current workspace (VAULT, docs/vault.md), for the page and its JSON API.
 * The rules and the audit entries are #identity/vault.js's, shared with `/rest/vault`; what
 * only a signed-in member can do, reveal a value, also needs the password typed again in
 * this browser session within the last 5 minutes (RecentPassword).
 */
@Injectable()
export class VaultService {
  constructor(
    private readonly ds: DataSource,
    private readonly password: RecentPassword,
  ) {}
  list(ctx: SettingsContext): Promise<VaultSecret[]> {
    return listSecrets(this.ds, ctx.workspace.id);
  }

  find(ctx: SettingsContext, name: string): Promise<VaultSecret> {
    return getSecret(this.ds, ctx.workspace.id, name);
  }

  create(ctx: SettingsContext, input: VaultSecretInput): Promise<VaultSecret> {
    return createSecret(this.ds, ctx.workspace.id, actor(ctx), input);
  }

  update(ctx: SettingsContext, name: string, input: VaultSecretInput): Promise<VaultSecret> {
    return updateSecret(this.ds, ctx.workspace.id, actor(ctx), name, input);
  }

  delete(ctx: SettingsContext, name: string): Promise<VaultSecret> {
    return deleteSecret(this.ds, ctx.workspace.id, actor(ctx), name);
  }

  /**
   * The value, when `password` is right or the session's last check is fresh. A password
   * given is always checked (a wrong one refuses even within the window).
   */
  async reveal(ctx: SettingsContext, req: Request, name: string, password: unknown): Promise<{ secret: VaultSecret; value: string }> {
    await getSecret(this.ds, ctx.workspace.id, name);
    await this.password.confirm(ctx, req, password, 'nothing was revealed');
    await this.password.require(req, 'reveal a value');
    return revealSecret(this.ds, ctx.workspace.id, actor(ctx), name);
  }

  /** Whether a reveal needs the password now (the page asks for it only then). */
  passwordFresh(req: Request): Promise<boolean> {
    return this.password.fresh(req);
  }
}

function actor(ctx: SettingsContext): Actor {
  return { userId: ctx.userId, email: ctx.email };
}
