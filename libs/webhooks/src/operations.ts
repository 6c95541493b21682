import { RECORD_OBJECTS } from '#database/entities/role.entity.js';
import { BadInputError, ErrorCode } from '#errors/errors.js';
import { objectNamed } from '#records/objects/index.js';

/** What an event says happened to a record (docs/webhooks.md). */
export const WEBHOOK_ACTIONS = ['created', 'updated', 'deleted', 'restored'] as const;
export type WebhookAction = (typeof WEBHOOK_ACTIONS)[number];

/** `companies` → `company`, `people` → `person`: the object's declared singular names its events. */
export function eventObjectOf(object: string): string {
  return objectNamed(object).singular;
}

/**
 * The objects whose events a pattern may name: a workspace's active objects by singular name
 * (webhooks.ts `eventObjectsOf`, its own objects included); the standard ones when no
 * workspace is in question.
 */
export function eventObjects(): string[] {
  return RECORD_OBJECTS.map(eventObjectOf);
}

/** Events about something other than one record: one per import when it ends (docs/rest.md "Imports"). */
export const OTHER_EVENT_TYPES = ['import.completed'] as const;

/**
 * The event "Send test event" sends to one webhook (docs/webhooks.md, "Event types"): no
 * operation selects it, and it carries no record, so every webhook's role may receive it.
 */
export const TEST_EVENT_TYPE = 'webhook.test';

/** Every event type of `objects` (singular names), e.g. `company.created`, then `import.completed`. */
export function eventTypes(objects: readonly string[] = eventObjects()): string[] {
  return [...objects.flatMap((object) => WEBHOOK_ACTIONS.map((action) => `${object}.${action}`)), ...OTHER_EVENT_TYPES];
}

const MAX_OPERATIONS = 50;

/**
 * Operation patterns `<object>.<action>` where either part may be `*`: `company.created`,
 * `person.*`, `*.deleted`, `*.*`. Duplicates are dropped, order kept. An empty list, an
 * object not among `objects` (the workspace's, by singular name), an unknown action, or
 * anything else is a 400 naming the pattern.
 */
export function parseOperations(value: unknown, field = 'operations', objects: readonly string[] = eventObjects()): string[] {
  const list = value;
  if (!Array.isArray(list))
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `${field} must be a list of patterns such as "company.created", "person.*" or "*.*"`,
    );
  if (!list.length)
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `${field} must name at least one pattern, e.g. "*.*" for every event`);
  if (list.length > MAX_OPERATIONS)
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `${field} holds at most ${MAX_OPERATIONS} patterns; got ${list.length}`);
  const types = eventTypes(objects);
  const problems: string[] = [];
  for (const op of list) {
    if (typeof op !== 'string') {
      problems.push(`${field}: every pattern must be a string`);
      continue;
    }
    const [, action, ...rest] = op.split('.');
    // Each part `*` or a name, and the pattern selects at least one event type (`import.created` selects none).
    if (rest.length || action === undefined || !types.some((type) => operationsMatch([op], type))) {
      problems.push(
        `${field}: unknown pattern "${op.slice(0, 100)}"; use <object>.<action> with object one of ${objects.join(', ')} or *, action one of ${WEBHOOK_ACTIONS.join(', ')} or *, or ${OTHER_EVENT_TYPES.join(', ')}`,
      );
    }
  }
  if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
  return [...new Set(list as string[])];
}

/** Whether one of the patterns selects the event type (the same rule as the SQL in webhook-outbox.ts). */
/** `"company.*, person.created"` (the CLI's and the form's spelling) as a list. */
export function splitOperations(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

export function operationsMatch(operations: string[], type: string): boolean {
  const [object, action] = type.split('.');
  return operations.some((op) => {
    const [o, a] = op.split('.');
    return (o === '*' || o === object) && (a === '*' || a === action);
  });
}
