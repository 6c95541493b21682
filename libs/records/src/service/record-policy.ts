import { Injectable } from '@nestjs/common';
import { assertCan, can, type Principal } from '#auth/principal.js';
import { assertReadableField, assertUpdatableFields, fieldAccess, hasFieldRestrictions, withoutHidden } from '#auth/field-access.js';
import type { RecordCapability } from '#database/entities/role.entity.js';
import type { FilterNode, ObjectSchema, OrderTerm } from '../query/types.js';
import type { RelationField } from '../objects/index.js';
import type { GroupByArgs } from './group-by.js';

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** What the policy needs of an object: its permission name and the schema its filters are read against. */
interface PolicyObject {
  object: string;
  schema: ObjectSchema;
  relations?: readonly { field: RelationField }[];
}

/**
 * What a principal may do with records (docs/authentication.md "Roles" and "Field
 * permissions"), in one place RecordsService, exports and search ask: object permissions
 * (403 before anything is read or checked), the fields a filter, an order, a group or a write
 * may name, and records as the role may see them. Roles without field restrictions skip the
 * field checks at the cost of one property read.
 */
@Injectable()
export class RecordPolicy {
  /** 403 unless the role allows `action` on the object. */
  assertCan(principal: Principal, object: string, action: RecordCapability): void {
    assertCan(principal, object, action);
  }

  can(principal: Principal, object: string, action: RecordCapability): boolean {
    return can(principal, object, action);
  }

  /** Read on the object, and on every field the filter and the order name. */
  assertCanRead(principal: Principal, def: PolicyObject, filter?: FilterNode, orderBy?: readonly OrderTerm[]): void {
    assertCan(principal, def.object, 'read');
    this.assertCanUse(principal, def, filter, orderBy);
  }

  /**
   * 403 when a filter condition (relation filters: against the target's fields) or an order
   * term names a field the role cannot read (docs/authentication.md, "Field permissions").
   */
  assertCanUse(principal: Principal, def: PolicyObject, filter: FilterNode | undefined, orderBy?: readonly OrderTerm[]): void {
    if (!hasFieldRestrictions(principal)) return;
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

  /** The fields a group-by filters on, groups by and aggregates must be readable. */
  assertCanGroup(principal: Principal, def: PolicyObject, args: GroupByArgs): void {
    if (!hasFieldRestrictions(principal)) return;
    this.assertCanUse(principal, def, args.filter);
    for (const term of args.groupBy) assertReadableField(principal, def.object, term.field, 'group by');
    for (const term of args.aggregates) if (term.field) assertReadableField(principal, def.object, term.field, 'aggregate');
  }

  /** An upsert's `match` field must be readable: matching on it would tell its values. */
  assertCanMatchOn(principal: Principal, def: PolicyObject, match: string | undefined): void {
    if (match !== undefined && hasFieldRestrictions(principal)) assertReadableField(principal, def.object, match, 'match on');
  }

  /**
   * 403 naming the fields a write sets that the role cannot update, before anything is checked
   * or written; and 403 when it links to a record of an object the role cannot read through a
   * custom relation (the link check would tell whether that record exists).
   */
  assertCanWrite(principal: Principal, def: PolicyObject, bodies: readonly unknown[]): void {
    for (const { field } of def.relations ?? []) {
      if (field.fieldId && bodies.some((body) => isRecord(body) && body[field.name] != null)) assertCan(principal, field.target, 'read');
    }
    if (!fieldAccess(principal, def.object)) return;
    for (const body of bodies) {
      if (body !== null && typeof body === 'object' && !Array.isArray(body))
        assertUpdatableFields(principal, def.object, Object.keys(body));
    }
  }

  /** The fields of `object` the role cannot read, if any. */
  hidden(principal: Principal, object: string): ReadonlySet<string> | undefined {
    const hidden = fieldAccess(principal, object)?.hidden;
    return hidden?.size ? hidden : undefined;
  }

  /** Records as the role may see them: without the fields it cannot read (the same array when nothing is hidden). */
  visible<T>(principal: Principal, object: string, records: T[]): T[] {
    const hidden = this.hidden(principal, object);
    if (!hidden) return records;
    return records.map((record) => withoutHidden(record as object, hidden) as T);
  }

  visibleOne<T>(principal: Principal, object: string, record: T): T {
    const hidden = this.hidden(principal, object);
    return hidden ? (withoutHidden(record as object, hidden) as T) : record;
  }
}
