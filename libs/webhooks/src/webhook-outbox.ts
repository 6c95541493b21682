import { randomUUID } from 'node:crypto';
import { eventObjectOf, type WebhookAction } from './operations.js';

/** Statements run inside the caller's open transaction. */
export interface TxRunner {
  rows<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: { prepared?: boolean }): Promise<T[]>;
}

/** One change to one record, as the record store saw it. */
export interface RecordChange {
  /** The record object (`companies`, `people`, …): the event type's object is its singular. */
  object: string;
  /** Its singular name, given for a workspace's own objects (a standard object's is known). */
  singular?: string;
  action: WebhookAction;
  /** The record as REST returns it, after the change. */
  record: Record<string, unknown>;
  /** For `updated`: the changed fields' previous values, in the record's shape. */
  previous?: Record<string, unknown>;
}

/** The body every target receives (docs/webhooks.md, "Event types"). */
export interface WebhookEventBody {
  id: string;
  type: string;
  workspaceId: string;
  occurredAt: string;
  /** A record event: `{record, previous?}`; `import.completed`: `{import}`; `webhook.test`: `{webhook: {id, url}}` (docs/webhooks.md). */
  data:
    | { record: Record<string, unknown>; previous?: Record<string, unknown> }
    | { import: Record<string, unknown> }
    | { webhook: { id: string; url: string } };
}

export const DELIVER_TASK = 'webhook_deliver';

/**
 * SQL queueing the first attempt of delivery `id` of workspace `workspace` (SQL expressions
 * or parameters; `task` is the parameter holding DELIVER_TASK), giving the job's id: the
 * delivery keeps it, so a job that sends it along with its own can take this job off the
 * queue (delivery.ts, `deliverOnce`).
 */
export function queueFirstAttempt(task: string, workspace: string, id: string): string {
  return `(graphile_worker.add_job(${task}, ${firstAttemptPayload(workspace, id)})).id`;
}

/** SQL for the payload (a DeliverJob) of the job of the first attempt of delivery `id` of workspace `workspace`. */
export function firstAttemptPayload(workspace: string, id: string): string {
  return `json_build_object('workspaceId', ${workspace}::uuid, 'deliveryId', ${id}, 'attempt', 1)`;
}

/**
 * The transactional outbox: called by the record store inside the transaction of the
 * change, so an event exists exactly when its change does. One statement stores each event
 * that at least one enabled webhook of the workspace selects, one delivery per (event,
 * webhook), and one graphile-worker job per delivery (`graphile_worker.add_job`, in the same
 * transaction: a crash after the commit loses nothing, a rollback sends nothing; see
 * queueFirstAttempt). A workspace without webhooks pays one indexed lookup and stores nothing.
 */
export async function recordEvents(tx: TxRunner, workspaceId: string, changes: RecordChange[]): Promise<void> {
  if (!changes.length) return;
  const occurredAt = new Date().toISOString();
  await storeEvents(
    tx,
    workspaceId,
    changes.map((c) => ({
      id: randomUUID(),
      type: `${c.singular ?? eventObjectOf(c.object)}.${c.action}`,
      workspaceId,
      occurredAt,
      data: c.previous ? { record: c.record, previous: c.previous } : { record: c.record },
    })),
  );
}

/** The one `import.completed` event of an import (docs/rest.md "Imports"), in the transaction that ends it. */
export async function recordImportCompleted(tx: TxRunner, workspaceId: string, summary: Record<string, unknown>): Promise<void> {
  await storeEvents(tx, workspaceId, [
    { id: randomUUID(), type: 'import.completed', workspaceId, occurredAt: new Date().toISOString(), data: { import: summary } },
  ]);
}

async function storeEvents(tx: TxRunner, workspaceId: string, events: WebhookEventBody[]): Promise<void> {
  await tx.rows(
    `WITH input AS (
       SELECT e.ord, (e.body->>'id')::uuid AS id, e.body->>'type' AS type, e.body AS body
         FROM json_array_elements($2::json) WITH ORDINALITY AS e(body, ord)
     ), ${outboxOf('$1', '$3')}
     SELECT 1`,
    [workspaceId, JSON.stringify(events), DELIVER_TASK],
    { prepared: true },
  );
}

/**
 * The outbox's steps as CTEs after a CTE `input` of the events (`ord`, `id`, `type`, `body`
 * as json) of workspace `workspace`: each event that an enabled webhook of the workspace
 * selects is stored, with one delivery per (event, webhook) and its first attempt queued
 * (`task` holds DELIVER_TASK; null: not queued here, see insertWithEvents). The last CTE
 * inserts and returns nothing; a CTE that writes runs whether the statement reads it or not.
 */
function outboxOf(workspace: string, task: string | null): string {
  return `targets AS (
       SELECT i.id AS event_id, i.ord, w.id AS webhook_id
         FROM input i JOIN webhooks w ON w.workspace_id = ${workspace} AND w.enabled
        WHERE EXISTS (SELECT 1 FROM unnest(w.operations) op
                       WHERE split_part(op, '.', 1) IN ('*', split_part(i.type, '.', 1))
                         AND split_part(op, '.', 2) IN ('*', split_part(i.type, '.', 2)))
     ), stored AS (
       INSERT INTO webhook_events (workspace_id, id, type, payload)
       SELECT ${workspace}, i.id, i.type, i.body FROM input i WHERE i.id IN (SELECT event_id FROM targets)
     ), planned AS MATERIALIZED (
       SELECT t.ord, t.webhook_id, t.event_id, gen_random_uuid() AS id FROM targets t
     ), queued AS MATERIALIZED (
       SELECT p.ord, p.webhook_id, p.event_id, p.id, ${task === null ? 'NULL::bigint' : queueFirstAttempt(task, workspace, 'p.id')} AS job_id
         FROM planned p
        ORDER BY p.ord
     ), outbox AS (
       INSERT INTO webhook_deliveries (workspace_id, id, webhook_id, event_id, job_id)
       SELECT ${workspace}, q.id, q.webhook_id, q.event_id, q.job_id FROM queued q ORDER BY q.ord
     )`;
}

/** The column insertWithEvents adds to each row: the ids of the deliveries it stored, for FirstAttempts.queue. */
export const DELIVERY_IDS_COLUMN = 'webhook_delivery_ids_';

/**
 * `insert`, one INSERT … RETURNING in workspace `$1` whose rows are records of `object`, as
 * one statement that also stores their `created` events (recordEvents' outbox, without a
 * transaction around it): Postgres writes each event's record with `recordJson`, SQL over
 * the inserted row `t` that gives the record's JSON text as REST shows it. The statement
 * returns the inserted rows, in order, each with DELIVERY_IDS_COLUMN; `occurredAt` is taken
 * as the statement is sent. One round trip instead of four (BEGIN, the INSERT, the outbox
 * statement, COMMIT) for a create in a workspace whose webhooks watch it.
 *
 * The deliveries' jobs are not queued by this statement: graphile-worker's `add_job`
 * NOTIFYs, and Postgres commits the transactions that NOTIFY one at a time, so a burst of
 * creates would commit one by one. The caller queues them once the statement has returned
 * (FirstAttempts, first-attempts.ts), together with those of the other creates that
 * returned meanwhile; a process that dies in between leaves them to the heartbeat's sweep
 * (delivery.ts, requeueStranded).
 */
export function insertWithEvents(
  insert: { sql: string; params: unknown[] },
  o: { object: string; singular?: string; recordJson: string },
): { sql: string; params: unknown[] } {
  const params = [...insert.params];
  const type = `$${params.push(`${o.singular ?? eventObjectOf(o.object)}.created`)}`;
  // This process's clock, as for every other event (recordEvents): `occurredAt` orders one record's events.
  const occurredAt = `$${params.push(new Date().toISOString())}`;
  // WebhookEventBody's keys in its order, without spaces; the record's values as the NDJSON export writes them.
  return {
    sql: `WITH written AS (${insert.sql}), numbered AS MATERIALIZED (
       SELECT row_number() OVER () AS event_ord_, gen_random_uuid() AS event_id_, t.* FROM written t
     ), input AS (
       SELECT t.event_ord_ AS ord, t.event_id_ AS id, ${type}::text AS type,
              ('{"id":"' || t.event_id_ || '","type":' || to_json(${type}::text) || ',"workspaceId":"' || $1::uuid
               || '","occurredAt":' || to_json(${occurredAt}::text) || ',"data":{"record":' || ${o.recordJson} || '}}')::json AS body
         FROM numbered t
     ), ${outboxOf('$1', null)}
     SELECT w.*, (SELECT array_agg(p.id) FROM planned p) AS ${DELIVERY_IDS_COLUMN} FROM written w`,
    params,
  };
}

/** SQLSTATE of the guard of `unwatched`: an enabled webhook of the workspace selects the event type. */
export const WATCHED_SQLSTATE = 'WH002';

/**
 * `sql`, one INSERT, UPDATE or DELETE … RETURNING in workspace `$1`, as a statement that needs
 * no outbox: it returns the written rows while no enabled webhook of the workspace selects
 * `eventType` (the outbox statement of recordEvents would store nothing), and otherwise fails
 * with WATCHED_SQLSTATE having written nothing (migration 1764800000100). Run on its own, it
 * is its own transaction: one round trip instead of BEGIN, the write, recordEvents, COMMIT.
 */
export function unwatched(
  sql: string,
  params: unknown[],
  eventType: string,
  /** A further condition on each written row (its parameters pushed on the list it is given), e.g. credentialGuard. */
  also?: (params: unknown[]) => string,
): { sql: string; params: unknown[] } {
  const all = [...params, eventType];
  const condition = `webhook_events_unwatched($1, $${all.length})${also ? ` AND ${also(all)}` : ''}`;
  return { sql: `WITH written AS (${sql}) SELECT * FROM written WHERE ${condition}`, params: all };
}

/**
 * The fields of `after` whose value differs from `before`, with `before`'s values: the
 * `previous` of an update. Composite fields (`name`, `emails`, `domainName`) are compared
 * and reported whole; `updatedAt` always changes and is left out.
 */
export function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const previous: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(before)) {
    if (key === 'updatedAt') continue;
    if (JSON.stringify(value) !== JSON.stringify(after[key])) previous[key] = value;
  }
  return previous;
}
