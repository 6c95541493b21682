import { Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import { createField, deleteField, getField, listFields, updateField, type Actor } from '#identity/data-model.js';
import {
  createObject,
  deleteObject,
  getObject,
  listObjects,
  objectNamed,
  recordsOf,
  sweepDeletedObjects,
  updateObject,
} from '#identity/objects.js';
import type { CustomField, WorkspaceObject } from '#records/objects/index.js';
import type { SettingsContext } from '../settings-context.js';

const log = new Logger('DataModelSettings');

/**
 * The objects and custom fields of the current workspace (DATA_MODEL, docs/settings.md). The
 * rules, the audit entries and the data model version are the services' (#identity/data-model.js,
 * #identity/objects.js), shared with the metadata API; so no `audited()` here: each service
 * writes its own entry, in its own transaction, with the signed-in member as the actor.
 */
@Injectable()
export class DataModelService {
  constructor(private readonly ds: DataSource) {}

  list(ctx: SettingsContext): Promise<CustomField[]> {
    return listFields(this.ds, ctx.workspace.id);
  }

  /** Every object of the workspace, standard first, then its own by creation (active or not). */
  objects(ctx: SettingsContext): Promise<WorkspaceObject[]> {
    return listObjects(this.ds, ctx.workspace.id);
  }

  find(ctx: SettingsContext, id: string): Promise<CustomField> {
    return getField(this.ds, ctx.workspace.id, id);
  }

  /** The object a field belongs to (its page names it by its labels). */
  async objectOf(ctx: SettingsContext, field: CustomField): Promise<WorkspaceObject> {
    const object = await objectNamed(this.ds, ctx.workspace.id, field.object);
    if (!object) throw new Error(`the field ${field.id} names no object of its workspace`);
    return object;
  }

  create(ctx: SettingsContext, body: Record<string, unknown>): Promise<CustomField> {
    return createField(this.ds, ctx.workspace.id, actor(ctx), body);
  }

  update(ctx: SettingsContext, id: string, body: Record<string, unknown>): Promise<CustomField> {
    return updateField(this.ds, ctx.workspace.id, actor(ctx), id, body);
  }

  delete(ctx: SettingsContext, id: string): Promise<{ id: string }> {
    return deleteField(this.ds, ctx.workspace.id, actor(ctx), id);
  }

  /** How many records (deleted ones too) hold a value of the field: what deleting it deletes. */
  async valuesHeld(ctx: SettingsContext, field: CustomField): Promise<number> {
    const records = await recordsOf(this.ds, ctx.workspace.id, field.object);
    const [row] = await this.ds.query(
      `SELECT count(*)::int AS n FROM ${records.table} WHERE ${records.where('', 'any')} AND custom ? $2::text AND custom->$2::text <> 'null'::jsonb`,
      [...records.params(), field.name],
    );
    return row?.n ?? 0;
  }

  /** "companies.tier" of a field this workspace deleted, from the audit log (the notice after deleting). */
  deletedLabel(ctx: SettingsContext, id: string): Promise<string | undefined> {
    return this.deletedTarget(ctx, 'field.delete', id);
  }

  findObject(ctx: SettingsContext, id: string): Promise<WorkspaceObject> {
    return getObject(this.ds, ctx.workspace.id, id);
  }

  createObject(ctx: SettingsContext, body: Record<string, unknown>): Promise<WorkspaceObject> {
    return createObject(this.ds, ctx.workspace.id, actor(ctx), body);
  }

  updateObject(ctx: SettingsContext, id: string, body: Record<string, unknown>): Promise<WorkspaceObject> {
    return updateObject(this.ds, ctx.workspace.id, actor(ctx), id, body);
  }

  /** Deletes an inactive custom object at once; its records go in the background, starting now (the records API also sweeps every 30 s). */
  async deleteObject(ctx: SettingsContext, id: string): Promise<{ id: string }> {
    const deleted = await deleteObject(this.ds, ctx.workspace.id, actor(ctx), id);
    sweepDeletedObjects(this.ds).catch((err: Error) =>
      log.warn(`sweeping a deleted object's records failed (${err.message}); the records API sweeps again within 30 s`),
    );
    return deleted;
  }

  /** The live records of an object (its count, kept by the record triggers): what deleting it deletes. */
  async recordCount(ctx: SettingsContext, object: WorkspaceObject): Promise<number> {
    const [row] = await this.ds.query(
      'SELECT coalesce(sum(live_count), 0)::bigint AS n FROM record_counts WHERE workspace_id = $1 AND object = $2',
      [ctx.workspace.id, object.namePlural],
    );
    return Number(row?.n ?? 0);
  }

  /** The fields that may name the object's records: its active TEXT and FULL_NAME fields. */
  async identifiers(ctx: SettingsContext, object: WorkspaceObject): Promise<string[]> {
    const rows: { name: string }[] = await this.ds.query(
      `SELECT name FROM custom_fields WHERE workspace_id = $1 AND object = $2 AND is_active AND type IN ('TEXT', 'FULL_NAME')
        ORDER BY created_at, id`,
      [ctx.workspace.id, object.namePlural],
    );
    return rows.map((r) => r.name);
  }

  /** The plural name of an object this workspace deleted, from the audit log (the notice after deleting). */
  deletedObjectName(ctx: SettingsContext, id: string): Promise<string | undefined> {
    return this.deletedTarget(ctx, 'object.delete', id);
  }

  private async deletedTarget(ctx: SettingsContext, action: string, id: string): Promise<string | undefined> {
    if (!isUUID(id)) return undefined;
    const rows = await this.ds.query(`SELECT target_label FROM audit_log WHERE workspace_id = $1 AND action = $2 AND target_id = $3`, [
      ctx.workspace.id,
      action,
      id,
    ]);
    return rows[0]?.target_label;
  }
}

function actor(ctx: SettingsContext): Actor {
  return { userId: ctx.userId, email: ctx.email };
}
