import type { Principal } from '#auth/principal.js';
import { compileFilter } from '#records/query/index.js';
import type { FilterNode, ObjectSchema } from '#records/query/types.js';

/** Which of an object's records a statement reads or writes. */
export type RecordState = 'live' | 'deleted' | 'any';

/**
 * Whose records: the principal of the request, or the workspace alone for work done for a
 * workspace outside a request (an import's batches).
 */
export type ScopePrincipal = Pick<Principal, 'workspaceId'>;

/** An object whose records a statement touches: a definition, a relation's target, a searched object. */
export interface ScopedObject {
  readonly schema: Pick<ObjectSchema, 'table'>;
  /** A custom object's id: its records are the rows of `custom_records` with it (docs/decisions/0057-custom-objects-storage.md). */
  readonly objectId?: string;
}

/**
 * The records of one object that one principal's statements may touch, and the one place
 * their predicates come from (docs/decisions/0061-one-path-to-sql.md): the workspace (always
 * `$1`, which `params` binds), a custom object's id, and live, deleted or every record.
 * Every statement on a record table (records/record-repository.ts, search, exports) takes its
 * table, its WHERE and an INSERT's leading columns from here; record rules, when roles get
 * them, are added here and reach every statement at once. A statement built without it is
 * caught by test/record-sql.e2e-spec.ts and the suite's tenant-scope check.
 */
export class RecordScope {
  /** The table the object's records are in. */
  readonly table: string;
  readonly workspaceId: string;
  private readonly objectId: string | undefined;

  constructor(
    readonly principal: ScopePrincipal,
    object: ScopedObject,
  ) {
    this.table = object.schema.table;
    this.workspaceId = principal.workspaceId;
    if (object.objectId !== undefined && !UUID.test(object.objectId)) throw new Error(`not an object id: ${object.objectId}`);
    this.objectId = object.objectId;
  }

  /** A statement's parameters, starting with the workspace (`$1`); the statement pushes its own after it. */
  params(): unknown[] {
    return [this.workspaceId];
  }

  /**
   * The predicate of the records in scope, over the table aliased `alias` (with its dot,
   * `t.`; '' for none). `records`: live ones (the default), deleted ones, or both.
   */
  where(alias = '', records: RecordState = 'live'): string {
    const object = this.objectId ? ` AND ${alias}object_id = '${this.objectId}'` : '';
    const state =
      records === 'live' ? ` AND ${alias}deleted_at IS NULL` : records === 'deleted' ? ` AND ${alias}deleted_at IS NOT NULL` : '';
    return `${alias}workspace_id = $1${object}${state}`;
  }

  /**
   * A list's predicate (docs/rest.md "Filtering"), over alias `t`: live records unless the
   * filter asks about `deletedAt` (or those `records` says), then the filter, its values
   * pushed onto `params`, which must be this scope's.
   */
  filtered(filter: FilterNode | undefined, schema: ObjectSchema, params: unknown[], records?: RecordState): string {
    if (params[0] !== this.workspaceId) throw new Error("a record statement's first parameter is its scope's workspace");
    const where = this.where('t.', records ?? (mentions(filter, 'deletedAt') ? 'any' : 'live'));
    return filter ? `${where} AND ${compileFilter(filter, schema, params)}` : where;
  }

  /** The same principal's scope on another object's records (a relation's target, a linking object). */
  of(object: ScopedObject): RecordScope {
    return new RecordScope(this.principal, object);
  }

  /** The columns an INSERT of records starts with, then the values (`$1`, the object's id) each row starts with. */
  get insertColumns(): string {
    return this.objectId ? 'workspace_id, object_id' : 'workspace_id';
  }

  get insertValues(): string {
    return this.objectId ? `$1, '${this.objectId}'::uuid` : '$1';
  }
}

/** The scope of `principal`'s statements on `object`'s records. */
export function scope(principal: ScopePrincipal, object: ScopedObject): RecordScope {
  return new RecordScope(principal, object);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a filter names `field` (outside relation filters, whose targets' deleted records are never matched). */
function mentions(node: FilterNode | undefined, field: string): boolean {
  if (!node) return false;
  switch (node.kind) {
    case 'cond':
      return node.field === field;
    case 'not':
      return mentions(node.child, field);
    case 'relation':
      return false;
    default:
      return node.children.some((child) => mentions(child, field));
  }
}
