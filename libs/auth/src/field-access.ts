import { ForbiddenError } from '#errors/errors.js';
import type { FieldPermissions } from '#database/entities/role.entity.js';
import type { Principal } from './principal.js';

/*
 * Field-level permissions (docs/authentication.md, "Field permissions"): the one place that
 * turns a principal and an object into the fields its role may not read and may not
 * update. REST, GraphQL, MCP, exports, imports and search all ask here. A role without
 * restrictions (every built-in role, every role saved before) gets `undefined` from a
 * property read, and the callers do no work at all on that path.
 */

export interface FieldAccess {
  /** Fields the role cannot read: absent from records, refused in filters, orders, groups, `fields`. */
  hidden: ReadonlySet<string>;
  /** Fields the role cannot update (the hidden ones included): refused on every write. */
  readOnly: ReadonlySet<string>;
}

/** Computed once per role object (a cached principal keeps it until the role changes). */
const computed = new WeakMap<FieldPermissions, Map<string, FieldAccess | undefined>>();

/** Whatever holds a role: a principal, or a webhook delivering as one (libs/webhooks/src/role-view.ts). */
export type RoleHolder = { role: Pick<Principal['role'], 'fieldPermissions'> };

/** What `principal` may not do with the fields of `object`; undefined when nothing is restricted. */
export function fieldAccess(principal: RoleHolder, object: string): FieldAccess | undefined {
  const permissions = principal.role.fieldPermissions;
  const fields = permissions?.[object];
  if (!fields) return undefined;
  let byObject = computed.get(permissions);
  if (!byObject) computed.set(permissions, (byObject = new Map()));
  if (byObject.has(object)) return byObject.get(object);
  const hidden = new Set<string>();
  const readOnly = new Set<string>();
  for (const [name, rule] of Object.entries(fields)) {
    if (rule?.read === false) hidden.add(name);
    if (rule?.read === false || rule?.update === false) readOnly.add(name);
  }
  const access = readOnly.size ? { hidden, readOnly } : undefined;
  byObject.set(object, access);
  return access;
}

/** Whether the role restricts any field of any object (GraphQL and MCP then build its own schemas). */
export function hasFieldRestrictions(principal: RoleHolder): boolean {
  const permissions = principal.role.fieldPermissions;
  if (!permissions) return false;
  for (const object in permissions) if (fieldAccess(principal, object)) return true;
  return false;
}

/**
 * A stable name for what the role restricts, for keys of caches of what is built per
 * principal (GraphQL schemas, MCP tools); '' when nothing is.
 */
export function restrictionsKey(principal: Principal, which: 'read' | 'all' = 'all'): string {
  if (!hasFieldRestrictions(principal)) return '';
  const parts = Object.keys(principal.role.fieldPermissions!)
    .sort()
    .flatMap((object) => {
      const access = fieldAccess(principal, object);
      if (!access || (which === 'read' && !access.hidden.size)) return [];
      return [[object, [...access.hidden].sort(), ...(which === 'all' ? [[...access.readOnly].sort()] : [])]];
    });
  return parts.length ? JSON.stringify(parts) : '';
}

/** The top-level field a path names: `amount.amountMicros` → `amount`. */
export const topField = (path: string) => {
  const dot = path.indexOf('.');
  return dot < 0 ? path : path.slice(0, dot);
};

/** 403 naming the field when `path` (a field or a leaf path) is hidden from the role. */
export function assertReadableField(principal: Principal, object: string, path: string, use: string): void {
  const access = fieldAccess(principal, object);
  if (access?.hidden.has(topField(path))) {
    throw new ForbiddenError(
      `The role "${principal.role.name}" does not allow read on ${object}.${topField(path)}, so it cannot ${use} it`,
    );
  }
}

/** 403 naming the fields a write sets that the role cannot update; nothing is written. */
export function assertUpdatableFields(principal: Principal, object: string, names: Iterable<string>): void {
  const access = fieldAccess(principal, object);
  if (!access) return;
  const refused = [...names].filter((name) => access.readOnly.has(name));
  if (refused.length) {
    throw new ForbiddenError(
      `The role "${principal.role.name}" does not allow update on ${refused.map((f) => `${object}.${f}`).join(', ')}; nothing was written`,
    );
  }
}

/** A record without the fields the role cannot read (a copy; the input is left as it is). */
export function withoutHidden<T extends object>(record: T, hidden: ReadonlySet<string>): T {
  const copy = { ...record } as Record<string, unknown>;
  for (const name of hidden) delete copy[name];
  return copy as T;
}
