import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import { createField, deleteField, getField, listFields, updateField, type Actor } from '#identity/data-model.js';
import { objectNamed, type CustomField } from '#records/objects/index.js';
import type { SettingsContext } from '../settings-context.js';

/**
 * The custom fields of the current workspace (DATA_MODEL, docs/settings.md). The rules, the
 * audit entries and the data model version are the service's (#identity/data-model.js),
 * shared with the metadata API; so no `audited()` here: the service writes its own entry,
 * in its own transaction, with the signed-in member as the actor.
 */
@Injectable()
export class DataModelService {
  constructor(private readonly ds: DataSource) {}

  list(ctx: SettingsContext): Promise<CustomField[]> {
    return listFields(this.ds, ctx.workspace.id);
  }

  find(ctx: SettingsContext, id: string): Promise<CustomField> {
    return getField(this.ds, ctx.workspace.id, id);
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
    const table = objectNamed(field.object).table;
    const [row] = await this.ds.query(
      `SELECT count(*)::int AS n FROM ${table} WHERE workspace_id = $1 AND custom ? $2::text AND custom->$2::text <> 'null'::jsonb`,
      [ctx.workspace.id, field.name],
    );
    return row?.n ?? 0;
  }

  /** "companies.tier" of a field this workspace deleted, from the audit log (the notice after deleting). */
  async deletedLabel(ctx: SettingsContext, id: string): Promise<string | undefined> {
    if (!isUUID(id)) return undefined;
    const rows = await this.ds.query(
      `SELECT target_label FROM audit_log WHERE workspace_id = $1 AND action = 'field.delete' AND target_id = $2`,
      [ctx.workspace.id, id],
    );
    return rows[0]?.target_label;
  }
}

function actor(ctx: SettingsContext): Actor {
  return { userId: ctx.userId, email: ctx.email };
}
