import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import { listRoles } from '#identity/accounts.js';
import {
  SETTINGS_PERMISSION_LABELS,
  assertCanGrant,
  createRole,
  deleteRole,
  findRoleById,
  roleUsage,
  updateRole,
  roleInputFor,
  type RoleInput,
  type RoleUsage,
} from '#identity/roles.js';
import { RECORD_ACTIONS, RECORD_OBJECTS, type RoleEntity } from '#database/entities/index.js';
import { listObjects } from '#identity/objects.js';
import { audited } from '../audited.js';
import { relationSettings } from '#records/field-types/index.js';
import { objectNamed, type WorkspaceObject } from '#records/objects/index.js';
import type { SettingsContext } from '../settings-context.js';

export interface RoleWithUsage {
  role: RoleEntity;
  usage: RoleUsage;
}

const NO_USAGE: RoleUsage = { members: 0, apiKeys: 0, serverApps: 0, invites: 0 };

/** Roles of the current workspace (ROLES permission); the new permissions never exceed the editor's own. */
@Injectable()
export class RolesService {
  constructor(private readonly ds: DataSource) {}

  async list(ctx: SettingsContext): Promise<RoleWithUsage[]> {
    const [roles, usage] = await Promise.all([listRoles(this.ds, ctx.workspace.id), roleUsage(this.ds, ctx.workspace.id)]);
    return roles.map((role) => ({ role, usage: usage.get(role.id) ?? NO_USAGE }));
  }

  async find(ctx: SettingsContext, id: string): Promise<RoleWithUsage> {
    const role = await findRoleById(this.ds, ctx.workspace.id, id);
    return { role, usage: (await roleUsage(this.ds, ctx.workspace.id)).get(id) ?? NO_USAGE };
  }

  /** Every object of the workspace (standard first, then its own, active or not): the rows of the roles page and form. */
  objects(ctx: SettingsContext): Promise<WorkspaceObject[]> {
    return listObjects(this.ds, ctx.workspace.id);
  }

  /**
   * The fields the roles form lists per object: a standard object's built-in fields a role may
   * restrict, then the workspace's custom fields (a custom object's fields are all custom).
   */
  async formFields(ctx: SettingsContext, objects: WorkspaceObject[]): Promise<Record<string, { name: string; label: string }[]>> {
    const custom: { object: string; name: string; label: string }[] = await this.ds.query(
      'SELECT object, name, label FROM custom_fields WHERE workspace_id = $1 ORDER BY created_at, id',
      [ctx.workspace.id],
    );
    return Object.fromEntries(
      objects.map((o) => [
        o.namePlural,
        [
          ...(o.isCustom ? [] : objectNamed(o.namePlural).fields)
            .filter((f) => !relationSettings(f))
            .map((f) => ({ name: f.name, label: humanize(f.name) })),
          ...custom.filter((f) => f.object === o.namePlural).map((f) => ({ name: f.name, label: f.label })),
        ],
      ]),
    );
  }

  /** The name of a role this workspace deleted, from the audit log (for the notice after deleting). */
  async deletedName(ctx: SettingsContext, id: string): Promise<string | undefined> {
    if (!isUUID(id)) return undefined;
    const rows = await this.ds.query(
      `SELECT target_label FROM audit_log WHERE workspace_id = $1 AND action = 'role.delete' AND target_id = $2`,
      [ctx.workspace.id, id],
    );
    return rows[0]?.target_label;
  }

  create(ctx: SettingsContext, raw: RoleInput): Promise<RoleEntity> {
    return audited(this.ds, ctx, async (tx) => {
      const input = await roleInputFor(tx, ctx.workspace.id, raw);
      assertCanGrant(ctx.role, input, true);
      const role = await createRole(tx, ctx.workspace.id, input);
      return {
        result: role,
        audit: { action: 'role.create', target: { type: 'role', id: role.id, label: role.name }, details: { permissions: describe(role) } },
      };
    });
  }

  update(ctx: SettingsContext, id: string, raw: RoleInput): Promise<RoleEntity> {
    return audited(this.ds, ctx, async (tx) => {
      const input = await roleInputFor(tx, ctx.workspace.id, raw);
      assertCanGrant(ctx.role, input, true);
      const { before, after } = await updateRole(tx, ctx.workspace.id, id, input);
      const changes = diff(before, after);
      return {
        result: after,
        audit: changes.length
          ? { action: 'role.update', target: { type: 'role', id, label: after.name }, details: { changes } }
          : undefined,
      };
    });
  }

  delete(ctx: SettingsContext, id: string): Promise<RoleEntity> {
    return audited(this.ds, ctx, async (tx) => {
      const role = await deleteRole(tx, ctx.workspace.id, id);
      return {
        result: role,
        audit: { action: 'role.delete', target: { type: 'role', id, label: role.name }, details: { permissions: describe(role) } },
      };
    });
  }
}

/** "companies.read", …, "ROLES", "assignable to users": what a role allows, as flat items. */
function describe(
  role: Pick<RoleEntity, 'objectPermissions' | 'settingsPermissions' | 'assignableToUsers' | 'assignableToApiKeys'> & {
    fieldPermissions?: RoleEntity['fieldPermissions'];
  },
): string[] {
  return [
    // The standard objects, then the others the role names (the workspace's own, "*" for every other object) by name.
    ...[
      ...RECORD_OBJECTS,
      ...Object.keys(role.objectPermissions)
        .filter((o) => !RECORD_OBJECTS.includes(o))
        .sort(),
    ].flatMap((o) => RECORD_ACTIONS.filter((a) => role.objectPermissions[o]?.[a]).map((a) => `${o}.${a}`)),
    ...Object.entries(role.fieldPermissions ?? {}).flatMap(([o, fields]) =>
      Object.entries(fields).map(([f, rule]) => `${o}.${f} ${rule.read ? 'read only' : 'hidden'}`),
    ),
    ...role.settingsPermissions.map((p) => SETTINGS_PERMISSION_LABELS[p]),
    ...(role.assignableToUsers ? ['assignable to users'] : []),
    ...(role.assignableToApiKeys ? ['assignable to API keys'] : []),
  ];
}

function diff(before: RoleEntity, after: RoleEntity): string[] {
  const changes: string[] = [];
  if (before.name !== after.name) changes.push(`name: ${before.name} → ${after.name}`);
  if (before.description !== after.description) changes.push('description changed');
  const was = new Set(describe(before));
  const now = new Set(describe(after));
  for (const item of now) if (!was.has(item)) changes.push(`+ ${item}`);
  for (const item of was) if (!now.has(item)) changes.push(`− ${item}`);
  return changes;
}

/** `closeDate` → "Close date". */
function humanize(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
