import type { DataSource, EntityManager } from 'typeorm';
import { isUuid } from '#records/query/filter.js';
import { fieldType } from '#records/field-types/index.js';
import { BadInputError, ConflictError, ErrorCode, NotFoundError } from '#errors/errors.js';
import { makeNotUnique, makeUnique } from './unique-fields.js';
import {
  checkFieldChange,
  customUniqueField,
  checkNewField,
  indexKind,
  CUSTOM_FIELD_OBJECTS,
  MAX_CUSTOM_FIELDS,
  OBJECTS,
  RESERVED_NAMES,
  takenNames,
  type CustomField,
  type CustomFieldObject,
} from '#records/objects/index.js';
import type { Db } from './accounts.js';
import { recordAudit, type AuditEntry } from './audit-log.js';
import { sweepFieldIndexes } from './field-indexes.js';
import { recordsOf } from './objects.js';

/** The plural names of a workspace's objects, standard first. */
async function objectNames(db: Db, workspaceId: string): Promise<string[]> {
  const rows: { name_plural: string }[] = await db.query(
    'SELECT name_plural FROM objects WHERE workspace_id = $1 ORDER BY is_custom, created_at, id',
    [workspaceId],
  );
  return rows.map((r) => r.name_plural);
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

export async function createField(db: Db, workspaceId: string, actor: Actor, body: unknown): Promise<CustomField> {
  const created = await inTransaction(db, async (tx) => {
    // One writer per workspace at a time: the count and the name check hold until COMMIT.
    await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
    const existing = await listFields(tx, workspaceId);
    const field = checkNewField(
      body,
      (object) => new Set(existing.filter((f) => f.object === object).map((f) => f.name)),
      (object) => {
        const standard = OBJECTS.find((o) => o.plural === object);
        return standard ? takenNames(standard, OBJECTS) : new Set(RESERVED_NAMES);
      },
      await objectNames(tx, workspaceId),
    );
    const count = existing.filter((f) => f.object === field.object).length;
    if (count >= MAX_CUSTOM_FIELDS) {
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        `${field.object} already has ${MAX_CUSTOM_FIELDS} custom fields, the most allowed; delete one first`,
      );
    }
    const rows: FieldRow[] = await tx.query(
      `INSERT INTO custom_fields (workspace_id, object, name, label, description, type, is_nullable, default_value, is_unique, options, settings, is_active)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::jsonb, $11::jsonb, $12) RETURNING ${COLUMNS}`,
      [
        workspaceId,
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
    await bump(tx, workspaceId);
    const created = toField(rows[0]);
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
      details: { changed: Object.keys(change) },
    });
    return updated;
  });
  // An active field wants an index and an inactive one none: the sweeper builds or drops it (field-indexes.ts).
  if (isDataSource(db) && indexKind(updated.type) && updated.isActive !== current.isActive) sweepFieldIndexes(db);
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
    const records = await recordsOf(tx, workspaceId, field.object);
    await tx.query(`UPDATE ${records.table} SET custom = custom - $2::text WHERE ${records.where('', 'any')} AND custom ? $2::text`, [
      ...records.params(),
      field.name,
    ]);
    await tx.query('DELETE FROM custom_fields WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
    // Roles' field permissions on it go too (docs/authentication.md, "Field permissions"): a
    // field made later with this name starts unrestricted, and a role edit never trips on it.
    await tx.query(
      `UPDATE roles SET field_permissions = field_permissions #- ARRAY[$2::text, $3::text]
        WHERE workspace_id = $1 AND field_permissions -> $2::text ? $3::text`,
      [workspaceId, field.object, field.name],
    );
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

function isDataSource(db: Db): db is DataSource {
  return 'driver' in db && 'manager' in db;
}
