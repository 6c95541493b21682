import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import pg, { type Pool } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '#config/config.js';

const TIMESTAMPTZ_OID = 1184;

/**
 * `timestamptz` as an ISO 8601 string, straight from Postgres's text form in a UTC
 * session (`2026-11-22 05:16:25.09+00`), without a Date in between: the API returns
 * strings anyway, and this is the hottest conversion of a list page.
 */
export function isoFromTimestamptz(text: string): string {
  const match = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/.exec(text);
  if (!match) return new Date(pg.types.getTypeParser(TIMESTAMPTZ_OID)(text) as Date).toISOString();
  return `${match[1]}T${match[2]}.${(match[3] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
}

const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ_OID ? isoFromTimestamptz : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * Plain SQL on the same pg pool TypeORM manages, for the hot paths (record lists, bearer
 * lookups): one call straight to node-postgres, rows back, nothing else per query.
 * Timestamps come back as ISO strings.
 */
@Injectable()
export class Sql {
  private readonly pool: Pool;

  constructor(dataSource: DataSource) {
    this.pool = poolOf(dataSource);
  }

  /**
   * `prepared: true`: the statement text comes from a small fixed set (no caller's input
   * shapes it), so each connection parses and plans it once and then only binds values.
   * `prepared: 'bounded'` (reads) and `'bounded-write'` (INSERT/UPDATE texts): the text
   * follows the shape of a caller's input (a list's filter, order, cursor and page size; the
   * columns a write gives; values are always parameters), so the set is open: such texts are
   * prepared while this process has seen fewer than MAX_SHAPED_READS (or MAX_SHAPED_WRITES)
   * of them, and sent unnamed after that, so no connection keeps more than that many and a
   * burst of writes cannot use up the reads' share. With DATABASE_PREPARED_STATEMENTS=off
   * (behind PgBouncer before 1.21) nothing is prepared.
   */
  async rows<T = Record<string, unknown>>(sql: string, params: unknown[] = [], options: StatementOptions = {}): Promise<T[]> {
    return queryRows<T>(this.pool, sql, params, options);
  }

  /** `work` on one connection between BEGIN and COMMIT (ROLLBACK when it throws). */
  async transaction<T>(work: (tx: SqlTx) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // A connection lost while checked out emits 'error' on the client itself (the pool only
    // listens to idle ones): keep it, so it fails this transaction's next query instead of
    // crashing the process, and destroy the client rather than pool it.
    let lost: Error | undefined;
    const onError = (err: Error) => (lost = err);
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await work({
        rows: async <R = Record<string, unknown>>(sql: string, params: unknown[] = [], options: StatementOptions = {}) =>
          (await client.query({ name: nameFor(sql, options), text: sql, values: params, types })).rows as R[],
      });
      await client.query('COMMIT');
      return result;
    } catch (err) {
      if (!lost) await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.off('error', onError);
      client.release(lost);
    }
  }
}

/** `Sql.rows` on any pool (read replicas' included: libs/database/src/read-routing.ts). */
export async function queryRows<T = Record<string, unknown>>(
  pool: Pool,
  sql: string,
  params: unknown[] = [],
  options: StatementOptions = {},
): Promise<T[]> {
  return (await pool.query({ name: nameFor(sql, options), text: sql, values: params, types })).rows as T[];
}

/** Statements inside one open transaction. */
export interface SqlTx {
  rows<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: StatementOptions): Promise<T[]>;
}

/** Whether a statement is prepared on its connection: see `Sql.rows`. */
export interface StatementOptions {
  prepared?: boolean | 'bounded' | 'bounded-write';
}

/** The pg pool TypeORM's postgres driver manages (its `master` pool). */
export function poolOf(dataSource: DataSource): Pool {
  return (dataSource.driver as unknown as { master: Pool }).master;
}

const names = new Map<string, string>();
/** Prepared statements whose text follows a caller's input shape, per process (and so per connection). */
export const MAX_SHAPED_READS = 100;
export const MAX_SHAPED_WRITES = 50;
const shaped = { read: 0, write: 0 };

/** DATABASE_PREPARED_STATEMENTS, read once per process. */
let prepare: boolean | undefined;

function nameFor(sql: string, { prepared }: StatementOptions): string | undefined {
  prepare ??= loadConfig().database.preparedStatements;
  if (!prepare) return undefined;
  if (prepared === true) return statementName(sql);
  if (prepared === 'bounded') return shapedStatementName(sql, 'read', MAX_SHAPED_READS);
  return prepared === 'bounded-write' ? shapedStatementName(sql, 'write', MAX_SHAPED_WRITES) : undefined;
}

function shapedStatementName(sql: string, kind: keyof typeof shaped, max: number): string | undefined {
  if (names.has(sql)) return names.get(sql);
  if (shaped[kind] >= max) return undefined;
  shaped[kind]++;
  return statementName(sql);
}

function statementName(sql: string): string {
  let name = names.get(sql);
  if (!name) {
    name = `s_${createHash('sha1').update(sql).digest('base64url').slice(0, 20)}`;
    names.set(sql, name);
  }
  return name;
}
