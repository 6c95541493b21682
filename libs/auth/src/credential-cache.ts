import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '#database/config.js';
import { poolOf } from '#database/sql.js';
import type { Principal } from './principal.js';

/** The channel the `notify_credentials_changed` triggers announce on (migration 1764400000000). */
export const CREDENTIALS_CHANNEL = 'wrs_credentials';
const MAX_ENTRIES = 10_000;
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5_000;

export interface CachedCredential {
  principal: Principal;
  /** Epoch ms after which the entry is not used (the credential's own expiry, or the cache's bound). */
  until: number;
  /** Epoch ms of the last `last_used_at` write for this credential (API keys). */
  touched: number;
}

/**
 * Principals resolved from bearer credentials, kept in this process so a request needs no
 * credential query — and dropped, all at once, whenever Postgres announces a change that
 * could take access away (`LISTEN wrs_credentials`; the triggers fire on every writer:
 * auth server, CLI, psql). The cache only serves while that LISTEN connection is up: when
 * it drops (Postgres restarting, network), every request reads the database again until
 * it is back. A read that was under way when a change arrived is not kept (`ticket`).
 */
@Injectable()
export class CredentialCache implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(CredentialCache.name);
  private readonly entries = new Map<string, CachedCredential>();
  private readonly ttlMs = loadConfig().credentialCacheMs;
  private listener?: pg.Client;
  private listening = false;
  private generation = 0;
  private stopped = false;
  private retryMs = RECONNECT_FIRST_MS;
  private retry?: NodeJS.Timeout;
  private warned = false;

  constructor(private readonly dataSource: DataSource) {}

  onModuleInit(): void {
    if (this.ttlMs > 0) void this.listen();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    clearTimeout(this.retry);
    this.drop();
    await this.listener?.end().catch(() => undefined);
  }

  /** Whether entries are being served (the LISTEN connection is up). */
  get active(): boolean {
    return this.listening;
  }

  /** Taken before reading a credential from the database; `set` keeps the result only if nothing changed since. */
  ticket(): number {
    return this.generation;
  }

  get(key: string): CachedCredential | undefined {
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

  private async listen(): Promise<void> {
    const client = new pg.Client({ ...poolOf(this.dataSource).options, application_name: 'records-api credential listener' });
    let gone = false;
    const lost = (err?: Error) => {
      if (gone) return;
      gone = true;
      if (this.listener === client) this.listener = undefined;
      this.listening = false;
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
    client.on('notification', () => this.drop());
    try {
      await client.connect();
      await client.query(`LISTEN ${CREDENTIALS_CHANNEL}`);
    } catch (err) {
      return lost(err as Error);
    }
    if (this.stopped || gone) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.drop(); // whatever changed while nobody listened
    this.listening = true;
    this.retryMs = RECONNECT_FIRST_MS;
    if (this.warned) this.logger.log('Credential cache on again');
    this.warned = false;
  }
}
