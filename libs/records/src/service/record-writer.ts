import { Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { Principal } from '#auth/principal.js';
import { CREDENTIAL_CHANGED_SQLSTATE, credentialGuard } from '#auth/credential-cache.js';
import { Sql, type SqlTx } from '#database/sql.js';
import { ReadRouter } from '#database/read-routing.js';
import { AppError, BadInputError, ConflictError, ErrorCode, NotFoundError, UniqueConflictError } from '#errors/errors.js';
import { compositeSubFields, fullComposite, ownValue, uniqueValueIn, type RelationField } from '../objects/index.js';
import { fieldType } from '../field-types/index.js';
import type { FilterNode } from '../query/types.js';
import type { WebhookAction } from '#webhooks/operations.js';
import { FirstAttempts } from '#webhooks/first-attempts.js';
import {
  changedFields,
  DELIVERY_IDS_COLUMN,
  insertWithEvents,
  recordEvents,
  unwatched,
  WATCHED_SQLSTATE,
  type RecordChange,
} from '#webhooks/webhook-outbox.js';
import { ndjsonLine } from './export-sql.js';
import type { AnyRecord, ObjectDefinition } from './object-definitions.js';
import { columnsToWrite, itemName, setsAnything } from './record-input.js';
import { RecordRepository, type Db, type Statement } from './record-repository.js';
import { scope, type RecordScope } from '../query/scope.js';

/** At most this many records change in one call by filter. */
export const MAX_BY_FILTER = 10_000;

/** At most this many records one delete cascades to through custom relations (docs/decisions/0066-relations.md). */
export const MAX_CASCADE = 10_000;

/** The workspace's definition of an object by plural name (a cascade crosses to other objects). */
export type Definitions = (plural: string) => ObjectDefinition;

/** Whether deleting a record of `def` does more than the delete: a custom relation to it that cascades or restricts. */
function hasDeleteRules(def: ObjectDefinition): boolean {
  return def.inverses.some((i) => i.field.fieldId && i.field.onDelete !== 'SET_NULL');
}

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

/** What an upsert record gives to match on: its id, then its unique values (RecordWriter.matches). */
export interface Wanted {
  id?: string;
  values: { field: string; normalize: string; raw: string }[];
}

/** A row of an import ready to write: its position in the file and its checked columns (record-input.ts). */
export interface ImportRowColumns {
  row: number;
  columns: Record<string, unknown>;
}

/** A row of an import refused, with why. */
export interface RowError {
  row: number;
  messages: string[];
}

/** How long a workspace seen with a webhook that selects its writes' events has its writes go straight to a transaction. */
const WATCHED_TTL_MS = 60_000;
const MAX_WATCHED = 10_000;

/** The SQLSTATE of an INSERT whose link names no live record of the workspace (RecordRepository.insert). */
const RELATION_SQLSTATE = 'WR001';

/** How many times an upsert starts again when a concurrent write took its key or its match. */
const UPSERT_ATTEMPTS = 3;

/** Database refusals that belong to one import row (unique, foreign key, check, bad value), isolated row by row. */
const ROW_ERROR_CLASSES = ['23', '22'];

class RetryUpsert extends Error {}

/** A write for an unconfirmed principal that needs the transaction path, which checks no version: nothing was written. */
export class CredentialUnconfirmed extends Error {}

/** Whether a write for an unconfirmed principal stopped, nothing written, for want of a good credential version. */
export function credentialUnconfirmed(err: unknown): boolean {
  return err instanceof CredentialUnconfirmed || (err as { code?: string }).code === CREDENTIAL_CHANGED_SQLSTATE;
}

interface PgError {
  code?: string;
  constraint?: string;
  detail?: string;
  message: string;
}

/** The unique field and value a failed write gave a second live record (the `record_keys` primary key, 23505). */
function keyConflict(err: unknown): { object: string; field: string; value: string } | undefined {
  const e = err as PgError | undefined;
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

function isRowError(err: unknown): boolean {
  const code = (err as PgError)?.code;
  return typeof code === 'string' && ROW_ERROR_CLASSES.includes(code.slice(0, 2));
}

/**
 * Every change of records and its webhook events, for REST, GraphQL and MCP (RecordsService)
 * and imports, the CLI's included (libs/records/src/imports/import-runner.ts): the one writer
 * (docs/decisions/0061-one-path-to-sql.md). Its statements come from RecordRepository; an
 * event exists exactly when its change does (libs/webhooks/src/webhook-outbox.ts). A principal's
 * committed write is recorded for read-your-writes (libs/database/src/read-routing.ts) before
 * it is answered. Links to other records are checked here and nowhere else; permissions are
 * checked before the writer is called (record-policy.ts).
 */
@Injectable()
export class RecordWriter {
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
    private readonly reads: ReadRouter,
    private readonly repo: RecordRepository,
  ) {}

  // A principal's writes ---------------------------------------------------------------------------

  /**
   * Checked column sets as new records, all or none, in one INSERT whose links it checks itself
   * (no round trip before it). `credentialVersion`: the INSERT also checks the credential
   * version (RecordsService.create); on a change it fails, nothing written. `readBack` reads
   * records by id as the principal may: a create retried under an Idempotency-Key whose first
   * run died after committing (Principal.retriedCreateIds) meets its own ids, and when every id
   * is one the idempotency layer derived and every record exists, they are the answer, in order.
   */
  async create(
    principal: Principal,
    def: ObjectDefinition,
    columnSets: Record<string, unknown>[],
    readBack: (ids: string[]) => Promise<AnyRecord[]>,
    credentialVersion?: string,
  ): Promise<AnyRecord[]> {
    const ids = columnSets.map((c) => c.id).filter(Boolean);
    if (new Set(ids).size !== ids.length) throw new ConflictError(`The batch holds the same ${def.singular} id twice`);
    const s = scope(principal, def);
    const insert = this.repo.insert(def, s, columnSets);
    const records = await this.writeWithEvents(
      principal.workspaceId,
      def.singular,
      'created',
      insert,
      (rows) => rows.map((row) => def.toRecord(row)),
      async () => {
        // Watched: the INSERT and its events in one statement, the events' records written by Postgres as REST shows them.
        const watched = insertWithEvents(insert, { object: def.object, singular: def.singular, recordJson: ndjsonLine(def) });
        const rows = await this.sql.rows(watched.sql, watched.params, { prepared: insert.prepared });
        // Its deliveries' jobs, queued now that it has committed (first-attempts.ts).
        await this.firstAttempts.queue(principal.workspaceId, rows[0]?.[DELIVERY_IDS_COLUMN] as string[] | null);
        return rows.map((row) => def.toRecord(row));
      },
      credentialVersion,
    ).catch(
      async (err) => (await this.madeByEarlierRun(principal, def, columnSets, err, readBack)) ?? this.explain(err, def, s, columnSets),
    );
    return this.written(principal, records);
  }

  private async madeByEarlierRun(
    principal: Principal,
    def: ObjectDefinition,
    columnSets: Record<string, unknown>[],
    err: unknown,
    readBack: (ids: string[]) => Promise<AnyRecord[]>,
  ): Promise<AnyRecord[] | undefined> {
    const retried = principal.retriedCreateIds;
    if (!retried || (err as PgError).code !== '23505' || (err as PgError).constraint !== `${def.schema.table}_pkey`) return undefined;
    const ids = columnSets.map((c) => c.id);
    if (!ids.every((id): id is string => typeof id === 'string' && retried.has(id))) return undefined;
    const found = new Map((await readBack(ids)).map((r) => [r.id, r]));
    return ids.every((id) => found.has(id)) ? ids.map((id) => found.get(id)!) : undefined;
  }

  /**
   * Create or update by natural key (docs/rest.md, "Upsert"): each record matches a live record
   * by `id`, then by the object's unique fields (or only by `match`); a match is updated with
   * the fields sent, no match is created. All or none, in one transaction; a concurrent
   * upsert of the same key makes this one retry, and then it finds the record it made.
   */
  async upsert(
    principal: Principal,
    def: ObjectDefinition,
    list: unknown[],
    listName: string | null,
    match?: string,
  ): Promise<UpsertResult> {
    const s = scope(principal, def);
    const keys = await this.upsertKeys(def, s, match);
    // What each record gives to match on: its id (unless another field is named), then its unique values.
    // Sent with an Idempotency-Key: the ids its creates get, matched first on a retry whose first run died.
    const derived = principal.upsertCreateIds;
    const wanted = list.map((body, i): Wanted => {
      const plain = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
      let id = (match === undefined || match === 'id') && typeof plain.id === 'string' && isUUID(plain.id) ? plain.id : undefined;
      const mine = derived?.[i];
      if (id === undefined && plain.id === undefined && match === undefined && mine && principal.retriedCreateIds?.has(mine)) id = mine;
      const values = keys.map((k) => ({ ...k, raw: uniqueValueIn(plain, k.field) })).filter((k) => k.raw !== undefined);
      if (match !== undefined && !id && !values.length) {
        throw new BadInputError(ErrorCode.VALIDATION_FAILED, `${itemName(listName, i) || 'body'}: the match field ${match} is missing`);
      }
      return { id, values: values as Wanted['values'] };
    });
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.sql.transaction(async (tx) => {
          const found = await this.matches(tx, def, s, wanted);
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
              const columns = columnsToWrite(def, body, 'create', itemName(listName, i));
              if (columns.id === undefined && derived?.[i]) columns.id = derived[i];
              creates.push({ index: i, columns });
            } else {
              const { id: given, ...rest } = body as Record<string, unknown>;
              if (given !== undefined && given !== id) {
                throw new ConflictError(
                  `${itemName(listName, i) || 'body'}: id ${String(given)} is not the ${def.singular} ${id} that ${match ?? 'its unique values'} match`,
                );
              }
              updates.push({ index: i, id, columns: columnsToWrite(def, rest, 'update', itemName(listName, i)) });
            }
          });
          await this.assertLinksLive(
            tx,
            def,
            s,
            [...creates, ...updates].map((c) => c.columns),
          );
          const records: AnyRecord[] = new Array(list.length);
          if (creates.length) {
            const made = await this.insertRows(
              tx,
              def,
              s,
              creates.map((c) => c.columns),
            );
            creates.forEach((c, k) => (records[c.index] = made[k]));
          }
          for (const u of updates) {
            const record = await this.updateRow(tx, def, s, u.id, u.columns);
            // Deleted since it was matched: start again, and then it is created.
            if (!record) throw new RetryUpsert();
            records[u.index] = record;
          }
          return { records, created: creates.map((c) => records[c.index].id), updated: updates.map((u) => u.id) };
        });
        return await this.written(principal, result);
      } catch (err) {
        const retry = err instanceof RetryUpsert || isKeyConflict(err, keys);
        if (retry && attempt < UPSERT_ATTEMPTS) continue;
        if (err instanceof RetryUpsert) throw new ConflictError(`The ${def.singular} changed while it was upserted; try again`);
        return this.explain(err, def, s);
      }
    }
  }

  /** Sets checked columns of one live record (404 when there is none), with its `updated` event. */
  async update(principal: Principal, def: ObjectDefinition, id: string, written: Record<string, unknown>): Promise<AnyRecord> {
    const s = scope(principal, def);
    await this.assertLinksLive(this.sql, def, s, [written]);
    const updated = await this.writeWithEvents(
      principal.workspaceId,
      def.singular,
      'updated',
      this.repo.update(def, s, id, written),
      (rows) => (rows.length ? def.toRecord(rows[0]) : undefined),
      // With events, the record as it was is read (and locked) first, for the event's `previous`.
      () => this.sql.transaction((tx) => this.updateRow(tx, def, s, id, written)),
    ).catch((err) => this.explain(err, def, s));
    if (!updated) throw new NotFoundError(`No ${def.singular} with id ${id}`);
    return this.written(principal, updated);
  }

  /**
   * Soft-deletes one live record (404 when there is none), with its `deleted` event, and what
   * the custom relations to it say on delete (`defs`: the workspace's other objects; cascadeDelete).
   */
  async delete(principal: Principal, def: ObjectDefinition, id: string, defs: Definitions): Promise<{ id: string }> {
    const s = scope(principal, def);
    const statement = this.repo.softDelete(def, s, id);
    const inTransaction = () =>
      this.sql.transaction(async (tx) => {
        const [row] = await tx.rows(statement.sql, statement.params, { prepared: statement.prepared });
        if (!row) return row;
        const changes: RecordChange[] = [{ object: def.object, singular: def.singular, action: 'deleted', record: def.toRecord(row) }];
        await this.cascadeDelete(tx, s, def, [id], defs, changes, { left: MAX_CASCADE });
        await this.recordChanges(tx, s, changes);
        return row;
      });
    const deleted = hasDeleteRules(def)
      ? await inTransaction()
      : await this.writeWithEvents(principal.workspaceId, def.singular, 'deleted', statement, (rows) => rows[0], inTransaction);
    if (!deleted) throw new NotFoundError(`No ${def.singular} with id ${id}`);
    return this.written(principal, { id });
  }

  /**
   * Changes by filter (docs/rest.md, "Changes by filter"): every live record the filter keeps,
   * at most MAX_BY_FILTER, in one transaction, one `updated` event each.
   */
  async updateByFilter(
    principal: Principal,
    def: ObjectDefinition,
    filter: FilterNode,
    written: Record<string, unknown>,
  ): Promise<ChangedByFilter> {
    const s = scope(principal, def);
    await this.assertLinksLive(this.sql, def, s, [written]);
    const changed = await this.sql
      .transaction(async (tx) => {
        const before = await this.lockMatching(tx, def, s, filter);
        if (!before.length) return { count: 0, ids: [] };
        const rows = await this.repo.updateMany(
          tx,
          def,
          s,
          before.map((row) => row.id as string),
          written,
        );
        const previous = new Map(before.map((row) => [row.id as string, def.toRecord(row)]));
        await this.recordChanges(
          tx,
          s,
          rows.map((row) => {
            const record = def.toRecord(row);
            return {
              object: def.object,
              singular: def.singular,
              action: 'updated',
              record,
              previous: changedFields(previous.get(record.id)!, record),
            };
          }),
        );
        return { count: rows.length, ids: rows.map((row) => row.id as string) };
      })
      .catch((err) => this.explain(err, def, s));
    return this.written(principal, changed);
  }

  /** Soft-deletes every live record the filter keeps, at most MAX_BY_FILTER, in one transaction, one `deleted` event each. */
  async deleteByFilter(principal: Principal, def: ObjectDefinition, filter: FilterNode, defs: Definitions): Promise<ChangedByFilter> {
    const s = scope(principal, def);
    const changed = await this.sql.transaction(async (tx) => {
      const before = await this.lockMatching(tx, def, s, filter);
      if (!before.length) return { count: 0, ids: [] };
      const rows = await this.repo.softDeleteMany(
        tx,
        def,
        s,
        before.map((row) => row.id as string),
      );
      const ids = rows.map((row) => row.id as string);
      const changes: RecordChange[] = rows.map((row) => ({
        object: def.object,
        singular: def.singular,
        action: 'deleted',
        record: def.toRecord(row),
      }));
      await this.cascadeDelete(tx, s, def, ids, defs, changes, { left: MAX_CASCADE });
      await this.recordChanges(tx, s, changes);
      return { count: rows.length, ids };
    });
    return this.written(principal, changed);
  }

  /** Brings a soft-deleted record back (docs/rest.md, "Restore"), with a `restored` event; a live one is 409, none 404. */
  async restore(principal: Principal, def: ObjectDefinition, id: string, defs: Definitions): Promise<AnyRecord> {
    const s = scope(principal, def);
    const restored = await this.sql
      .transaction(async (tx) => {
        // When its delete cascaded, the same records come back: those deleted with it (cascadeRestore).
        const deletedAt = def.inverses.some((i) => i.field.onDelete === 'CASCADE')
          ? (await this.repo.lockAny(tx, s, id))?.deleted_at
          : null;
        const row = await this.repo.restore(tx, def, s, id);
        if (!row) return undefined;
        const record = def.toRecord(row);
        const changes: RecordChange[] = [{ object: def.object, singular: def.singular, action: 'restored', record }];
        if (deletedAt) await this.cascadeRestore(tx, s, def, [id], String(deletedAt), defs, changes);
        await this.recordChanges(tx, s, changes);
        return record;
      })
      .catch((err) => this.explain(err, def, s));
    if (restored) return this.written(principal, restored);
    if (await this.repo.exists(this.sql, s, id)) {
      throw new ConflictError(`The ${def.singular} ${id} is not deleted; only a deleted ${def.singular} can be restored`);
    }
    throw new NotFoundError(`No ${def.singular} with id ${id}`);
  }

  /**
   * Erasure (docs/rest.md, "Erasure"): the record's row, live or soft-deleted, and every stored
   * webhook event that carries it and every stored idempotent answer that holds it, in one
   * transaction. A record other records (`linked`) still link to is 409: unlink or erase those
   * first. The `deleted` event it sends carries the id only.
   */
  async destroy(principal: Principal, def: ObjectDefinition, id: string, defs: Definitions): Promise<{ id: string }> {
    const s = scope(principal, def);
    const erased = await this.sql.transaction(async (tx) => {
      const row = await this.repo.lockAny(tx, s, id);
      if (!row) return false;
      const holders: string[] = [];
      for (const { source, field, sourceObjectId } of def.inverses) {
        if (field.fieldId && field.onDelete !== 'RESTRICT') continue;
        const linking = s.of({ schema: { table: source.table }, objectId: sourceObjectId });
        const n = field.fieldId
          ? await this.repo.countLinked(tx, linking, field.fieldId, [id], 'any')
          : await this.repo.countLinking(tx, linking, field.column, id);
        if (n) holders.push(`${n} ${n === 1 ? source.singular : source.plural}`);
      }
      if (holders.length) {
        throw new ConflictError(`${holders.join(' and ')} (live or deleted) link to this ${def.singular}; unlink or erase them first`);
      }
      // Custom relations (docs/decisions/0066-relations.md): a CASCADE's live records are deleted
      // as a soft delete would, then every link to the erased record is set to null.
      const changes: RecordChange[] = [];
      if (row.deleted_at === null) changes.push({ object: def.object, singular: def.singular, action: 'deleted', record: { id } });
      await this.cascadeDelete(tx, s, def, [id], defs, changes, { left: MAX_CASCADE });
      for (const { source, field } of def.inverses) {
        if (!field.fieldId) continue;
        const sourceDef = defs(source.plural);
        for (const after of await this.repo.unlink(tx, sourceDef, s.of(sourceDef), field.fieldId, field.name, [id])) {
          const record = sourceDef.toRecord(after);
          if (record.deletedAt === null)
            changes.push({
              object: sourceDef.object,
              singular: sourceDef.singular,
              action: 'updated',
              record,
              previous: { [field.name]: id },
            });
        }
      }
      await this.repo.erase(tx, s, id);
      await this.recordChanges(tx, s, changes);
      return true;
    });
    if (!erased) throw new NotFoundError(`No ${def.singular} with id ${id}`);
    return this.written(principal, { id });
  }

  // onDelete of custom relations (docs/decisions/0066-relations.md) ---------------------------

  /**
   * What the custom relations to `def`'s records `ids`, deleted in `tx` (or about to be erased),
   * say: RESTRICT is 409 naming how many live records link to them; CASCADE soft-deletes the
   * live records linking to them, with the transaction's timestamp, and theirs in turn. The
   * target rows are locked first, so links being written wait or fail (their FOR SHARE), and
   * these statements see every link made before. A cascade visits live records only, so a
   * cycle ends; at most MAX_CASCADE records in all, past that 409 and nothing is deleted.
   */
  private async cascadeDelete(
    tx: Db,
    s: RecordScope,
    def: ObjectDefinition,
    ids: string[],
    defs: Definitions,
    changes: RecordChange[],
    budget: { left: number },
  ): Promise<void> {
    await this.cascade(s, def, ids, defs, changes, 'deleted', async (field, sourceDef, linking, targets, target) => {
      if (field.onDelete === 'SET_NULL') return [];
      if (field.onDelete === 'RESTRICT') {
        const n = await this.repo.countLinked(tx, linking, field.fieldId!, targets, 'live');
        if (n) {
          throw new ConflictError(
            `${n} ${n === 1 ? sourceDef.singular : sourceDef.object} link to ${targets.length === 1 ? `this ${target.singular}` : `these ${target.object}`} through ${field.relation} (onDelete RESTRICT); unlink or delete ${n === 1 ? 'it' : 'them'} first`,
          );
        }
        return [];
      }
      const rows = await this.repo.lockLinking(tx, sourceDef, linking, field.fieldId!, targets, 'live', budget.left);
      if (rows.length > budget.left) {
        throw new ConflictError(
          `the delete would cascade to more than ${MAX_CASCADE} records (through ${sourceDef.object}.${field.relation}); delete fewer at a time`,
        );
      }
      budget.left -= rows.length;
      return rows.length
        ? this.repo.softDeleteMany(
            tx,
            sourceDef,
            linking,
            rows.map((row) => row.id as string),
          )
        : [];
    });
  }

  /** Brings back what deleting `ids` cascaded to: records linking through a CASCADE relation deleted at `deletedAt`, and theirs. */
  private async cascadeRestore(
    tx: Db,
    s: RecordScope,
    def: ObjectDefinition,
    ids: string[],
    deletedAt: string,
    defs: Definitions,
    changes: RecordChange[],
  ): Promise<void> {
    await this.cascade(s, def, ids, defs, changes, 'restored', (field, sourceDef, linking, targets) =>
      field.onDelete === 'CASCADE'
        ? this.repo.restoreLinking(tx, sourceDef, linking, field.fieldId!, targets, deletedAt)
        : Promise.resolve([]),
    );
  }

  /**
   * The walk of a cascade: for each custom relation to `def`'s records `ids`, `step` changes the
   * records linking to them (returning their rows, each an `action` event; `target` is `def`),
   * then the walk goes on from those records.
   */
  private async cascade(
    s: RecordScope,
    def: ObjectDefinition,
    ids: string[],
    defs: Definitions,
    changes: RecordChange[],
    action: 'deleted' | 'restored',
    step: (
      field: RelationField,
      sourceDef: ObjectDefinition,
      linking: RecordScope,
      ids: string[],
      target: ObjectDefinition,
    ) => Promise<Record<string, unknown>[]>,
  ): Promise<void> {
    for (const { source, field } of def.inverses) {
      if (!field.fieldId || !ids.length) continue;
      const sourceDef = defs(source.plural);
      const linking = s.of(sourceDef);
      const rows = await step(field, sourceDef, linking, ids, def);
      for (const row of rows)
        changes.push({ object: sourceDef.object, singular: sourceDef.singular, action, record: sourceDef.toRecord(row) });
      if (rows.length)
        await this.cascade(
          linking,
          sourceDef,
          rows.map((row) => row.id as string),
          defs,
          changes,
          action,
          step,
        );
    }
  }

  // Matching (upserts, REST and imports) ---------------------------------------------------------

  /**
   * The unique fields an upsert of `def` matches on: all of the object's, or only `match`
   * (`id` or a unique field; another name is a 400 listing them). Imports check `match=` with it too.
   */
  async upsertKeys(def: ObjectDefinition, s: RecordScope, match?: string): Promise<{ field: string; normalize: string }[]> {
    const unique = await this.repo.uniqueFields(this.sql, def, s);
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

  /** For each wanted record, the id of the live record it matches (by id, then its unique values in order), or undefined. */
  async matches(tx: Db, def: ObjectDefinition, s: RecordScope, wanted: Wanted[]): Promise<(string | undefined)[]> {
    const live = await this.repo.liveIds(tx, s, [...new Set(wanted.map((w) => w.id).filter((id): id is string => Boolean(id)))]);
    const byKey = await this.repo.keyMatches(
      tx,
      def,
      s,
      wanted.flatMap((w, i) => w.values.map((v) => ({ i, ...v }))),
    );
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

  // Imports: in the batch's transaction ---------------------------------------------------------

  /**
   * An import batch's new records (docs/decisions/0035-imports.md): one INSERT … SELECT FROM
   * jsonb_populate_recordset per set of columns given; on a constraint error, the same
   * statement row by row under savepoints, each refused row said as REST says it. With
   * `events`, the records made are returned for their `created` events.
   */
  async insertImported(
    tx: SqlTx,
    def: ObjectDefinition,
    s: RecordScope,
    rows: ImportRowColumns[],
    errors: RowError[],
    events: boolean,
  ): Promise<{ count: number; changes: RecordChange[] }> {
    rows = await this.withLiveLinks(tx, def, s, rows, errors, true);
    const groups = new Map<string, ImportRowColumns[]>();
    for (const r of rows) {
      const columns = recordsetColumns(def, r.columns);
      const key = Object.keys(columns).sort().join(',');
      const group = groups.get(key);
      if (group) group.push({ row: r.row, columns });
      else groups.set(key, [{ row: r.row, columns }]);
    }
    let count = 0;
    const changes: RecordChange[] = [];
    for (const [key, group] of groups) {
      const sql = this.repo.insertRecordset(def, s, key ? key.split(',') : [], events ? 'records' : 'ids');
      const written = await this.inSavepoints(tx, def, s, sql, group, errors);
      count += written.length;
      if (events) {
        for (const row of written)
          changes.push({ object: def.object, singular: def.singular, action: 'created', record: def.toRecord(row) });
      }
    }
    return { count, changes };
  }

  /**
   * An import batch's matched rows: the records locked, each row's custom values merged into
   * its record's (a composite given in part keeps its other sub-fields, as PATCH does), then
   * one UPDATE … FROM jsonb_populate_recordset per set of columns, touching only records whose
   * values differ. A constraint error isolates the rows one by one. With `events`, the
   * records changed are returned for their `updated` events.
   */
  async updateImported(
    tx: SqlTx,
    def: ObjectDefinition,
    s: RecordScope,
    rows: (ImportRowColumns & { id: string })[],
    errors: RowError[],
    events: boolean,
  ): Promise<{ changed: number; unchanged: number; changes: RecordChange[] }> {
    const changes: RecordChange[] = [];
    rows = await this.withLiveLinks(tx, def, s, rows, errors, true);
    if (!rows.length) return { changed: 0, unchanged: 0, changes };
    const before = new Map(
      (
        await this.repo.lockLiveMany(
          tx,
          def,
          s,
          rows.map((r) => r.id),
        )
      ).map((row) => [row.id as string, row]),
    );
    const groups = new Map<string, ImportRowColumns[]>();
    for (const r of rows) {
      const old = before.get(r.id);
      if (!old) {
        errors.push({ row: r.row, messages: [`the ${def.singular} ${r.id} it matched was deleted meanwhile`] });
        continue;
      }
      const columns: Record<string, unknown> = { ...recordsetColumns(def, { ...r.columns, custom: undefined }), id: r.id };
      delete columns.custom;
      if (r.columns.custom !== undefined) columns.custom = mergedCustom(def, old.custom, r.columns.custom as Record<string, unknown>);
      const key = Object.keys(columns)
        .filter((c) => c !== 'id')
        .sort()
        .join(',');
      const group = groups.get(key);
      if (group) group.push({ row: r.row, columns });
      else groups.set(key, [{ row: r.row, columns }]);
    }
    let changed = 0;
    let matched = 0;
    for (const [key, group] of groups) {
      const columns = key ? key.split(',') : [];
      matched += group.length;
      if (!columns.length) continue;
      const written = await this.inSavepoints(tx, def, s, this.repo.updateRecordset(def, s, columns), group, errors);
      changed += written.length;
      matched -= written.refused;
      if (events) {
        for (const row of written) {
          const record = def.toRecord(row);
          const previous = def.toRecord(before.get(record.id)!);
          changes.push({
            object: def.object,
            singular: def.singular,
            action: 'updated',
            record,
            previous: changedFields(previous, record),
          });
        }
      }
    }
    return { changed, unchanged: matched - changed, changes };
  }

  /** Events of changes made in `tx` (an import batch's), in one outbox statement. */
  async recordChanges(tx: Db, s: RecordScope, changes: RecordChange[]): Promise<void> {
    await recordEvents(tx, s.workspaceId, changes);
  }

  // Links -------------------------------------------------------------------------------------

  /** Each declared link names a live record of the caller's workspace (400 naming the missing ids); another workspace's id behaves as missing. */
  async assertLinksLive(db: Db, def: ObjectDefinition, s: RecordScope, columnSets: Record<string, unknown>[]): Promise<void> {
    await this.checkLinks(
      db,
      def,
      s,
      columnSets,
      (c) => c,
      (field, targetSingular, missing) => {
        throw new BadInputError(
          ErrorCode.VALIDATION_FAILED,
          `${field.name}: no ${targetSingular} with id ${missing.join(', ')} in this workspace`,
        );
      },
    );
  }

  /**
   * Import rows whose links name no live record of the workspace are refused (as REST refuses
   * them); the others are returned. `locked`: in the batch's transaction, the custom relations'
   * targets are read `FOR SHARE`, so none is deleted before the batch commits (docs/decisions/0066-relations.md).
   */
  async withLiveLinks<T extends ImportRowColumns>(
    db: Db,
    def: ObjectDefinition,
    s: RecordScope,
    rows: T[],
    errors: RowError[],
    locked = false,
  ): Promise<T[]> {
    return this.checkLinks(
      db,
      def,
      s,
      rows,
      (r) => r.columns,
      (field, targetSingular, missing, kept) => {
        const gone = new Set(missing);
        return kept.filter((r) => {
          const id = linkIn(r.columns, field);
          if (typeof id !== 'string' || !gone.has(id)) return true;
          errors.push({ row: r.row, messages: [`${field.name}: no ${targetSingular} with id ${id} in this workspace`] });
          return false;
        });
      },
      locked,
    );
  }

  /**
   * The one link check (a relation's id names a live record of its target, in the scope's
   * workspace): one statement per relation over the ids `items` give; `onMissing` hears of the
   * ids not found and says which items go on to the next relation. `locked`: only the custom
   * relations, their targets read `FOR SHARE`.
   */
  private async checkLinks<T>(
    db: Db,
    def: ObjectDefinition,
    s: RecordScope,
    items: T[],
    columnsOf: (item: T) => Record<string, unknown>,
    onMissing: (field: RelationField, targetSingular: string, missing: string[], kept: T[]) => T[],
    locked = false,
  ): Promise<T[]> {
    let kept = items;
    for (const { field, targetTable, targetSingular, targetObjectId } of def.relations) {
      if (locked && !field.fieldId) continue;
      const ids = [...new Set(kept.map((item) => linkIn(columnsOf(item), field)).filter((id): id is string => typeof id === 'string'))];
      if (!ids.length) continue;
      const found = await this.repo.liveIds(db, s.of({ schema: { table: targetTable }, objectId: targetObjectId }), ids, locked);
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length) kept = onMissing(field, targetSingular, missing, kept);
    }
    return kept;
  }

  // Errors ------------------------------------------------------------------------------------

  /**
   * A database error of a write, thrown as a client error (Appendix A, PostgreSQL docs): a
   * link the INSERT's guard refused names every missing link (`columnSets`: those written); a
   * unique field's value held by another live record names the field and that record; a
   * duplicate id is 409; a foreign key violation (a linked record deleted between the check
   * and the write) names the declared relation whose column the database names.
   */
  async explain(err: unknown, def: ObjectDefinition, s: RecordScope, columnSets?: Record<string, unknown>[]): Promise<never> {
    if ((err as PgError).code === RELATION_SQLSTATE) {
      if (columnSets) await this.assertLinksLive(this.sql, def, s, columnSets);
      // Gone again by now (restored), or no column sets given: the guard's own words.
      throw new BadInputError(ErrorCode.VALIDATION_FAILED, (err as Error).message);
    }
    const key = keyConflict(err);
    if (key) throw new UniqueConflictError(def.singular, key.field, (await this.repo.keyHolder(this.sql, s, key)) ?? null);
    const e = err as PgError;
    if (e.code === '23505') throw new ConflictError(`A ${def.singular} with this id already exists`);
    if (e.code === '23503') {
      const declared = def.relations.filter((r) => !r.field.fieldId);
      const relation = declared.find((r) => e.detail?.includes(r.field.column)) ?? declared[0];
      if (relation) {
        throw new BadInputError(
          ErrorCode.VALIDATION_FAILED,
          `${relation.field.name}: no ${relation.targetSingular} with this id in this workspace`,
        );
      }
    }
    throw err;
  }

  /** A database refusal of one import row, said as REST says it (a unique value names the record holding it); never the statement. */
  private async rowErrorMessage(err: PgError, def: ObjectDefinition, s: RecordScope): Promise<string> {
    if (err.code === '23505' && err.constraint === 'record_keys_pkey') {
      try {
        await this.explain(err, def, s);
      } catch (explained) {
        if (explained instanceof AppError) return explained.messages.join('; ');
      }
    }
    if (err.code === '23505') return `a ${def.singular} with this id already exists`;
    if (err.code === '23503') {
      const relation = def.relations.find((r) => !r.field.fieldId && err.detail?.includes(r.field.column));
      return relation
        ? `${relation.field.name}: no ${relation.targetSingular} with this id in this workspace`
        : 'a linked record does not exist';
    }
    return `the database refused the row: ${err.message.slice(0, 200)}`;
  }

  // Internals ---------------------------------------------------------------------------------

  /** One INSERT of checked column sets, and their `created` events, in the caller's transaction. */
  private async insertRows(tx: Db, def: ObjectDefinition, s: RecordScope, columnSets: Record<string, unknown>[]): Promise<AnyRecord[]> {
    const { sql, params, prepared } = this.repo.insert(def, s, columnSets);
    const created = (await tx.rows(sql, params, { prepared })).map((row) => def.toRecord(row));
    await this.recordChanges(
      tx,
      s,
      created.map((record) => ({ object: def.object, singular: def.singular, action: 'created', record })),
    );
    return created;
  }

  /** Sets checked columns of one live record and records its `updated` event; undefined when there is no such record. */
  private async updateRow(
    tx: Db,
    def: ObjectDefinition,
    s: RecordScope,
    id: string,
    written: Record<string, unknown>,
  ): Promise<AnyRecord | undefined> {
    const before = await this.repo.lockLive(tx, def, s, id);
    if (!before) return undefined;
    if (!setsAnything(written)) return def.toRecord(before);
    const { sql, params, prepared } = this.repo.update(def, s, id, written);
    const [row] = await tx.rows(sql, params, { prepared });
    const [record, previous] = [def.toRecord(row), def.toRecord(before)];
    await this.recordChanges(tx, s, [
      { object: def.object, singular: def.singular, action: 'updated', record, previous: changedFields(previous, record) },
    ]);
    return record;
  }

  /** The live records `filter` keeps, locked in id order; more than MAX_BY_FILTER is 400 with the count. */
  private async lockMatching(tx: Db, def: ObjectDefinition, s: RecordScope, filter: FilterNode): Promise<Record<string, unknown>[]> {
    const rows = await this.repo.lockMatching(tx, def, s, filter, MAX_BY_FILTER);
    if (rows.length > MAX_BY_FILTER) {
      const n = await this.repo.countMatching(tx, def, s, filter);
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        `the filter matches ${n} ${def.object}; one call changes at most ${MAX_BY_FILTER}: narrow the filter, or make several calls`,
      );
    }
    return rows;
  }

  /** One statement over an import group under a savepoint; on a constraint error, the same statement row by row. */
  private async inSavepoints(
    tx: SqlTx,
    def: ObjectDefinition,
    s: RecordScope,
    sql: string,
    group: ImportRowColumns[],
    errors: RowError[],
  ): Promise<Record<string, unknown>[] & { refused: number }> {
    const out = Object.assign([] as Record<string, unknown>[], { refused: 0 });
    const params = (rows: ImportRowColumns[]) => [...s.params(), JSON.stringify(rows.map((r) => r.columns))];
    await tx.rows('SAVEPOINT import_batch');
    try {
      out.push(...(await tx.rows(sql, params(group))));
      await tx.rows('RELEASE SAVEPOINT import_batch');
      return out;
    } catch (err) {
      if (!isRowError(err)) throw err;
      await tx.rows('ROLLBACK TO SAVEPOINT import_batch');
    }
    for (const r of group) {
      await tx.rows('SAVEPOINT import_row');
      try {
        out.push(...(await tx.rows(sql, params([r]))));
        await tx.rows('RELEASE SAVEPOINT import_row');
      } catch (err) {
        if (!isRowError(err)) throw err;
        await tx.rows('ROLLBACK TO SAVEPOINT import_row');
        out.refused++;
        errors.push({ row: r.row, messages: [await this.rowErrorMessage(err as PgError, def, s)] });
      }
    }
    return out;
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
    statement: Statement,
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
        if ((err as PgError).code !== WATCHED_SQLSTATE) throw err;
        this.watched.delete(workspaceId);
        if (this.watched.size >= MAX_WATCHED) this.watched.delete(this.watched.keys().next().value!);
        this.watched.set(workspaceId, Date.now() + WATCHED_TTL_MS);
      }
    }
    if (credentialVersion !== undefined) throw new CredentialUnconfirmed();
    return inTransaction();
  }

  /** The same for writes made for a credential outside its request (`credential` as `kind:subject`): an import's rows. */
  async wroteFor(workspaceId: string, credential: string): Promise<void> {
    await this.reads.wroteFor(workspaceId, credential);
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
}

/** The id a write's columns give a link: its own column, or a custom relation's key in `custom` (JSON text on create). */
function linkIn(columns: Record<string, unknown>, field: RelationField): unknown {
  if (!field.fieldId) return columns[field.column];
  const custom = typeof columns.custom === 'string' ? (JSON.parse(columns.custom) as unknown) : columns.custom;
  return custom !== null && typeof custom === 'object' ? ownValue(custom, field.name) : undefined;
}

/**
 * Column values as `jsonb_populate_recordset` reads them: the JSON columns (lists, custom
 * values) as JSON, where a REST write passes them as JSON text.
 */
function recordsetColumns(def: ObjectDefinition, columns: Record<string, unknown>): Record<string, unknown> {
  for (const column of jsonColumnsOf(def)) {
    const value = columns[column];
    if (typeof value === 'string') columns[column] = JSON.parse(value);
  }
  return columns;
}

/** By declaration, not by name: custom objects of many workspaces share names, and a declaration goes with its model. */
const jsonColumns = new WeakMap<object, string[]>();
function jsonColumnsOf(def: ObjectDefinition): string[] {
  let found = jsonColumns.get(def.declaration);
  if (!found) {
    found = ['custom', ...def.declaration.fields.flatMap((field) => fieldType(field.type).storedColumns(field, 'json'))];
    jsonColumns.set(def.declaration, found);
  }
  return found;
}

/** A record's custom values after a row's are applied: scalars replace, a composite given in part keeps its other sub-fields, null clears. */
function mergedCustom(def: ObjectDefinition, stored: unknown, given: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(stored && typeof stored === 'object' ? (stored as Record<string, unknown>) : {}) };
  for (const [name, value] of Object.entries(given)) {
    const field = def.custom?.find((f) => f.name === name);
    const old = ownValue(out, name);
    out[name] =
      field && compositeSubFields(field.type) && value !== null && typeof value === 'object'
        ? {
            ...(old && typeof old === 'object'
              ? (old as Record<string, unknown>)
              : (fullComposite(field.type, {}) as Record<string, unknown>)),
            ...value,
          }
        : value;
  }
  return out;
}
