import { fieldAccess, hasFieldRestrictions, withoutHidden, type RoleHolder } from '#auth/field-access.js';
import { can } from '#auth/principal.js';
import { RECORD_OBJECTS, type FieldPermissions, type ObjectPermissions } from '#database/entities/role.entity.js';
import { OBJECTS } from '#records/objects/index.js';
import { TEST_EVENT_TYPE } from './operations.js';

/** A webhook's role as a delivery's claim reads it with the webhook; null when the role was deleted. */
export interface DeliveryRole {
  name: string;
  objects: ObjectPermissions;
  fields: FieldPermissions | null;
}

/** What one attempt sends: the body cut to the role, or why nothing is sent. */
export type Shaped = { body: string; skipped?: undefined } | { skipped: string };

/** `company` → `companies`: the record object the first part of an event type names. */
const OBJECT_OF_EVENT = new Map(OBJECTS.map((o) => [o.singular, o.plural]));

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

  shape(roleId: string | null, role: DeliveryRole | null, type: string, body: string): Shaped {
    let view = this.views.get(roleId);
    if (view === undefined) this.views.set(roleId, (view = role ? new RoleView(role) : null));
    return view ? view.shape(type, body) : { skipped: ROLE_DELETED };
  }
}

class RoleView {
  private readonly holder: RoleHolder & { role: { objectPermissions: ObjectPermissions } };
  private readonly readsAll: boolean;
  private readonly objects = new Map<string, { readable: boolean; hidden?: ReadonlySet<string> }>();

  constructor(private readonly role: DeliveryRole) {
    this.holder = { role: { objectPermissions: role.objects, fieldPermissions: role.fields ?? undefined } };
    this.readsAll = RECORD_OBJECTS.every((o) => can(this.holder, o, 'read')) && !hasFieldRestrictions(this.holder);
  }

  shape(type: string, body: string): Shaped {
    if (this.readsAll || type === TEST_EVENT_TYPE) return { body };
    const [subject] = type.split('.');
    // `import.completed` is about the object its summary names (docs/webhooks.md, "Event types").
    const event = subject === 'import' || !OBJECT_OF_EVENT.has(subject) ? (JSON.parse(body) as EventBody) : undefined;
    const object = event ? event.data?.import?.object : OBJECT_OF_EVENT.get(subject);
    const access = typeof object === 'string' && RECORD_OBJECTS.includes(object) ? this.access(object) : undefined;
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
