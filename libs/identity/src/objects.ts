import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { isUuid } from '#records/query/filter.js';
import { ConflictError, NotFoundError } from '#errors/errors.js';
import { checkNewObject, checkObjectChange, type WorkspaceObject } from '#records/objects/index.js';
import { scope, type RecordScope } from '#records/query/scope.js';
import type { Db } from './accounts.js';
import { dropField, relationFieldsOn } from './data-model.js';
import { recordAudit, type AuditEntry } from './audit-log.js';

/** The table of every custom object's records (docs/decisions/0057-custom-objects-storage.md). */
const CUSTOM_RECORDS = 'custom_records';

/*
 * A workspace's objects (docs/data-model.md "Custom objects"): the metadata API
 * (`/rest/metadata/objects`) and `/settings/data-model` change them here. Every change is
 * one transaction that also moves `workspaces.data_model_version`, so the next request on
 * every instance sees it, and is audited. A new object starts with a TEXT field `name`,
 * its label identifier. Deleting one (custom and inactive only) removes its metadata, its
 * fields and its grants at once; its records go in the background (sweepDeletedObjects).
 */

interface ObjectRow {
  id: string;
  name_singular: string;
  name_plural: string;
  label_singular: string;
  label_plural: string;
  description: string | null;
  label_identifier: string;
  is_custom: boolean;
  is_active: boolean;
  created_at: string | Date;
  updated_at: string | Date;
}

export const OBJECT_COLUMNS =
  'id, name_singular, name_plural, label_singular, label_plural, description, label_identifier, is_custom, is_active, created_at, updated_at';

const iso = (value: string | Date) => (value instanceof Date ? value.toISOString() : new Date(value).toISOString());

export function toObject(row: ObjectRow): WorkspaceObject {
  return {
    id: row.id,
    nameSingular: row.name_singular,
    namePlural: row.name_plural,
    labelSingular: row.label_singular,
    labelPlural: row.label_plural,
    description: row.description,
    labelIdentifierField: row.label_identifier,
    isCustom: row.is_custom,
    isActive: row.is_active,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export type Actor = AuditEntry['actor'];

/** Every object of a workspace, standard first, then custom ones by creation. */
export async function listObjects(db: Db, workspaceId: string): Promise<WorkspaceObject[]> {
  const rows: ObjectRow[] = await db.query(
    `SELECT ${OBJECT_COLUMNS} FROM objects WHERE workspace_id = $1 ORDER BY is_custom, created_at, id`,
    [workspaceId],
  );
  return rows.map(toObject);
}

export async function getObject(db: Db, workspaceId: string, id: string): Promise<WorkspaceObject> {
  // Another workspace's id behaves as a missing one.
  const rows: ObjectRow[] = isUuid(id)
    ? await db.query(`SELECT ${OBJECT_COLUMNS} FROM objects WHERE workspace_id = $1 AND id = $2`, [workspaceId, id])
    : [];
  if (!rows.length) throw new NotFoundError(`No object with id ${id}`);
  return toObject(rows[0]);
}

/** The object named `plural` in the workspace, or undefined. */
export async function objectNamed(db: Db, workspaceId: string, plural: string): Promise<WorkspaceObject | undefined> {
  const rows: ObjectRow[] = await db.query(`SELECT ${OBJECT_COLUMNS} FROM objects WHERE workspace_id = $1 AND name_plural = $2`, [
    workspaceId,
    plural,
  ]);
  return rows.length ? toObject(rows[0]) : undefined;
}

/**
 * The scope of statements on `plural`'s records made for the workspace itself (a field's
 * values kept in step with its definition): its table and predicates, a custom object's id
 * among them (libs/records/src/query/scope.ts).
 */
export async function recordsOf(db: Db, workspaceId: string, plural: string): Promise<RecordScope> {
  const object = await objectNamed(db, workspaceId, plural);
  if (!object) throw new NotFoundError(`No object ${plural} in this workspace`);
  return scope(
    { workspaceId },
    object.isCustom ? { schema: { table: CUSTOM_RECORDS }, objectId: object.id } : { schema: { table: plural } },
  );
}

async function inTransaction<T>(db: Db, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  return 'transaction' in db && typeof db.transaction === 'function' && !('queryRunner' in db && db.queryRunner)
    ? db.transaction(work)
    : work(db as EntityManager);
}

async function lockAndBump(tx: EntityManager, workspaceId: string): Promise<void> {
  await tx.query('UPDATE workspaces SET data_model_version = data_model_version + 1 WHERE id = $1', [workspaceId]);
}

export async function createObject(db: Db, workspaceId: string, actor: Actor, body: unknown): Promise<WorkspaceObject> {
  return inTransaction(db, async (tx) => {
    // One data-model writer per workspace at a time: the names and the count hold until COMMIT.
    await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
    // A deleted object's names stay taken until the sweep has removed its records.
    const deleting: { name_singular: string; name_plural: string; object_id: string }[] = await tx.query(
      'SELECT object_id, name_singular, name_plural FROM deleted_objects WHERE workspace_id = $1',
      [workspaceId],
    );
    const existing = await listObjects(tx, workspaceId);
    const object = checkNewObject(body, [
      ...existing,
      ...deleting.map((d) => ({
        ...existing[0],
        id: d.object_id,
        nameSingular: d.name_singular,
        namePlural: d.name_plural,
        isActive: false,
      })),
    ]);
    const rows: ObjectRow[] = await tx.query(
      `INSERT INTO objects (workspace_id, name_singular, name_plural, label_singular, label_plural, description)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${OBJECT_COLUMNS}`,
      [workspaceId, object.nameSingular, object.namePlural, object.labelSingular, object.labelPlural, object.description],
    );
    // Its label identifier: every record is named by it in search, depth and pages.
    await tx.query(
      `INSERT INTO custom_fields (workspace_id, object, name, label, description, type) VALUES ($1, $2, 'name', 'Name', $3, 'TEXT')`,
      [workspaceId, object.namePlural, `The ${object.labelSingular}'s name.`],
    );
    await lockAndBump(tx, workspaceId);
    const created = toObject(rows[0]);
    await recordAudit(tx, {
      workspaceId,
      actor,
      action: 'object.create',
      target: { type: 'object', id: created.id, label: created.namePlural },
      details: { nameSingular: created.nameSingular },
    });
    return created;
  });
}

export async function updateObject(db: Db, workspaceId: string, actor: Actor, id: string, body: unknown): Promise<WorkspaceObject> {
  return inTransaction(db, async (tx) => {
    await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
    const object = await getObject(tx, workspaceId, id);
    const identifiers: { name: string }[] = await tx.query(
      `SELECT name FROM custom_fields WHERE workspace_id = $1 AND object = $2 AND is_active AND type IN ('TEXT', 'FULL_NAME')
        ORDER BY created_at, id`,
      [workspaceId, object.namePlural],
    );
    const change = checkObjectChange(
      object,
      body,
      identifiers.map((f) => f.name),
    );
    const sets: string[] = [];
    const params: unknown[] = [workspaceId, id];
    const set = (column: string, value: unknown) => sets.push(`${column} = $${params.push(value)}`);
    if (change.labelSingular !== undefined) set('label_singular', change.labelSingular);
    if (change.labelPlural !== undefined) set('label_plural', change.labelPlural);
    if (change.description !== undefined) set('description', change.description);
    if (change.labelIdentifierField !== undefined) set('label_identifier', change.labelIdentifierField);
    if (change.isActive !== undefined) set('is_active', change.isActive);
    if (!sets.length) return object;
    const [rows]: [ObjectRow[], number] = await tx.query(
      `UPDATE objects SET ${sets.join(', ')}, updated_at = now() WHERE workspace_id = $1 AND id = $2 RETURNING ${OBJECT_COLUMNS}`,
      params,
    );
    await lockAndBump(tx, workspaceId);
    const updated = toObject(rows[0]);
    await recordAudit(tx, {
      workspaceId,
      actor,
      action: 'object.update',
      target: { type: 'object', id, label: updated.namePlural },
      details: { changed: Object.keys(change) },
    });
    return updated;
  });
}

/**
 * Deletes an inactive custom object: its metadata, fields, unique keys and every role's
 * grants on it at once (a later object of that name starts with none); its records are
 * removed in the background (`deleted_objects`, sweepDeletedObjects). A standard object
 * or an active one is refused (409): deactivate first, so data in use never disappears by
 * one mistaken call.
 */
export async function deleteObject(db: Db, workspaceId: string, actor: Actor, id: string): Promise<{ id: string }> {
  return inTransaction(db, async (tx) => {
    await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
    const object = await getObject(tx, workspaceId, id);
    if (!object.isCustom) throw new ConflictError(`${object.namePlural} is a standard object; it cannot be deleted`);
    if (object.isActive) {
      throw new ConflictError(
        `The object ${object.namePlural} is active; deactivate it first (PATCH with {"isActive": false}), then delete it`,
      );
    }
    // Its relations go too, both sides (docs/decisions/0066-relations.md): the other side's
    // values on another object's records, and the links of every side, while the rows still say whose they are.
    for (const field of await relationFieldsOn(tx, workspaceId, object.namePlural)) {
      await dropField(tx, workspaceId, field, field.object === object.namePlural);
    }
    await tx.query('DELETE FROM objects WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
    for (const table of ['custom_fields', 'unique_fields', 'record_keys', 'record_counts']) {
      await tx.query(`DELETE FROM ${table} WHERE workspace_id = $1 AND object = $2`, [workspaceId, object.namePlural]);
    }
    await tx.query(
      `UPDATE roles SET object_permissions = object_permissions - $2::text, field_permissions = field_permissions - $2::text
        WHERE workspace_id = $1 AND (object_permissions ? $2::text OR field_permissions ? $2::text)`,
      [workspaceId, object.namePlural],
    );
    await tx.query('INSERT INTO deleted_objects (workspace_id, object_id, name_singular, name_plural) VALUES ($1, $2, $3, $4)', [
      workspaceId,
      id,
      object.nameSingular,
      object.namePlural,
    ]);
    await lockAndBump(tx, workspaceId);
    await recordAudit(tx, {
      workspaceId,
      actor,
      action: 'object.delete',
      target: { type: 'object', id, label: object.namePlural },
    });
    return { id };
  });
}

/** Records removed per statement by the sweep: each batch is a short transaction of its own. */
const SWEEP_BATCH = 5_000;

/**
 * Removes the records of deleted objects (`deleted_objects`), a batch per transaction, until
 * none is left; then their counts and the tombstone. One instance of the cluster sweeps at a
 * time (a transaction advisory lock per batch; another instance's sweep that finds it taken
 * stops). Returns how many records it removed.
 */
export async function sweepDeletedObjects(db: Db, batch = SWEEP_BATCH): Promise<number> {
  let removed = 0;
  for (;;) {
    const done = await inTransaction(db, async (tx) => {
      const [{ locked }] = await tx.query(`SELECT pg_try_advisory_xact_lock(hashtext('deleted-objects')) AS locked`);
      if (!locked) return true;
      const [tomb]: { workspace_id: string; object_id: string }[] = await tx.query(
        'SELECT workspace_id, object_id FROM deleted_objects ORDER BY deleted_at LIMIT 1',
      );
      if (!tomb) return true;
      // Every record of the deleted object, deleted or not (its scope: the workspace and the object's id).
      const records = scope({ workspaceId: tomb.workspace_id }, { schema: { table: CUSTOM_RECORDS }, objectId: tomb.object_id });
      const [, count]: [unknown, number] = await tx.query(
        `DELETE FROM ${records.table} WHERE ${records.where('', 'any')}
            AND id IN (SELECT id FROM ${records.table} WHERE ${records.where('', 'any')} LIMIT ${batch})`,
        records.params(),
      );
      removed += count;
      if (count === 0) {
        await tx.query('DELETE FROM deleted_objects WHERE workspace_id = $1 AND object_id = $2', [tomb.workspace_id, tomb.object_id]);
        // Its words in the search lexicon, which keys a custom object's by its id (docs/decisions/0060-custom-objects-data-surfaces.md).
        await tx.query('DELETE FROM search_words WHERE workspace_id = $1 AND object = $2::text', [tomb.workspace_id, tomb.object_id]);
      }
      return false;
    });
    if (done) return removed;
  }
}

/** How often an instance looks for deleted objects whose records are left (an object's deletion also starts a sweep at once). */
const SWEEP_EVERY_MS = 30_000;
const sweepLogger = new Logger('DeletedObjects');

/** Runs sweepDeletedObjects at start and every 30 s in the records API (docs/data-model.md "Custom objects"). */
@Injectable()
export class DeletedObjectsSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(private readonly ds: DataSource) {}

  onApplicationBootstrap(): void {
    this.sweep();
    this.timer = setInterval(() => this.sweep(), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  private sweep(): void {
    if (this.running) return;
    this.running = sweepDeletedObjects(this.ds)
      .catch((err: Error) => sweepLogger.warn(`sweeping deleted objects' records failed (${err.message}); trying again later`))
      .finally(() => (this.running = undefined));
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
