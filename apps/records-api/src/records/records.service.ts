import { Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { assertCan, can, type Principal } from '#auth/principal.js';
import { CREDENTIAL_CHANGED_SQLSTATE, credentialGuard } from '#auth/credential-cache.js';
import { assertReadableField, assertUpdatableFields, fieldAccess, hasFieldRestrictions, withoutHidden } from '#auth/field-access.js';
import { Sql, type SqlTx, type StatementOptions } from '#database/sql.js';
import { ReadRouter } from '#database/read-routing.js';
import { BadInputError, ConflictError, ErrorCode, NotFoundError, UniqueConflictError } from '#errors/errors.js';
import { compileFilter, compileKeyset, compileOrderBy, decodeCursor, encodeCursor, orderWithTieBreaker } from '#records/query/index.js';
import type { CursorPayload, FilterNode, ObjectSchema, OrderTerm } from '#records/query/types.js';
import type { WebhookAction } from '#webhooks/operations.js';
import { FirstAttempts } from '#webhooks/first-attempts.js';
import {
  changedFields,
  DELIVERY_IDS_COLUMN,
  insertWithEvents,
  recordEvents,
  unwatched,
  WATCHED_SQLSTATE,
} from '#webhooks/webhook-outbox.js';
import {
  checkCustomValues,
  compositeSubFields,
  fullComposite,
  OBJECTS,
  type ObjectDeclaration,
  type RelationField,
  uniqueValueIn,
} from '#records/objects/index.js';
import { CountCache } from './count-cache.js';
import { DataModel } from './data-model.js';
import { EMBEDDED_PER_RECORD } from './constants.js';
import { definitionFor, type AnyRecord, type ObjectDefinition } from './object-definitions.js';
import { ndjsonLine } from './export-sql.js';
import { iso, scopeOf, type RecordDefinition } from './record-definition.js';
import { validateInput } from './validate-input.js';
import { groupByStatement, toGroups, type AggregateGroup, type GroupByArgs } from './group-by.js';

export const MAX_BATCH = 60;

export interface ListArgs {
  limit: number;
  orderBy: OrderTerm[];
  filter?: FilterNode;
  startingAfter?: string;
  endingBefore?: string;
  /** Names of the cursor parameters, for messages (`starting_after` on REST, `after` on GraphQL). */
  cursorParams?: { after: string; before: string };
  /** GraphQL skips the count when `totalCount` is not selected. */
  withCount?: boolean;
  /**
   * GraphQL reads only the columns of the fields its operation selects (and those of the
   * order, for cursors); the records then carry only those fields. Unset: every field.
   */
  fields?: ReadonlySet<string>;
}

export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export interface ListResult<T> {
  records: T[];
  /** The cursor of the record at this index of `records`. */
  cursorAt(index: number): string;
  totalCount: number | null;
  pageInfo: PageInfo;
}

/** The row counts a list statement reads: `limit + 1` (to see whether more follow) rounded up to one of these. */
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

function mentions(node: FilterNode | undefined, field: string): boolean {
  if (!node) return false;
  switch (node.kind) {
    case 'cond':
      return node.field === field;
    case 'not':
      return mentions(node.child, field);
    case 'relation':
      return false; // the target's fields: its deleted records are never matched
    default:
      return node.children.some((child) => mentions(child, field));
  }
}

/**
 * Postgres error codes mapped to client errors (Appendix A, PostgreSQL docs). A foreign key
 * violation (a linked record deleted between the check and the write) names the declared
 * relation whose column the database names.
 */
/** How long a workspace seen with a webhook that selects its writes' events has its writes go straight to a transaction. */
const WATCHED_TTL_MS = 60_000;
const MAX_WATCHED = 10_000;

function mapDbError(err: { code?: string; detail?: string }, def: RecordDefinition<unknown, unknown, unknown>): never {
  if (err.code === '23505') throw new ConflictError(`A ${def.singular} with this id already exists`);
  if (err.code === '23503') {
    const relation = def.relations.find((r) => err.detail?.includes(r.field.column)) ?? def.relations[0];
    if (relation) {
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        `${relation.field.name}: no ${relation.targetSingular} with this id in this workspace`,
      );
    }
  }
  throw err;
}

/** A declared name as an SQL string literal. */
const literal = (name: string) => `'${name.replaceAll("'", "''")}'`;

/** The SQLSTATE of an INSERT whose link names no live record of the workspace (insertStatement). */
const RELATION_SQLSTATE = 'WR001';

/** A create for a principal the credential cache gave without a version read (RecordsService.create). */
export interface UnconfirmedCreate {
  /** The credential version the principal holds for. */
  version: string;
  /** The request authenticated in full: its principal now, or a 401. */
  confirm(): Promise<Principal>;
}

/** A write for an unconfirmed principal that needs the transaction path, which checks no version: nothing was written. */
class CredentialUnconfirmed extends Error {}

/** Whether a write for an unconfirmed principal stopped, nothing written, for want of a good credential version. */
function credentialUnconfirmed(err: unknown): boolean {
  return err instanceof CredentialUnconfirmed || (err as { code?: string }).code === CREDENTIAL_CHANGED_SQLSTATE;
}

/** At most this many records change in one call by filter. */
export const MAX_BY_FILTER = 10_000;

export interface ChangedByFilter {
  count: number;
  ids: string[];
}

export interface UpsertResult {
  /** In the order given. */
  records: AnyRecord[];
  created: string[];
  updated: string[];
}

/** How many times an upsert starts again when a concurrent write took its key or its match. */
const UPSERT_ATTEMPTS = 3;

class RetryUpsert extends Error {}

/** How messages name the i-th record of a list (`data[2]`, `[2]`), or '' for a single record. */
function itemName(listName: string | null, i: number): string {
  return listName === null ? '' : `${listName}[${i}]`;
}

/** The unique field and value a failed write gave a second live record (the `record_keys` primary key, 23505). */
function keyConflict(err: unknown): { object: string; field: string; value: string } | undefined {
  const e = err as { code?: string; constraint?: string; detail?: string };
  if (e?.code !== '23505' || e.constraint !== 'record_keys_pkey' || !e.detail) return undefined;
  const found = /^Key \(workspace_id, object, field, value\)=\([0-9a-f-]{36}, ([a-z0-9_-]+), ([^,]+), (.*)\) already exists\.$/s.exec(
    e.detail,
  );
  return found ? { object: found[1], field: found[2], value: found[3] } : undefined;
}

/** A key conflict on one of `fields`. */
function isKeyConflict(err: unknown, fields: { field: string }[]): boolean {
  const key = keyConflict(err);
  return key !== undefined && fields.some((f) => f.field === key.field);
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

/** A relation seen from its target: `people.companyId` seen from companies is the inverse `people`. */
export interface InverseRelation {
  source: ObjectDeclaration;
  field: RelationField;
}

export function inversesOf(plural: string): InverseRelation[] {
  return OBJECTS.flatMap((source) =>
    source.fields.filter((f): f is RelationField => f.kind === 'relation' && f.target === plural).map((field) => ({ source, field })),
  );
}

/**
 * The one service layer behind REST, GraphQL and MCP for every record object, by its
 * plural name: permissions, validation, workspace scoping, keyset pagination, exact
 * counts, and the relations `depth=1` embeds. Transports call nothing else on the way to SQL.
 */
@Injectable()
export class RecordsService {
  /** Workspaces seen with a webhook that selects a write's event, and until when (ms) their writes go straight to a transaction. */
  private readonly watched = new Map<string, number>();
  private readonly log = new Logger('webhooks');
  /** The jobs of watched creates' deliveries, queued after their statement (first-attempts.ts). */
  private readonly firstAttempts = new FirstAttempts(
    (sql, params) => this.sql.rows(sql, params, { prepared: true }),
    (err, deliveries) =>
      this.log.warn(
        `${deliveries} webhook deliveries were stored without a job (${(err as Error).message}); the webhook worker's sweep queues them within about a minute`,
      ),
  );

  constructor(
    private readonly sql: Sql,
    private readonly counts: CountCache,
    private readonly dataModel: DataModel,
    /** Record reads: a read replica when one has the credential's last write, else the primary (docs/decisions/0037-read-replicas.md). */
    private readonly reads: ReadRouter,
  ) {}

  /** The built-in definition of an object (no workspace's fields): what the base schema and documents describe. */
  definition(plural: string): ObjectDefinition {
    return definitionFor(plural);
  }

  /** The definition of an object as `principal`'s workspace sees it, with its custom fields. */
  async definitionFor(plural: string, principal: Principal): Promise<ObjectDefinition> {
    return (await this.dataModel.of(principal)).definition(plural);
  }

  assertId(id: string): void {
    if (!isUUID(id)) throw new BadInputError(ErrorCode.INVALID_ID, `id must be a UUID; got "${id}"`);
  }

  async list(plural: string, principal: Principal, args: ListArgs, depth: 0 | 1 = 0): Promise<ListResult<AnyRecord>> {
    const result = await this.listOf(await this.definitionFor(plural, principal), principal, args);
    return depth === 0 ? result : { ...result, records: await this.embed(plural, principal, result.records, args.fields) };
  }

  /**
   * Groups and their aggregates (docs/rest.md "Aggregates"): read permission first (403, never
   * an empty answer), then `parse` checks the arguments against the workspace's schema, then
   * one GROUP BY over the live records the filter keeps, ordered by the group keys.
   */
  async groupBy(plural: string, principal: Principal, parse: (schema: ObjectSchema) => GroupByArgs): Promise<AggregateGroup[]> {
    const def = await this.definitionFor(plural, principal);
    assertCan(principal, def.object, 'read');
    const args = parse(def.schema);
    if (hasFieldRestrictions(principal)) {
      this.assertCanUse(principal, def, args.filter);
      for (const term of args.groupBy) assertReadableField(principal, def.object, term.field, 'group by');
      for (const term of args.aggregates) if (term.field) assertReadableField(principal, def.object, term.field, 'aggregate');
    }
    const params: unknown[] = [principal.workspaceId];
    const scope = this.scope(def, args.filter, params);
    const rows = await this.reads.rows(principal, groupByStatement(args, def.schema, scope), params);
    return toGroups(rows, args, def.schema);
  }

  /** The names REST's `fields=` takes for `plural` in `principal`'s workspace (docs/rest.md). */
  async fieldNames(plural: string, principal: Principal): Promise<{ own: string[]; embedded: string[]; hidden?: string[] }> {
    const def = await this.definitionFor(plural, principal);
    const own = [
      'id',
      ...def.declaration.fields.map((f) => f.name),
      'createdAt',
      'updatedAt',
      'deletedAt',
      ...(def.custom ?? []).map((f) => f.name),
    ];
    const hidden = fieldAccess(principal, plural)?.hidden;
    if (!hidden?.size) return { own, embedded: this.embeddedNames(def) };
    return { own: own.filter((name) => !hidden.has(name)), embedded: this.embeddedNames(def), hidden: [...hidden] };
  }

  /** What depth=1 embeds on a record of `def`: its links, then the lists that link to it. */
  private embeddedNames(def: ObjectDefinition): string[] {
    return [...def.relations.map((r) => r.field.relation), ...inversesOf(def.object).map((inv) => inv.field.inverse)];
  }

  private async listOf<T>(def: RecordDefinition<T, unknown, unknown>, principal: Principal, args: ListArgs): Promise<ListResult<T>> {
    assertCan(principal, def.object, 'read');
    if (hasFieldRestrictions(principal)) this.assertCanUse(principal, def, args.filter, args.orderBy);
    const { order, backwards, cursor } = this.position(def, args);

    const params: unknown[] = [principal.workspaceId];
    const scope = this.scope(def, args.filter, params);
    const scopeParams = [...params];
    let keyset = '';
    let otherSide = 'false';
    if (cursor) {
      keyset = ` AND ${compileKeyset(order, def.schema, cursor, params, backwards ? 'before' : 'after')}`;
      // Whether anything lies on the other side of the cursor (the cursor row included). An
      // ordered LIMIT 1 walks the index from the cursor; EXISTS lets the planner pick a scan.
      const reverse = compileKeyset(order, def.schema, cursor, params, backwards ? 'after' : 'before', true);
      otherSide = `(SELECT 1 FROM ${def.schema.table} t WHERE ${scope} AND ${reverse}
                     ORDER BY ${compileOrderBy(order, def.schema, !backwards)} LIMIT 1) IS NOT NULL`;
    }
    params.push(def.object);
    const objectParam = `$${params.length}`;

    // One row with the stored count, its version and the other side, then the page's rows
    // (whose head columns are NULL, and so cost nothing to send or parse). The count and the
    // version are the sums of the (workspace, object)'s slot rows (migration 1764800000000).
    const columns = this.columns(def, args, order);
    const sql = `
      SELECT ${columns.map((col) => `NULL AS ${col}`).join(', ')},
             coalesce(rc.live_count, 0) AS __live_count, coalesce(rc.version, 0) AS __version, ${otherSide} AS __other_side
        FROM (SELECT sum(live_count)::bigint AS live_count, sum(version)::bigint AS version
                FROM record_counts WHERE workspace_id = $1 AND object = ${objectParam}) rc
      UNION ALL
      (SELECT ${columns.map((col) => `t.${col}`).join(', ')}, NULL, NULL, NULL
         FROM ${def.schema.table} t
        WHERE ${scope}${keyset}
        ORDER BY ${compileOrderBy(order, def.schema, backwards)}
        LIMIT ${rowsToRead(args.limit)})`;
    // The text follows what the caller asks for (filter, order, cursor, page size, GraphQL's
    // columns): prepared within a bound.
    const rows = await this.reads.rows(principal, sql, params, { prepared: 'bounded' });
    const head = rows.find((row) => row.__version != null)!;
    const found = rows.filter((row) => row.__version == null);
    const hasMore = found.length > args.limit;
    const page = found.slice(0, args.limit);
    if (backwards) page.reverse();

    let totalCount: number | null = null;
    if (args.withCount !== false) {
      totalCount = args.filter
        ? await this.filteredCount(def, principal, args.filter, scope, scopeParams, String(head.__version))
        : Number(head.__live_count);
    }
    // Cursors are made on demand: REST shows two, GraphQL one per edge only when selected.
    const cursorAt = (index: number) => encodeCursor(this.positionOf(page[index], order, def), args.orderBy);
    return {
      records: this.visible(
        principal,
        def.object,
        page.map((row) => def.toRecord(row)),
      ),
      cursorAt,
      totalCount,
      pageInfo: {
        hasNextPage: backwards ? Boolean(head.__other_side) : hasMore,
        hasPreviousPage: backwards ? hasMore : Boolean(head.__other_side),
        startCursor: page.length ? cursorAt(0) : null,
        endCursor: page.length ? cursorAt(page.length - 1) : null,
      },
    };
  }

  /**
   * One page per parent (`Company.people(first: 3, filter: …)`), for many parents in one
   * statement: the same filter, order and cursor rules as `list`, each parent's page read by
   * keyset in a LATERAL join, counts grouped in one more statement when asked for.
   */
  async pagesByParent(
    source: string,
    column: string,
    principal: Principal,
    parentIds: string[],
    args: ListArgs,
  ): Promise<Map<string, ListResult<AnyRecord>>> {
    const def = await this.definitionFor(source, principal);
    assertCan(principal, def.object, 'read');
    if (hasFieldRestrictions(principal)) this.assertCanUse(principal, def, args.filter, args.orderBy);
    const { order, backwards, cursor } = this.position(def, args);

    const params: unknown[] = [principal.workspaceId];
    const scope = this.scope(def, args.filter, params);
    const scopeParams = [...params];
    params.push(parentIds);
    const parents = `$${params.length}::uuid[]`;
    let keyset = '';
    let otherSide = 'false';
    if (cursor) {
      keyset = ` AND ${compileKeyset(order, def.schema, cursor, params, backwards ? 'before' : 'after')}`;
      const reverse = compileKeyset(order, def.schema, cursor, params, backwards ? 'after' : 'before', true);
      otherSide = `(SELECT 1 FROM ${def.schema.table} t WHERE ${scope} AND t.${column} = k.parent AND ${reverse}
                     ORDER BY ${compileOrderBy(order, def.schema, !backwards)} LIMIT 1) IS NOT NULL`;
    }
    params.push(args.limit + 1);
    const rows = await this.reads.rows(
      principal,
      `SELECT k.parent AS __parent, o.__other_side, p.*
         FROM unnest(${parents}) AS k(parent)
        CROSS JOIN LATERAL (SELECT ${otherSide} AS __other_side) o
         LEFT JOIN LATERAL (
           SELECT ${def.columns.map((col) => `t.${col}`).join(', ')}
             FROM ${def.schema.table} t
            WHERE ${scope} AND t.${column} = k.parent${keyset}
            ORDER BY ${compileOrderBy(order, def.schema, backwards)}
            LIMIT $${params.length}) p ON true`,
      params,
    );
    const counts = new Map<string, number>();
    if (args.withCount !== false) {
      const countParams = [...scopeParams, parentIds];
      const counted = await this.reads.rows<{ parent: string; n: string }>(
        principal,
        `SELECT t.${column} AS parent, count(*)::bigint AS n FROM ${def.schema.table} t
          WHERE ${scope} AND t.${column} = ANY($${countParams.length}::uuid[]) GROUP BY t.${column}`,
        countParams,
      );
      for (const row of counted) counts.set(row.parent, Number(row.n));
    }
    const result = new Map<string, ListResult<AnyRecord>>();
    for (const parent of parentIds) {
      const mine = rows.filter((row) => row.__parent === parent);
      const found = mine.filter((row) => row.id != null);
      const hasMore = found.length > args.limit;
      const page = found.slice(0, args.limit);
      if (backwards) page.reverse();
      const other = Boolean(mine[0]?.__other_side);
      const cursorAt = (index: number) => encodeCursor(this.positionOf(page[index], order, def), args.orderBy);
      result.set(parent, {
        records: this.visible(
          principal,
          def.object,
          page.map((row) => def.toRecord(row)),
        ),
        cursorAt,
        totalCount: args.withCount === false ? null : (counts.get(parent) ?? 0),
        pageInfo: {
          hasNextPage: backwards ? other : hasMore,
          hasPreviousPage: backwards ? hasMore : other,
          startCursor: page.length ? cursorAt(0) : null,
          endCursor: page.length ? cursorAt(page.length - 1) : null,
        },
      });
    }
    return result;
  }

  /** One live record; with `fields`, only the columns of those fields are read (REST `fields=`). */
  async get(plural: string, principal: Principal, id: string, depth: 0 | 1 = 0, fields?: ReadonlySet<string>): Promise<AnyRecord> {
    const record = await this.getOne(await this.definitionFor(plural, principal), principal, id, fields);
    return depth === 0 ? record : (await this.embed(plural, principal, [record], fields))[0];
  }

  private async getOne<T>(
    def: RecordDefinition<T, unknown, unknown>,
    principal: Principal,
    id: string,
    fields?: ReadonlySet<string>,
  ): Promise<T> {
    assertCan(principal, def.object, 'read');
    this.assertId(id);
    const rows = await this.reads.rows(
      principal,
      `SELECT ${(fields ? def.columnsFor(fields) : def.columns).join(', ')} FROM ${def.schema.table}
        WHERE ${scopeOf(def)} AND id = $2 AND deleted_at IS NULL`,
      [principal.workspaceId, id],
      { prepared: true },
    );
    if (!rows.length) throw new NotFoundError(`No ${def.singular} with id ${id}`);
    return this.visibleOne(principal, def.object, def.toRecord(rows[0]));
  }

  /** Live records of `target` by id, in one query (needs read on the target). */
  async byIds(target: string, principal: Principal, ids: string[]): Promise<AnyRecord[]> {
    assertCan(principal, target, 'read');
    const def = await this.definitionFor(target, principal);
    const workspaceId = principal.workspaceId;
    if (!ids.length) return [];
    const rows = await this.reads.rows(
      principal,
      `SELECT ${def.columns.join(', ')} FROM ${def.schema.table}
        WHERE ${scopeOf(def)} AND id = ANY($2::uuid[]) AND deleted_at IS NULL`,
      [workspaceId, ids],
    );
    return this.visible(
      principal,
      target,
      rows.map((row: Record<string, unknown>) => def.toRecord(row)),
    );
  }

  /** Up to 60 live `source` records per parent id through `parentColumn`, oldest first, in one query (no N+1). */
  async children(
    source: string,
    parentColumn: string,
    principal: Principal,
    parentIds: string[],
  ): Promise<Map<string, { records: AnyRecord[]; total: number }>> {
    assertCan(principal, source, 'read');
    const def = await this.definitionFor(source, principal);
    const workspaceId = principal.workspaceId;
    const perParent = EMBEDDED_PER_RECORD;
    const result = new Map<string, { records: AnyRecord[]; total: number }>();
    if (!parentIds.length) return result;
    const rows = await this.reads.rows(
      principal,
      `SELECT * FROM (
         SELECT ${def.columns.map((c) => `t.${c}`).join(', ')},
                row_number() OVER (PARTITION BY t.${parentColumn} ORDER BY t.created_at, t.id) AS __rank,
                count(*) OVER (PARTITION BY t.${parentColumn}) AS __total
           FROM ${def.schema.table} t
          WHERE ${scopeOf(def, 't.')} AND t.${parentColumn} = ANY($2::uuid[]) AND t.deleted_at IS NULL) ranked
        WHERE __rank <= $3 ORDER BY __rank`,
      [workspaceId, parentIds, perParent],
    );
    for (const row of rows) {
      const key = row[parentColumn] as string;
      const entry = result.get(key) ?? { records: [], total: Number(row.__total) };
      entry.records.push(this.visibleOne(principal, source, def.toRecord(row)));
      result.set(key, entry);
    }
    return result;
  }

  /**
   * One record. With `unconfirmed`, `principal` is the credential cache's, read without the
   * version read authentication makes (BearerAuthService.cached): the INSERT checks the
   * version instead, and on any failure nothing was written, so the request is first
   * authenticated in full (`confirm`: a 401 when the credential no longer holds) and the
   * create runs again for a principal read anew; the error is shown only to the same one.
   */
  async create(plural: string, principal: Principal, body: unknown, unconfirmed?: UnconfirmedCreate): Promise<AnyRecord> {
    if (unconfirmed) {
      try {
        return (await this.createMany(plural, principal, [body], null, unconfirmed.version))[0];
      } catch (err) {
        // A watched workspace's create ends here too, before any statement (writeWithEvents).
        const confirmed = await unconfirmed.confirm();
        if (confirmed === principal && !credentialUnconfirmed(err)) throw err;
        principal = confirmed;
      }
    }
    return (await this.createMany(plural, principal, [body], null))[0];
  }

  /** All or none: every record is validated first, then one INSERT in one transaction. */
  async createMany(
    plural: string,
    principal: Principal,
    bodies: unknown,
    /** How messages name the list (`data` in GraphQL, nothing for a REST body); null for a single record. */
    listName: string | null = '',
    /** The credential version the INSERT checks (see `create`): on a change it fails, nothing written. */
    credentialVersion?: string,
  ): Promise<AnyRecord[]> {
    const def = await this.definitionFor(plural, principal);
    assertCan(principal, def.object, 'create');
    const list = this.batch(bodies);
    this.assertCanWrite(principal, def, list);
    const columnSets = list.map((body, i) => this.columnsToWrite(def, body, 'create', itemName(listName, i)));
    const ids = columnSets.map((c) => c.id).filter(Boolean);
    if (new Set(ids).size !== ids.length) throw new ConflictError(`The batch holds the same ${def.singular} id twice`);
    // The links are checked by the INSERT itself (insertStatement): one statement, no round trip before it.
    const insert = this.insertStatement(def, principal.workspaceId, columnSets);
    return this.writeWithEvents(
      principal.workspaceId,
      def.singular,
      'created',
      { ...insert, prepared: 'bounded-write' },
      (rows) => rows.map((row) => def.toRecord(row)),
      async () => {
        // Watched: the INSERT and its events in one statement, the events' records written by Postgres as REST shows them.
        const watched = insertWithEvents(insert, { object: def.object, singular: def.singular, recordJson: ndjsonLine(def) });
        const rows = await this.sql.rows(watched.sql, watched.params, { prepared: 'bounded-write' });
        // Its deliveries' jobs, queued now that it has committed (first-attempts.ts).
        await this.firstAttempts.queue(principal.workspaceId, rows[0]?.[DELIVERY_IDS_COLUMN] as string[] | null);
        return rows.map((row) => def.toRecord(row));
      },
      credentialVersion,
    )
      .catch(
        async (err) =>
          (await this.madeByEarlierRun(plural, principal, def, columnSets, err)) ??
          this.mapDbError(err, def, principal.workspaceId, columnSets),
      )
      .then((records) => this.written(principal, this.visible(principal, def.object, records)));
  }

  /**
   * A create retried under an Idempotency-Key whose first run died after committing (see
   * Principal.retriedCreateIds) meets its own ids: when every id is one the idempotency layer
   * derived and every record exists, they are the answer, in order. Anything else: undefined.
   */
  private async madeByEarlierRun(
    plural: string,
    principal: Principal,
    def: ObjectDefinition,
    columnSets: Record<string, unknown>[],
    err: unknown,
  ): Promise<AnyRecord[] | undefined> {
    const retried = principal.retriedCreateIds;
    if (
      !retried ||
      (err as { code?: string }).code !== '23505' ||
      (err as { constraint?: string }).constraint !== `${def.schema.table}_pkey`
    ) {
      return undefined;
    }
    const ids = columnSets.map((c) => c.id);
    if (!ids.every((id): id is string => typeof id === 'string' && retried.has(id))) return undefined;
    const found = new Map((await this.byIds(plural, principal, ids)).map((r) => [r.id, r]));
    return ids.every((id) => found.has(id)) ? ids.map((id) => found.get(id)!) : undefined;
  }

  /**
   * Create or update by natural key (docs/rest.md, "Upsert"): each record matches a live record
   * by `id`, then by the object's unique fields (or only by `match`); a match is updated with
   * the fields sent, no match is created. All or none, in one transaction; a concurrent
   * upsert of the same key makes this one retry, and then it finds the record it made.
   */
  async upsertMany(
    plural: string,
    principal: Principal,
    bodies: unknown,
    listName: string | null = '',
    match?: string,
  ): Promise<UpsertResult> {
    const def = await this.definitionFor(plural, principal);
    assertCan(principal, def.object, 'create');
    assertCan(principal, def.object, 'update');
    const list = this.batch(bodies);
    this.assertCanWrite(principal, def, list);
    if (match !== undefined && hasFieldRestrictions(principal)) assertReadableField(principal, def.object, match, 'match on');
    const keys = await this.upsertKeys(def, principal.workspaceId, match);
    // What each record gives to match on: its id (unless another field is named), then its unique values.
    // Sent with an Idempotency-Key: the ids its creates get, matched first on a retry whose first run died.
    const derived = principal.upsertCreateIds;
    const wanted = list.map((body, i) => {
      const plain = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
      let id = (match === undefined || match === 'id') && typeof plain.id === 'string' && isUUID(plain.id) ? plain.id : undefined;
      const mine = derived?.[i];
      if (id === undefined && plain.id === undefined && match === undefined && mine && principal.retriedCreateIds?.has(mine)) id = mine;
      const values = keys.map((k) => ({ ...k, raw: uniqueValueIn(plain, k.field) })).filter((k) => k.raw !== undefined);
      if (match !== undefined && !id && !values.length) {
        throw new BadInputError(ErrorCode.VALIDATION_FAILED, `${itemName(listName, i) || 'body'}: the match field ${match} is missing`);
      }
      return { id, values: values as { field: string; normalize: string; raw: string }[] };
    });
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.sql.transaction(async (tx) => {
          const found = await this.matches(tx, def, principal.workspaceId, wanted);
          const seen = new Set<string>();
          found.forEach((id, i) => {
            if (!id) return;
            if (seen.has(id))
              throw new ConflictError(`${itemName(listName, i) || 'body'}: the batch matches the ${def.singular} ${id} twice`);
            seen.add(id);
          });
          const creates: { index: number; columns: Record<string, unknown> }[] = [];
          const updates: { index: number; id: string; columns: Record<string, unknown> }[] = [];
          list.forEach((body, i) => {
            const id = found[i];
            if (!id) {
              const columns = this.columnsToWrite(def, body, 'create', itemName(listName, i));
              if (columns.id === undefined && derived?.[i]) columns.id = derived[i];
              creates.push({ index: i, columns });
            } else {
              const { id: given, ...rest } = body as Record<string, unknown>;
              if (given !== undefined && given !== id) {
                throw new ConflictError(
                  `${itemName(listName, i) || 'body'}: id ${String(given)} is not the ${def.singular} ${id} that ${match ?? 'its unique values'} match`,
                );
              }
              updates.push({ index: i, id, columns: this.columnsToWrite(def, rest, 'update', itemName(listName, i)) });
            }
          });
          await this.assertRelationsExist(
            def,
            principal.workspaceId,
            [...creates, ...updates].map((c) => c.columns),
            tx,
          );
          const records: AnyRecord[] = new Array(list.length);
          if (creates.length) {
            const made = await this.insertRows(
              tx,
              def,
              principal,
              creates.map((c) => c.columns),
            );
            creates.forEach((c, k) => (records[c.index] = made[k]));
          }
          for (const u of updates) {
            const record = await this.updateRow(tx, def, principal, u.id, u.columns);
            // Deleted since it was matched: start again, and then it is created.
            if (!record) throw new RetryUpsert();
            records[u.index] = record;
          }
          return {
            records: this.visible(principal, def.object, records),
            created: creates.map((c) => records[c.index].id),
            updated: updates.map((u) => u.id),
          };
        });
        return await this.written(principal, result);
      } catch (err) {
        const retry = err instanceof RetryUpsert || isKeyConflict(err, keys);
        if (retry && attempt < UPSERT_ATTEMPTS) continue;
        if (err instanceof RetryUpsert) throw new ConflictError(`The ${def.singular} changed while it was upserted; try again`);
        return this.mapDbError(err, def, principal.workspaceId);
      }
    }
  }

  /**
   * The unique fields an upsert of `def` matches on: all of the object's, or only `match`
   * (`id` or a unique field; another name is a 400 listing them). Imports check `match=` with it too.
   */
  async upsertKeys(def: ObjectDefinition, workspaceId: string, match?: string): Promise<{ field: string; normalize: string }[]> {
    const unique = await this.sql.rows<{ field: string; normalize: string }>(
      'SELECT field, compare AS normalize FROM unique_fields WHERE workspace_id = $1 AND object = $2 ORDER BY created_at, field',
      [workspaceId, def.object],
      { prepared: true },
    );
    if (match === undefined) return unique;
    const named = unique.find((u) => u.field === match || u.field.split('.')[0] === match);
    if (match !== 'id' && !named) {
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        `match: ${match} is not a unique field of ${def.object}; unique fields: ${['id', ...unique.map((u) => u.field)].join(', ')}`,
      );
    }
    return named ? [named] : [];
  }

  /** For each wanted record, the id of the live record it matches (by id, then its unique values in order), or undefined (imports match with it too). */
  async matches(
    tx: SqlTx,
    def: ObjectDefinition,
    workspaceId: string,
    wanted: { id?: string; values: { field: string; normalize: string; raw: string }[] }[],
  ): Promise<(string | undefined)[]> {
    const ids = [...new Set(wanted.map((w) => w.id).filter((id): id is string => Boolean(id)))];
    const live = new Set(
      ids.length
        ? (
            await tx.rows<{ id: string }>(
              `SELECT id FROM ${def.schema.table} WHERE ${scopeOf(def)} AND id = ANY($2::uuid[]) AND deleted_at IS NULL`,
              [workspaceId, ids],
            )
          ).map((r) => r.id)
        : [],
    );
    const probes = wanted.flatMap((w, i) => w.values.map((v) => ({ i, ...v })));
    const byKey = new Map<string, string>();
    if (probes.length) {
      const rows = await tx.rows<{ i: number; field: string; record_id: string }>(
        `SELECT q.i, q.field, k.record_id
           FROM unnest($2::int[], $3::text[], $4::text[], $5::text[]) AS q(i, field, how, raw)
           JOIN record_keys k ON k.workspace_id = $1 AND k.object = $6 AND k.field = q.field
                             AND k.value = record_key_value(q.how, q.raw)`,
        [
          workspaceId,
          probes.map((p) => p.i),
          probes.map((p) => p.field),
          probes.map((p) => p.normalize),
          probes.map((p) => p.raw),
          def.object,
        ],
      );
      for (const row of rows) byKey.set(`${row.i}:${row.field}`, row.record_id);
    }
    return wanted.map((w, i) => {
      if (w.id && live.has(w.id)) return w.id;
      const hits = [...new Set(w.values.map((v) => byKey.get(`${i}:${v.field}`)).filter((id): id is string => Boolean(id)))];
      if (hits.length > 1) {
        throw new ConflictError(
          `record ${i}: its unique values match different ${def.object} (${hits.join(', ')}); send one of them as id`,
        );
      }
      return hits[0];
    });
  }

  /**
   * One INSERT of checked column sets, returning the records' columns. A link (a relation's
   * id) is written only if it names a live record of the workspace: otherwise the statement
   * ends with SQLSTATE RELATION_SQLSTATE and nothing is written (migration 1765400000000).
   */
  private insertStatement(def: ObjectDefinition, workspaceId: string, columnSets: Record<string, unknown>[]) {
    const columns = [...new Set(columnSets.flatMap((c) => Object.keys(c)))];
    const links = new Map(def.relations.map((r) => [r.field.column, r]));
    const params: unknown[] = [workspaceId];
    const value = (set: Record<string, unknown>, col: string) => {
      if (!(col in set)) return 'DEFAULT';
      const link = links.get(col);
      const p = `$${params.push(set[col])}`;
      if (!link || set[col] === null) return p;
      return `coalesce((SELECT id FROM ${link.targetTable} WHERE workspace_id = $1 AND id = ${p}::uuid AND deleted_at IS NULL), record_missing_relation(${literal(link.field.name)}, ${literal(link.targetSingular)}, ${p}::uuid))`;
    };
    // `$1` alone when no column is given (a person created from `{}`); a custom object's records also name it.
    const own = def.objectId ? `, '${def.objectId}'` : '';
    const values = columnSets.map((set) => `($1${own}${columns.map((col) => `, ${value(set, col)}`).join('')})`);
    const sql = `INSERT INTO ${def.schema.table} (workspace_id${def.objectId ? ', object_id' : ''}${columns.map((c) => `, ${c}`).join('')})
                 VALUES ${values.join(', ')} RETURNING ${def.columns.join(', ')}`;
    return { sql, params };
  }

  /** The UPDATE of checked columns of one live record, returning its columns. */
  private updateStatement(def: ObjectDefinition, workspaceId: string, id: string, written: Record<string, unknown>) {
    const { custom, ...columns } = written;
    const params: unknown[] = [workspaceId, id];
    const sets = Object.entries(columns).map(([col, value]) => `${col} = $${params.push(value)}`);
    if (custom !== undefined) sets.push(`custom = ${customMerge(def, custom as Record<string, unknown>, params)}`);
    const sql = `UPDATE ${def.schema.table} SET ${sets.join(', ')}, updated_at = now()
                  WHERE ${scopeOf(def)} AND id = $2 AND deleted_at IS NULL RETURNING ${def.columns.join(', ')}`;
    return { sql, params };
  }

  /** One INSERT of checked column sets, and their `created` events, in the caller's transaction. */
  private async insertRows(
    tx: SqlTx,
    def: ObjectDefinition,
    principal: Principal,
    columnSets: Record<string, unknown>[],
  ): Promise<AnyRecord[]> {
    const { sql, params } = this.insertStatement(def, principal.workspaceId, columnSets);
    // The text follows which columns were given and how many records: prepared within a bound.
    const created = (await tx.rows(sql, params, { prepared: 'bounded-write' })).map((row) => def.toRecord(row));
    await recordEvents(
      tx,
      principal.workspaceId,
      created.map((record) => ({
        object: def.object,
        singular: def.singular,
        action: 'created',
        record: record as Record<string, unknown>,
      })),
    );
    return created;
  }

  /** Sets checked columns of one live record and records its `updated` event; undefined when there is no such record. */
  private async updateRow(
    tx: SqlTx,
    def: ObjectDefinition,
    principal: Principal,
    id: string,
    written: Record<string, unknown>,
  ): Promise<AnyRecord | undefined> {
    const { custom, ...columns } = written;
    const [before] = await tx.rows(
      `SELECT ${def.columns.join(', ')} FROM ${def.schema.table} WHERE ${scopeOf(def)} AND id = $2 AND deleted_at IS NULL FOR UPDATE`,
      [principal.workspaceId, id],
      { prepared: true },
    );
    if (!before) return undefined;
    if (!Object.keys(columns).length && custom === undefined) return def.toRecord(before);
    const { sql, params } = this.updateStatement(def, principal.workspaceId, id, written);
    const [row] = await tx.rows(sql, params, { prepared: 'bounded-write' });
    const [record, previous] = [def.toRecord(row) as Record<string, unknown>, def.toRecord(before) as Record<string, unknown>];
    await recordEvents(tx, principal.workspaceId, [
      { object: def.object, singular: def.singular, action: 'updated', record, previous: changedFields(previous, record) },
    ]);
    return record as AnyRecord;
  }

  async update(plural: string, principal: Principal, id: string, body: unknown): Promise<AnyRecord> {
    const def = await this.definitionFor(plural, principal);
    assertCan(principal, def.object, 'update');
    this.assertId(id);
    this.assertCanWrite(principal, def, [body]);
    const written = this.columnsToWrite(def, body, 'update', '');
    const { custom, ...columns } = written;
    if (!Object.keys(columns).length && custom === undefined) return this.getOne(def, principal, id);
    await this.assertRelationsExist(def, principal.workspaceId, [columns]);
    const statement = this.updateStatement(def, principal.workspaceId, id, written);
    const updated = await this.writeWithEvents(
      principal.workspaceId,
      def.singular,
      'updated',
      { ...statement, prepared: 'bounded-write' },
      (rows) => (rows.length ? (def.toRecord(rows[0]) as AnyRecord) : undefined),
      // With events, the record as it was is read (and locked) first, for the event's `previous`.
      () => this.sql.transaction((tx) => this.updateRow(tx, def, principal, id, written)),
    ).catch((err) => this.mapDbError(err, def, principal.workspaceId));
    if (!updated) throw new NotFoundError(`No ${def.singular} with id ${id}`);
    return this.written(principal, this.visibleOne(principal, def.object, updated));
  }

  /** A batch body checked for shape and size (1 to 60 records). */
  private batch(bodies: unknown): unknown[] {
    if (!Array.isArray(bodies)) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'body must be a JSON array of records');
    if (bodies.length === 0 || bodies.length > MAX_BATCH) {
      throw new BadInputError(ErrorCode.VALIDATION_FAILED, `a batch holds 1 to ${MAX_BATCH} records; got ${bodies.length}`);
    }
    return bodies;
  }

  /**
   * Postgres error codes mapped to client errors (Appendix A, PostgreSQL docs). A unique
   * field's value held by another live record names the field and that record; a foreign
   * key violation (a linked record deleted between the check and the write) names the
   * declared relation whose column the database names.
   */
  private async mapDbError(
    err: unknown,
    def: RecordDefinition<unknown, unknown, unknown>,
    workspaceId: string,
    /** The column sets written, to name every missing link when the INSERT's guard refused one. */
    columnSets?: Record<string, unknown>[],
  ): Promise<never> {
    if ((err as { code?: string }).code === RELATION_SQLSTATE) {
      if (columnSets) await this.assertRelationsExist(def, workspaceId, columnSets);
      // Gone again by now (restored), or no column sets given: the guard's own words.
      throw new BadInputError(ErrorCode.VALIDATION_FAILED, (err as Error).message);
    }
    const key = keyConflict(err);
    if (key) {
      const [row] = await this.sql.rows<{ record_id: string }>(
        'SELECT record_id FROM record_keys WHERE workspace_id = $1 AND object = $2 AND field = $3 AND value = $4',
        [workspaceId, key.object, key.field, key.value],
      );
      throw new UniqueConflictError(def.singular, key.field, row?.record_id ?? null);
    }
    return mapDbError(err as { code?: string; detail?: string }, def);
  }

  async delete(plural: string, principal: Principal, id: string): Promise<{ id: string }> {
    const def = await this.definitionFor(plural, principal);
    assertCan(principal, def.object, 'delete');
    this.assertId(id);
    const sql = `UPDATE ${def.schema.table} SET deleted_at = now(), updated_at = now()
                  WHERE ${scopeOf(def)} AND id = $2 AND deleted_at IS NULL RETURNING ${def.columns.join(', ')}`;
    const params = [principal.workspaceId, id];
    const deleted = await this.writeWithEvents(
      principal.workspaceId,
      def.singular,
      'deleted',
      { sql, params, prepared: true },
      (rows) => rows[0],
      () =>
        this.sql.transaction(async (tx) => {
          const [row] = await tx.rows(sql, params, { prepared: true });
          if (row)
            await recordEvents(tx, principal.workspaceId, [
              { object: def.object, singular: def.singular, action: 'deleted', record: def.toRecord(row) as Record<string, unknown> },
            ]);
          return row;
        }),
    );
    if (!deleted) throw new NotFoundError(`No ${def.singular} with id ${id}`);
    return this.written(principal, { id });
  }

  /**
   * Changes by filter (docs/rest.md, "Changes by filter"): every live record the filter keeps,
   * at most 10 000, in one transaction, one `updated` event each. The rows are locked in id
   * order, so two such calls never deadlock each other.
   */
  async updateByFilter(plural: string, principal: Principal, filter: FilterNode | undefined, body: unknown): Promise<ChangedByFilter> {
    const def = await this.definitionFor(plural, principal);
    assertCan(principal, def.object, 'update');
    const where = this.requireFilter(filter);
    if (hasFieldRestrictions(principal)) this.assertCanUse(principal, def, where);
    this.assertCanWrite(principal, def, [body]);
    const written = this.columnsToWrite(def, body, 'update', '');
    const { custom, ...columns } = written;
    if (!Object.keys(columns).length && custom === undefined)
      throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'the body sets no field');
    await this.assertRelationsExist(def, principal.workspaceId, [columns]);
    return this.sql
      .transaction(async (tx) => {
        const before = await this.lockMatching(tx, def, principal.workspaceId, where);
        if (!before.length) return { count: 0, ids: [] };
        const params: unknown[] = [principal.workspaceId, before.map((row) => row.id)];
        const sets = Object.entries(columns).map(([col, value]) => `${col} = $${params.push(value)}`);
        if (custom !== undefined) sets.push(`custom = ${customMerge(def, custom as Record<string, unknown>, params)}`);
        const rows = await tx.rows(
          `UPDATE ${def.schema.table} SET ${sets.join(', ')}, updated_at = now()
            WHERE ${scopeOf(def)} AND id = ANY($2::uuid[]) RETURNING ${def.columns.join(', ')}`,
          params,
        );
        const previous = new Map(before.map((row) => [row.id as string, def.toRecord(row) as Record<string, unknown>]));
        await recordEvents(
          tx,
          principal.workspaceId,
          rows.map((row) => {
            const record = def.toRecord(row) as Record<string, unknown>;
            return {
              object: def.object,
              singular: def.singular,
              action: 'updated',
              record,
              previous: changedFields(previous.get(record.id as string)!, record),
            };
          }),
        );
        return { count: rows.length, ids: rows.map((row) => row.id as string) };
      })
      .then(
        (changed) => this.written(principal, changed),
        (err) => this.mapDbError(err, def, principal.workspaceId),
      );
  }

  /** Soft-deletes every live record the filter keeps, at most 10 000, in one transaction, one `deleted` event each. */
  async deleteByFilter(plural: string, principal: Principal, filter: FilterNode | undefined): Promise<ChangedByFilter> {
    const def = await this.definitionFor(plural, principal);
    assertCan(principal, def.object, 'delete');
    const where = this.requireFilter(filter);
    if (hasFieldRestrictions(principal)) this.assertCanUse(principal, def, where);
    const changed = await this.sql.transaction(async (tx) => {
      const before = await this.lockMatching(tx, def, principal.workspaceId, where);
      if (!before.length) return { count: 0, ids: [] };
      const rows = await tx.rows(
        `UPDATE ${def.schema.table} SET deleted_at = now(), updated_at = now()
          WHERE ${scopeOf(def)} AND id = ANY($2::uuid[]) RETURNING ${def.columns.join(', ')}`,
        [principal.workspaceId, before.map((row) => row.id)],
      );
      await recordEvents(
        tx,
        principal.workspaceId,
        rows.map((row) => ({
          object: def.object,
          singular: def.singular,
          action: 'deleted',
          record: def.toRecord(row) as Record<string, unknown>,
        })),
      );
      return { count: rows.length, ids: rows.map((row) => row.id as string) };
    });
    return this.written(principal, changed);
  }

  private requireFilter(filter: FilterNode | undefined): FilterNode {
    if (!filter) {
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        'a filter is required to change records by filter (to change every record, say so: filter=id[is]:NOT_NULL)',
      );
    }
    return filter;
  }

  /** The live records `filter` keeps, locked in id order; more than MAX_BY_FILTER is 400 with the count. */
  private async lockMatching(
    tx: SqlTx,
    def: ObjectDefinition,
    workspaceId: string,
    filter: FilterNode,
  ): Promise<Record<string, unknown>[]> {
    const params: unknown[] = [workspaceId];
    const scope = `${this.scope(def, filter, params)} AND t.deleted_at IS NULL`;
    const rows = await tx.rows(
      `SELECT ${def.columns.map((c) => `t.${c}`).join(', ')} FROM ${def.schema.table} t WHERE ${scope}
        ORDER BY t.id LIMIT ${MAX_BY_FILTER + 1} FOR UPDATE`,
      params,
    );
    if (rows.length > MAX_BY_FILTER) {
      const [{ n }] = await tx.rows<{ n: string }>(`SELECT count(*)::bigint AS n FROM ${def.schema.table} t WHERE ${scope}`, params);
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        `the filter matches ${n} ${def.object}; one call changes at most ${MAX_BY_FILTER}: narrow the filter, or make several calls`,
      );
    }
    return rows;
  }

  /** Brings a soft-deleted record back (docs/rest.md, "Restore"), with a `restored` event; a live one is 409. */
  async restore(plural: string, principal: Principal, id: string): Promise<AnyRecord> {
    const def = await this.definitionFor(plural, principal);
    // Undoing a delete needs what the delete needed.
    assertCan(principal, def.object, 'delete');
    this.assertId(id);
    const restored = await this.sql
      .transaction(async (tx) => {
        const [row] = await tx.rows(
          `UPDATE ${def.schema.table} SET deleted_at = NULL, updated_at = now()
            WHERE ${scopeOf(def)} AND id = $2 AND deleted_at IS NOT NULL RETURNING ${def.columns.join(', ')}`,
          [principal.workspaceId, id],
        );
        if (!row) return undefined;
        const record = def.toRecord(row) as Record<string, unknown>;
        await recordEvents(tx, principal.workspaceId, [{ object: def.object, singular: def.singular, action: 'restored', record }]);
        return record as AnyRecord;
      })
      .catch((err) => this.mapDbError(err, def, principal.workspaceId));
    if (restored) return this.written(principal, this.visibleOne(principal, def.object, restored));
    const [live] = await this.sql.rows(`SELECT 1 FROM ${def.schema.table} WHERE ${scopeOf(def)} AND id = $2`, [principal.workspaceId, id]);
    if (live) throw new ConflictError(`The ${def.singular} ${id} is not deleted; only a deleted ${def.singular} can be restored`);
    throw new NotFoundError(`No ${def.singular} with id ${id}`);
  }

  /**
   * Erasure (docs/rest.md, "Erasure"): the record's row, live or soft-deleted, and every stored
   * webhook event that carries it (with their deliveries and attempts) and every stored
   * idempotent answer that holds it, in one transaction. Needs `destroy` (Admin only). A record
   * other records still link to is 409: unlink or erase those first. The `deleted` event it
   * sends carries the id only.
   */
  async destroy(plural: string, principal: Principal, id: string): Promise<{ id: string }> {
    const def = await this.definitionFor(plural, principal);
    assertCan(principal, def.object, 'destroy');
    this.assertId(id);
    const linked = inversesOf(plural);
    const erased = await this.sql.transaction(async (tx) => {
      const [row] = await tx.rows<{ id: string; deleted_at: unknown }>(
        `SELECT id, deleted_at FROM ${def.schema.table} WHERE ${scopeOf(def)} AND id = $2 FOR UPDATE`,
        [principal.workspaceId, id],
      );
      if (!row) return false;
      const holders: string[] = [];
      for (const { source, field } of linked) {
        const [{ n }] = await tx.rows<{ n: string }>(
          `SELECT count(*)::bigint AS n FROM ${source.table} WHERE workspace_id = $1 AND ${field.column} = $2`,
          [principal.workspaceId, id],
        );
        if (Number(n)) holders.push(`${n} ${Number(n) === 1 ? source.singular : source.plural}`);
      }
      if (holders.length) {
        throw new ConflictError(`${holders.join(' and ')} (live or deleted) link to this ${def.singular}; unlink or erase them first`);
      }
      await tx.rows(`DELETE FROM ${def.schema.table} WHERE ${scopeOf(def)} AND id = $2`, [principal.workspaceId, id]);
      await tx.rows(`DELETE FROM webhook_events WHERE workspace_id = $1 AND payload->'data'->'record'->>'id' = $2`, [
        principal.workspaceId,
        id,
      ]);
      await tx.rows(`DELETE FROM idempotency_keys WHERE workspace_id = $1 AND strpos(body, $2) > 0`, [principal.workspaceId, id]);
      if (row.deleted_at === null) {
        await recordEvents(tx, principal.workspaceId, [{ object: def.object, singular: def.singular, action: 'deleted', record: { id } }]);
      }
      return true;
    });
    if (!erased) throw new NotFoundError(`No ${def.singular} with id ${id}`);
    return this.written(principal, { id });
  }

  /**
   * `result` of a committed write of `principal`, after its position is recorded for
   * read-your-writes (libs/database/src/read-routing.ts): the credential's next read, on any
   * instance, goes to a replica only once that replica has it.
   */
  private async written<R>(principal: Principal, result: R): Promise<R> {
    await this.reads.wrote(principal);
    return result;
  }

  /** The same for writes made for a credential outside its request (`credential` as `kind:subject`): an import's rows. */
  async wroteFor(workspaceId: string, credential: string): Promise<void> {
    await this.reads.wroteFor(workspaceId, credential);
  }

  /** A database error of a write, thrown as REST reports it (a unique value names the record holding it); imports word refused rows with it. */
  explainConflict(err: unknown, def: ObjectDefinition, workspaceId: string): Promise<never> {
    return this.mapDbError(err, def, workspaceId);
  }

  /**
   * One record body checked into the columns a create (or an update) writes, with the same
   * rules and messages as REST; a problem is a BadInputError. Imports check each row with it.
   */
  checkBody(def: ObjectDefinition, body: unknown, mode: 'create' | 'update'): Record<string, unknown> {
    return this.columnsToWrite(def, body, mode, '');
  }

  /**
   * A write and its webhook events, all or none (libs/webhooks/src/webhook-outbox.ts). While no
   * enabled webhook of the workspace selects the write's event, the write is its one statement,
   * in its own implicit transaction: one round trip instead of four (BEGIN, the write, the
   * outbox statement, COMMIT). A guard in that statement makes it fail, having written nothing,
   * when such a webhook exists by then (whichever instance made it); the write then runs as
   * `inTransaction`, with its events, and so do the workspace's writes for WATCHED_TTL_MS.
   */
  private async writeWithEvents<R>(
    workspaceId: string,
    /** The event type's object: the record object's singular name. */
    eventObject: string,
    action: WebhookAction,
    statement: { sql: string; params: unknown[]; prepared: StatementOptions['prepared'] },
    result: (rows: Record<string, unknown>[]) => R,
    inTransaction: () => Promise<R>,
    /** Also end the statement unless the credential version is this one (`create`); the transaction path does not check it. */
    credentialVersion?: string,
  ): Promise<R> {
    const until = this.watched.get(workspaceId);
    if (until === undefined || until < Date.now()) {
      const guarded = unwatched(
        statement.sql,
        statement.params,
        `${eventObject}.${action}`,
        credentialVersion === undefined ? undefined : (params) => credentialGuard(credentialVersion, params),
      );
      try {
        return result(await this.sql.rows(guarded.sql, guarded.params, { prepared: statement.prepared }));
      } catch (err) {
        if ((err as { code?: string }).code !== WATCHED_SQLSTATE) throw err;
        this.watched.delete(workspaceId);
        if (this.watched.size >= MAX_WATCHED) this.watched.delete(this.watched.keys().next().value!);
        this.watched.set(workspaceId, Date.now() + WATCHED_TTL_MS);
      }
    }
    if (credentialVersion !== undefined) throw new CredentialUnconfirmed();
    return inTransaction();
  }

  /**
   * 403 when a filter condition (relation filters: against the target's fields) or an order
   * term names a field the role cannot read (docs/authentication.md, "Field permissions").
   * Callers skip it for roles without restrictions; exports call it too.
   */
  assertCanUse(
    principal: Principal,
    def: RecordDefinition<unknown, unknown, unknown>,
    filter: FilterNode | undefined,
    orderBy?: readonly OrderTerm[],
  ): void {
    const walk = (node: FilterNode | undefined, object: string, schema: ObjectSchema): void => {
      if (!node) return;
      switch (node.kind) {
        case 'cond':
          return assertReadableField(principal, object, node.field, 'filter on');
        case 'not':
          return walk(node.child, object, schema);
        case 'relation': {
          const target = schema.relations?.[node.relation]?.target;
          if (target) walk(node.child, target.name, target);
          return;
        }
        default:
          for (const child of node.children) walk(child, object, schema);
      }
    };
    walk(filter, def.object, def.schema);
    for (const term of orderBy ?? []) assertReadableField(principal, def.object, term.field, 'order by');
  }

  /** 403 naming the fields a write sets that the role cannot update, before anything is checked or written. */
  private assertCanWrite(principal: Principal, def: ObjectDefinition, bodies: readonly unknown[]): void {
    if (!fieldAccess(principal, def.object)) return;
    for (const body of bodies) {
      if (body !== null && typeof body === 'object' && !Array.isArray(body))
        assertUpdatableFields(principal, def.object, Object.keys(body));
    }
  }

  /** Records as the role may see them: without the fields it cannot read (the same array when nothing is hidden). */
  private visible<T>(principal: Principal, object: string, records: T[]): T[] {
    const hidden = fieldAccess(principal, object)?.hidden;
    if (!hidden?.size) return records;
    return records.map((record) => withoutHidden(record as object, hidden) as T);
  }

  private visibleOne<T>(principal: Principal, object: string, record: T): T {
    const hidden = fieldAccess(principal, object)?.hidden;
    return hidden?.size ? (withoutHidden(record as object, hidden) as T) : record;
  }

  /** The body as the input class accepts it: as it is when the fast check is sure, else through class-validator (which words the errors). */
  private validated(def: ObjectDefinition, body: unknown, mode: 'create' | 'update', prefix: string): object {
    if (def.acceptsAsIs[mode](body)) return body as object;
    return validateInput(mode === 'create' ? def.createInput : def.updateInput, body, prefix);
  }

  /**
   * A body checked and turned into the columns it writes: built-in fields by the object's
   * input class, the workspace's custom fields by their types (into `custom`, as JSON on
   * create and as the values given on update). Problems of both kinds are reported together.
   */
  private columnsToWrite(def: ObjectDefinition, body: unknown, mode: 'create' | 'update', prefix: string): Record<string, unknown> {
    const fields = def.custom ?? [];
    if (!fields.length || body === null || typeof body !== 'object' || Array.isArray(body)) {
      return def.toColumns(this.validated(def, body, mode, prefix));
    }
    const names = new Set(fields.map((f) => f.name));
    // fromEntries defines own properties: a "__proto__" key stays a key (and is refused), never a prototype.
    const builtIn = Object.fromEntries(Object.entries(body).filter(([key]) => !names.has(key)));
    const problems: string[] = [];
    let columns: Record<string, unknown> = {};
    try {
      columns = def.toColumns(this.validated(def, builtIn, mode, prefix));
    } catch (err) {
      if (!(err instanceof BadInputError)) throw err;
      problems.push(...err.messages);
    }
    const values = checkCustomValues(fields, body as Record<string, unknown>, mode, prefix, problems);
    if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
    if (mode === 'create' && Object.keys(values).length) columns.custom = JSON.stringify(values);
    if (mode === 'update' && Object.keys(values).length) columns.custom = values;
    return columns;
  }

  /** depth=1 (docs/rest.md; docs/architecture.md): each linked record, and every inverse list (`only`: those named in fields=). */
  private async embed(plural: string, principal: Principal, records: AnyRecord[], only?: ReadonlySet<string>): Promise<AnyRecord[]> {
    const extras = records.map(() => ({}) as Record<string, unknown>);
    for (const field of (await this.definitionFor(plural, principal)).relations.map((r) => r.field)) {
      if (only && !only.has(field.relation)) continue;
      const ids = [...new Set(records.map((r) => r[field.name]).filter((id): id is string => Boolean(id)))];
      const found = new Map((await this.byIds(field.target, principal, ids)).map((t) => [t.id, t]));
      records.forEach((r, i) => (extras[i][field.relation] = r[field.name] ? (found.get(r[field.name]) ?? null) : null));
    }
    for (const { source, field } of inversesOf(plural)) {
      // Named in fields=: it needs read (403 otherwise). Not named: a list the role cannot read is
      // left out, so roles that read a company at depth=1 before inverse lists came still can.
      if (only ? !only.has(field.inverse) : !can(principal, source.plural, 'read')) continue;
      const lists = await this.children(
        source.plural,
        field.column,
        principal,
        records.map((r) => r.id),
      );
      records.forEach((r, i) => (extras[i][field.inverse] = lists.get(r.id)?.records ?? []));
    }
    return records.map((r, i) => ({ ...r, ...extras[i] }));
  }

  /** The order with its tie-breaker, the direction, and the cursor of a list call, checked. */
  private position(def: RecordDefinition<unknown, unknown, unknown>, args: ListArgs) {
    const names = args.cursorParams ?? { after: 'starting_after', before: 'ending_before' };
    if (args.startingAfter && args.endingBefore) {
      throw new BadInputError(ErrorCode.INVALID_CURSOR, `${names.after} and ${names.before} cannot be used together`);
    }
    const backwards = Boolean(args.endingBefore);
    const raw = args.startingAfter ?? args.endingBefore;
    return {
      order: orderWithTieBreaker(args.orderBy),
      backwards,
      cursor: raw ? decodeCursor(raw, args.orderBy, backwards ? names.before : names.after, def.schema) : undefined,
    };
  }

  /** The columns a page reads: every one, or those of the selected fields and of the order. */
  private columns(def: RecordDefinition<unknown, unknown, unknown>, args: ListArgs, order: OrderTerm[]): readonly string[] {
    if (!args.fields) return def.columns;
    const columns = def.columnsFor(args.fields);
    for (const term of order) {
      const column = def.schema.fields[term.field]?.column ?? term.field;
      if (!columns.includes(column)) columns.push(column);
    }
    return columns;
  }

  /** Soft-deleted records stay hidden unless the filter asks about `deletedAt` (docs/rest.md). */
  private scope(def: RecordDefinition<unknown, unknown, unknown>, filter: FilterNode | undefined, params: unknown[]): string {
    const parts = [scopeOf(def, 't.')];
    if (!mentions(filter, 'deletedAt')) parts.push('t.deleted_at IS NULL');
    if (filter) parts.push(compileFilter(filter, def.schema, params));
    return parts.join(' AND ');
  }

  private async filteredCount(
    def: RecordDefinition<unknown, unknown, unknown>,
    principal: Principal,
    filter: FilterNode,
    scope: string,
    params: unknown[],
    version: string,
  ): Promise<number> {
    const key = `${principal.workspaceId}:${def.object}:${JSON.stringify(filter)}`;
    const cached = this.counts.get(key, version);
    if (cached !== undefined) return cached;
    const [row] = await this.reads.rows(principal, `SELECT count(*)::bigint AS n FROM ${def.schema.table} t WHERE ${scope}`, params);
    const count = Number(row.n);
    this.counts.set(key, version, count);
    return count;
  }

  private positionOf(row: Record<string, unknown>, order: OrderTerm[], def: RecordDefinition<unknown, unknown, unknown>): CursorPayload {
    const values = order
      .filter((term) => term.field !== 'id')
      .map((term) => {
        const leaf = def.schema.fields[term.field];
        return iso(leaf.read ? leaf.read(row) : row[leaf.column]);
      });
    return { values, id: row.id as string };
  }

  /** Each declared link names a live record of the caller's workspace; another workspace's id behaves as missing. */
  private async assertRelationsExist(
    def: RecordDefinition<unknown, unknown, unknown>,
    workspaceId: string,
    columnSets: Record<string, unknown>[],
    runner: Pick<SqlTx, 'rows'> = this.sql,
  ): Promise<void> {
    for (const { field, targetTable, targetSingular } of def.relations) {
      const ids = [...new Set(columnSets.map((c) => c[field.column]).filter((id): id is string => typeof id === 'string'))];
      if (!ids.length) continue;
      const rows = await runner.rows<{ id: string }>(
        `SELECT id FROM ${targetTable} WHERE workspace_id = $1 AND id = ANY($2::uuid[]) AND deleted_at IS NULL`,
        [workspaceId, ids],
        { prepared: true },
      );
      const found = new Set(rows.map((r) => r.id));
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length) {
        throw new BadInputError(
          ErrorCode.VALIDATION_FAILED,
          `${field.name}: no ${targetSingular} with id ${missing.join(', ')} in this workspace`,
        );
      }
    }
  }
}
