import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { createHash } from 'node:crypto';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { DataSource } from 'typeorm';
import { verifyCredentials } from '#identity/accounts.js';
import { loadConfig } from '#database/config.js';

/** Where the counters live: one table in our database, so every auth-server instance shares them. */
const TABLE = 'auth_throttle';

/** "Wait this long": the page and the Retry-After header say so. */
export class Throttled {
  constructor(readonly retryAfterSeconds: number) {}
}

/**
 * Sign-in and sign-up throttling (SPEC §10; OWASP Authentication Cheat Sheet, "Login
 * throttling"): failed sign-ins are counted per account (whatever the address) and per
 * client address (whatever the account), sign-ups per client address. The counters are
 * read before the password is hashed, so a blocked attacker costs no argon2 time.
 */
@Injectable()
export class SignInThrottle {
  private readonly perAccount: RateLimiterPostgres;
  private readonly perAddress: RateLimiterPostgres;
  private readonly signUps: RateLimiterPostgres;

  constructor(ds: DataSource) {
    const config = loadConfig();
    const limiter = (keyPrefix: string, points: number, duration: number) =>
      new RateLimiterPostgres({ storeClient: ds, storeType: 'typeorm', tableName: TABLE, tableCreated: true, keyPrefix, points, duration });
    this.perAccount = limiter('signin-account', config.signInFailuresPerAccount, config.signInWindowSeconds);
    this.perAddress = limiter('signin-address', config.signInFailuresPerAddress, config.signInWindowSeconds);
    this.signUps = limiter('signup-address', config.signUpsPerAddressPerHour, 3600);
  }

  /** Throttled when the account or the address has used up its failures; checked before the password. */
  async beforeSignIn(email: string, address: string): Promise<Throttled | undefined> {
    const [account, client] = await Promise.all([this.perAccount.get(accountKey(email)), this.perAddress.get(address)]);
    const waits = [
      account && account.consumedPoints >= this.perAccount.points ? account.msBeforeNext : 0,
      client && client.consumedPoints >= this.perAddress.points ? client.msBeforeNext : 0,
    ];
    const ms = Math.max(...waits);
    return ms > 0 ? new Throttled(Math.ceil(ms / 1000)) : undefined;
  }

  /**
   * One sign-in attempt: refused outright while throttled (no password hashing), else the
   * credentials are checked and a failure counted.
   */
  async signIn(ds: DataSource, email: string, password: string, address: string): Promise<{ id: string; email: string } | Throttled | undefined> {
    const throttled = await this.beforeSignIn(email, address);
    if (throttled) return throttled;
    const user = await verifyCredentials(ds, email, password);
    if (user) await this.signInSucceeded(email);
    else await this.signInFailed(email, address);
    return user;
  }

  async signInFailed(email: string, address: string): Promise<void> {
    await Promise.all([spend(this.perAccount, accountKey(email)), spend(this.perAddress, address)]);
  }

  /** The account's own count starts again; the address's does not (an attacker may own an account). */
  async signInSucceeded(email: string): Promise<void> {
    await this.perAccount.delete(accountKey(email));
  }

  /** Every sign-up attempt counts (each hashes a password and may create a workspace). */
  async signUp(address: string): Promise<Throttled | undefined> {
    try {
      await this.signUps.consume(address);
      return undefined;
    } catch (res) {
      if (res instanceof RateLimiterRes) return new Throttled(Math.max(1, Math.ceil(res.msBeforeNext / 1000)));
      throw res;
    }
  }
}

/** E-mail addresses are compared lower-cased; the key holds a hash, not the address. */
function accountKey(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

/** One point, past the limit too (consume() rejects then, which is no error here). */
async function spend(limiter: RateLimiterPostgres, key: string): Promise<void> {
  await limiter.consume(key).catch((res) => {
    if (!(res instanceof RateLimiterRes)) throw res;
  });
}

/** The message of a throttled page, and its Retry-After header. */
export function throttledMessage(res: Response, throttled: Throttled): string {
  const seconds = throttled.retryAfterSeconds;
  res.setHeader('Retry-After', String(seconds));
  const wait = seconds < 90 ? `${seconds} second${seconds === 1 ? '' : 's'}` : `${Math.ceil(seconds / 60)} minutes`;
  return `Too many attempts. Try again in ${wait}.`;
}
