import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { NextFunction, Request, Response } from 'express';
import pg, { type Pool } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '#config/config.js';
import { sessionOptions } from './data-source.js';
import { poolOf, queryRows, type StatementOptions } from './sql.js';

/**
 * Record reads on read replicas (`DATABASE_READ_URL`), writes and transactions on the primary,
 * and read-your-writes across instances (docs/decisions/0037-read-replicas.md):
 *
 * - After each write a credential makes, the primary's WAL position (`pg_current_wal_insert_lsn()`,
 *   taken after the write's commit, so past its commit record) is kept per credential
 *   in `read_your_writes` on the primary, shared by every instance: one upsert per write request.
 * - A request's first record read looks that position up on the primary (requests arriving
 *   while a look-up is out wait for the next one and share it: one statement however many
 *   requests) and picks a replica that has replayed at least that far; none does, the primary.
 * - Each instance polls every replica's replay position (and the primary's position, for lag)
 *   every POLL_MS; a replica behind on the poll is asked again before giving up on it. One
 *   further behind than READ_REPLICA_MAX_LAG_MS is not used at all.
 * - A replica that refuses connections, drops one or times out is skipped (circuit breaker,
 *   tried again after 0.5 s, doubling to 30 s) and the read runs on the primary: no error.
 *
 * Without DATABASE_READ_URL every method reads the primary and nothing is recorded.
 */

/** How often each instance reads every replica's replay position and the primary's position. */
export const POLL_MS = 150;
/** A replica connection that is not up within this is given up on, and the read goes to the primary. */
const CONNECT_TIMEOUT_MS = 1000;
/** The circuit breaker's first wait after a failure, doubled per failure up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;
/** A credential whose write position could not be recorded reads the primary on this instance this long. */
const UNRECORDED_PRIMARY_MS = 10_000;

/** Who reads, as far as routing cares: the credential is a workspace's API key, user or app. */
export interface Reader {
  workspaceId: string;
  kind: string;
  subjectId: string;
}

/** The credential's key in `read_your_writes` (the same `kind:subject` imports keep as `created_by`). */
export function credentialKey(reader: Reader): string {
  return `${reader.kind}:${reader.subjectId}`;
}

/** Per request: the position its credential must see, and the database its reads go to (one per request). */
interface RequestReads {
  needs?: Promise<bigint | undefined>;
  target?: Replica | 'primary';
  /** The write positions this request is recording: its answer is held until they are kept. */
  recording?: Promise<unknown>;
}

/** A position no replica reaches: the reads it guards go to the primary. */
const PRIMARY_ONLY = 1n << 128n;
/** The replay position of a server that is not a standby (promoted, or the primary named): it has everything. */
const NOT_A_STANDBY = 1n << 96n;

const requests = new AsyncLocalStorage<RequestReads>();

/**
 * Express middleware: the requests it wraps may read replicas. Mounted after body parsing
 * (a stream's events would run outside the request's async context) and before anything
 * that holds the answer to store it (idempotency keys): a write's position is recorded while
 * the answer is built and stored, and the answer leaves only once the position is kept
 * (`ReadRouter.wrote`). Reads outside such a request (workers, start-up) use the primary.
 */
export function readRoutingScope(_req: Request, res: Response, next: NextFunction): void {
  const store: RequestReads = {};
  const write = res.write;
  const end = res.end;
  res.write = function (this: Response, ...args: unknown[]) {
    if (!store.recording) return (write as (...a: unknown[]) => boolean).apply(this, args);
    void store.recording.then(() => (write as (...a: unknown[]) => boolean).apply(res, args));
    return true;
  } as Response['write'];
  res.end = function (this: Response, ...args: unknown[]) {
    if (!store.recording) return (end as (...a: unknown[]) => Response).apply(this, args);
    void store.recording.then(() => (end as (...a: unknown[]) => Response).apply(res, args));
    return res;
  } as Response['end'];
  requests.run(store, next);
}

/** `'X/Y'` (two hex halves, PostgreSQL's pg_lsn text) as a number that compares. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** A failure that means the replica is away (refused, dropped, shutting down, timed out), not that the statement is wrong. */
export function replicaAway(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true; // ECONNREFUSED, "Connection terminated", timeouts
  return code.startsWith('08') || code.startsWith('57P') || code.startsWith('53');
}

/** A statement cancelled because it conflicted with WAL replay on the replica: the primary answers it instead. */
function recoveryConflict(err: unknown): boolean {
  return (err as { code?: unknown }).code === '40001';
}

class Replica {
  readonly pool: Pool;
  /** Replayed up to here at the last poll; undefined until the first poll (or not a standby: every position counts as replayed). */
  replayed = -1n;
  lagMs = Number.POSITIVE_INFINITY;
  up = false;
  private failures = 0;
  private downUntil = 0;
  private polling?: Promise<void>;

  constructor(
    readonly url: string,
    readonly index: number,
    poolSize: number,
    statementTimeoutMs: number,
    private readonly log: Logger,
  ) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: poolSize,
      options: sessionOptions(statementTimeoutMs),
      application_name: 'records-api read',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // A replica host gone silent (no reset, no answer) fails the read instead of holding it.
      query_timeout: statementTimeoutMs > 0 ? statementTimeoutMs + 2000 : undefined,
      keepAlive: true,
      idleTimeoutMillis: 10_000,
    });
    // An idle connection the replica dropped (restart, shutdown) reports here; unhandled, it would end the process.
    this.pool.on('error', (err) => this.failed(err));
  }

  usable(maxLagMs: number, now: number): boolean {
    return this.up && now >= this.downUntil && this.lagMs <= maxLagMs;
  }

  failed(err: unknown): void {
    if (this.up) this.log.warn(`Read replica ${this.index + 1} is unavailable, reads go to the primary: ${(err as Error).message}`);
    this.up = false;
    const now = Date.now();
    // Within a wait, more failures (the pool's other connections dropping with it) do not lengthen it: one per try.
    if (now < this.downUntil) return;
    this.failures++;
    this.downUntil = now + Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.failures - 1));
  }

  /** Its replay position and lag now (concurrent callers share one statement); a failure opens the breaker. */
  poll(lagOf: (replayed: bigint) => number): Promise<void> {
    if (Date.now() < this.downUntil) return Promise.resolve();
    this.polling ??= (async () => {
      try {
        const [row] = await queryRows<{ lsn: string | null }>(this.pool, 'SELECT pg_last_wal_replay_lsn()::text AS lsn', [], {
          prepared: true,
        });
        // NULL: not a standby (a promoted replica, or the primary itself named): never behind.
        this.replayed = row.lsn === null ? NOT_A_STANDBY : parseLsn(row.lsn);
        this.lagMs = row.lsn === null ? 0 : lagOf(this.replayed);
        if (!this.up && this.failures) this.log.log(`Read replica ${this.index + 1} is back`);
        this.up = true;
        this.failures = 0;
      } catch (err) {
        this.failed(err);
      } finally {
        this.polling = undefined;
      }
    })();
    return this.polling;
  }
}

/**
 * Where record reads go. `rows(reader, …)` reads a replica when one may serve that reader
 * (see the top of this file) and the primary otherwise; `wrote(reader)` records a write.
 */
@Injectable()
export class ReadRouter implements OnModuleDestroy {
  private readonly primary: Pool;
  private readonly replicas: Replica[];
  private readonly maxLagMs: number;
  private readonly log = new Logger('read-replicas');
  /** The primary's position when first seen, oldest first: a replica's lag is how long ago the primary first passed its replay position. */
  private readonly history: { at: number; lsn: bigint }[] = [];
  private readonly historyMs: number;
  private timer?: NodeJS.Timeout;
  private next = 0;
  /** Credentials whose last write position could not be recorded: this instance reads the primary for them until then. */
  private readonly unrecorded = new Map<string, number>();
  /** Look-ups of write positions waiting for the next statement, and whether one is out. */
  private waiting: {
    workspaceId: string;
    credential: string;
    resolve: (lsn: bigint | undefined) => void;
    reject: (err: unknown) => void;
  }[] = [];
  private lookingUp = false;
  /** Record reads served so far by a replica and by the primary (tests, the bench). */
  readonly served = { replica: 0, primary: 0 };

  constructor(dataSource: DataSource) {
    const config = loadConfig();
    this.primary = poolOf(dataSource);
    this.maxLagMs = config.readReplicaMaxLagMs;
    this.historyMs = Math.max(2 * this.maxLagMs, 5000);
    const poolSize = (dataSource.options.extra as { max?: number } | undefined)?.max ?? 20;
    this.replicas = config.databaseReadUrls.map((url, i) => new Replica(url, i, poolSize, config.databaseStatementTimeoutMs, this.log));
  }

  /** Polls start with the first routed read: a process that serves none (the auth server) never polls. */
  private startPolling(): void {
    if (this.timer || !this.replicas.length) return;
    this.timer = setInterval(() => void this.pollAll(), POLL_MS);
    this.timer.unref();
    void this.pollAll();
  }

  /** Whether any replica is configured (without one, nothing is recorded or looked up). */
  get enabled(): boolean {
    return this.replicas.length > 0;
  }

  /** The replicas as this instance sees them now (tests, the bench). */
  status(): { up: boolean; lagMs: number; usable: boolean }[] {
    const now = Date.now();
    return this.replicas.map((r) => ({ up: r.up, lagMs: r.lagMs, usable: r.usable(this.maxLagMs, now) }));
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.replicas.map((r) => r.pool.end().catch(() => undefined)));
  }

  /** A record read for `reader`: on a replica that has `reader`'s last write, else on the primary. */
  async rows<T = Record<string, unknown>>(
    reader: Reader,
    sql: string,
    params: unknown[] = [],
    options: StatementOptions = {},
  ): Promise<T[]> {
    const target = this.enabled ? await this.targetFor(reader) : 'primary';
    if (target === 'primary') {
      this.served.primary++;
      return queryRows<T>(this.primary, sql, params, options);
    }
    try {
      const rows = await queryRows<T>(target.pool, sql, params, options);
      this.served.replica++;
      return rows;
    } catch (err) {
      if (replicaAway(err)) target.failed(err);
      else if (!recoveryConflict(err)) throw err;
      // The rest of this request reads the primary too: one request never mixes a replica's answers with the primary's after a failure.
      const store = requests.getStore();
      if (store) store.target = 'primary';
      this.served.primary++;
      return queryRows<T>(this.primary, sql, params, options);
    }
  }

  /**
   * After a write of `reader` has committed, before it is answered: its position from now on
   * must be seen by its reads, on every instance. In a request (readRoutingScope) the upsert
   * runs while the answer is built and stored under its idempotency key, and the answer is
   * held until it is done; later reads of the request wait for it. Elsewhere this waits for
   * it. A failure to record it is logged and this instance reads the primary for that
   * credential for a while; the write stands.
   */
  async wrote(reader: Reader): Promise<void> {
    if (!this.enabled) return;
    const store = requests.getStore();
    const key = `${reader.workspaceId}:${credentialKey(reader)}`;
    const kept = this.record(reader.workspaceId, credentialKey(reader)).catch((err: unknown) => {
      this.log.warn(`Could not record a write position, this instance reads the primary for its credential: ${(err as Error).message}`);
      this.unrecorded.set(key, Date.now() + UNRECORDED_PRIMARY_MS);
      return PRIMARY_ONLY;
    });
    if (!store) {
      await kept;
      return;
    }
    store.needs = kept;
    store.target = undefined;
    store.recording = Promise.all([store.recording, kept]);
  }

  /**
   * The same for a credential's write made outside its request (an import, by the worker that
   * ran it): its reads after it learns the import finished see the records.
   */
  async wroteFor(workspaceId: string, credential: string): Promise<void> {
    if (this.enabled) await this.record(workspaceId, credential);
  }

  /**
   * One upsert, after the write's commit: `pg_current_wal_insert_lsn()` is then past the commit
   * record, whatever `synchronous_commit` the write ran with (the write position,
   * `pg_current_wal_lsn()`, is past it only when the commit waited for its flush). Its own commit need not wait for the disk (`synchronous_commit` off for this one
   * transaction): the write it follows was already flushed, and a crash that lost this row
   * also ends every replica's stream at the primary's flushed WAL.
   */
  private async record(workspaceId: string, credential: string): Promise<bigint> {
    const [row] = await queryRows<{ lsn: string }>(
      this.primary,
      `WITH async AS (SELECT set_config('synchronous_commit', 'off', true))
       INSERT INTO read_your_writes AS r (workspace_id, credential, lsn)
       SELECT $1, $2, pg_current_wal_insert_lsn() FROM async
       ON CONFLICT (workspace_id, credential) DO UPDATE SET lsn = greatest(r.lsn, excluded.lsn), written_at = now()
       RETURNING lsn::text`,
      [workspaceId, credential],
      { prepared: true },
    );
    return parseLsn(row.lsn);
  }

  /** Where this request's reads go: chosen at its first read (or after its write), then kept. */
  private async targetFor(reader: Reader): Promise<Replica | 'primary'> {
    const store = requests.getStore();
    if (!store) return 'primary';
    if (store.target) return store.target;
    this.startPolling();
    const now = Date.now();
    const key = `${reader.workspaceId}:${credentialKey(reader)}`;
    const until = this.unrecorded.get(key);
    if (until !== undefined) {
      if (until > now) return (store.target = 'primary');
      this.unrecorded.delete(key);
    }
    const candidates = this.replicas.filter((r) => r.usable(this.maxLagMs, now));
    if (!candidates.length) return (store.target = 'primary');
    let needs: bigint | undefined;
    try {
      needs = await (store.needs ??= this.lookUp(reader.workspaceId, credentialKey(reader)));
    } catch {
      return (store.target = 'primary'); // the primary is away: its own read will say so
    }
    if (needs === PRIMARY_ONLY) return (store.target = 'primary');
    const floor = needs ?? 0n;
    // Round robin over the replicas that have the credential's last write, as last polled.
    const ready = candidates.filter((r) => r.replayed >= floor);
    if (ready.length) return (store.target = ready[this.next++ % ready.length]);
    // Behind on the last poll: ask the furthest one again (shared with other requests asking) before reading the primary.
    const furthest = candidates.reduce((a, b) => (b.replayed > a.replayed ? b : a));
    await furthest.poll((lsn) => this.lagOf(lsn));
    return (store.target = furthest.usable(this.maxLagMs, Date.now()) && furthest.replayed >= floor ? furthest : 'primary');
  }

  /**
   * The credential's last write position, read on the primary by a statement sent after this
   * call: requests that ask while one is out share the next one (one per workspace among them).
   */
  private lookUp(workspaceId: string, credential: string): Promise<bigint | undefined> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ workspaceId, credential, resolve, reject });
      this.sendLookUps();
    });
  }

  private sendLookUps(): void {
    if (this.lookingUp || !this.waiting.length) return;
    const batch = this.waiting;
    this.waiting = [];
    this.lookingUp = true;
    const byWorkspace = new Map<string, typeof batch>();
    for (const ask of batch) byWorkspace.set(ask.workspaceId, [...(byWorkspace.get(ask.workspaceId) ?? []), ask]);
    void Promise.all(
      [...byWorkspace].map(async ([workspaceId, asks]) => {
        try {
          const rows = await queryRows<{ credential: string; lsn: string }>(
            this.primary,
            'SELECT credential, lsn::text AS lsn FROM read_your_writes WHERE workspace_id = $1 AND credential = ANY($2::text[])',
            [workspaceId, [...new Set(asks.map((a) => a.credential))]],
            { prepared: true },
          );
          const found = new Map(rows.map((row) => [row.credential, parseLsn(row.lsn)]));
          for (const ask of asks) ask.resolve(found.get(ask.credential));
        } catch (err) {
          for (const ask of asks) ask.reject(err);
        }
      }),
    ).finally(() => {
      this.lookingUp = false;
      this.sendLookUps();
    });
  }

  /** How far behind the primary a replica replayed up to `replayed` is, in ms (infinite beyond what history holds). */
  private lagOf(replayed: bigint): number {
    const now = Date.now();
    const latest = this.history.at(-1);
    if (!latest || replayed >= latest.lsn) return latest ? 0 : Number.POSITIVE_INFINITY;
    // The first moment the primary was seen past the replica: the replica lacks WAL written by then.
    let lo = 0;
    let hi = this.history.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.history[mid].lsn > replayed) hi = mid;
      else lo = mid + 1;
    }
    return lo === 0 ? Number.POSITIVE_INFINITY : now - this.history[lo].at;
  }

  private async pollAll(): Promise<void> {
    try {
      const [row] = await queryRows<{ lsn: string }>(this.primary, 'SELECT pg_current_wal_lsn()::text AS lsn', [], { prepared: true });
      const lsn = parseLsn(row.lsn);
      const now = Date.now();
      if (!this.history.length || lsn > this.history.at(-1)!.lsn) this.history.push({ at: now, lsn });
      // Keep one sample older than the window, so a replica within it is measured, not unknown.
      while (this.history.length > 2 && this.history[1].at < now - this.historyMs) this.history.shift();
    } catch {
      // The primary is away: lag is measured against the last position known.
    }
    await Promise.all(this.replicas.map((r) => r.poll((lsn) => this.lagOf(lsn))));
  }
}
