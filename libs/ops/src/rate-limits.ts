import { Injectable, type FactoryProvider, type OnModuleDestroy } from '@nestjs/common';
import pg, { type Pool } from 'pg';
import { poolOptions } from '#database/connections.js';
import { loadConfig } from '#config/config.js';
import { resolveDatabaseUrl } from '#database/data-source.js';
import { ipKeyGenerator } from 'express-rate-limit';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * The client address a per-address limit counts, as `trust proxy` resolved it: an IPv4
 * address, or the IPv6 /56 it belongs to (one host holds a whole prefix, so counting single
 * IPv6 addresses would give an attacker billions of budgets).
 */
export function addressKey(req: { ip?: string; socket?: { remoteAddress?: string } }): string {
  return `ip:${ipKeyGenerator(req.ip ?? req.socket?.remoteAddress ?? '')}`;
}

const WINDOW_SECONDS = 60;

export interface LimitOutcome {
  allowed: boolean;
  /** Draft-7 `RateLimit` / `RateLimit-Policy` header values (IETF draft-ietf-httpapi-ratelimit-headers-07). */
  headers: Record<string, string>;
  /** Seconds until the window resets (`Retry-After` on 429). */
  retryAfter: number;
  remaining: number;
}

function headersFor(limit: number, res: RateLimiterRes): LimitOutcome['headers'] {
  const reset = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return {
    'RateLimit-Policy': `${limit};w=${WINDOW_SECONDS}`,
    RateLimit: `limit=${limit}, remaining=${Math.max(0, res.remainingPoints)}, reset=${reset}`,
  };
}

/**
 * rate-limiter-flexible's Postgres store names its statements (`rate_limits:rlflx-upsert`).
 * With DATABASE_PREPARED_STATEMENTS=off (behind PgBouncer before 1.21) they go unnamed: a
 * name prepared on one server session is unknown, or already taken, on the next.
 */
export function limiterStore(pool: Pool): { query(q: pg.QueryConfig): Promise<pg.QueryResult> } {
  if (loadConfig().database.preparedStatements) return pool;
  return { query: (q: pg.QueryConfig) => pool.query({ text: q.text, values: q.values }) };
}

/**
 * A per-minute budget shared by every instance (README.md, Operations): rate-limiter-flexible's
 * RateLimiterPostgres, one upsert per counted event in the UNLOGGED `rate_limits` table
 * (migration 1764000000100). Keys over their budget are then refused from memory for the
 * rest of the window (`inMemoryBlockOnConsumed`), so a flood costs the database nothing.
 * While Postgres is away the counting goes on in memory per instance (the insurance
 * limiter) and the request itself answers 503. `name` and the limit prefix the keys:
 * limits of another size count apart.
 */
export class SharedLimit {
  private readonly limiter: RateLimiterPostgres;

  constructor(
    pool: Pool,
    readonly name: string,
    readonly limit: number,
  ) {
    this.limiter = new RateLimiterPostgres({
      storeClient: limiterStore(pool),
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix: `${name}${limit}`,
      points: limit,
      duration: WINDOW_SECONDS,
      inMemoryBlockOnConsumed: limit + 1,
      inMemoryBlockDuration: 0, // block until the window's own expiry
      insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${name}${limit}`, points: limit, duration: WINDOW_SECONDS }),
    });
  }

  /** Counts one event for `key`. */
  async consume(key: string): Promise<LimitOutcome> {
    try {
      const res = await this.limiter.consume(key, 1);
      return {
        allowed: true,
        headers: headersFor(this.limit, res),
        retryAfter: Math.ceil(res.msBeforeNext / 1000),
        remaining: res.remainingPoints,
      };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      return {
        allowed: false,
        headers: headersFor(this.limit, rejection),
        retryAfter: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)),
        remaining: 0,
      };
    }
  }
}

/**
 * Failures (e.g. 401s) per key, shared by every instance; only failures are counted, so
 * successful requests cost no query. A key whose shared count is past the limit is
 * refused from memory until the window ends, on each instance from the first failure it
 * sees past the limit.
 */
export class SharedFailureLimit {
  private readonly counter: SharedLimit;
  private readonly blocked = new Map<string, number>();

  constructor(
    pool: Pool,
    name: string,
    readonly limit: number,
  ) {
    this.counter = new SharedLimit(pool, name, limit);
  }

  /** Whether any key is refused now (or was, and is not yet forgotten): otherwise `blockedFor` is 0 for every key. */
  get anyBlocked(): boolean {
    return this.blocked.size > 0;
  }

  /** Seconds this key must still wait, or 0. */
  blockedFor(key: string): number {
    const until = this.blocked.get(key);
    if (until === undefined) return 0;
    const left = until - Date.now();
    if (left <= 0) {
      this.blocked.delete(key);
      return 0;
    }
    return Math.ceil(left / 1000);
  }

  async fail(key: string): Promise<void> {
    const outcome = await this.counter.consume(key);
    // The limit-th failure is still answered; what comes after it is refused.
    if (!outcome.allowed || outcome.remaining <= 0) this.blocked.set(key, Date.now() + outcome.retryAfter * 1000);
    if (this.blocked.size > 10_000) this.blocked.clear(); // bounded: a flood of addresses cannot grow it without end
  }
}

/**
 * The counters' own small pool (same database): a flood of counted requests queues here,
 * not in front of the record queries, and the per-request statement of the limiter stays
 * out of the data pool's statement budget.
 */
@Injectable()
export class RateLimitPool implements OnModuleDestroy {
  readonly pool: Pool;

  constructor(url: string) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: 4,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30_000,
      ...poolOptions(url),
    });
    this.pool.on('error', () => undefined); // an idle connection dropped (Postgres restarting): the pool replaces it
  }

  static provider(): FactoryProvider<RateLimitPool> {
    return { provide: RateLimitPool, useFactory: async () => new RateLimitPool((await resolveDatabaseUrl()).url) };
  }

  async onModuleDestroy() {
    await this.pool.end();
  }
}
