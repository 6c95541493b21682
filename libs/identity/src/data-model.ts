import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { isUuid } from '#records/query/filter.js';
import { fieldType, isRelationType } from '#records/field-types/index.js';
import { BadInputError, ConflictError, ErrorCode, NotFoundError } from '#errors/errors.js';
import { makeNotUnique, makeUnique } from './unique-fields.js';
import {
  checkFieldChange,
  checkNewRelation,
  customRelation,
  customUniqueField,
  checkNewField,
  linkKey,
  namesTaken,
  indexKind,
  CUSTOM_FIELD_OBJECTS,
  MAX_CUSTOM_FIELDS,
  OBJECTS,
  RESERVED_NAMES,
  takenNames,
  type CustomField,
  type CustomFieldObject,
  type NewField,
} from '#records/objects/index.js';
import type { Db } from './accounts.js';
import { recordAudit, type AuditEntry } from './audit-log.js';
import { sweepFieldIndexes } from './field-indexes.js';
import { recordsOf } from './objects.js';

/** The plural names of a workspace's objects, standard first (`active`: active ones only). */
async function objectNames(db: Db, workspaceId: string, active = false): Promise<string[]> {
  const rows: { name_plural: string; is_active: boolean }[] = await db.query(
    'SELECT name_plural, is_active FROM objects WHERE workspace_id = $1 ORDER BY is_custom, created_at, id',
    [workspaceId],
  );
  return rows.filter((r) => !active || r.is_active).map((r) => r.name_plural);
}

/** Names a new field of `object` may not take: reserved and built-in names, and every existing field's (a link's key too). */
function takenOn(existing: readonly CustomField[]) {
  return (object: string): Set<string> => {
    const standard = OBJECTS.find((o) => o.plural === object);
    const names = standard ? takenNames(standard, OBJECTS) : new Set(RESERVED_NAMES);
    for (const field of existing) if (field.object === object) for (const name of namesTaken(field)) names.add(name);
    return names;
  };
}

/*
 * A workspace's custom fields (docs/data-model.md): the metadata API (`/rest/metadata/fields`)
 * and `/settings/data-model` both change them here, so the rules, the audit entries and the
 * version bump are the same whoever asks. Every change runs in one transaction that also
 * moves `workspaces.data_model_version` (which every instance sees on the next request).
 */

interface FieldRow {
  id: string;
  object: CustomFieldObject;
  name: string;
  label: string;
  description: string | null;
  type: CustomField['type'];
  is_nullable: boolean;
  default_value: unknown;
  is_unique: boolean;
  options: CustomField['options'];
  settings: CustomField['settings'];
  is_active: boolean;
  created_at: string | Date;
  updated_at: string | Date;
}

const COLUMNS = `id, object, name, label, description, type, is_nullable, default_value, is_unique, options, settings, is_active, created_at, updated_at`;

const iso = (value: string | Date) => (value instanceof Date ? value.toISOString() : new Date(value).toISOString());

export function toField(row: FieldRow): CustomField {
  return {
    id: row.id,
    object: row.object,
    name: row.name,
    label: row.label,
    description: row.description,
    type: row.type,
    isNullable: row.is_nullable,
    defaultValue: row.default_value ?? null,
    isUnique: row.is_unique,
    options: row.options,
    settings: row.settings,
    isActive: row.is_active,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export type Actor = AuditEntry['actor'];

/** Every custom field of a workspace (active or not), by object then creation. */
export async function listFields(db: Db, workspaceId: string, object?: string): Promise<CustomField[]> {
  if (object !== undefined && !CUSTOM_FIELD_OBJECTS.includes(object)) {
    const objects = await objectNames(db, workspaceId);
    if (!objects.includes(object)) throw new BadInputError(ErrorCode.VALIDATION_FAILED, `object must be one of ${objects.join(', ')}`);
  }
  const rows: FieldRow[] = await db.query(
    `SELECT ${COLUMNS.split(', ')
      .map((c) => `f.${c}`)
      .join(', ')} FROM custom_fields f
       LEFT JOIN objects o ON o.workspace_id = f.workspace_id AND o.name_plural = f.object
      WHERE f.workspace_id = $1 AND ($2::text IS NULL OR f.object = $2)
      ORDER BY o.is_custom, o.created_at, f.created_at, f.id`,
    [workspaceId, object ?? null],
  );
  return rows.map(toField);
}

export async function getField(db: Db, workspaceId: string, id: string): Promise<CustomField> {
  // Another workspace's id behaves as a missing one.
  const rows: FieldRow[] = isUuid(id)
    ? await db.query(`SELECT ${COLUMNS} FROM custom_fields WHERE workspace_id = $1 AND id = $2`, [workspaceId, id])
    : [];
  if (!rows.length) throw new NotFoundError(`No field with id ${id}`);
  return toField(rows[0]);
}

async function inTransaction<T>(db: Db, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  return 'transaction' in db && typeof db.transaction === 'function' && !('queryRunner' in db && db.queryRunner)
    ? db.transaction(work)
    : work(db as EntityManager);
}

/** Moves the version every instance compares with; the workspaces trigger also notifies them. */
async function bump(tx: EntityManager, workspaceId: string): Promise<void> {
  await tx.query('UPDATE workspaces SET data_model_version = data_model_version + 1 WHERE id = $1', [workspaceId]);
}

/** 400 when `object` has MAX_CUSTOM_FIELDS fields already (`adding` more would pass it). */
function assertRoomFor(existing: readonly CustomField[], object: string, adding = 1): void {
  if (existing.filter((f) => f.object === object).length + adding > MAX_CUSTOM_FIELDS) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `${object} already has ${MAX_CUSTOM_FIELDS} custom fields, the most allowed; delete one first`,
    );
  }
}

async function insertField(tx: EntityManager, workspaceId: string, field: NewField, id: string = randomUUID()): Promise<CustomField> {
  const rows: FieldRow[] = await tx.query(
    `INSERT INTO custom_fields (workspace_id, id, object, name, label, description, type, is_nullable, default_value, is_unique, options, settings, is_active)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11::jsonb, $12::jsonb, $13) RETURNING ${COLUMNS}`,
    [
      workspaceId,
      id,
      field.object,
      field.name,
      field.label,
      field.description,
      field.type,
      field.isNullable,
      field.defaultValue === null ? null : JSON.stringify(field.defaultValue),
      field.isUnique,
      field.options ? JSON.stringify(field.options) : null,
      field.settings ? JSON.stringify(field.settings) : null,
      field.isActive,
    ],
  );
  return toField(rows[0]);
}

/**
 * A relation's two fields in the caller's transaction (docs/decisions/0066-relations.md):
 * its MANY_TO_ONE side on `object`, returned, and its ONE_TO_MANY inverse on the target,
 * each naming the other. No record holds a value yet, so nothing else is written.
 */
async function createRelation(tx: EntityManager, workspaceId: string, actor: Actor, body: unknown): Promise<CustomField> {
  const existing = await listFields(tx, workspaceId);
  const { source, inverse } = checkNewRelation(body, {
    active: await objectNames(tx, workspaceId, true),
    objects: await objectNames(tx, workspaceId),
    taken: takenOn(existing),
    relations: (object) => existing.filter((f) => f.object === object && customRelation(f)).length,
  });
  assertRoomFor(existing, source.object, source.object === inverse.object ? 2 : 1);
  if (inverse.object !== source.object) assertRoomFor(existing, inverse.object);
  const [sourceId, inverseId] = [randomUUID(), randomUUID()];
  const created = await insertField(tx, workspaceId, { ...source, settings: { ...source.settings, inverseFieldId: inverseId } }, sourceId);
  await insertField(tx, workspaceId, { ...inverse, settings: { ...inverse.settings, inverseFieldId: sourceId } }, inverseId);
  await bump(tx, workspaceId);
  await recordAudit(tx, {
    workspaceId,
    actor,
    action: 'field.create',
    target: { type: 'field', id: created.id, label: `${created.object}.${created.name}` },
    details: { type: created.type, targetObject: inverse.object, inverseName: inverse.name, onDelete: source.settings?.onDelete },
  });
  return created;
}

export async function createField(db: Db, workspaceId: string, actor: Actor, body: unknown): Promise<CustomField> {
  const created = await inTransaction(db, async (tx) => {
    // One writer per workspace at a time: the count and the name check hold until COMMIT.
    await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
    if (isRelationType((body as { type?: unknown } | null)?.type)) return createRelation(tx, workspaceId, actor, body);
    const existing = await listFields(tx, workspaceId);
    const field = checkNewField(
      body,
      (object) => new Set(existing.filter((f) => f.object === object).flatMap(namesTaken)),
      takenOn([]),
      await objectNames(tx, workspaceId),
    );
    assertRoomFor(existing, field.object);
    const created = await insertField(tx, workspaceId, field);
    await bump(tx, workspaceId);
    // A new field holds no value yet, so it is unique from the start without a check.
    const unique = created.isUnique ? customUniqueField(created) : undefined;
    if (unique) {
      await tx.query('INSERT INTO unique_fields (workspace_id, object, field, source, compare) VALUES ($1, $2, $3, $4, $5)', [
        workspaceId,
        unique.object,
        unique.field,
        unique.source,
        unique.normalize,
      ]);
    }
    await recordAudit(tx, {
      workspaceId,
      actor,
      action: 'field.create',
      target: { type: 'field', id: created.id, label: `${created.object}.${created.name}` },
      details: { type: created.type },
    });
    return created;
  });
  // Its index follows in the background (field-indexes.ts), when its workspace's share allows.
  if (isDataSource(db) && indexKind(created.type)) sweepFieldIndexes(db);
  return created;
}

/**
 * A custom object's label identifier names its records in search, depth and pages: it stays
 * active until another field takes the role (409; docs/data-model.md "Custom objects").
 */
async function assertNotLabelIdentifier(tx: Db, workspaceId: string, field: CustomField): Promise<void> {
  const rows: { label_identifier: string }[] = await tx.query(
    'SELECT label_identifier FROM objects WHERE workspace_id = $1 AND name_plural = $2 AND is_custom',
    [workspaceId, field.object],
  );
  if (rows[0]?.label_identifier === field.name) {
    throw new ConflictError(
      `The field ${field.name} is the label identifier of ${field.object}; make another TEXT field its labelIdentifierField before deactivating it`,
    );
  }
}

export async function updateField(db: Db, workspaceId: string, actor: Actor, id: string, body: unknown): Promise<CustomField> {
  // Uniqueness first, in transactions of its own (docs/data-model.md, "Unique fields"): it may
  // refuse with the duplicates, and then nothing else of the change applies.
  const current = await getField(db, workspaceId, id);
  if (customRelation(current)) return updateRelation(db, workspaceId, actor, current, body);
  const asked = checkFieldChange(current, body);
  const uniqueChange = asked.isUnique;
  if (uniqueChange && asked.isActive === false) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'isUnique: a field cannot become unique and inactive at once');
  }
  if (uniqueChange !== undefined) {
    if (!isDataSource(db)) throw new Error('changing isUnique needs the data source');
    if (uniqueChange && !current.isActive)
      throw new ConflictError(`The field ${current.name} is inactive; activate it before making it unique`);
    const unique = customUniqueField(current)!;
    if (uniqueChange) await makeUnique(db, workspaceId, actor, unique);
    else await makeNotUnique(db, workspaceId, actor, unique);
  }
  const updated = await inTransaction(db, async (tx) => {
    await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
    const field = await getField(tx, workspaceId, id);
    const { isUnique: _unique, ...change } = checkFieldChange(field, body);
    if (change.isActive === false) await assertNotLabelIdentifier(tx, workspaceId, field);
    if (change.isActive === false && field.isUnique) {
      throw new ConflictError(
        `The field ${field.name} is unique; make it not unique (PATCH with {"isUnique": false}) before deactivating it`,
      );
    }
    // Every record's value, deleted records' too (restored, they show the field as it is now).
    const records = await recordsOf(tx, workspaceId, field.object);
    // Options removed: their values become null (SELECT) or leave the lists (MULTI_SELECT).
    if (change.options) {
      const kept = change.options.map((o) => o.value);
      const removed = (field.options ?? []).map((o) => o.value).filter((v) => !kept.includes(v));
      if (removed.length && fieldType(field.type).options === 'one') {
        await tx.query(
          `UPDATE ${records.table} SET custom = jsonb_set(custom, ARRAY[$2::text], 'null'::jsonb)
            WHERE ${records.where('', 'any')} AND custom->>$2 = ANY($3::text[])`,
          [...records.params(), field.name, removed],
        );
      } else if (removed.length) {
        await tx.query(
          `UPDATE ${records.table} SET custom = jsonb_set(custom, ARRAY[$2::text],
                  coalesce((SELECT jsonb_agg(v) FROM jsonb_array_elements_text(custom->$2) v WHERE v <> ALL($3::text[])), '[]'::jsonb))
            WHERE ${records.where('', 'any')} AND jsonb_typeof(custom->$2) = 'array' AND (custom->$2) ?| $3::text[]`,
          [...records.params(), field.name, removed],
        );
      }
      if (field.defaultValue != null && change.defaultValue === undefined) {
        const stale = Array.isArray(field.defaultValue)
          ? field.defaultValue.some((v) => !kept.includes(v))
          : !kept.includes(String(field.defaultValue));
        if (stale) change.defaultValue = null;
      }
    }
    const sets: string[] = [];
    const params: unknown[] = [workspaceId, id];
    const set = (column: string, value: unknown, cast = '') => sets.push(`${column} = $${params.push(value)}${cast}`);
    if (change.label !== undefined) set('label', change.label);
    if (change.description !== undefined) set('description', change.description);
    if (change.isNullable !== undefined) set('is_nullable', change.isNullable);
    if (change.isActive !== undefined) set('is_active', change.isActive);
    if (change.options !== undefined) set('options', JSON.stringify(change.options), '::jsonb');
    if (change.settings !== undefined) set('settings', change.settings === null ? null : JSON.stringify(change.settings), '::jsonb');
    if (change.defaultValue !== undefined)
      set('default_value', change.defaultValue === null ? null : JSON.stringify(change.defaultValue), '::jsonb');
    if (!sets.length) return uniqueChange === undefined ? field : getField(tx, workspaceId, id);
    return saveChange(tx, workspaceId, actor, id, sets, params, Object.keys(change));
  });
  // An active field wants an index and an inactive one none: the sweeper builds or drops it (field-indexes.ts).
  if (isDataSource(db) && indexKind(updated.type) && updated.isActive !== current.isActive) sweepFieldIndexes(db);
  return updated;
}

/** A field's change in the caller's transaction (`sets` over `params`, which start with the workspace and the id), with the version bump and its audit entry. */
async function saveChange(
  tx: EntityManager,
  workspaceId: string,
  actor: Actor,
  id: string,
  sets: string[],
  params: unknown[],
  changed: string[],
): Promise<CustomField> {
  // TypeORM answers an UPDATE with [rows, count].
  const [rows]: [FieldRow[], number] = await tx.query(
    `UPDATE custom_fields SET ${sets.join(', ')}, updated_at = now() WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    params,
  );
  await bump(tx, workspaceId);
  const updated = toField(rows[0]);
  await recordAudit(tx, {
    workspaceId,
    actor,
    action: 'field.update',
    target: { type: 'field', id, label: `${updated.object}.${updated.name}` },
    details: { changed },
  });
  return updated;
}

/**
 * Deletes an inactive field and its values. An active one is refused (409): deactivate
 * first, so a field in use never disappears by one mistaken call.
 */
export async function deleteField(db: Db, workspaceId: string, actor: Actor, id: string): Promise<{ id: string }> {
  let deleted: CustomField | undefined;
  const result = await inTransaction(db, async (tx) => {
    await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
    const field = (deleted = await getField(tx, workspaceId, id));
    if (field.isActive) {
      throw new ConflictError(`The field ${field.name} is active; deactivate it first (PATCH with {"isActive": false}), then delete it`);
    }
    // A relation goes with its other side (docs/decisions/0066-relations.md).
    const inverseId = customRelation(field)?.inverseFieldId;
    const both = inverseId ? [field, ...(await listFields(tx, workspaceId)).filter((f) => f.id === inverseId)] : [field];
    for (const gone of both) await dropField(tx, workspaceId, gone);
    await bump(tx, workspaceId);
    await recordAudit(tx, {
      workspaceId,
      actor,
      action: 'field.delete',
      target: { type: 'field', id, label: `${field.object}.${field.name}` },
      details: { type: field.type },
    });
    return { id };
  });
  if (isDataSource(db) && deleted && indexKind(deleted.type)) sweepFieldIndexes(db);
  return result;
}

/**
 * Removes a field in the caller's transaction: its values from every record of its object,
 * deleted ones included (a relation's id and its links), its row, and roles' field
 * permissions on it (docs/authentication.md, "Field permissions"): a field made later with
 * this name starts unrestricted, and a role edit never trips on it.
 */
export async function dropField(tx: Db, workspaceId: string, field: CustomField, recordsGoing = false): Promise<void> {
  const link = customRelation(field);
  // `recordsGoing`: its object is deleted, and its records with it (sweepDeletedObjects).
  if (link?.relationType !== 'ONE_TO_MANY' && !recordsGoing) {
    const records = await recordsOf(tx, workspaceId, field.object);
    const key = link ? linkKey(field.name) : field.name;
    await tx.query(`UPDATE ${records.table} SET custom = custom - $2::text WHERE ${records.where('', 'any')} AND custom ? $2::text`, [
      ...records.params(),
      key,
    ]);
  }
  if (link) await tx.query('DELETE FROM record_links WHERE workspace_id = $1 AND field_id = $2', [workspaceId, field.id]);
  await tx.query('DELETE FROM custom_fields WHERE workspace_id = $1 AND id = $2', [workspaceId, field.id]);
  await tx.query(
    `UPDATE roles SET field_permissions = field_permissions #- ARRAY[$2::text, $3::text]
      WHERE workspace_id = $1 AND field_permissions -> $2::text ? $3::text`,
    [workspaceId, field.object, link?.relationType === 'MANY_TO_ONE' ? linkKey(field.name) : field.name],
  );
}

/** The relation fields on `object` and their other sides, wherever those are. */
export async function relationFieldsOn(db: Db, workspaceId: string, object: string): Promise<CustomField[]> {
  const rows: FieldRow[] = await db.query(
    `SELECT ${COLUMNS} FROM custom_fields WHERE workspace_id = $1 AND type = 'RELATION'
        AND (object = $2 OR id IN (SELECT (settings->>'inverseFieldId')::uuid FROM custom_fields
                                    WHERE workspace_id = $1 AND object = $2 AND type = 'RELATION'))`,
    [workspaceId, object],
  );
  return rows.map(toField);
}

const RELATION_CHANGES = ['label', 'description', 'isActive'];

/**
 * A relation field changes its label, its description and whether it is active; turning one
 * side on or off turns the other too (a relation is served whole or not at all).
 */
async function updateRelation(db: Db, workspaceId: string, actor: Actor, current: CustomField, body: unknown): Promise<CustomField> {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const fixed = Object.keys(body).filter(
      (key) => !RELATION_CHANGES.includes(key) && (body as Record<string, unknown>)[key] !== current[key as keyof CustomField],
    );
    if (fixed.length) {
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        ...fixed.map((key) => `${key}: a relation field changes only its ${RELATION_CHANGES.join(', ')}; delete it and make another`),
      );
    }
  }
  const change = checkFieldChange(current, body);
  return inTransaction(db, async (tx) => {
    await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
    const field = await getField(tx, workspaceId, current.id);
    const params: unknown[] = [workspaceId, field.id];
    const sets: string[] = [];
    if (change.label !== undefined) sets.push(`label = $${params.push(change.label)}`);
    if (change.description !== undefined) sets.push(`description = $${params.push(change.description)}`);
    if (change.isActive !== undefined) sets.push(`is_active = $${params.push(change.isActive)}`);
    if (!sets.length) return field;
    if (change.isActive !== undefined) {
      await tx.query('UPDATE custom_fields SET is_active = $3, updated_at = now() WHERE workspace_id = $1 AND id = $2', [
        workspaceId,
        customRelation(field)!.inverseFieldId,
        change.isActive,
      ]);
    }
    return saveChange(tx, workspaceId, actor, field.id, sets, params, Object.keys(change));
  });
}

function isDataSource(db: Db): db is DataSource {
  return 'driver' in db && 'manager' in db;
}
