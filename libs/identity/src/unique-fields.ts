import type { DataSource, EntityManager } from 'typeorm';
import { BadInputError, ConflictError, ErrorCode } from '#errors/errors.js';
import {
  BUILT_IN_UNIQUE_FIELDS,
  CUSTOM_FIELD_OBJECTS,
  customUniqueField,
  UNIQUE_TYPES,
  type CustomFieldObject,
  type UniqueField,
} from '#records/objects/index.js';
import type { Db } from './accounts.js';
import { recordAudit, type AuditEntry } from './audit-log.js';
import { listObjects, objectNamed, recordsOf } from './objects.js';

/*
 * Unique fields (docs/data-model.md, "Unique fields"). Which fields are unique is a row of
 * `unique_fields`; the `record_keys` triggers enforce it on every write. Making a field
 * unique checks for duplicates first (409 listing up to 10), then registers the field and
 * fills its keys in a second transaction, then checks again for a duplicate that raced in.
 */

export const MAX_DUPLICATES_LISTED = 10;

interface Row {
  object: CustomFieldObject;
  field: string;
  source: string[];
  normalize: UniqueField['normalize'];
}

/** 400 unless `object` is an object of the workspace (a standard one or its own). */
async function assertObject(db: Db, workspaceId: string, object: string): Promise<void> {
  if (CUSTOM_FIELD_OBJECTS.includes(object) || (await objectNamed(db, workspaceId, object))) return;
  const names = (await listObjects(db, workspaceId)).map((o) => o.namePlural);
  throw new BadInputError(ErrorCode.VALIDATION_FAILED, `object must be one of ${names.join(', ')}`);
}

/** The unique fields of a workspace, of one object or all. */
export async function listUniqueFields(db: Db, workspaceId: string, object?: string): Promise<UniqueField[]> {
  if (object !== undefined) await assertObject(db, workspaceId, object);
  const rows: Row[] = await db.query(
    `SELECT u.object, u.field, u.source, u.compare AS normalize FROM unique_fields u
       LEFT JOIN objects o ON o.workspace_id = u.workspace_id AND o.name_plural = u.object
      WHERE u.workspace_id = $1 AND ($2::text IS NULL OR u.object = $2)
      ORDER BY o.is_custom, o.created_at, u.created_at, u.field`,
    [workspaceId, object ?? null],
  );
  return rows.map((row) => ({ ...row, builtIn: BUILT_IN_UNIQUE_FIELDS.some((b) => b.object === row.object && b.field === row.field) }));
}

/** The column expression a stored row's value is read from (as the triggers read it from the row as JSON). */
function rawExpression(field: Pick<UniqueField, 'source'>): string {
  const [head, ...rest] = field.source;
  if (head === 'custom') return `(t.custom #>> '{${rest.join(',')}}')`;
  if (!/^[a-z_]+$/.test(head) || rest.length) throw new Error(`bad unique source ${field.source.join('.')}`);
  return `t.${head}`;
}

/** Up to 10 values that more than one live record of the workspace holds. */
export async function duplicateValues(db: Db, workspaceId: string, field: UniqueField): Promise<string[]> {
  const records = await recordsOf(db, workspaceId, field.object);
  const rows: { value: string }[] = await db.query(
    `SELECT k.value FROM ${records.table} t
      CROSS JOIN LATERAL (SELECT record_key_value($2, ${rawExpression(field)}) AS value) k
      WHERE ${records.where('t.')} AND k.value IS NOT NULL
      GROUP BY k.value HAVING count(*) > 1 ORDER BY k.value LIMIT ${MAX_DUPLICATES_LISTED}`,
    [...records.params(), field.normalize],
  );
  return rows.map((r) => r.value);
}

function duplicatesError(field: UniqueField, values: string[]): ConflictError {
  return new ConflictError(
    `${field.object}.${field.field} cannot be unique: more than one live record holds ` +
      `${values.map((v) => JSON.stringify(v)).join(', ')}${values.length === MAX_DUPLICATES_LISTED ? ' (and maybe more)' : ''}; ` +
      'change or delete the duplicates first',
  );
}

/**
 * The unique-field entry `path` names on `object`: a built-in one (`emails.primaryEmail`, or
 * `emails`) or an active custom field of a type that may be unique (`code`, `work`).
 */
export async function resolveUniqueField(db: Db, workspaceId: string, object: string, path: string): Promise<UniqueField> {
  await assertObject(db, workspaceId, object);
  const builtIn = BUILT_IN_UNIQUE_FIELDS.find((b) => b.object === object && (b.field === path || b.field.split('.')[0] === path));
  if (builtIn) return builtIn;
  const [name] = path.split('.');
  const rows: { name: string; type: string; is_active: boolean }[] = await db.query(
    'SELECT name, type, is_active FROM custom_fields WHERE workspace_id = $1 AND object = $2 AND name = $3',
    [workspaceId, object, name],
  );
  const custom = rows[0]?.is_active
    ? customUniqueField({ object: object as CustomFieldObject, name, type: rows[0].type as never })
    : undefined;
  if (!custom || (path !== name && path !== custom.field)) {
    const builtIns = BUILT_IN_UNIQUE_FIELDS.filter((b) => b.object === object).map((b) => b.field);
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `${path} cannot be unique on ${object}: unique fields are ${[...builtIns, `custom ${UNIQUE_TYPES.join(', ')} fields`].join(', ')}`,
    );
  }
  return custom;
}

export type Actor = AuditEntry['actor'];

/**
 * Makes `field` unique in the workspace (idempotent). A brief SHARE lock on the table while the
 * field is registered waits for writers already in flight, so every write from then on sees
 * the field and keeps its key; the keys of existing records are then filled without a lock.
 */
export async function makeUnique(ds: DataSource, workspaceId: string, actor: Actor, field: UniqueField): Promise<UniqueField> {
  const before = await duplicateValues(ds, workspaceId, field);
  if (before.length) throw duplicatesError(field, before);
  const added = await ds.transaction(async (tx) => {
    await tx.query(`SET LOCAL lock_timeout = '5s'`);
    await tx.query(`LOCK TABLE ${(await recordsOf(tx, workspaceId, field.object)).table} IN SHARE MODE`);
    const rows: unknown[] = await tx.query(
      `INSERT INTO unique_fields (workspace_id, object, field, source, compare) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING RETURNING field`,
      [workspaceId, field.object, field.field, field.source, field.normalize],
    );
    if (!rows.length) return false;
    await setCustomFlag(tx, workspaceId, field, true);
    await recordAudit(tx, {
      workspaceId,
      actor,
      action: 'field.unique',
      target: { type: 'field', label: `${field.object}.${field.field}` },
      details: { unique: true },
    });
    return true;
  });
  if (!added) return field;
  const records = await recordsOf(ds, workspaceId, field.object);
  await ds.query(
    `INSERT INTO record_keys (workspace_id, object, field, value, record_id)
     SELECT t.workspace_id, $2, $3, k.value, t.id FROM ${records.table} t
      CROSS JOIN LATERAL (SELECT record_key_value($4, ${rawExpression(field)}) AS value) k
      WHERE ${records.where('t.')} AND k.value IS NOT NULL
     ON CONFLICT DO NOTHING`,
    [...records.params(), field.object, field.field, field.normalize],
  );
  const raced = await duplicateValues(ds, workspaceId, field);
  if (raced.length) {
    await ds.transaction((tx) => unregister(tx, workspaceId, field));
    throw duplicatesError(field, raced);
  }
  return field;
}

/** Makes `field` no longer unique (idempotent). */
export async function makeNotUnique(ds: DataSource, workspaceId: string, actor: Actor, field: UniqueField): Promise<void> {
  await ds.transaction(async (tx) => {
    if (!(await unregister(tx, workspaceId, field))) return;
    await recordAudit(tx, {
      workspaceId,
      actor,
      action: 'field.unique',
      target: { type: 'field', label: `${field.object}.${field.field}` },
      details: { unique: false },
    });
  });
}

async function unregister(tx: EntityManager, workspaceId: string, field: UniqueField): Promise<boolean> {
  const [rows]: [unknown[], number] = await tx.query(
    'DELETE FROM unique_fields WHERE workspace_id = $1 AND object = $2 AND field = $3 RETURNING field',
    [workspaceId, field.object, field.field],
  );
  await tx.query('DELETE FROM record_keys WHERE workspace_id = $1 AND object = $2 AND field = $3', [
    workspaceId,
    field.object,
    field.field,
  ]);
  await setCustomFlag(tx, workspaceId, field, false);
  return rows.length > 0;
}

/** A custom field's `isUnique` follows its entry (and the data model's version moves, as for every field change). */
async function setCustomFlag(tx: EntityManager, workspaceId: string, field: UniqueField, unique: boolean): Promise<void> {
  if (field.builtIn) return;
  await tx.query('UPDATE custom_fields SET is_unique = $4, updated_at = now() WHERE workspace_id = $1 AND object = $2 AND name = $3', [
    workspaceId,
    field.object,
    field.field.split('.')[0],
    unique,
  ]);
  await tx.query('UPDATE workspaces SET data_model_version = data_model_version + 1 WHERE id = $1', [workspaceId]);
}
