import { isUUID } from 'class-validator';
import {
  RECORD_ACTIONS,
  RECORD_OBJECTS,
  RoleEntity,
  SETTINGS_PERMISSIONS,
  type ObjectPermissions,
  type SettingsPermission,
} from '#database/entities/index.js';
import { BadInputError, ConflictError, ErrorCode, ForbiddenError, NotFoundError } from '#errors/errors.js';
import { OBJECTS } from '#records/objects/index.js';
import type { Db } from './accounts.js';

/**
 * Custom roles for a workspace, edited on /settings/roles by a member holding ROLES.
 * The built-in Admin (is_editable = false) never changes; a role something still uses
 * cannot be deleted. Keys, tokens and members read their role on every request, so an
 * edit applies at once.
 */

export const SETTINGS_PERMISSION_LABELS: Record<SettingsPermission, string> = {
  API_KEYS_AND_WEBHOOKS: 'API keys and webhooks',
  WORKSPACE_MEMBERS: 'Workspace members',
  ROLES: 'Roles',
  DATA_MODEL: 'Data model',
  VAULT: 'Vault secrets',
};

export interface RoleInput {
  name: string;
  description: string;
  objectPermissions: ObjectPermissions;
  settingsPermissions: SettingsPermission[];
  assignableToUsers: boolean;
  assignableToApiKeys: boolean;
}

/** What a role allows, enough to compare two roles. */
export type RolePermissions = Pick<RoleEntity, 'name' | 'objectPermissions' | 'settingsPermissions'>;

export interface RoleUsage {
  members: number;
  apiKeys: number;
  serverApps: number;
  invites: number;
}

const NAME_MAX = 50;
/** Objects a role leaves out when it allows nothing on them (ObjectDeclaration.sparsePermissions). */
const SPARSE = new Set(OBJECTS.filter((o) => o.sparsePermissions).map((o) => o.plural));
const DESCRIPTION_MAX = 200;

/** Trimmed and checked; every problem is reported at once. */
export function validateRoleInput(input: RoleInput): RoleInput {
  const name = String(input.name ?? '').trim();
  const description = String(input.description ?? '').trim();
  const problems: string[] = [];
  if (!name || name.length > NAME_MAX) problems.push(`name must be 1 to ${NAME_MAX} characters`);
  if (description.length > DESCRIPTION_MAX) problems.push(`description must be at most ${DESCRIPTION_MAX} characters`);
  const objectPermissions = {} as ObjectPermissions;
  for (const object of RECORD_OBJECTS) {
    const given = input.objectPermissions?.[object] ?? ({} as Record<string, boolean>);
    objectPermissions[object] = Object.fromEntries(RECORD_ACTIONS.map((a) => [a, given[a] === true])) as ObjectPermissions[typeof object];
    const { read, create, update, delete: del } = objectPermissions[object];
    // Changing what one cannot see makes no sense, and every write answers with the record.
    if (!read && (create || update || del)) problems.push(`${object}: create, update and delete need read`);
    // Left out only when the input does not name it: a role saved on the roles page names every object.
    if (SPARSE.has(object) && !input.objectPermissions?.[object] && !read && !create && !update && !del) delete objectPermissions[object];
  }
  const unknown = (input.settingsPermissions ?? []).filter((p) => !SETTINGS_PERMISSIONS.includes(p));
  if (unknown.length) problems.push(`settingsPermissions: unknown ${unknown.join(', ')}; allowed: ${SETTINGS_PERMISSIONS.join(', ')}`);
  if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
  return {
    name,
    description,
    objectPermissions,
    settingsPermissions: SETTINGS_PERMISSIONS.filter((p) => input.settingsPermissions?.includes(p)),
    assignableToUsers: input.assignableToUsers === true,
    assignableToApiKeys: input.assignableToApiKeys === true,
  };
}

export async function findRoleById(db: Db, workspaceId: string, id: string): Promise<RoleEntity> {
  const role = isUUID(id) ? await db.getRepository(RoleEntity).findOne({ where: { workspaceId, id } }) : null;
  if (!role) throw new NotFoundError(`No role with id ${id} in this workspace`);
  return role;
}

/** Who holds each role of the workspace: members, live API keys, server apps, pending invites. */
export async function roleUsage(db: Db, workspaceId: string): Promise<Map<string, RoleUsage>> {
  const rows: { id: string; members: number; api_keys: number; server_apps: number; invites: number }[] = await db.query(
    `SELECT r.id,
            (SELECT count(*)::int FROM workspace_members m WHERE m.workspace_id = r.workspace_id AND m.role_id = r.id) AS members,
            (SELECT count(*)::int FROM api_keys k WHERE k.workspace_id = r.workspace_id AND k.role_id = r.id AND k.revoked_at IS NULL) AS api_keys,
            (SELECT count(*)::int FROM server_apps a WHERE a.workspace_id = r.workspace_id AND a.role_id = r.id) AS server_apps,
            (SELECT count(*)::int FROM workspace_invites i WHERE i.workspace_id = r.workspace_id AND i.role_id = r.id
                AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()) AS invites
       FROM roles r WHERE r.workspace_id = $1`,
    [workspaceId],
  );
  return new Map(rows.map((r) => [r.id, { members: r.members, apiKeys: r.api_keys, serverApps: r.server_apps, invites: r.invites }]));
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function describeUsage(usage: RoleUsage | undefined): string {
  if (!usage) return 'unused';
  const parts = [
    usage.members && plural(usage.members, 'member'),
    usage.apiKeys && plural(usage.apiKeys, 'API key'),
    usage.serverApps && plural(usage.serverApps, 'server app'),
    usage.invites && plural(usage.invites, 'pending invite'),
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'unused';
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  return (e?.driverError?.code ?? e?.code) === '23505';
}

async function assertNameFree(db: Db, workspaceId: string, name: string, exceptId?: string): Promise<void> {
  const taken = await db.query(
    'SELECT id FROM roles WHERE workspace_id = $1 AND lower(name) = lower($2) AND ($3::uuid IS NULL OR id <> $3)',
    [workspaceId, name, exceptId ?? null],
  );
  if (taken.length) throw new ConflictError(`A role named "${name}" already exists in this workspace`);
}

export async function createRole(db: Db, workspaceId: string, raw: RoleInput): Promise<RoleEntity> {
  const input = validateRoleInput(raw);
  await assertNameFree(db, workspaceId, input.name);
  const repo = db.getRepository(RoleEntity);
  try {
    return await repo.save(repo.create({ ...input, workspaceId, isEditable: true }));
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`A role named "${input.name}" already exists in this workspace`);
    throw err;
  }
}

function assertEditable(role: RoleEntity): void {
  if (!role.isEditable) throw new ForbiddenError(`The ${role.name} role is built in and cannot be changed or deleted`);
}

export async function updateRole(
  db: Db,
  workspaceId: string,
  id: string,
  raw: RoleInput,
): Promise<{ before: RoleEntity; after: RoleEntity }> {
  const before = await findRoleById(db, workspaceId, id);
  assertEditable(before);
  const input = validateRoleInput(raw);
  await assertNameFree(db, workspaceId, input.name, id);
  const usage = (await roleUsage(db, workspaceId)).get(id);
  if (!input.assignableToApiKeys && usage && usage.apiKeys + usage.serverApps > 0) {
    throw new ConflictError(
      `The role "${before.name}" is held by ${describeUsage({ ...usage, members: 0, invites: 0 })}; it must stay assignable to API keys`,
    );
  }
  if (!input.assignableToUsers && usage && usage.members + usage.invites > 0) {
    throw new ConflictError(
      `The role "${before.name}" is held by ${describeUsage({ ...usage, apiKeys: 0, serverApps: 0 })}; it must stay assignable to users`,
    );
  }
  const repo = db.getRepository(RoleEntity);
  try {
    await repo.update({ workspaceId, id }, { ...input });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`A role named "${input.name}" already exists in this workspace`);
    throw err;
  }
  return { before, after: await findRoleById(db, workspaceId, id) };
}

/** Refused while anything holds the role; revoked keys that used it go with it (they have no reach left). */
export async function deleteRole(db: Db, workspaceId: string, id: string): Promise<RoleEntity> {
  const role = await findRoleById(db, workspaceId, id);
  assertEditable(role);
  const usage = (await roleUsage(db, workspaceId)).get(id);
  if (usage && usage.members + usage.apiKeys + usage.serverApps + usage.invites > 0) {
    throw new ConflictError(`The role "${role.name}" is in use (${describeUsage(usage)}); give them another role first`);
  }
  await db.query('DELETE FROM api_keys WHERE workspace_id = $1 AND role_id = $2 AND revoked_at IS NOT NULL', [workspaceId, id]);
  await db.query('DELETE FROM roles WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  return role;
}

/**
 * What `target` allows beyond `actor`, as "companies.delete" / "ROLES" items. Settings
 * permissions are compared only where they can be used (members, not keys or apps).
 */
export function permissionsBeyond(actor: RolePermissions, target: RolePermissions, compareSettings: boolean): string[] {
  const extra: string[] = [];
  for (const object of RECORD_OBJECTS) {
    // A role saved before a sparse object existed has no entry for it (it cannot use it). When it
    // hands out roles it compares as holding read there, what the least built-in role (Viewer)
    // holds, so it can still hand out Viewer keys; never more, until an admin decides.
    const undecided = SPARSE.has(object) && !actor.objectPermissions[object];
    for (const action of RECORD_ACTIONS) {
      const held = actor.objectPermissions[object]?.[action] || (undecided && action === 'read');
      if (target.objectPermissions[object]?.[action] && !held) extra.push(`${object}.${action}`);
    }
  }
  if (compareSettings) extra.push(...target.settingsPermissions.filter((p) => !actor.settingsPermissions.includes(p)));
  return extra;
}

/** One can hand out (to a member, an invite, a key, an app or a role) only what one's own role allows. */
export function assertCanGrant(actor: RolePermissions, target: RolePermissions, compareSettings: boolean): void {
  const extra = permissionsBeyond(actor, target, compareSettings);
  if (extra.length) {
    throw new ForbiddenError(
      `Your role "${actor.name}" cannot hand out "${target.name}": it also allows ${extra.join(', ')}, which your role does not`,
    );
  }
}
