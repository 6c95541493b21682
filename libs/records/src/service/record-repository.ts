import { Injectable } from '@nestjs/common';
import type { SqlTx, StatementOptions } from '#database/sql.js';
import { compileKeyset, compileOrderBy, DEFAULT_ORDER } from '../query/index.js';
import type { CursorPayload, FilterNode, OrderTerm } from '../query/types.js';
import { compositeSubFields, fullComposite, ownValue, type RelationField } from '../objects/index.js';
import type { AnyRecord, ObjectDefinition } from './object-definitions.js';
import type { RecordScope } from '../query/scope.js';
import { groupByStatement, type GroupByArgs } from './group-by.js';

/**
 * Where a statement runs: the primary (`Sql`), a transaction (`SqlTx`), or the read router
 * bound to the principal (RecordsService). The repository never chooses.
 */
export type Db = Pick<SqlTx, 'rows'>;

/** A statement built for the writer, which runs it as it is or wrapped with its webhook events (record-writer.ts). */
export interface Statement {
  sql: string;
  params: unknown[];
  prepared: StatementOptions['prepared'];
}

/** What a page reads (RecordsService.list, pagesByParent): the order with its tie-breaker, the direction, the cursor. */
export interface PageQuery {
  columns: readonly string[];
  order: OrderTerm[];
  backwards: boolean;
  cursor?: CursorPayload;
  filter?: FilterNode;
  /** The page size: one row more is read, to see whether more follow. */
  limit: number;
}

/** A unique value to look a record up by (record_keys), for the i-th record of an upsert. */
export interface KeyProbe {
  i: number;
  field: string;
  /** How the value is normalized before comparing (unique_fields.compare). */
  normalize: string;
  raw: string;
}

/** The row counts a list statement reads: `limit + 1` rounded up to one of these. */
const ROWS_TO_READ = [2, 11, 21, 31, 41, 51, 61, 76, 101, 126, 151, 176, 201];

/**
 * A page of `limit` reads `limit + 1` rows rounded up to one of a few counts, written into
 * the statement rather than bound: with `LIMIT $n` Postgres's generic plan assumes a tenth of
 * the table and never wins, so every execution of a prepared list statement was planned
 * anew; with a literal the generic plan is used (issue 12). The extra rows are dropped.
 */
function rowsToRead(limit: number): number {
  return ROWS_TO_READ.find((n) => n > limit) ?? limit + 1;
}

/** A declared name as an SQL string literal. */
const literal = (name: string) => `'${name.replaceAll("'", "''")}'`;

/**
 * Every SQL statement on records (docs/decisions/0061-one-path-to-sql.md): each method takes
 * the object's definition and the scope (libs/records/src/query/scope.ts) its table and predicates
 * come from, and either runs on the `Db` it is given or returns the statement for the writer
 * to run. No permission is checked here (record-policy.ts), and no event written
 * (record-writer.ts). The SQL each method sends is kept in test/snapshots/record-repository.sql.
 */
@Injectable()
export class RecordRepository {
  // Reads ---------------------------------------------------------------------------------

  /**
   * One row with the stored count, its version and whether anything lies on the other side
   * of the cursor, then the page's rows (whose head columns are NULL, and so cost nothing to
   * send or parse). The count and the version are the sums of the (workspace, object)'s slot
   * rows (migration 1764800000000).
   */
  async page(
    db: Db,
    def: ObjectDefinition,
    s: RecordScope,
    q: PageQuery,
  ): Promise<{ head: Record<string, unknown>; rows: Record<string, unknown>[] }> {
    const params = s.params();
    const where = s.filtered(q.filter, def.schema, params);
    let keyset = '';
    let otherSide = 'false';
    if (q.cursor) {
      keyset = ` AND ${compileKeyset(q.order, def.schema, q.cursor, params, q.backwards ? 'before' : 'after')}`;
      // An ordered LIMIT 1 walks the index from the cursor; EXISTS lets the planner pick a scan.
      const reverse = compileKeyset(q.order, def.schema, q.cursor, params, q.backwards ? 'after' : 'before', true);
      otherSide = `(SELECT 1 FROM ${s.table} t WHERE ${where} AND ${reverse}
                     ORDER BY ${compileOrderBy(q.order, def.schema, !q.backwards)} LIMIT 1) IS NOT NULL`;
    }
    params.push(def.object);
    const objectParam = `$${params.length}`;
    const sql = `
      SELECT ${q.columns.map((col) => `NULL AS ${col}`).join(', ')},
             coalesce(rc.live_count, 0) AS __live_count, coalesce(rc.version, 0) AS __version, ${otherSide} AS __other_side
        FROM (SELECT sum(live_count)::bigint AS live_count, sum(version)::bigint AS version
                FROM record_counts WHERE workspace_id = $1 AND object = ${objectParam}) rc
      UNION ALL
      (SELECT ${q.columns.map((col) => `t.${col}`).join(', ')}, NULL, NULL, NULL
         FROM ${s.table} t
        WHERE ${where}${keyset}
        ORDER BY ${compileOrderBy(q.order, def.schema, q.backwards)}
        LIMIT ${rowsToRead(q.limit)})`;
    // The text follows what the caller asks for (filter, order, cursor, page size, GraphQL's columns): prepared within a bound.
    const all = await db.rows(sql, params, { prepared: 'bounded' });
    return { head: all.find((row) => row.__version != null)!, rows: all.filter((row) => row.__version == null) };
  }

  /** How many records a list's filter keeps (its scope's live ones unless it names deletedAt). */
  async count(db: Db, def: ObjectDefinition, s: RecordScope, filter: FilterNode | undefined): Promise<number> {
    const params = s.params();
    const [row] = await db.rows<{ n: string }>(
      `SELECT count(*)::bigint AS n FROM ${s.table} t WHERE ${s.filtered(filter, def.schema, params)}`,
      params,
    );
    return Number(row.n);
  }

  /**
   * One page per parent (`Company.people(first: 3)`), for many parents in one statement: each
   * parent's page read by keyset in a LATERAL join, with whether anything lies on the other
   * side of the cursor; a parent without records has one row whose `id` is NULL.
   */
  async pagesByParent(db: Db, def: ObjectDefinition, s: RecordScope, via: Via, parentIds: string[], q: PageQuery) {
    const params = s.params();
    const where = s.filtered(q.filter, def.schema, params);
    params.push(parentIds);
    const parents = `$${params.length}::uuid[]`;
    let keyset = '';
    let otherSide = 'false';
    if (q.cursor) {
      keyset = ` AND ${compileKeyset(q.order, def.schema, q.cursor, params, q.backwards ? 'before' : 'after')}`;
      const reverse = compileKeyset(q.order, def.schema, q.cursor, params, q.backwards ? 'after' : 'before', true);
      otherSide = `(SELECT 1 FROM ${s.table} t WHERE ${where} AND ${childOf(via, 'k.parent')} AND ${reverse}
                     ORDER BY ${compileOrderBy(q.order, def.schema, !q.backwards)} LIMIT 1) IS NOT NULL`;
    }
    params.push(q.limit + 1);
    return db.rows(
      `SELECT k.parent AS __parent, o.__other_side, p.*
         FROM unnest(${parents}) AS k(parent)
        CROSS JOIN LATERAL (SELECT ${otherSide} AS __other_side) o
         LEFT JOIN LATERAL (
           SELECT ${q.columns.map((col) => `t.${col}`).join(', ')}
             FROM ${s.table} t
            WHERE ${where} AND ${childOf(via, 'k.parent')}${keyset}
            ORDER BY ${compileOrderBy(q.order, def.schema, q.backwards)}
            LIMIT $${params.length}) p ON true`,
      params,
    );
  }

  /** How many records the filter keeps per parent (pagesByParent's totalCount). */
  async countsByParent(
    db: Db,
    def: ObjectDefinition,
    s: RecordScope,
    via: Via,
    parentIds: string[],
    filter: FilterNode | undefined,
  ): Promise<Map<string, number>> {
    const params = s.params();
    const where = s.filtered(filter, def.schema, params);
    params.push(parentIds);
    const parents = `$${params.length}::uuid[]`;
    const rows = await db.rows<{ parent: string; n: string }>(
      'column' in via
        ? `SELECT t.${via.column} AS parent, count(*)::bigint AS n FROM ${s.table} t
          WHERE ${where} AND t.${via.column} = ANY(${parents}) GROUP BY t.${via.column}`
        : `SELECT l.target_id AS parent, count(*)::bigint AS n FROM ${s.table} t
             JOIN record_links l ON l.workspace_id = t.workspace_id AND l.source_id = t.id
          WHERE ${where} AND l.workspace_id = $1 AND l.field_id = ${fieldLiteral(via.fieldId)} AND l.target_id = ANY(${parents})
          GROUP BY l.target_id`,
      params,
    );
    return new Map(rows.map((row) => [row.parent, Number(row.n)]));
  }

  /** One live record's row, its `columns` only; undefined when there is none. */
  async get(
    db: Db,
    def: ObjectDefinition,
    s: RecordScope,
    id: string,
    columns: readonly string[],
  ): Promise<Record<string, unknown> | undefined> {
    const params = s.params();
    params.push(id);
    const [row] = await db.rows(`SELECT ${columns.join(', ')} FROM ${s.table} WHERE ${s.where()} AND id = $2`, params, { prepared: true });
    return row;
  }

  /** Live records by id, in no particular order. */
  async byIds(db: Db, def: ObjectDefinition, s: RecordScope, ids: string[]): Promise<AnyRecord[]> {
    if (!ids.length) return [];
    const params = s.params();
    params.push(ids);
    const rows = await db.rows(`SELECT ${def.columns.join(', ')} FROM ${s.table} WHERE ${s.where()} AND id = ANY($2::uuid[])`, params);
    return rows.map((row) => def.toRecord(row));
  }

  /**
   * Up to `perParent` live records per parent id through `via`, oldest first, each with its
   * parent's total; a custom relation's rows carry their parent as `__parent`.
   */
  async children(db: Db, def: ObjectDefinition, s: RecordScope, via: Via, parentIds: string[], perParent: number) {
    const params = s.params();
    params.push(parentIds, perParent);
    if ('fieldId' in via) {
      return db.rows(
        `SELECT * FROM (
           SELECT ${def.columns.map((c) => `t.${c}`).join(', ')}, l.target_id AS __parent,
                  row_number() OVER (PARTITION BY l.target_id ORDER BY l.source_created_at, l.source_id) AS __rank,
                  count(*) OVER (PARTITION BY l.target_id) AS __total
             FROM record_links l JOIN ${s.table} t ON t.workspace_id = l.workspace_id AND t.id = l.source_id
            WHERE l.workspace_id = $1 AND l.field_id = ${fieldLiteral(via.fieldId)} AND l.target_id = ANY($2::uuid[])
              AND ${s.where('t.')}) ranked
          WHERE __rank <= $3 ORDER BY __rank`,
        params,
      );
    }
    const parentColumn = via.column;
    return db.rows(
      `SELECT * FROM (
         SELECT ${def.columns.map((c) => `t.${c}`).join(', ')},
                row_number() OVER (PARTITION BY t.${parentColumn} ORDER BY t.created_at, t.id) AS __rank,
                count(*) OVER (PARTITION BY t.${parentColumn}) AS __total
           FROM ${s.table} t
          WHERE ${s.where('t.')} AND t.${parentColumn} = ANY($2::uuid[])) ranked
        WHERE __rank <= $3 ORDER BY __rank`,
      params,
    );
  }

  /** Groups and aggregates over the records a filter keeps (libs/records/src/service/group-by.ts). */
  async groupBy(db: Db, def: ObjectDefinition, s: RecordScope, args: GroupByArgs): Promise<Record<string, unknown>[]> {
    const params = s.params();
    const where = s.filtered(args.filter, def.schema, params);
    return db.rows(groupByStatement(args, def.schema, s.table, where), params);
  }

  /**
   * Which of `ids` are live records of the object of `s` (an upsert's matches, a link's
   * targets); `share`: those found are locked FOR SHARE until the transaction ends, so none
   * is deleted under a link being written (docs/decisions/0066-relations.md).
   */
  async liveIds(db: Db, s: RecordScope, ids: string[], share = false): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const params = s.params();
    params.push(ids);
    const rows = await db.rows<{ id: string }>(
      `SELECT id FROM ${s.table} WHERE ${s.where()} AND id = ANY($2::uuid[])${share ? ' FOR SHARE' : ''}`,
      params,
      { prepared: true },
    );
    return new Set(rows.map((r) => r.id));
  }

  /** The record each probe's unique value belongs to, as `i:field` → record id (record_keys). */
  async keyMatches(db: Db, def: ObjectDefinition, s: RecordScope, probes: KeyProbe[]): Promise<Map<string, string>> {
    if (!probes.length) return new Map();
    const params = s.params();
    params.push(
      probes.map((p) => p.i),
      probes.map((p) => p.field),
      probes.map((p) => p.normalize),
      probes.map((p) => p.raw),
      def.object,
    );
    const rows = await db.rows<{ i: number; field: string; record_id: string }>(
      `SELECT q.i, q.field, k.record_id
           FROM unnest($2::int[], $3::text[], $4::text[], $5::text[]) AS q(i, field, how, raw)
           JOIN record_keys k ON k.workspace_id = $1 AND k.object = $6 AND k.field = q.field
                             AND k.value = record_key_value(q.how, q.raw)`,
      params,
    );
    return new Map(rows.map((row) => [`${row.i}:${row.field}`, row.record_id]));
  }

  /** The object's unique fields (docs/rest.md "Unique fields"), oldest first, with how each compares. */
  async uniqueFields(db: Db, def: ObjectDefinition, s: RecordScope): Promise<{ field: string; normalize: string }[]> {
    const params = s.params();
    params.push(def.object);
    return db.rows(
      'SELECT field, compare AS normalize FROM unique_fields WHERE workspace_id = $1 AND object = $2 ORDER BY created_at, field',
      params,
      { prepared: true },
    );
  }

  /** The record holding a unique value (a key conflict's other record), if any. */
  async keyHolder(db: Db, s: RecordScope, key: { object: string; field: string; value: string }): Promise<string | undefined> {
    const params = s.params();
    params.push(key.object, key.field, key.value);
    const [row] = await db.rows<{ record_id: string }>(
      'SELECT record_id FROM record_keys WHERE workspace_id = $1 AND object = $2 AND field = $3 AND value = $4',
      params,
    );
    return row?.record_id;
  }

  /** How many records, live or deleted, of the object of `s` link to record `id` through `column`. */
  async countLinking(db: Db, s: RecordScope, column: string, id: string): Promise<number> {
    const params = s.params();
    params.push(id);
    const [{ n }] = await db.rows<{ n: string }>(
      `SELECT count(*)::bigint AS n FROM ${s.table} WHERE ${s.where('', 'any')} AND ${column} = $2`,
      params,
    );
    return Number(n);
  }

  // Custom relations' links (record_links, docs/decisions/0066-relations.md) -----------------

  /**
   * The records of the object of `s` (`state`: live, or any) that link to one of `targetIds`
   * through the custom relation `fieldId`, at most `max + 1`, locked in id order.
   */
  async lockLinking(
    tx: Db,
    def: ObjectDefinition,
    s: RecordScope,
    fieldId: string,
    targetIds: string[],
    state: 'live' | 'any',
    max: number,
  ): Promise<Record<string, unknown>[]> {
    const params = s.params();
    params.push(targetIds);
    return tx.rows(
      `SELECT ${def.columns.map((c) => `t.${c}`).join(', ')} FROM ${s.table} t
        WHERE ${s.where('t.', state)} AND ${linkingTo(fieldId, '$2')}
        ORDER BY t.id LIMIT ${max + 1} FOR UPDATE`,
      params,
    );
  }

  /** How many records of the object of `s` (`state`: live, or any) link to one of `targetIds` through `fieldId`. */
  async countLinked(db: Db, s: RecordScope, fieldId: string, targetIds: string[], state: 'live' | 'any'): Promise<number> {
    const params = s.params();
    params.push(targetIds);
    const [{ n }] = await db.rows<{ n: string }>(
      `SELECT count(*)::bigint AS n FROM ${s.table} t WHERE ${s.where('t.', state)} AND ${linkingTo(fieldId, '$2')}`,
      params,
    );
    return Number(n);
  }

  /** Sets to null the link `key` (relation `fieldId`) of every record, live or deleted, linking to one of `targetIds`; returns their columns. */
  async unlink(tx: Db, def: ObjectDefinition, s: RecordScope, fieldId: string, key: string, targetIds: string[]) {
    const params = s.params();
    params.push(targetIds, key);
    return tx.rows(
      `UPDATE ${s.table} t SET custom = jsonb_set(t.custom, ARRAY[$3::text], 'null'::jsonb), updated_at = now()
        WHERE ${s.where('t.', 'any')} AND ${linkingTo(fieldId, '$2')} RETURNING ${def.columns.map((c) => `t.${c}`).join(', ')}`,
      params,
    );
  }

  /** Brings back the deleted records linking to one of `targetIds` through `fieldId` whose deletion time is `deletedAt` (a cascade's); returns their columns. */
  async restoreLinking(tx: Db, def: ObjectDefinition, s: RecordScope, fieldId: string, targetIds: string[], deletedAt: string) {
    const params = s.params();
    params.push(targetIds, deletedAt);
    return tx.rows(
      `UPDATE ${s.table} t SET deleted_at = NULL, updated_at = now()
        WHERE ${s.where('t.', 'deleted')} AND t.deleted_at = $3::timestamptz AND ${linkingTo(fieldId, '$2')}
        RETURNING ${def.columns.map((c) => `t.${c}`).join(', ')}`,
      params,
    );
  }

  /** Whether record `id` exists, live or deleted. */
  async exists(db: Db, s: RecordScope, id: string): Promise<boolean> {
    const params = s.params();
    params.push(id);
    return (await db.rows(`SELECT 1 FROM ${s.table} WHERE ${s.where('', 'any')} AND id = $2`, params)).length > 0;
  }

  /**
   * The SELECT of an export (docs/rest.md "Exports"): the live records a filter keeps, whatever
   * it says about deletedAt, in the list's default order, `select` over alias `t`.
   */
  exportQuery(def: ObjectDefinition, s: RecordScope, filter: FilterNode | undefined, select: string): { sql: string; params: unknown[] } {
    const params = s.params();
    const where = s.filtered(filter, def.schema, params, 'live');
    // The list's default order, oldest first, served by the (workspace_id, created_at, id) index of live rows.
    return {
      sql: `SELECT ${select} FROM ${s.table} t WHERE ${where}
             ORDER BY ${compileOrderBy([...DEFAULT_ORDER], def.schema)}`,
      params,
    };
  }

  // Locks, in the writer's transactions ---------------------------------------------------------

  /** One live record's row, locked; undefined when there is none. */
  async lockLive(tx: Db, def: ObjectDefinition, s: RecordScope, id: string): Promise<Record<string, unknown> | undefined> {
    const params = s.params();
    params.push(id);
    const [row] = await tx.rows(`SELECT ${def.columns.join(', ')} FROM ${s.table} WHERE ${s.where()} AND id = $2 FOR UPDATE`, params, {
      prepared: true,
    });
    return row;
  }

  /** Live records' rows by id, locked in id order (imports' updates). */
  async lockLiveMany(tx: Db, def: ObjectDefinition, s: RecordScope, ids: string[]): Promise<Record<string, unknown>[]> {
    const params = s.params();
    params.push(ids);
    return tx.rows(
      `SELECT ${def.columns.join(', ')} FROM ${s.table}
            WHERE ${s.where()} AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE`,
      params,
    );
  }

  /** Record `id`, live or deleted, locked: whether it is deleted; undefined when there is none. */
  async lockAny(tx: Db, s: RecordScope, id: string): Promise<{ id: string; deleted_at: unknown } | undefined> {
    const params = s.params();
    params.push(id);
    const [row] = await tx.rows<{ id: string; deleted_at: unknown }>(
      `SELECT id, deleted_at FROM ${s.table} WHERE ${s.where('', 'any')} AND id = $2 FOR UPDATE`,
      params,
    );
    return row;
  }

  /** The live records a filter keeps, at most `max + 1`, locked in id order (so two such calls never deadlock each other). */
  async lockMatching(tx: Db, def: ObjectDefinition, s: RecordScope, filter: FilterNode, max: number): Promise<Record<string, unknown>[]> {
    const params = s.params();
    const where = s.filtered(filter, def.schema, params, 'live');
    return tx.rows(
      `SELECT ${def.columns.map((c) => `t.${c}`).join(', ')} FROM ${s.table} t WHERE ${where}
        ORDER BY t.id LIMIT ${max + 1} FOR UPDATE`,
      params,
    );
  }

  /** How many live records a filter keeps (a change by filter over its limit says it). */
  async countMatching(tx: Db, def: ObjectDefinition, s: RecordScope, filter: FilterNode): Promise<number> {
    const params = s.params();
    const [{ n }] = await tx.rows<{ n: string }>(
      `SELECT count(*)::bigint AS n FROM ${s.table} t WHERE ${s.filtered(filter, def.schema, params, 'live')}`,
      params,
    );
    return Number(n);
  }

  // Writes: statements the writer runs (alone, wrapped with its events, or in its transaction) --

  /**
   * One INSERT of checked column sets, returning the records' columns. A link (a relation's
   * id) is written only if it names a live record of the workspace: otherwise the statement
   * ends with SQLSTATE WR001 and nothing is written (migration 1765400000000).
   */
  insert(def: ObjectDefinition, s: RecordScope, columnSets: Record<string, unknown>[]): Statement {
    const columns = [...new Set(columnSets.flatMap((c) => Object.keys(c)))];
    const links = new Map(def.relations.filter((r) => !r.field.fieldId).map((r) => [r.field.column, r]));
    const params = s.params();
    const value = (set: Record<string, unknown>, col: string) => {
      if (!(col in set)) return 'DEFAULT';
      const link = links.get(col);
      const p = `$${params.push(set[col])}`;
      if (col === 'custom' && typeof set[col] === 'string' && def.relations.some((r) => r.field.fieldId))
        return guardedCustom(def, s, p, JSON.parse(set[col]) as Record<string, unknown>, params);
      if (!link || set[col] === null) return p;
      const target = s.of({ schema: { table: link.targetTable } });
      return `coalesce((SELECT id FROM ${target.table} WHERE ${target.where()} AND id = ${p}::uuid), record_missing_relation(${literal(link.field.name)}, ${literal(link.targetSingular)}, ${p}::uuid))`;
    };
    const values = columnSets.map((set) => `(${s.insertValues}${columns.map((col) => `, ${value(set, col)}`).join('')})`);
    const sql = `INSERT INTO ${s.table} (${s.insertColumns}${columns.map((c) => `, ${c}`).join('')})
                 VALUES ${values.join(', ')} RETURNING ${def.columns.join(', ')}`;
    // The text follows which columns were given and how many records: prepared within a bound.
    return { sql, params, prepared: 'bounded-write' };
  }

  /** The UPDATE of checked columns of one live record, returning its columns. */
  update(def: ObjectDefinition, s: RecordScope, id: string, written: Record<string, unknown>): Statement {
    const params = s.params();
    params.push(id);
    const sets = setsOf(def, s, written, params);
    const sql = `UPDATE ${s.table} SET ${sets}, updated_at = now()
                  WHERE ${s.where()} AND id = $2 RETURNING ${def.columns.join(', ')}`;
    return { sql, params, prepared: 'bounded-write' };
  }

  /** Sets checked columns of records by id (locked by lockMatching in the same transaction), returning their columns. */
  async updateMany(
    tx: Db,
    def: ObjectDefinition,
    s: RecordScope,
    ids: string[],
    written: Record<string, unknown>,
  ): Promise<Record<string, unknown>[]> {
    const params = s.params();
    params.push(ids);
    const sets = setsOf(def, s, written, params);
    return tx.rows(
      `UPDATE ${s.table} SET ${sets}, updated_at = now()
            WHERE ${s.where('', 'any')} AND id = ANY($2::uuid[]) RETURNING ${def.columns.join(', ')}`,
      params,
    );
  }

  /** The soft delete of one live record, returning its columns. */
  softDelete(def: ObjectDefinition, s: RecordScope, id: string): Statement {
    const params = s.params();
    params.push(id);
    const sql = `UPDATE ${s.table} SET deleted_at = now(), updated_at = now()
                  WHERE ${s.where()} AND id = $2 RETURNING ${def.columns.join(', ')}`;
    return { sql, params, prepared: true };
  }

  /** Soft-deletes records by id (locked by lockMatching in the same transaction), returning their columns. */
  async softDeleteMany(tx: Db, def: ObjectDefinition, s: RecordScope, ids: string[]): Promise<Record<string, unknown>[]> {
    const params = s.params();
    params.push(ids);
    return tx.rows(
      `UPDATE ${s.table} SET deleted_at = now(), updated_at = now()
          WHERE ${s.where('', 'any')} AND id = ANY($2::uuid[]) RETURNING ${def.columns.join(', ')}`,
      params,
    );
  }

  /** Brings a deleted record back, returning its columns; undefined when there is no deleted record with this id. */
  async restore(tx: Db, def: ObjectDefinition, s: RecordScope, id: string): Promise<Record<string, unknown> | undefined> {
    const params = s.params();
    params.push(id);
    const [row] = await tx.rows(
      `UPDATE ${s.table} SET deleted_at = NULL, updated_at = now()
            WHERE ${s.where('', 'deleted')} AND id = $2 RETURNING ${def.columns.join(', ')}`,
      params,
    );
    return row;
  }

  /**
   * Erasure (docs/rest.md "Erasure"): the record's row, live or deleted, every stored webhook
   * event that carries it and every stored idempotent answer that holds it.
   */
  async erase(tx: Db, s: RecordScope, id: string): Promise<void> {
    const params = s.params();
    params.push(id);
    await tx.rows(`DELETE FROM ${s.table} WHERE ${s.where('', 'any')} AND id = $2`, params);
    await tx.rows(`DELETE FROM webhook_events WHERE workspace_id = $1 AND payload->'data'->'record'->>'id' = $2`, params);
    await tx.rows(`DELETE FROM idempotency_keys WHERE workspace_id = $1 AND strpos(body, $2) > 0`, params);
  }

  /**
   * The INSERT of an import's rows that give the same `columns` (docs/decisions/0035-imports.md):
   * set-based, from `$2`, a JSON array of rows as `jsonb_populate_recordset` reads them.
   * Returns every column of each record (`records`) or only its id.
   */
  insertRecordset(def: ObjectDefinition, s: RecordScope, columns: string[], returning: 'records' | 'ids'): string {
    return `INSERT INTO ${s.table} (${s.insertColumns}${columns.map((c) => `, ${c}`).join('')})
                   SELECT ${s.insertValues}${columns.map((c) => `, r.${c}`).join('')} FROM jsonb_populate_recordset(NULL::${s.table}, $2::jsonb) r
                   RETURNING ${returning === 'records' ? def.columns.join(', ') : 'id'}`;
  }

  /**
   * The UPDATE of an import's matched rows that give the same `columns`, from `$2` (as
   * insertRecordset): only live records whose values differ are written.
   */
  updateRecordset(def: ObjectDefinition, s: RecordScope, columns: string[]): string {
    return `UPDATE ${s.table} t SET ${columns.map((c) => `${c} = r.${c}`).join(', ')}, updated_at = now()
                     FROM jsonb_populate_recordset(NULL::${s.table}, $2::jsonb) r
                    WHERE ${s.where('t.')} AND t.id = r.id
                      AND ROW(${columns.map((c) => `t.${c}`).join(', ')}) IS DISTINCT FROM ROW(${columns.map((c) => `r.${c}`).join(', ')})
                RETURNING ${def.columns.map((c) => `t.${c}`).join(', ')}`;
  }
}

/**
 * How a relation's records name their parent: a column of their own (the standard relations),
 * or a custom relation's links in `record_links` (docs/decisions/0066-relations.md).
 */
export type Via = { column: string } | { fieldId: string };

/** A relation field's `Via`. */
export function viaOf(field: RelationField): Via {
  return field.fieldId ? { fieldId: field.fieldId } : { column: field.column };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A custom relation's field id as an SQL literal (a uuid, written into the text as a scope's object id is). */
function fieldLiteral(fieldId: string): string {
  if (!UUID.test(fieldId)) throw new Error(`not a field id: ${fieldId}`);
  return `'${fieldId}'`;
}

/** Over alias `t`, in a statement whose `$1` is the workspace: the record's parent through `via` is `parent` (an SQL expression). */
function childOf(via: Via, parent: string): string {
  return 'column' in via
    ? `t.${via.column} = ${parent}`
    : `t.id IN (SELECT l.source_id FROM record_links l WHERE l.workspace_id = $1 AND l.field_id = ${fieldLiteral(via.fieldId)} AND l.target_id = ${parent})`;
}

/** Over alias `t`: the record links to one of the ids in parameter `targets` (`$n`) through the custom relation `fieldId`. */
function linkingTo(fieldId: string, targets: string): string {
  return childOf({ fieldId }, `ANY(${targets}::uuid[])`);
}

/**
 * `custom` after an update: the scalar values given replace theirs; a composite given as an
 * object replaces only the sub-fields it holds (as built-in composites do), null clears it.
 */
function customMerge(def: ObjectDefinition, values: Record<string, unknown>, params: unknown[]): string {
  const whole: Record<string, unknown> = {};
  let sql = 'custom';
  for (const [name, value] of Object.entries(values)) {
    const field = def.custom!.find((f) => f.name === name)!;
    if (!compositeSubFields(field.type) || value === null) {
      whole[name] = value;
      continue;
    }
    const key = `$${params.push(name)}::text`;
    const empty = `$${params.push(JSON.stringify(fullComposite(field.type, {})))}::jsonb`;
    const given = `$${params.push(JSON.stringify(value))}::jsonb`;
    sql = `jsonb_set(${sql}, ARRAY[${key}], (CASE WHEN jsonb_typeof(custom->${key}) = 'object' THEN custom->${key} ELSE ${empty} END) || ${given})`;
  }
  if (Object.keys(whole).length) sql = `(${sql} || $${params.push(JSON.stringify(whole))}::jsonb)`;
  return sql;
}

/** `SET` of checked columns, their values pushed onto `params`; custom values merged (customMerge), links guarded (guardedCustom). */
function setsOf(def: ObjectDefinition, s: RecordScope, written: Record<string, unknown>, params: unknown[]): string {
  const { custom, ...columns } = written;
  const sets = Object.entries(columns).map(([col, value]) => `${col} = $${params.push(value)}`);
  if (custom !== undefined) {
    const values = custom as Record<string, unknown>;
    sets.push(`custom = ${guardedCustom(def, s, customMerge(def, values, params), values, params)}`);
  }
  return sets.join(', ');
}

/**
 * `custom` as written (`sql`), each custom relation's id in `values` read back from a live
 * record of its target in the scope's workspace and locked FOR SHARE by the writing statement
 * itself: a link to a missing, deleted or other workspace's record ends the statement
 * (SQLSTATE WR001) with nothing written, and a delete of the target waits for the write's
 * transaction or makes it fail (docs/decisions/0066-relations.md). As the standard links'
 * guard (`insert`), with the lock their foreign keys do not need.
 */
function guardedCustom(def: ObjectDefinition, s: RecordScope, sql: string, values: Record<string, unknown>, params: unknown[]): string {
  const guards = def.relations.flatMap(({ field, targetTable, targetSingular, targetObjectId }) => {
    const id = field.fieldId ? ownValue(values, field.name) : undefined;
    if (typeof id !== 'string') return [];
    const target = s.of({ schema: { table: targetTable }, objectId: targetObjectId });
    const p = `$${params.push(id)}::uuid`;
    const name = literal(field.name);
    return [
      `${name}, coalesce((SELECT id FROM ${target.table} WHERE ${target.where()} AND id = ${p} FOR SHARE), record_missing_relation(${name}, ${literal(targetSingular)}, ${p}))`,
    ];
  });
  return guards.length ? `(${sql}::jsonb || jsonb_build_object(${guards.join(', ')}))` : sql;
}
