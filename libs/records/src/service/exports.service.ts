import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Readable } from 'node:stream';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { DataSource } from 'typeorm';
import type { Principal } from '#auth/principal.js';
import { loadConfig, type ExportLimits } from '#config/config.js';
import { poolOf } from '#database/sql.js';
import { inlineParams } from '#database/inline-params.js';
import { sessionConnection } from '#database/connections.js';
import { TooManyRequestsError } from '#errors/errors.js';
import type { FilterNode, ObjectSchema } from '../query/types.js';
import { csvColumns, csvHeader, ndjsonLine, type FormulaMode } from './export-sql.js';
import { leaveLine, refusal, turnOf, waitInLine, type Query } from './export-turns.js';
import { RecordPolicy } from './record-policy.js';
import { RecordRepository } from './record-repository.js';
import { scope } from '../query/scope.js';
import { RecordsService } from './records.service.js';

export type ExportFormat = 'csv' | 'ndjson';

export interface ExportArgs {
  format: ExportFormat;
  filter?: FilterNode;
  /** `fields=`: the record's fields to write (`id` always); unset: every field. */
  fields?: ReadonlySet<string>;
  /** `formulas=` (CSV only): `escaped` unless `raw` (export-sql.ts). */
  formulas?: FormulaMode;
}

/** An export whose statement Postgres has accepted: nothing has been sent yet. */
export interface RunningExport {
  /** `companies-2026-11-26.csv`: the object and the day (UTC) it was taken. */
  filename: string;
  contentType: string;
  /** Written before `body`: the CSV header row ('' for NDJSON). */
  prefix: string;
  /** The rows as Postgres writes them, with backpressure down to its socket. */
  body: Readable;
  /** Called once `body` was read to its end, or abandoned (`err`): frees the connection and the workspace's slot. */
  finish(err?: unknown): void;
}

const CONTENT_TYPES: Record<ExportFormat, string> = {
  // RFC 4180 §3 and RFC 7111: the first line is the header row.
  csv: 'text/csv; charset=utf-8; header=present',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

/**
 * COPY options per format (PostgreSQL docs, COPY). CSV is RFC 4180 with LF line ends: a
 * value holding a comma, quote or line break is quoted, quotes doubled, no value is an
 * empty cell and an empty text `""`. NDJSON is one JSON text per row in CSV mode with a
 * quote and delimiter (\x01, \x02) that JSON text never holds raw (it escapes every control
 * character), so the line is written as it is: text mode would double its backslashes.
 */
const COPY_OPTIONS: Record<ExportFormat, string> = {
  csv: `FORMAT csv, ENCODING 'UTF8'`,
  ndjson: `FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02', ENCODING 'UTF8'`,
};

/** Seconds a refused export is told to wait (Retry-After). */
const RETRY_AFTER_SECONDS = 10;
/**
 * How often Postgres checks that an export's client is still there while the statement
 * runs (`client_connection_check_interval`, PostgreSQL 14+), so an abandoned export stops
 * within about a second even before it has written its first row (a sort, say).
 */
const CONNECTION_CHECK_MS = 1000;

/**
 * Streamed exports (docs/rest.md "Exports"; docs/decisions/0033-streamed-exports.md): one
 * `COPY (SELECT …) TO STDOUT` per export, whose bytes Postgres writes and the response
 * passes on with backpressure. Each runs on a connection of this service's own pool
 * (at most `EXPORTS_PER_INSTANCE`, without the statement timeout, which a long export must
 * outlive), never on the request pool, and holds one of its workspace's
 * `EXPORTS_PER_WORKSPACE` slots: a session advisory lock, so the limit holds across
 * instances and a connection that dies frees its slot with it. The slots are shared
 * fairly among workspaces (export-turns.ts): no workspace takes a server's last one for a
 * further export, and a freed one goes to those refused first.
 */
@Injectable()
export class ExportsService implements OnModuleDestroy {
  /** Read when the app is made (EXPORTS_PER_WORKSPACE, EXPORTS_PER_INSTANCE, EXPORT_STALL_TIMEOUT_MS). */
  readonly limits: ExportLimits = loadConfig().exports;
  private readonly pool: pg.Pool;
  private running = 0;
  /** A refusal before an export connection is taken puts the workspace in line through the request pool (one short statement). */
  private readonly requestQuery: Query;

  constructor(
    private readonly records: RecordsService,
    private readonly policy: RecordPolicy,
    private readonly repo: RecordRepository,
    dataSource: DataSource,
  ) {
    this.requestQuery = (sql, params) => dataSource.query(sql, params);
    // Session advisory locks: DATABASE_SESSION_URL behind a transaction pooler (connections.ts).
    this.pool = new pg.Pool({
      connectionTimeoutMillis: poolOf(dataSource).options.connectionTimeoutMillis,
      ...sessionConnection((dataSource.options as { url: string }).url, 0, ` -c client_connection_check_interval=${CONNECTION_CHECK_MS}`),
      max: this.limits.perInstance,
      idleTimeoutMillis: 10_000,
      application_name: 'records export',
    });
    // An idle connection that the server closes must not end the process (pg-pool's advice).
    this.pool.on('error', () => undefined);
  }

  /**
   * Checks read permission (403), then the arguments against the workspace's model (400),
   * takes a slot (429), and starts the statement. It resolves once Postgres has accepted it,
   * so anything refused before a row is ready is still an error answer, not a broken file.
   */
  async start(
    plural: string,
    principal: Principal,
    parse: (schema: ObjectSchema, names: { own: string[]; embedded: string[]; hidden?: string[] }) => ExportArgs,
  ): Promise<RunningExport> {
    const def = await this.records.definitionFor(plural, principal);
    this.policy.assertCan(principal, def.object, 'read');
    const { own, hidden } = await this.records.fieldNames(plural, principal);
    const args = parse(def.schema, { own, embedded: [], hidden });
    // A field the role cannot read is not a column of its exports; naming it in fields= was a 403.
    if (hidden) args.fields ??= new Set(own);
    this.policy.assertCanUse(principal, def, args.filter);

    const columns = args.format === 'csv' ? csvColumns(def, args.fields, args.formulas) : undefined;
    const select = columns ? columns.map((c) => c.sql).join(', ') : ndjsonLine(def, args.fields);
    // Live records only, whatever the filter says about deletedAt (docs/rest.md "Exports").
    const query = this.repo.exportQuery(def, scope(principal, def), args.filter, select);
    const statement = inlineParams(`COPY (${query.sql}) TO STDOUT WITH (${COPY_OPTIONS[args.format]})`, query.params);

    const workspace = principal.workspaceId;
    if (this.running >= this.limits.perInstance) {
      // The line only orders turns: a refusal stands even when it cannot be written down.
      await waitInLine(this.requestQuery, workspace, lockName(workspace)).catch(() => undefined);
      throw new TooManyRequestsError(
        `This server is running ${this.running} exports, its most at once; retry after ${RETRY_AFTER_SECONDS} s`,
        RETRY_AFTER_SECONDS,
      );
    }
    this.running++;
    let client: pg.PoolClient | undefined;
    let slot: number | undefined;
    try {
      client = await this.pool.connect();
      // A connection lost mid-export emits 'error' on the client: the stream reports it instead.
      client.on('error', ignore);
      slot = await this.claimSlot(client, workspace);
      if (slot === undefined) {
        throw new TooManyRequestsError(
          `${this.limits.perWorkspace} exports of this workspace are running, its most at once; retry after ${RETRY_AFTER_SECONDS} s`,
          RETRY_AFTER_SECONDS,
        );
      }
      const query: Query = async (sql, values) => (await client!.query(sql, values)).rows;
      const turn = await turnOf(query, workspace, lockName(workspace));
      const refused = refusal(this.limits.perInstance - (this.running - 1), turn);
      if (refused) {
        await waitInLine(query, workspace, lockName(workspace), turn.held);
        throw new TooManyRequestsError(`${refused}; retry after ${RETRY_AFTER_SECONDS} s`, RETRY_AFTER_SECONDS);
      }
      if (turn.listed) await leaveLine(query, workspace);
      const body = client.query(copyTo(statement));
      // pg-copy-streams emits the connection's end as 'error' even after the stream was
      // abandoned (the client went away, HEAD): whoever reads it (accepted, the pipe) listens
      // too; this keeps a late one from being an uncaught exception.
      body.on('error', ignore);
      await accepted(body);
      return {
        filename: `${plural}-${new Date().toISOString().slice(0, 10)}.${args.format}`,
        contentType: CONTENT_TYPES[args.format],
        prefix: columns ? csvHeader(columns) : '',
        body,
        finish: once((err) => this.finish(client!, workspace, slot!, err)),
      };
    } catch (err) {
      this.running--;
      if (client) this.release(client, workspace, slot, err instanceof TooManyRequestsError ? undefined : err);
      throw err;
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.pool.end();
  }

  /** One of the workspace's slots, as a session advisory lock (two-key form: no clash with the app's one-key locks), or undefined. */
  private async claimSlot(client: pg.PoolClient, workspaceId: string): Promise<number | undefined> {
    for (let slot = 0; slot < this.limits.perWorkspace; slot++) {
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1), $2::int) AS ok', [
        lockName(workspaceId),
        slot,
      ]);
      if (rows[0].ok) return slot;
    }
    return undefined;
  }

  private finish(client: pg.PoolClient, workspaceId: string, slot: number, err?: unknown): void {
    this.running--;
    this.release(client, workspaceId, slot, err);
  }

  /**
   * After a complete export: the slot is unlocked and the connection pooled again. After an
   * abandoned or failed one: the connection is closed (node-postgres destroys the socket of
   * a client ending mid-statement), which stops the statement and frees the slot with the session.
   */
  private release(client: pg.PoolClient, workspaceId: string, slot: number | undefined, err?: unknown): void {
    const done = (fault?: unknown) => {
      client.off('error', ignore);
      client.release(fault ? asError(fault) : undefined);
    };
    if (err) return done(err);
    if (slot === undefined) return done();
    client.query('SELECT pg_advisory_unlock(hashtext($1), $2::int)', [lockName(workspaceId), slot]).then(() => done(), done);
  }
}

const ignore = () => undefined;
const lockName = (workspaceId: string) => `records-export:${workspaceId}`;
const asError = (err: unknown) => (err instanceof Error ? err : new Error(String(err)));

function once<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void {
  let called = false;
  return (...args) => {
    if (called) return;
    called = true;
    fn(...args);
  };
}

/** Resolves when the COPY has a first chunk or has ended (an empty export); rejects with the statement's error. */
function accepted(body: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (err?: unknown) => {
      body.off('readable', onReadable);
      body.off('error', settle);
      if (err) reject(err);
      else resolve();
    };
    const onReadable = () => settle();
    body.on('readable', onReadable);
    body.on('error', settle);
  });
}
