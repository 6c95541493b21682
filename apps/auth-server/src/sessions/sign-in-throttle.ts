import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { createHash } from 'node:crypto';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { DataSource } from 'typeorm';
import { verifyCredentials } from '#identity/accounts.js';
import { loadConfig } from '#config/config.js';
import { poolOf } from '#database/sql.js';
import { limiterStore } from '#ops/rate-limits.js';

/** Where the counters live: one table in our database, so every auth-server instance shares them. */
const TABLE = 'auth_throttle';

/** "Wait this long": the page and the Retry-After header say so. */
export class Throttled {
  constructor(readonly retryAfterSeconds: number) {}
}

/**
 * Sign-in and sign-up throttling (OWASP Authentication Cheat Sheet, "Login throttling"):
 * failed sign-ins are counted per account (whatever the address) and per client address
 * (whatever the account), sign-ups per client address. Each attempt spends its points
 * before the password is hashed, in one atomic statement per counter, so concurrent
 * attempts cannot all pass a check made before any of them was counted, and a blocked
 * attacker costs no argon2 time; a successful sign-in gives its points back.
 */
@Injectable()
export class SignInThrottle {
  private readonly perAccount: RateLimiterPostgres;
  private readonly perAddress: RateLimiterPostgres;
  private readonly signUps: RateLimiterPostgres;

  constructor(ds: DataSource) {
    const config = loadConfig();
    const limiter = (keyPrefix: string, points: number, duration: number) =>
      new RateLimiterPostgres({
        // Its statements unnamed when prepared statements are off (limiterStore).
        storeClient: limiterStore(poolOf(ds)),
        storeType: 'pool',
        tableName: TABLE,
        tableCreated: true,
        keyPrefix,
        points,
        duration,
      });
    this.perAccount = limiter('signin-account', config.signInFailuresPerAccount, config.signInWindowSeconds);
    this.perAddress = limiter('signin-address', config.signInFailuresPerAddress, config.signInWindowSeconds);
    this.signUps = limiter('signup-address', config.signUpsPerAddressPerHour, 3600);
  }

  /**
   * One sign-in attempt: a point of the account's and one of the address's budget are spent
   * first; past either budget the attempt is refused without hashing. The right password
   * gives both back (and starts the account's count again); a wrong one keeps them spent.
   */
  async signIn(
    ds: DataSource,
    email: string,
    password: string,
    address: string,
  ): Promise<{ id: string; email: string } | Throttled | undefined> {
    const account = accountKey(email);
    const [byAccount, byAddress] = await Promise.all([spend(this.perAccount, account), spend(this.perAddress, address)]);
    if (byAccount.refused || byAddress.refused) {
      // A refused attempt verifies nothing, so it is not a failure of the other counter.
      if (!byAccount.refused) await giveBack(this.perAccount, account);
      if (!byAddress.refused) await giveBack(this.perAddress, address);
      return new Throttled(Math.max(1, Math.ceil(Math.max(byAccount.refused ?? 0, byAddress.refused ?? 0) / 1000)));
    }
    const user = await verifyCredentials(ds, email, password);
    if (user) {
      // The account's own count starts again; the address's does not (an attacker may own an account).
      await Promise.all([this.perAccount.delete(account), giveBack(this.perAddress, address)]);
    }
    return user;
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

/** One point of `key`'s budget; `refused` (ms until the window ends) when none was left. */
async function spend(limiter: RateLimiterPostgres, key: string): Promise<{ refused?: number }> {
  try {
    await limiter.consume(key);
    return {};
  } catch (res) {
    if (res instanceof RateLimiterRes) return { refused: res.msBeforeNext };
    throw res;
  }
}

async function giveBack(limiter: RateLimiterPostgres, key: string): Promise<void> {
  await limiter.reward(key, 1);
}

/** The message of a throttled page, and its Retry-After header. */
export function throttledMessage(res: Response, throttled: Throttled): string {
  const seconds = throttled.retryAfterSeconds;
  res.setHeader('Retry-After', String(seconds));
  const wait = seconds < 90 ? `${seconds} second${seconds === 1 ? '' : 's'}` : `${Math.ceil(seconds / 60)} minutes`;
  return `Too many attempts. Try again in ${wait}.`;
}
