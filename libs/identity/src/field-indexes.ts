import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '#config/config.js';
import { sessionConnection } from '#database/connections.js';
import { poolOf } from '#database/sql.js';
import {
  CUSTOM_FIELD_OBJECTS,
  CUSTOM_FIELD_TYPES,
  indexedValue,
  indexKind,
  NAME_RULE,
  OBJECTS,
  type CustomField,
  type CustomFieldObject,
} from '#records/objects/index.js';

/*
 * The shared custom-field indexes (docs/decisions/0028-custom-fields-storage.md,
 * docs/decisions/0048-custom-field-index-sweeper.md). Which indexes a table should have is
 * read from `custom_fields` alone, every time: a workspace's fair share of the table's
 * slots, best first. A sweeper makes the indexes match it both ways (builds the missing,
 * drops the strays and the INVALID leftovers of cut-short builds), one statement at a
 * time, on one connection of its own, by one instance of the cluster at a time. Field
 * changes only ask for a sweep: nothing is queued in memory that a crash could lose, and
 * no request waits for or holds a connection for a build.
 */

const logger = new Logger('CustomFieldIndexes');
/** One builder per cluster: two CREATE INDEX CONCURRENTLY on one table wait for each other and deadlock. */
const LOCK = `hashtext('custom-field-indexes')`;
/** How often an instance whose sweep waits tries the lock again. */
const LOCK_RETRY_MS = 1_000;
/** A build whose instance died is cancelled this soon after, instead of running to its end for nobody. */
const CONNECTION_CHECK_MS = 1_000;

export type IndexKind = 'text' | 'number';

const INDEXED_TYPES = CUSTOM_FIELD_TYPES.filter((t) => indexKind(t));
const NUMBER_TYPES = CUSTOM_FIELD_TYPES.filter((t) => indexKind(t) === 'number');

/**
 * The fields of every workspace's own objects share the one table of their records
 * (docs/decisions/0057-custom-objects-storage.md): an index there serves the fields of
 * that name and kind of any custom object, led by `(workspace_id, object_id)`.
 */
const CUSTOM_RECORDS = 'custom_records';

const tableOf = (object: CustomFieldObject): string => OBJECTS.find((o) => o.plural === object)?.table ?? CUSTOM_RECORDS;

function indexNameOf(object: CustomFieldObject, name: string, kind: IndexKind): string {
  return `cf_${tableOf(object)}_${kind}_${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;
}

/** The index that serves filters and order on `field` (shared by every field of that object, name and kind), if its type takes one. */
export function fieldIndexName(field: Pick<CustomField, 'object' | 'name' | 'type'>): string | undefined {
  const kind = indexKind(field.type);
  return kind && indexNameOf(field.object, field.name, kind);
}

/**
 * The statement that builds the index of `object`'s fields named `name` of `kind`: of live
 * records, `(workspace_id, value DESC NULLS LAST, id DESC)`, concurrently, so writes go on.
 */
export function buildIndexSql(object: CustomFieldObject, name: string, kind: IndexKind): string {
  const table = tableOf(object);
  return `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexNameOf(object, name, kind)} ON ${table}
    (workspace_id, ${table === CUSTOM_RECORDS ? 'object_id, ' : ''}${indexedValue(name, kind, '')} DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL`;
}

/**
 * The names of `object` that get an index, best first, at most $5 (the table's slots): each
 * workspace ranks its active indexed fields of the object by age, ranks beyond $4 (the
 * per-workspace share) want none, and a name goes by its best rank in any workspace, then
 * by how many workspaces use it, then by age. Across workspaces by design (tenant-scope.ts).
 */
const wanted = (
  objects: string,
) => `SELECT name, kind FROM (SELECT name, CASE WHEN type = ANY($3::text[]) THEN 'number' ELSE 'text' END AS kind, created_at,
  row_number() OVER (PARTITION BY workspace_id ORDER BY created_at, id) AS rank
  FROM custom_fields WHERE ${objects} AND is_active AND type = ANY($2::text[])) fields
  WHERE rank <= $4 GROUP BY name, kind ORDER BY min(rank), count(*) DESC, min(created_at), name, kind LIMIT $5`;
const WANTED = wanted('object = $1');
/**
 * The same for `custom_records`: every workspace's own objects' fields (their object is not a
 * standard one), a workspace's share counted over all of them; `name` has its own index
 * (every custom object's label identifier, migration 1765900000000).
 */
const WANTED_CUSTOM = wanted(`object <> ALL($1::text[]) AND NOT (name = 'name' AND type = 'TEXT')`);

const PRESENT = `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  WHERE i.indrelid = $1::regclass AND c.relname LIKE $2`;

/** The sweeps of one database from this process: at most one at a time, and one more when asked meanwhile. */
class Sweeper {
  private requested = 0;
  private completed = 0;
  private running?: Promise<void>;
  private client?: pg.Client;
  private stopped = false;
  private readonly stopping = new AbortController();

  constructor(
    private readonly url: string,
    private readonly connectTimeoutMs: number | undefined,
  ) {}

  request(): void {
    if (this.stopped) return;
    this.requested++;
    this.start();
  }

  private start(): void {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
      // Asked for while the run was closing its connection.
      if (!this.stopped && this.completed < this.requested) this.start();
    });
  }

  /** Resolves once a sweep that began after this call has ended (or the sweeper stopped). */
  async settled(): Promise<void> {
    const target = this.requested;
    while (this.running && this.completed < target) await this.running;
  }

  /** Ends the connection: a build running on it is cancelled by the server (client_connection_check_interval). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    await this.disconnect();
    await this.running;
  }

  private async run(): Promise<void> {
    try {
      while (!this.stopped && this.completed < this.requested) {
        const target = this.requested;
        try {
          await this.sweep();
        } catch (err) {
          // The next request or the periodic sweep tries again; a build cut short is an INVALID index it drops first.
          if (!this.stopped) logger.warn(`custom-field index sweep failed, tried again later: ${(err as Error).message}`);
          await this.disconnect();
        }
        this.completed = target;
      }
    } finally {
      await this.disconnect();
    }
  }

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    // A session of its own (the lock, no statement timeout: a build on a large table takes
    // longer than any request), never one of the request pool's connections.
    const client = new pg.Client({
      connectionTimeoutMillis: this.connectTimeoutMs,
      ...sessionConnection(this.url, 0, ` -c client_connection_check_interval=${CONNECTION_CHECK_MS}`),
      application_name: 'custom-field indexes',
    });
    client.on('error', () => undefined);
    this.client = client;
    await client.connect();
    return client;
  }

  private async disconnect(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async sweep(): Promise<void> {
    const client = await this.connection();
    // Never wait for the lock inside a statement: a session blocked in pg_advisory_lock holds
    // a snapshot, which the build holding the lock waits for (a deadlock). Try, and try again
    // a moment later: the holder may have read the fields before this instance's change.
    while (!(await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${LOCK}) AS ok`)).rows[0].ok) {
      await sleep(LOCK_RETRY_MS * (0.5 + Math.random()), undefined, { signal: this.stopping.signal });
    }
    try {
      // Each pass reads the wanted indexes afresh, so a field created or deleted during a build is seen by the next pass.
      while (!this.stopped && (await this.pass(client)));
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${LOCK})`).catch(() => undefined);
    }
  }

  /** Per table: drops what is not wanted (or INVALID), then builds the best missing one. Whether it changed anything. */
  private async pass(client: pg.Client): Promise<boolean> {
    const config = loadConfig();
    let changed = false;
    // The standard tables, then the one of every workspace's own objects (keyed here by a name no standard object has).
    for (const object of [...CUSTOM_FIELD_OBJECTS, CUSTOM_RECORDS]) {
      const table = tableOf(object);
      const wanted = (
        await client.query<{ name: string; kind: IndexKind }>(table === CUSTOM_RECORDS ? WANTED_CUSTOM : WANTED, [
          table === CUSTOM_RECORDS ? CUSTOM_FIELD_OBJECTS : object,
          INDEXED_TYPES,
          NUMBER_TYPES,
          config.customFieldIndexesPerWorkspace,
          config.customFieldIndexesPerTable,
        ])
      ).rows
        // The name goes into the index's expression: only names the API accepts.
        .filter((w) => NAME_RULE.test(w.name))
        .map((w) => ({ ...w, index: indexNameOf(object, w.name, w.kind) }));
      const keep = new Set(wanted.map((w) => w.index));
      const present = (await client.query<{ name: string; valid: boolean }>(PRESENT, [table, `cf\\_${table}\\_%`])).rows;
      const valid = new Set<string>();
      for (const index of present) {
        if (this.stopped) return false;
        if (index.valid && keep.has(index.name)) {
          valid.add(index.name);
          continue;
        }
        await client.query(`DROP INDEX CONCURRENTLY IF EXISTS "${index.name.replace(/"/g, '""')}"`);
        changed = true;
      }
      const missing = wanted.find((w) => !valid.has(w.index));
      if (missing && !this.stopped) {
        await client.query(buildIndexSql(object, missing.name, missing.kind));
        changed = true;
      }
    }
    return changed;
  }
}

const sweepers = new Map<string, Sweeper>();

function urlOf(ds: DataSource): string {
  return (ds.options as { url: string }).url;
}

/** Asks for a sweep of `ds`'s database from this process; it runs in the background, never on the caller's path. */
export function sweepFieldIndexes(ds: DataSource): void {
  const url = urlOf(ds);
  let sweeper = sweepers.get(url);
  if (!sweeper) sweepers.set(url, (sweeper = new Sweeper(url, poolOf(ds).options.connectionTimeoutMillis)));
  sweeper.request();
}

/** Resolves when every sweep this process was asked for so far has ended (tests, scripts). */
export async function fieldIndexesSettled(): Promise<void> {
  await Promise.all([...sweepers.values()].map((s) => s.settled()));
}

async function stopSweeping(ds: DataSource): Promise<void> {
  const url = urlOf(ds);
  const sweeper = sweepers.get(url);
  sweepers.delete(url);
  await sweeper?.stop();
}

/**
 * Sweeps at start (a build cut short by a crash, a field whose sweep failed), then every
 * CUSTOM_FIELD_INDEX_SWEEP_MS (changes made on other instances while this one held the
 * lock, slots freed elsewhere); field changes on this instance ask for one at once.
 */
@Injectable()
export class FieldIndexSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;

  constructor(private readonly ds: DataSource) {}

  onApplicationBootstrap(): void {
    sweepFieldIndexes(this.ds);
    const every = loadConfig().customFieldIndexSweepMs;
    if (every > 0) {
      this.timer = setInterval(() => sweepFieldIndexes(this.ds), every);
      this.timer.unref();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await stopSweeping(this.ds);
  }
}
