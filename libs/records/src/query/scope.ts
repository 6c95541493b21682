import { compileFilter } from './sql.js';
import type { FilterNode, ObjectSchema } from './types.js';

/** Which of an object's records a statement reads or writes. */
export type RecordState = 'live' | 'deleted' | 'any';

/**
 * Whose records: the principal of a request (libs/auth Principal), or a workspace alone for
 * work done for it outside a request (an import's batches, a field's values kept in step with
 * its definition).
 */
export interface ScopePrincipal {
  workspaceId: string;
}

/** An object whose records a statement touches: a definition, a relation's target, a searched object. */
export interface ScopedObject {
  readonly schema: Pick<ObjectSchema, 'table'>;
  /** A custom object's id: its records are the rows of `custom_records` with it (docs/decisions/0057-custom-objects-storage.md). */
  readonly objectId?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TABLE = /^[a-z_][a-z0-9_]*$/;

/**
 * The records of one object that one principal's statements may touch, and the one place
 * their predicates come from (docs/decisions/0061-one-path-to-sql.md): the workspace (`$1`,
 * which `params` binds; or the outer row's inside a correlated subquery), a custom object's
 * id, and live, deleted or every record. Every statement on a record table takes its table,
 * its WHERE and an INSERT's leading columns from here (the records API's repository, search,
 * exports, relation filters, and the data model's upkeep of field values); record rules, when
 * roles get them, are added here and reach every statement at once. A statement that names a
 * record table without taking it from a scope fails libs/records/src/query/scope.spec.ts; one
 * that reads `custom_records` without its object fails the test suite's teardown
 * (libs/database/src/tenant-scope.ts, objectScopeOffences).
 */
export class RecordScope {
  /** The table the object's records are in, as statements name it. */
  readonly table: string;
  readonly workspaceId: string;
  private readonly objectId: string | undefined;

  constructor(
    readonly principal: ScopePrincipal,
    object: ScopedObject,
  ) {
    if (!TABLE.test(object.schema.table)) throw new Error(`not a record table: ${object.schema.table}`);
    if (object.objectId !== undefined && !UUID.test(object.objectId)) throw new Error(`not an object id: ${object.objectId}`);
    this.table = object.schema.table;
    this.workspaceId = principal.workspaceId;
    this.objectId = object.objectId;
  }

  /** A statement's parameters, starting with the workspace (`$1`); the statement pushes its own after it. */
  params(): unknown[] {
    return [this.workspaceId];
  }

  /**
   * The predicate of the records in scope, over the table aliased `alias` (with its dot,
   * `t.`; '' for none). `records`: live ones (the default), deleted ones, or both.
   * `workspace`: what the workspace is compared with, `$1` unless the statement is a
   * correlated subquery of another record's (`t.workspace_id`).
   */
  where(alias = '', records: RecordState = 'live', workspace = '$1'): string {
    const object = this.objectId ? ` AND ${alias}object_id = '${this.objectId}'` : '';
    const state =
      records === 'live' ? ` AND ${alias}deleted_at IS NULL` : records === 'deleted' ? ` AND ${alias}deleted_at IS NOT NULL` : '';
    return `${alias}workspace_id = ${workspace}${object}${state}`;
  }

  /**
   * A list's predicate (docs/rest.md "Filtering"), over alias `t`: live records unless the
   * filter asks about `deletedAt` (or those `records` says), then the filter, its values
   * pushed onto `params`, which must be this scope's. A relation filter's target records
   * are scoped here too.
   */
  filtered(filter: FilterNode | undefined, schema: ObjectSchema, params: unknown[], records?: RecordState): string {
    if (params[0] !== this.workspaceId) throw new Error("a record statement's first parameter is its scope's workspace");
    const where = this.where('t.', records ?? (mentions(filter, 'deletedAt') ? 'any' : 'live'));
    return filter ? `${where} AND ${compileFilter(filter, schema, params, 't', this)}` : where;
  }

  /** The same principal's scope on another object's records (a relation's target, a linking object). */
  of(object: ScopedObject): RecordScope {
    return new RecordScope(this.principal, object);
  }

  /** The columns an INSERT of records starts with. */
  get insertColumns(): string {
    return this.objectId ? 'workspace_id, object_id' : 'workspace_id';
  }

  /** The values each inserted row starts with: the workspace (`$1`) and a custom object's id. */
  get insertValues(): string {
    return this.objectId ? `$1, '${this.objectId}'::uuid` : '$1';
  }
}

/** The scope of `principal`'s statements on `object`'s records. */
export function scope(principal: ScopePrincipal, object: ScopedObject): RecordScope {
  return new RecordScope(principal, object);
}

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
