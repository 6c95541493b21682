import { isUUID } from 'class-validator';
import {
  RECORD_ACTIONS,
  RECORD_OBJECTS,
  RoleEntity,
  SETTINGS_PERMISSIONS,
  type FieldPermissions,
  type ObjectPermissions,
  type SettingsPermission,
} from '#database/entities/index.js';
import { BadInputError, ConflictError, ErrorCode, ForbiddenError, NotFoundError } from '#errors/errors.js';
import { relationSettings } from '#records/field-types/index.js';
import { OBJECTS, relationFields } from '#records/objects/index.js';
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
  /** Fields the role may not read or update (docs/authentication.md, "Field permissions"); absent: none. */
  fieldPermissions?: FieldPermissions;
  settingsPermissions: SettingsPermission[];
  assignableToUsers: boolean;
  assignableToApiKeys: boolean;
}

/** What a role allows, enough to compare two roles. */
export type RolePermissions = Pick<RoleEntity, 'name' | 'objectPermissions' | 'settingsPermissions'> & {
  fieldPermissions?: FieldPermissions;
};

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

/** Fields every record has, which a role can never hide or protect: records would not be records without them. */
export const SYSTEM_FIELDS: readonly string[] = ['id', 'createdAt', 'updatedAt', 'deletedAt'];
/** More field names than any object has: a body naming more is refused before its names are looked at. */
const MAX_FIELD_RULES = 500;
/** Problems reported for one body, at most (a body of 10 000 unknown names is one message, not 10 000). */
const MAX_FIELD_PROBLEMS = 10;

/** The fields a role may restrict on each object: built-in fields other than links (decision 39). */
const RESTRICTABLE: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  OBJECTS.map((o) => [o.plural, new Set(o.fields.filter((f) => !relationSettings(f)).map((f) => f.name))]),
);
/** The built-in fields of `object` a role may restrict (with the workspace's custom fields, decision 39). */
export const restrictableBuiltins = (object: string): ReadonlySet<string> => RESTRICTABLE.get(object) ?? new Set();
const LINKS: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  OBJECTS.map((o) => [o.plural, new Set(relationFields(o).map((f) => f.name))]),
);

/** A workspace's custom field names by object (active or not): what its roles' field permissions may name besides built-in fields. */
export type CustomFieldNames = ReadonlyMap<string, ReadonlySet<string>>;

export async function customFieldNames(db: Db, workspaceId: string): Promise<CustomFieldNames> {
  // As records name them: a relation's MANY_TO_ONE side by its id `<name>Id`; its inverse holds no value (docs/decisions/0066-relations.md).
  const rows: { object: string; name: string }[] = await db.query(
    `SELECT object, CASE WHEN type = 'RELATION' THEN name || 'Id' ELSE name END AS name FROM custom_fields
      WHERE workspace_id = $1 AND NOT (type = 'RELATION' AND settings->>'relationType' = 'ONE_TO_MANY')`,
    [workspaceId],
  );
  const names = new Map<string, Set<string>>();
  for (const row of rows) names.set(row.object, (names.get(row.object) ?? new Set()).add(row.name));
  return names;
}

const isPlain = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Field permissions checked against the objects, their built-in fields and the workspace's
 * custom fields, and reduced to restrictions (`{read: true, update: true}` is the default
 * and is not stored). Problems go to `problems`.
 */
function checkFieldPermissions(
  raw: unknown,
  custom: CustomFieldNames,
  problems: string[],
  /** The workspace's own objects (plural names): their fields are all custom ones. */
  objects: ReadonlySet<string> = new Set(),
): FieldPermissions {
  const result: FieldPermissions = {};
  if (raw === undefined || raw === null) return result;
  if (!isPlain(raw)) {
    problems.push('fieldPermissions must be an object: {object: {field: {read, update}}}');
    return result;
  }
  const found: string[] = [];
  for (const [object, fields] of Object.entries(raw)) {
    // A custom object's fields are custom fields, all restrictable.
    if (!RECORD_OBJECTS.includes(object) && !objects.has(object) && !custom.has(object)) {
      found.push(
        `fieldPermissions: unknown object ${JSON.stringify(object.slice(0, 64))}; objects: ${[...RECORD_OBJECTS, ...objects].join(', ')}`,
      );
      continue;
    }
    if (!isPlain(fields)) {
      found.push(`fieldPermissions.${object} must be an object of fields`);
      continue;
    }
    const names = Object.keys(fields);
    if (names.length > MAX_FIELD_RULES) {
      found.push(`fieldPermissions.${object} names ${names.length} fields; at most ${MAX_FIELD_RULES}`);
      continue;
    }
    for (const name of names) {
      if (found.length > MAX_FIELD_PROBLEMS) break;
      const rule = fields[name];
      const at = `fieldPermissions.${object}.${name.slice(0, 64)}`;
      if (SYSTEM_FIELDS.includes(name)) {
        found.push(`${at}: ${name} is on every record and cannot be restricted`);
        continue;
      }
      if (LINKS.get(object)?.has(name)) {
        found.push(`${at}: links are governed by the permissions on the linked object, not per field`);
        continue;
      }
      if (!restrictableBuiltins(object).has(name) && !custom.get(object)?.has(name)) {
        found.push(`${at}: ${object} has no field ${JSON.stringify(name.slice(0, 64))} in this workspace`);
        continue;
      }
      if (!isPlain(rule) || Object.keys(rule).some((k) => k !== 'read' && k !== 'update')) {
        found.push(`${at} must be {read?: boolean, update?: boolean}`);
        continue;
      }
      if ((rule.read !== undefined && typeof rule.read !== 'boolean') || (rule.update !== undefined && typeof rule.update !== 'boolean')) {
        found.push(`${at}: read and update must be true or false`);
        continue;
      }
      const read = rule.read !== false;
      const update = rule.update !== false;
      // Changing what one cannot see makes no sense, as for objects.
      if (!read && rule.update === true) {
        found.push(`${at}: update needs read`);
        continue;
      }
      if (read && update) continue;
      (result[object] ??= {})[name] = { read, update: read && update };
    }
  }
  if (found.length > MAX_FIELD_PROBLEMS) found.splice(MAX_FIELD_PROBLEMS, found.length, 'fieldPermissions: more problems not shown');
  problems.push(...found);
  return result;
}

/**
 * Trimmed and checked; every problem is reported at once. Field permissions may name the
 * workspace's custom fields given in `custom` (roleInputFor reads them).
 */
/**
 * The key of `object_permissions` that stands for every object a role does not name (the
 * built-in roles hold their company permissions there, so a new custom object is theirs as
 * companies are; docs/authentication.md "Roles").
 */
export const OTHER_OBJECTS = '*';

/** The plural names of a workspace's custom objects (active or not): what object permissions may name besides the standard ones. */
export async function customObjectNames(db: Db, workspaceId: string): Promise<Set<string>> {
  const rows: { name_plural: string }[] = await db.query('SELECT name_plural FROM objects WHERE workspace_id = $1 AND is_custom', [
    workspaceId,
  ]);
  return new Set(rows.map((r) => r.name_plural));
}

const checkActions = (object: string, given: Record<string, unknown> | undefined, problems: string[]) => {
  const actions = Object.fromEntries(RECORD_ACTIONS.map((a) => [a, given?.[a] === true])) as ObjectPermissions[string];
  // Changing what one cannot see makes no sense, and every write answers with the record.
  if (!actions.read && (actions.create || actions.update || actions.delete))
    problems.push(`${object}: create, update and delete need read`);
  return actions;
};

export function validateRoleInput(
  input: RoleInput,
  custom: CustomFieldNames = new Map(),
  objects: ReadonlySet<string> = new Set(),
): RoleInput {
  const name = String(input.name ?? '').trim();
  const description = String(input.description ?? '').trim();
  const problems: string[] = [];
  if (!name || name.length > NAME_MAX) problems.push(`name must be 1 to ${NAME_MAX} characters`);
  if (description.length > DESCRIPTION_MAX) problems.push(`description must be at most ${DESCRIPTION_MAX} characters`);
  const objectPermissions = {} as ObjectPermissions;
  for (const object of RECORD_OBJECTS) {
    objectPermissions[object] = checkActions(object, input.objectPermissions?.[object], problems);
    const { read, create, update, delete: del } = objectPermissions[object];
    // Left out only when the input does not name it: a role saved on the roles page names every object.
    if (SPARSE.has(object) && !input.objectPermissions?.[object] && !read && !create && !update && !del) delete objectPermissions[object];
  }
  // The workspace's own objects, and every other object (OTHER_OBJECTS), only where named.
  for (const object of Object.keys(input.objectPermissions ?? {})) {
    if (RECORD_OBJECTS.includes(object)) continue;
    if (object !== OTHER_OBJECTS && !objects.has(object)) {
      problems.push(`objectPermissions: unknown object ${JSON.stringify(object.slice(0, 64))}`);
      continue;
    }
    objectPermissions[object] = checkActions(object, input.objectPermissions[object], problems);
  }
  const fieldPermissions = checkFieldPermissions(input.fieldPermissions, custom, problems, objects);
  if (input.settingsPermissions !== undefined && !Array.isArray(input.settingsPermissions)) {
    problems.push('settingsPermissions must be a list of permission names');
    input = { ...input, settingsPermissions: [] };
  }
  const unknown = (input.settingsPermissions ?? []).filter((p) => !SETTINGS_PERMISSIONS.includes(p));
  if (unknown.length) problems.push(`settingsPermissions: unknown ${unknown.join(', ')}; allowed: ${SETTINGS_PERMISSIONS.join(', ')}`);
  if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
  return {
    name,
    description,
    objectPermissions,
    fieldPermissions,
    settingsPermissions: SETTINGS_PERMISSIONS.filter((p) => input.settingsPermissions?.includes(p)),
    assignableToUsers: input.assignableToUsers === true,
    assignableToApiKeys: input.assignableToApiKeys === true,
  };
}

/** validateRoleInput with the workspace's custom fields, which field permissions may name. */
export async function roleInputFor(db: Db, workspaceId: string, input: RoleInput): Promise<RoleInput> {
  const custom = input.fieldPermissions && Object.keys(input.fieldPermissions).length ? await customFieldNames(db, workspaceId) : new Map();
  const named = [...Object.keys(input.objectPermissions ?? {}), ...Object.keys(input.fieldPermissions ?? {})].some(
    (o) => !RECORD_OBJECTS.includes(o) && o !== OTHER_OBJECTS,
  );
  return validateRoleInput(input, custom, named ? await customObjectNames(db, workspaceId) : new Set());
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
  const input = await roleInputFor(db, workspaceId, raw);
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
  const input = await roleInputFor(db, workspaceId, raw);
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
  // The workspace's own objects and every other one: what a role does not name, OTHER_OBJECTS holds. A role
  // saved before either existed names neither, and compares as holding read there, as for a sparse object.
  for (const object of Object.keys(target.objectPermissions)) {
    if (RECORD_OBJECTS.includes(object)) continue;
    const own = actor.objectPermissions[object] ?? actor.objectPermissions[OTHER_OBJECTS];
    for (const action of RECORD_ACTIONS) {
      const held = own ? own[action] : action === 'read';
      if (target.objectPermissions[object]?.[action] && !held) extra.push(`${object}.${action}`);
    }
  }
  extra.push(...fieldsBeyond(actor, target));
  if (compareSettings) extra.push(...target.settingsPermissions.filter((p) => !actor.settingsPermissions.includes(p)));
  return extra;
}

/**
 * Fields `target` lets read or update on an object it may read (or write) where `actor` may
 * not: "opportunities.amount.read". Nothing to compare when the actor has no restriction.
 */
function fieldsBeyond(actor: RolePermissions, target: RolePermissions): string[] {
  const extra: string[] = [];
  for (const [object, fields] of Object.entries(actor.fieldPermissions ?? {})) {
    const held = target.objectPermissions[object];
    for (const [name, rule] of Object.entries(fields)) {
      const theirs = target.fieldPermissions?.[object]?.[name];
      if (!rule.read && held?.read && theirs?.read !== false) extra.push(`${object}.${name}.read`);
      else if (!rule.update && (held?.create || held?.update) && !(theirs && !theirs.update)) extra.push(`${object}.${name}.update`);
    }
  }
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
