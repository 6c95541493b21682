import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { BadInputError, ErrorCode, ForbiddenError, TooManyRequestsError } from '#errors/errors.js';
import { addressKey } from '#ops/rate-limits.js';
import { SignInThrottle, Throttled } from './sign-in-throttle.js';
import { WebSessions } from './web-sessions.js';

/** How long a typed password counts (docs/vault.md, "Revealing a value"). */
export const PASSWORD_FRESH_MINUTES = 5;

export class PasswordRequired extends ForbiddenError {
  /** `what`: the action, as in "Type your password to <what>". */
  constructor(what: string) {
    super(`Type your password to ${what}: it is asked again ${PASSWORD_FRESH_MINUTES} minutes after you last typed it`);
  }
}

export class WrongPassword extends ForbiddenError {
  /** `outcome`: what did not happen, e.g. "nothing was revealed". */
  constructor(outcome: string) {
    super(`Wrong password: ${outcome}`);
  }
}

/**
 * The password typed again in this browser session, for what a stolen session alone must not
 * do: reveal a vault value, send vault secrets somewhere new (docs/vault.md). The check is a
 * stamp on the session row, read by the database's clock, so every auth-server instance sees
 * it; a password given goes through the sign-in throttle, so a stolen session guesses no
 * faster than the sign-in form allows.
 */
@Injectable()
export class RecentPassword {
  constructor(
    private readonly ds: DataSource,
    private readonly sessions: WebSessions,
    private readonly throttle: SignInThrottle,
  ) {}

  /**
   * A password given is checked (a wrong one refuses, however fresh the last one) and, when
   * right, stamps the session; nothing given leaves the stamp as it is.
   */
  async confirm(member: { email: string; userId: string }, req: Request, password: unknown, outcome: string): Promise<void> {
    if (password !== undefined && password !== null && typeof password !== 'string')
      throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'password must be a string');
    if (typeof password !== 'string' || password === '') return;
    const user = await this.throttle.signIn(this.ds, member.email, password, addressKey(req));
    if (user instanceof Throttled)
      throw new TooManyRequestsError(`Too many wrong passwords; try again in ${user.retryAfterSeconds} s`, user.retryAfterSeconds);
    if (!user || user.id !== member.userId) throw new WrongPassword(outcome);
    await this.sessions.confirmPassword(req, member.userId);
  }

  /** 403 unless this session's password was typed within the last 5 minutes. */
  async require(req: Request, what: string): Promise<void> {
    if (!(await this.fresh(req))) throw new PasswordRequired(what);
  }

  /** Whether the password was typed within the last 5 minutes in this browser session (pages ask for it only when not). */
  fresh(req: Request): Promise<boolean> {
    return this.sessions.passwordConfirmedWithin(req, PASSWORD_FRESH_MINUTES);
  }
}
