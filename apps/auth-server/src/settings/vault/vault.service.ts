import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { BadInputError, ErrorCode, ForbiddenError, TooManyRequestsError } from '#errors/errors.js';
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
import { addressKey } from '#ops/rate-limits.js';
import { SignInThrottle, Throttled } from '../../sessions/sign-in-throttle.js';
import { WebSessions } from '../../sessions/web-sessions.js';
import type { SettingsContext } from '../settings-context.js';

/** How long a typed password lets the member reveal values (docs/vault.md). */
export const PASSWORD_FRESH_MINUTES = 5;
/** How long the page shows a revealed value before it hides it again. */
export const REVEAL_SHOWN_SECONDS = 30;

export class PasswordRequired extends ForbiddenError {
  constructor() {
    super(`Type your password to reveal a value: it is asked again ${PASSWORD_FRESH_MINUTES} minutes after you last typed it`);
  }
}

export class WrongPassword extends ForbiddenError {
  constructor() {
    super('Wrong password: nothing was revealed');
  }
}

/**
 * The vault of the current workspace (VAULT, docs/vault.md), for the page and its JSON API.
 * The rules and the audit entries are #identity/vault.js's, shared with `/rest/vault`; what
 * only a signed-in member can do, reveal a value, also needs the password typed again in
 * this browser session within the last 5 minutes. That check is kept on the session row in
 * the database, so every auth-server instance sees it, and a wrong password counts as a
 * failed sign-in of the account (sign-in throttling).
 */
@Injectable()
export class VaultService {
  constructor(
    private readonly ds: DataSource,
    private readonly sessions: WebSessions,
    private readonly throttle: SignInThrottle,
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
    if (password !== undefined && password !== null && typeof password !== 'string')
      throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'password must be a string');
    if (typeof password === 'string' && password !== '') {
      const user = await this.throttle.signIn(this.ds, ctx.email, password, addressKey(req));
      if (user instanceof Throttled)
        throw new TooManyRequestsError(`Too many wrong passwords; try again in ${user.retryAfterSeconds} s`, user.retryAfterSeconds);
      if (!user || user.id !== ctx.userId) throw new WrongPassword();
      await this.sessions.confirmPassword(req, ctx.userId);
    }
    if (!(await this.sessions.passwordConfirmedWithin(req, PASSWORD_FRESH_MINUTES))) throw new PasswordRequired();
    return revealSecret(this.ds, ctx.workspace.id, actor(ctx), name);
  }

  /** Whether a reveal needs the password now (the page asks for it only then). */
  passwordFresh(req: Request): Promise<boolean> {
    return this.sessions.passwordConfirmedWithin(req, PASSWORD_FRESH_MINUTES);
  }
}

function actor(ctx: SettingsContext): Actor {
  return { userId: ctx.userId, email: ctx.email };
}
