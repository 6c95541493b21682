import { Injectable } from '@nestjs/common';
import type { Principal } from '#auth/principal.js';
import { ReadRouter } from '#database/read-routing.js';
import { BadInputError, ErrorCode, NotFoundError } from '#errors/errors.js';
import type { FilterNode, ObjectSchema } from '../query/types.js';
import { CountCache } from './count-cache.js';
import { DataModel } from './data-model.js';
import { EMBEDDED_PER_RECORD } from './constants.js';
import { definitionFor, type AnyRecord, type ObjectDefinition } from './object-definitions.js';
import { toGroups, type AggregateGroup, type GroupByArgs } from './group-by.js';
import { assertId, batchOf, columnsToWrite, itemName, setsAnything } from './record-input.js';
import { pageOf, pageQuery, type ListArgs, type ListResult } from './record-pages.js';
import { RecordPolicy } from './record-policy.js';
import { RecordRepository, viaOf, type Db, type Via } from './record-repository.js';
import { scope } from '../query/scope.js';
import { credentialUnconfirmed, RecordWriter, type ChangedByFilter, type Definitions, type UpsertResult } from './record-writer.js';

export { MAX_BATCH } from './record-input.js';
export { inversesOf, type InverseRelation } from './object-definitions.js';
export { viaOf, type Via } from './record-repository.js';
export type { ListArgs, ListResult, PageInfo } from './record-pages.js';
export { MAX_BY_FILTER, type ChangedByFilter, type UpsertResult } from './record-writer.js';

/** A create for a principal the credential cache gave without a version read (RecordsService.create). */
export interface UnconfirmedCreate {
  /** The credential version the principal holds for. */
  version: string;
  /** The request authenticated in full: its principal now, or a 401. */
  confirm(): Promise<Principal>;
}

/**
 * The one entry point behind REST, GraphQL and MCP for every record object, by its plural name
 * (docs/decisions/0061-one-path-to-sql.md): the workspace's definition of the object, then the
 * permission policy (record-policy.ts), then the input checked (record-input.ts), then reads
 * through the repository (record-repository.ts) on the read router, and changes through the
 * writer (record-writer.ts). Transports call nothing else on the way to SQL.
 */
@Injectable()
export class RecordsService {
  constructor(
    private readonly counts: CountCache,
    private readonly dataModel: DataModel,
    /** Record reads: a read replica when one has the credential's last write, else the primary (docs/decisions/0037-read-replicas.md). */
    private readonly reads: ReadRouter,
    private readonly repo: RecordRepository,
    private readonly writer: RecordWriter,
    private readonly policy: RecordPolicy,
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
    assertId(id);
  }

  async list(plural: string, principal: Principal, args: ListArgs, depth: 0 | 1 = 0): Promise<ListResult<AnyRecord>> {
    const def = await this.definitionFor(plural, principal);
    this.policy.assertCanRead(principal, def, args.filter, args.orderBy);
    const q = pageQuery(def, args, 'selected');
    const s = scope(principal, def);
    const db = this.readsOf(principal);
    const { head, rows } = await this.repo.page(db, def, s, q);
    let totalCount: number | null = null;
    if (args.withCount !== false) {
      // A filtered count is counted once per (workspace, object, filter) and data version (docs/architecture.md).
      totalCount = args.filter ? await this.filteredCount(db, def, s, args.filter, String(head.__version)) : Number(head.__live_count);
    }
    const result = pageOf(def, args, q, rows, Boolean(head.__other_side), totalCount, (page) =>
      this.policy.visible(
        principal,
        def.object,
        page.map((row) => def.toRecord(row)),
      ),
    );
    return depth === 0 ? result : { ...result, records: await this.embed(def, principal, result.records, args.fields) };
  }

  /**
   * Groups and their aggregates (docs/rest.md "Aggregates"): read permission first (403, never
   * an empty answer), then `parse` checks the arguments against the workspace's schema, then
   * one GROUP BY over the live records the filter keeps, ordered by the group keys.
   */
  async groupBy(plural: string, principal: Principal, parse: (schema: ObjectSchema) => GroupByArgs): Promise<AggregateGroup[]> {
    const def = await this.definitionFor(plural, principal);
    this.policy.assertCan(principal, def.object, 'read');
    const args = parse(def.schema);
    this.policy.assertCanGroup(principal, def, args);
    return toGroups(await this.repo.groupBy(this.readsOf(principal), def, scope(principal, def), args), args, def.schema);
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
    // What depth=1 embeds on a record: its links, then the lists that link to it.
    const embedded = [...def.relations.map((r) => r.field.relation), ...def.inverses.map((inv) => inv.field.inverse)];
    const hidden = this.policy.hidden(principal, plural);
    if (!hidden) return { own, embedded };
    return { own: own.filter((name) => !hidden.has(name)), embedded, hidden: [...hidden] };
  }

  /**
   * One page per parent (`Company.people(first: 3, filter: …)`), for many parents in one
   * statement: the same filter, order and cursor rules as `list`, each parent's page read by
   * keyset in a LATERAL join, counts grouped in one more statement when asked for.
   */
  async pagesByParent(
    source: string,
    via: Via,
    principal: Principal,
    parentIds: string[],
    args: ListArgs,
  ): Promise<Map<string, ListResult<AnyRecord>>> {
    const def = await this.definitionFor(source, principal);
    this.policy.assertCanRead(principal, def, args.filter, args.orderBy);
    const q = pageQuery(def, args, 'every');
    const s = scope(principal, def);
    const db = this.readsOf(principal);
    const rows = await this.repo.pagesByParent(db, def, s, via, parentIds, q);
    const counts = args.withCount === false ? undefined : await this.repo.countsByParent(db, def, s, via, parentIds, args.filter);
    const result = new Map<string, ListResult<AnyRecord>>();
    for (const parent of parentIds) {
      const mine = rows.filter((row) => row.__parent === parent);
      const found = mine.filter((row) => row.id != null);
      result.set(
        parent,
        pageOf(def, args, q, found, Boolean(mine[0]?.__other_side), counts ? (counts.get(parent) ?? 0) : null, (page) =>
          this.policy.visible(
            principal,
            def.object,
            page.map((row) => def.toRecord(row)),
          ),
        ),
      );
    }
    return result;
  }

  /** One live record; with `fields`, only the columns of those fields are read (REST `fields=`). */
  async get(plural: string, principal: Principal, id: string, depth: 0 | 1 = 0, fields?: ReadonlySet<string>): Promise<AnyRecord> {
    const def = await this.definitionFor(plural, principal);
    const record = await this.getOne(def, principal, id, fields);
    return depth === 0 ? record : (await this.embed(def, principal, [record], fields))[0];
  }

  private async getOne(def: ObjectDefinition, principal: Principal, id: string, fields?: ReadonlySet<string>): Promise<AnyRecord> {
    this.policy.assertCan(principal, def.object, 'read');
    assertId(id);
    const row = await this.repo.get(this.readsOf(principal), def, scope(principal, def), id, fields ? def.columnsFor(fields) : def.columns);
    if (!row) throw new NotFoundError(`No ${def.singular} with id ${id}`);
    return this.policy.visibleOne(principal, def.object, def.toRecord(row));
  }

  /** Live records of `target` by id, in one query (needs read on the target). */
  async byIds(target: string, principal: Principal, ids: string[]): Promise<AnyRecord[]> {
    this.policy.assertCan(principal, target, 'read');
    const def = await this.definitionFor(target, principal);
    return this.policy.visible(principal, target, await this.repo.byIds(this.readsOf(principal), def, scope(principal, def), ids));
  }

  /** Up to 60 live `source` records per parent id through `via`, oldest first, in one query (no N+1). */
  async children(
    source: string,
    via: Via,
    principal: Principal,
    parentIds: string[],
  ): Promise<Map<string, { records: AnyRecord[]; total: number }>> {
    this.policy.assertCan(principal, source, 'read');
    const def = await this.definitionFor(source, principal);
    const result = new Map<string, { records: AnyRecord[]; total: number }>();
    if (!parentIds.length) return result;
    const rows = await this.repo.children(this.readsOf(principal), def, scope(principal, def), via, parentIds, EMBEDDED_PER_RECORD);
    for (const row of rows) {
      const key = ('column' in via ? row[via.column] : row.__parent) as string;
      const entry = result.get(key) ?? { records: [], total: Number(row.__total) };
      entry.records.push(this.policy.visibleOne(principal, source, def.toRecord(row)));
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
        // A watched workspace's create ends here too, before any statement (RecordWriter.create).
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
    this.policy.assertCan(principal, def.object, 'create');
    const list = batchOf(bodies);
    this.policy.assertCanWrite(principal, def, list);
    const columnSets = list.map((body, i) => columnsToWrite(def, body, 'create', itemName(listName, i)));
    const records = await this.writer.create(principal, def, columnSets, (ids) => this.byIds(plural, principal, ids), credentialVersion);
    return this.policy.visible(principal, def.object, records);
  }

  /** Create or update by natural key (docs/rest.md, "Upsert"; RecordWriter.upsert). */
  async upsertMany(
    plural: string,
    principal: Principal,
    bodies: unknown,
    listName: string | null = '',
    match?: string,
  ): Promise<UpsertResult> {
    const def = await this.definitionFor(plural, principal);
    this.policy.assertCan(principal, def.object, 'create');
    this.policy.assertCan(principal, def.object, 'update');
    const list = batchOf(bodies);
    this.policy.assertCanWrite(principal, def, list);
    this.policy.assertCanMatchOn(principal, def, match);
    const result = await this.writer.upsert(principal, def, list, listName, match);
    return { ...result, records: this.policy.visible(principal, def.object, result.records) };
  }

  /** The unique fields an upsert of `def` matches on (RecordWriter.upsertKeys); imports check `match=` with it at upload. */
  upsertKeys(def: ObjectDefinition, workspaceId: string, match?: string): Promise<{ field: string; normalize: string }[]> {
    return this.writer.upsertKeys(def, scope({ workspaceId }, def), match);
  }

  async update(plural: string, principal: Principal, id: string, body: unknown): Promise<AnyRecord> {
    const def = await this.definitionFor(plural, principal);
    this.policy.assertCan(principal, def.object, 'update');
    assertId(id);
    this.policy.assertCanWrite(principal, def, [body]);
    const written = columnsToWrite(def, body, 'update');
    if (!setsAnything(written)) return this.getOne(def, principal, id);
    return this.policy.visibleOne(principal, def.object, await this.writer.update(principal, def, id, written));
  }

  async delete(plural: string, principal: Principal, id: string): Promise<{ id: string }> {
    const [def, defs] = await this.definitions(plural, principal);
    this.policy.assertCan(principal, def.object, 'delete');
    assertId(id);
    return this.writer.delete(principal, def, id, defs);
  }

  /** `plural`'s definition as the principal's workspace sees it, and how to find its other objects' (a delete's cascade crosses to them). */
  private async definitions(plural: string, principal: Principal): Promise<[ObjectDefinition, Definitions]> {
    const model = await this.dataModel.of(principal);
    return [model.definition(plural), (other) => model.definition(other)];
  }

  /** Changes by filter (docs/rest.md, "Changes by filter"; RecordWriter.updateByFilter). */
  async updateByFilter(plural: string, principal: Principal, filter: FilterNode | undefined, body: unknown): Promise<ChangedByFilter> {
    const def = await this.definitionFor(plural, principal);
    this.policy.assertCan(principal, def.object, 'update');
    const where = requireFilter(filter);
    this.policy.assertCanUse(principal, def, where);
    this.policy.assertCanWrite(principal, def, [body]);
    const written = columnsToWrite(def, body, 'update');
    if (!setsAnything(written)) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'the body sets no field');
    return this.writer.updateByFilter(principal, def, where, written);
  }

  /** Soft-deletes every live record the filter keeps (RecordWriter.deleteByFilter). */
  async deleteByFilter(plural: string, principal: Principal, filter: FilterNode | undefined): Promise<ChangedByFilter> {
    const [def, defs] = await this.definitions(plural, principal);
    this.policy.assertCan(principal, def.object, 'delete');
    const where = requireFilter(filter);
    this.policy.assertCanUse(principal, def, where);
    return this.writer.deleteByFilter(principal, def, where, defs);
  }

  /** Brings a soft-deleted record back (docs/rest.md, "Restore"); undoing a delete needs what the delete needed. */
  async restore(plural: string, principal: Principal, id: string): Promise<AnyRecord> {
    const [def, defs] = await this.definitions(plural, principal);
    this.policy.assertCan(principal, def.object, 'delete');
    assertId(id);
    return this.policy.visibleOne(principal, def.object, await this.writer.restore(principal, def, id, defs));
  }

  /** Erasure (docs/rest.md, "Erasure"; RecordWriter.destroy): needs `destroy` (Admin only). */
  async destroy(plural: string, principal: Principal, id: string): Promise<{ id: string }> {
    const [def, defs] = await this.definitions(plural, principal);
    this.policy.assertCan(principal, def.object, 'destroy');
    assertId(id);
    return this.writer.destroy(principal, def, id, defs);
  }

  /** Field permissions of a filter and an order (RecordPolicy.assertCanUse); exports ask too. */
  assertCanUse(principal: Principal, def: ObjectDefinition, filter: FilterNode | undefined, orderBy?: ListArgs['orderBy']): void {
    this.policy.assertCanUse(principal, def, filter, orderBy);
  }

  /** depth=1 (docs/rest.md; docs/architecture.md): each linked record, and every inverse list (`only`: those named in fields=). */
  private async embed(def: ObjectDefinition, principal: Principal, records: AnyRecord[], only?: ReadonlySet<string>): Promise<AnyRecord[]> {
    const extras = records.map(() => ({}) as Record<string, unknown>);
    for (const field of def.relations.map((r) => r.field)) {
      if (only && !only.has(field.relation)) continue;
      const ids = [...new Set(records.map((r) => r[field.name]).filter((id): id is string => Boolean(id)))];
      const found = new Map((await this.byIds(field.target, principal, ids)).map((t) => [t.id, t]));
      records.forEach((r, i) => (extras[i][field.relation] = r[field.name] ? (found.get(r[field.name]) ?? null) : null));
    }
    for (const { source, field } of def.inverses) {
      // Named in fields=: it needs read (403 otherwise). Not named: a list the role cannot read is
      // left out, so roles that read a company at depth=1 before inverse lists came still can.
      if (only ? !only.has(field.inverse) : !this.policy.can(principal, source.plural, 'read')) continue;
      const lists = await this.children(
        source.plural,
        viaOf(field),
        principal,
        records.map((r) => r.id),
      );
      records.forEach((r, i) => (extras[i][field.inverse] = lists.get(r.id)?.records ?? []));
    }
    return records.map((r, i) => ({ ...r, ...extras[i] }));
  }

  private async filteredCount(
    db: Db,
    def: ObjectDefinition,
    s: ReturnType<typeof scope>,
    filter: FilterNode,
    version: string,
  ): Promise<number> {
    const key = `${s.workspaceId}:${def.object}:${JSON.stringify(filter)}`;
    const cached = this.counts.get(key, version);
    if (cached !== undefined) return cached;
    const count = await this.repo.count(db, def, s, filter);
    this.counts.set(key, version, count);
    return count;
  }

  /** The principal's record reads: a replica that has its last write, else the primary. */
  private readsOf(principal: Principal): Db {
    return { rows: (sql, params, options) => this.reads.rows(principal, sql, params, options) };
  }
}

function requireFilter(filter: FilterNode | undefined): FilterNode {
  if (!filter) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      'a filter is required to change records by filter (to change every record, say so: filter=id[is]:NOT_NULL)',
    );
  }
  return filter;
}
