import { isUUID } from 'class-validator';
import type { RoleEntity } from '#database/entities/index.js';
import { BadInputError, ConflictError, ErrorCode, NotFoundError } from '#errors/errors.js';
import type { Db } from './accounts.js';
import type { RolePermissions } from './roles.js';

/** A signed-in person's place in one workspace: the role they act with there. */
export interface Membership {
  userId: string;
  workspace: { id: string; name: string };
  role: RolePermissions & { id: string };
}

export interface Member {
  userId: string;
  email: string;
  roleId: string;
  roleName: string;
  joinedAt: Date;
}

export async function membershipOf(db: Db, userId: string, workspaceId: string): Promise<Membership | undefined> {
  const rows = await db.query(
    `SELECT w.id AS workspace_id, w.name AS workspace_name, r.id AS role_id, r.name AS role_name, r.object_permissions, r.settings_permissions,
            r.field_permissions
       FROM workspace_members m
       JOIN workspaces w ON w.id = m.workspace_id
       JOIN roles r ON r.workspace_id = m.workspace_id AND r.id = m.role_id
      WHERE m.user_id = $1 AND m.workspace_id = $2`,
    [userId, workspaceId],
  );
  if (!rows.length) return undefined;
  const r = rows[0];
  return {
    userId,
    workspace: { id: r.workspace_id, name: r.workspace_name },
    role: {
      id: r.role_id,
      name: r.role_name,
      objectPermissions: r.object_permissions,
      settingsPermissions: r.settings_permissions,
      fieldPermissions: r.field_permissions,
    },
  };
}

export async function listMembers(db: Db, workspaceId: string): Promise<Member[]> {
  const rows = await db.query(
    `SELECT m.user_id, u.email, r.id AS role_id, r.name AS role_name, m.created_at
       FROM workspace_members m
       JOIN users u ON u.id = m.user_id
       JOIN roles r ON r.workspace_id = m.workspace_id AND r.id = m.role_id
      WHERE m.workspace_id = $1 ORDER BY lower(u.email)`,
    [workspaceId],
  );
  return rows.map((r: Record<string, never>) => ({
    userId: r.user_id,
    email: r.email,
    roleId: r.role_id,
    roleName: r.role_name,
    joinedAt: r.created_at,
  }));
}

async function findMember(db: Db, workspaceId: string, userId: string): Promise<Member & { builtIn: boolean }> {
  if (!isUUID(userId)) throw new BadInputError(ErrorCode.INVALID_ID, `id must be a UUID; got "${userId}"`);
  // Member changes of one workspace run one at a time, so two of them cannot both remove "the other" last Admin.
  await db.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
  const rows = await db.query(
    `SELECT u.email, r.id AS role_id, r.name AS role_name, NOT r.is_editable AS built_in, m.created_at
       FROM workspace_members m
       JOIN users u ON u.id = m.user_id
       JOIN roles r ON r.workspace_id = m.workspace_id AND r.id = m.role_id
      WHERE m.workspace_id = $1 AND m.user_id = $2`,
    [workspaceId, userId],
  );
  if (!rows.length) throw new NotFoundError(`No member with id ${userId} in this workspace`);
  const r = rows[0];
  return { userId, email: r.email, roleId: r.role_id, roleName: r.role_name, joinedAt: r.created_at, builtIn: r.built_in };
}

/** The workspace keeps at least one member with the built-in Admin role, so it is never locked out. */
async function assertNotLastAdmin(db: Db, workspaceId: string, member: { email: string; builtIn: boolean }): Promise<void> {
  if (!member.builtIn) return;
  const [row] = await db.query(
    `SELECT count(*)::int AS n FROM workspace_members m JOIN roles r ON r.workspace_id = m.workspace_id AND r.id = m.role_id
      WHERE m.workspace_id = $1 AND NOT r.is_editable`,
    [workspaceId],
  );
  if (row.n <= 1) throw new ConflictError(`${member.email} is the last Admin of this workspace; make someone else Admin first`);
}

export async function changeMemberRole(
  db: Db,
  workspaceId: string,
  userId: string,
  role: RoleEntity,
): Promise<{ email: string; from: string; to: string }> {
  if (!role.assignableToUsers) throw new BadInputError(ErrorCode.VALIDATION_FAILED, `role "${role.name}" cannot be assigned to users`);
  const member = await findMember(db, workspaceId, userId);
  if (member.roleId === role.id) return { email: member.email, from: member.roleName, to: role.name };
  await assertNotLastAdmin(db, workspaceId, member);
  await db.query('UPDATE workspace_members SET role_id = $3 WHERE workspace_id = $1 AND user_id = $2', [workspaceId, userId, role.id]);
  return { email: member.email, from: member.roleName, to: role.name };
}

/** The person's OAuth access tokens for this workspace stop working at their next request (membership is read per request). */
export async function removeMember(db: Db, workspaceId: string, userId: string): Promise<{ email: string; role: string }> {
  const member = await findMember(db, workspaceId, userId);
  await assertNotLastAdmin(db, workspaceId, member);
  await db.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [workspaceId, userId]);
  // Their grants for this workspace go too, so a refresh token cannot outlive the membership.
  await db.query(
    `DELETE FROM oidc_models WHERE grant_id IN (SELECT grant_id FROM oauth_grant_workspaces WHERE workspace_id = $1 AND user_id = $2)`,
    [workspaceId, userId],
  );
  await db.query('DELETE FROM oauth_grant_workspaces WHERE workspace_id = $1 AND user_id = $2', [workspaceId, userId]);
  return { email: member.email, role: member.roleName };
}
