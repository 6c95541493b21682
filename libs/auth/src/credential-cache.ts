import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '#config/config.js';
import { isTransactionPooled } from '#database/connections.js';
import { poolOf } from '#database/sql.js';
import type { Principal } from './principal.js';

/** The channel the `notify_credentials_changed` triggers announce on (migration 1764400000000). */
export const CREDENTIALS_CHANNEL = 'wrs_credentials';
const MAX_ENTRIES = 10_000;
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const VERSION_READ_TIMEOUT_MS = 2_000;
/** Without LISTEN: how often the version is read while no request reads it, to drop entries and notice a lost connection. */
export const CREDENTIAL_POLL_MS = 1_000;

export interface CachedCredential {
  principal: Principal;
  /** Epoch ms after which the entry is not used (the credential's own expiry, or the cache's bound). */
  until: number;
  /** Epoch ms of the last `last_used_at` write for this credential (API keys). */
  touched: number;
}

/**
 * Principals resolved from bearer credentials, kept in this process so a request needs no
 * credential query of its own — and dropped, all at once, when anything that could take
 * access away changes. Every such change (whoever writes it: auth server, CLI, psql) moves
 * `credential_changes.version` in its own transaction and sends `NOTIFY wrs_credentials`
 * (migrations 1764400000000/100). A kept entry is used only after a read of the version
 * that was sent after the request arrived (`lookup`): one such read, on this cache's own
 * connection, serves every request waiting at that moment, and a change committed before
 * the request was sent is always seen, so a revoked key is refused on the very next
 * request. A single REST create takes the other road (`peek`): its INSERT checks the
 * version itself and fails, nothing written, if it moved (migration 1765700000000), so the
 * version is read by the statement that writes. The NOTIFY drops entries early. While that
 * connection is down nothing is kept and every request reads the database. A read that was
 * under way when a change was seen is not kept (`ticket`).
 *
 * Behind a pooler in transaction mode (DATABASE_POOLER=transaction) a LISTEN would stay on
 * whichever server connection ran it, so the cache does not LISTEN there: it polls the
 * version every CREDENTIAL_POLL_MS instead, which takes the NOTIFY's place (entries dropped
 * early, a dead connection noticed while idle). The same happens when LISTEN itself is
 * refused (a pooler that rejects it). Exactness never depended on the NOTIFY: the version
 * read before each use is a plain SELECT, which any pooler passes.
 */
@Injectable()
export class CredentialCache implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(CredentialCache.name);
  private readonly entries = new Map<string, CachedCredential>();
  private readonly ttlMs = loadConfig().credentialCacheMs;
  private listener?: pg.Client;
  private listening = false;
  /** LISTEN/NOTIFY, or a version read every CREDENTIAL_POLL_MS (see the class comment). */
  private mode: 'listen' | 'poll' = 'listen';
  private poll?: NodeJS.Timeout;
  private generation = 0;
  private stopped = false;
  private retryMs = RECONNECT_FIRST_MS;
  private retry?: NodeJS.Timeout;
  private warned = false;
  /** The version the entries were checked against. */
  private seen?: string;
  /** The version read now on the wire, and the one queued behind it (sent when it returns). */
  private inFlight?: Promise<void>;
  private queued?: Promise<void>;

  constructor(private readonly dataSource: DataSource) {}

  onModuleInit(): void {
    if (isTransactionPooled((this.dataSource.options as { url?: string }).url)) this.mode = 'poll';
    if (this.ttlMs > 0) void this.listen();
  }

  /** `listen` (NOTIFY drops entries) or `poll` (a version read every CREDENTIAL_POLL_MS does). */
  get invalidation(): 'listen' | 'poll' {
    return this.mode;
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    clearTimeout(this.retry);
    clearInterval(this.poll);
    this.drop();
    await this.listener?.end().catch(() => undefined);
  }

  /** Whether entries are being served (the cache's connection is up). */
  get active(): boolean {
    return this.listening;
  }

  /** Entries kept now. */
  get size(): number {
    return this.entries.size;
  }

  /** Taken before reading a credential from the database; `set` keeps the result only if nothing changed since. */
  ticket(): number {
    return this.generation;
  }

  /**
   * The entry for `key`, if it is still good after a version read that began after this
   * call: a change committed before the caller's request was sent is seen and drops it.
   */
  async lookup(key: string): Promise<CachedCredential | undefined> {
    if (!this.get(key)) return undefined;
    await this.sync();
    return this.get(key);
  }

  /**
   * The entry for `key` as kept now, read without a version read, and the version it holds
   * for (every change since that version dropped the entries kept before it). Good only for a
   * write whose statement carries `credentialGuard(version)`, which ends it with nothing
   * written when the version moved; anything else the caller shows waits for `lookup`.
   */
  peek(key: string): { entry: CachedCredential; version: string } | undefined {
    const entry = this.get(key);
    return entry && this.seen !== undefined ? { entry, version: this.seen } : undefined;
  }

  /** A version read sent after this call (shared with every caller until it is sent). */
  private sync(): Promise<void> {
    const client = this.listener;
    // No connection (only between its loss and `listening` going false): nothing is kept.
    if (!client) return Promise.resolve(this.drop());
    if (!this.inFlight) return (this.inFlight = this.checkVersion(client));
    // pg sends queries of one client in order: this one goes out when the one in flight returns.
    return (this.queued ??= this.checkVersion(client));
  }

  private checkVersion(client: pg.Client): Promise<void> {
    const done: Promise<void> = readVersion(client)
      .then(
        (version) => {
          if (version !== this.seen) {
            this.drop();
            this.seen = version;
          }
        },
        () => {
          // Failed or timed out: drop everything and start over on a new connection.
          this.drop();
          void client.end().catch(() => undefined);
        },
      )
      .finally(() => {
        if (this.inFlight !== done) return;
        this.inFlight = this.queued;
        this.queued = undefined;
      });
    return done;
  }

  private get(key: string): CachedCredential | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(key);
    if (entry && entry.until <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  set(key: string, ticket: number, principal: Principal, expiresAt?: number): void {
    if (!this.listening || ticket !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    // Shared by every request with this credential from now on: nobody may change it.
    Object.freeze(principal.role);
    Object.freeze(principal);
    const now = Date.now();
    this.entries.set(key, { principal, until: Math.min(now + this.ttlMs, expiresAt ?? Infinity), touched: now });
  }

  private drop(): void {
    this.generation++;
    this.entries.clear();
  }

  /** LISTEN on the cache's connection; a refusal by the server switches this cache to polling for good. */
  private async tryListen(client: pg.Client): Promise<void> {
    try {
      await client.query(`LISTEN ${CREDENTIALS_CHANNEL}`);
    } catch (err) {
      if (!refused(err)) throw err;
      this.mode = 'poll';
      this.logger.warn(`LISTEN refused (${(err as Error).message}): the credential cache polls every ${CREDENTIAL_POLL_MS} ms instead`);
    }
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({
      ...poolOf(this.dataSource).options,
      application_name: 'records-api credential listener',
      // A version read that hangs (a half-open connection) must not hold requests for long.
      query_timeout: VERSION_READ_TIMEOUT_MS,
    });
    let gone = false;
    const lost = (err?: Error) => {
      if (gone) return;
      gone = true;
      if (this.listener === client) this.listener = undefined;
      this.listening = false;
      clearInterval(this.poll);
      this.inFlight = this.queued = undefined;
      this.drop();
      client.end().catch(() => undefined);
      if (this.stopped) return;
      if (!this.warned) {
        this.logger.warn(`Credential cache off until Postgres is back (${err?.message ?? 'connection ended'})`);
        this.warned = true;
      }
      this.retry = setTimeout(() => void this.listen(), this.retryMs);
      this.retry.unref();
      this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    // The version moved to one not read yet: nothing is peeked at until a version read (`peek`).
    client.on('notification', () => {
      this.drop();
      this.seen = undefined;
    });
    let version: string | undefined;
    try {
      await client.connect();
      if (this.mode === 'listen') await this.tryListen(client);
      version = await readVersion(client);
    } catch (err) {
      return lost(err as Error);
    }
    if (this.stopped || gone) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.seen = version;
    this.drop(); // whatever changed while nobody listened
    this.listening = true;
    if (this.mode === 'poll') {
      clearInterval(this.poll);
      this.poll = setInterval(() => void this.sync(), CREDENTIAL_POLL_MS);
      this.poll.unref();
    }
    this.retryMs = RECONNECT_FIRST_MS;
    if (this.warned) this.logger.log('Credential cache on again');
    this.warned = false;
  }
}

/** A LISTEN the server answered with an error (Postgres or a pooler; the connection is still up): poll from now on. */
function refused(err: unknown): boolean {
  return err instanceof pg.DatabaseError;
}

/**
 * SQLSTATE of `credential_version_is` (migration 1765700000000): the credential version is
 * no longer the one a write was made for, and the write's statement wrote nothing.
 */
export const CREDENTIAL_CHANGED_SQLSTATE = 'WA001';

/** The condition that ends a statement with CREDENTIAL_CHANGED_SQLSTATE unless the version is `version` (its parameter is pushed on `params`). */
export function credentialGuard(version: string, params: unknown[]): string {
  return `credential_version_is($${params.push(version)}::bigint)`;
}

/** The credential version every change that can take access away moves (migration 1764400000100). */
async function readVersion(client: pg.Client): Promise<string | undefined> {
  return (await client.query<{ version: string }>('SELECT version FROM credential_changes WHERE id = 1')).rows[0]?.version;
}
