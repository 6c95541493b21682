import { fieldAccess, hasFieldRestrictions, withoutHidden, type RoleHolder } from '#auth/field-access.js';
import { can } from '#auth/principal.js';
import type { FieldPermissions, ObjectPermissions } from '#database/entities/role.entity.js';
import { OTHER_OBJECTS } from '#identity/roles.js';
import { TEST_EVENT_TYPE } from './operations.js';

/** A webhook's role as a delivery's claim reads it with the webhook; null when the role was deleted. */
export interface DeliveryRole {
  name: string;
  objects: ObjectPermissions;
  fields: FieldPermissions | null;
}

/** What one attempt sends: the body cut to the role, or why nothing is sent. */
export type Shaped = { body: string; skipped?: undefined } | { skipped: string };

export const ROLE_DELETED = 'not sent: the role this webhook delivers as was deleted; saving the webhook makes it deliver as your role';

/**
 * The events of one delivery job as each webhook's role may read them (docs/webhooks.md,
 * "Who a webhook delivers as"): the same rules as REST (libs/auth/src/field-access.ts), so
 * a field the role cannot read leaves `record` and `previous`, and an event of an object it
 * cannot read is not sent at all. Made per job from the roles its claim read, so an edit of
 * a role applies from the next job; each (role, object) is worked out once per job, and a
 * role that reads everything sends the stored body as it is, never parsed.
 */
export class RoleViews {
  private readonly views = new Map<string | null, RoleView | null>();

  /**
   * `object`: the plural name of the workspace's active object the event type names, as the
   * claim read it (delivery.ts); null for an event about no record (`import.completed`) or
   * for an object deactivated or deleted since the event.
   */
  shape(roleId: string | null, role: DeliveryRole | null, type: string, body: string, object: string | null): Shaped {
    let view = this.views.get(roleId);
    if (view === undefined) this.views.set(roleId, (view = role ? new RoleView(role) : null));
    return view ? view.shape(type, body, object) : { skipped: ROLE_DELETED };
  }
}

class RoleView {
  private readonly holder: RoleHolder & { role: { objectPermissions: ObjectPermissions } };
  private readonly readsAll: boolean;
  private readonly objects = new Map<string, { readable: boolean; hidden?: ReadonlySet<string> }>();

  constructor(private readonly role: DeliveryRole) {
    this.holder = { role: { objectPermissions: role.objects, fieldPermissions: role.fields ?? undefined } };
    // Every object: those it names, and (through "*") those it does not, a workspace's own objects included.
    const granted = Object.values(role.objects ?? {});
    this.readsAll =
      role.objects?.[OTHER_OBJECTS]?.read === true && granted.every((p) => p?.read === true) && !hasFieldRestrictions(this.holder);
  }

  shape(type: string, body: string, claimed: string | null): Shaped {
    // The test event carries no record: every role may receive it.
    if (type === TEST_EVENT_TYPE) return { body };
    const [subject, action] = type.split('.');
    const isImport = subject === 'import';
    if (!isImport && claimed === null) {
      return {
        skipped: `not sent: ${subject} is no longer an active object of this workspace (deactivated or deleted since the ${action})`,
      };
    }
    if (this.readsAll) return { body };
    // `import.completed` is about the object its summary names (docs/webhooks.md, "Event types").
    const event = isImport ? (JSON.parse(body) as EventBody) : undefined;
    const object = event ? event.data?.import?.object : claimed;
    const access = typeof object === 'string' ? this.access(object) : undefined;
    if (!access?.readable) return { skipped: `not sent: the role "${this.role.name}" cannot read ${String(object ?? type)}` };
    if (!access.hidden?.size) return { body };
    const parsed = event ?? (JSON.parse(body) as EventBody);
    const data = parsed.data ?? {};
    if (data.record) data.record = withoutHidden(data.record, access.hidden);
    if (data.previous) data.previous = withoutHidden(data.previous, access.hidden);
    return { body: JSON.stringify(parsed) };
  }

  private access(object: string) {
    let found = this.objects.get(object);
    if (!found) {
      const readable = can(this.holder, object, 'read');
      this.objects.set(object, (found = { readable, hidden: readable ? fieldAccess(this.holder, object)?.hidden : undefined }));
    }
    return found;
  }
}

interface EventBody {
  data?: { record?: Record<string, unknown>; previous?: Record<string, unknown>; import?: { object?: unknown } };
}
