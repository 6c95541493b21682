import { isUUID } from 'class-validator';
import { randomBytes } from 'node:crypto';
import type { RoleEntity } from '#database/entities/index.js';
import { BadInputError, ConflictError, ErrorCode, NotFoundError } from '#errors/errors.js';
import type { Db } from './accounts.js';
import { hashSecret } from './secrets.js';

/**
 * Invite links: a random token (stored as its SHA-256) that lets one person, new or
 * existing, join a workspace with a chosen role. Single use, 7 days.
 */
export const INVITE_TTL_DAYS = 7;
const INVITE_PREFIX = 'wrsi_';

export type InviteStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export interface Invite {
  id: string;
  workspaceId: string;
  workspaceName: string;
  roleId: string;
  roleName: string;
  createdByEmail: string | null;
  createdAt: Date;
  expiresAt: Date;
  acceptedByEmail: string | null;
  status: InviteStatus;
}

const SELECT = `
  SELECT i.id, i.workspace_id, w.name AS workspace_name, i.role_id, r.name AS role_name, c.email AS created_by_email,
         i.created_at, i.expires_at, a.email AS accepted_by_email,
         CASE WHEN i.accepted_at IS NOT NULL THEN 'accepted' WHEN i.revoked_at IS NOT NULL THEN 'revoked'
              WHEN i.expires_at <= now() THEN 'expired' ELSE 'pending' END AS status
    FROM workspace_invites i
    JOIN workspaces w ON w.id = i.workspace_id
    JOIN roles r ON r.workspace_id = i.workspace_id AND r.id = i.role_id
    LEFT JOIN users c ON c.id = i.created_by_user_id
    LEFT JOIN users a ON a.id = i.accepted_by_user_id`;

function toInvite(r: Record<string, never>): Invite {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    workspaceName: r.workspace_name,
    roleId: r.role_id,
    roleName: r.role_name,
    createdByEmail: r.created_by_email,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    acceptedByEmail: r.accepted_by_email,
    status: r.status,
  };
}

export async function createInvite(
  db: Db,
  input: { workspaceId: string; role: RoleEntity; createdByUserId: string },
): Promise<{ id: string; token: string; role: string; expiresAt: Date }> {
  if (!input.role.assignableToUsers)
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `role "${input.role.name}" cannot be assigned to users`);
  const token = INVITE_PREFIX + randomBytes(32).toString('base64url');
  const [row] = await db.query(
    `INSERT INTO workspace_invites (workspace_id, token_hash, role_id, created_by_user_id, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(days => $5)) RETURNING id, expires_at`,
    [input.workspaceId, hashSecret(token), input.role.id, input.createdByUserId, INVITE_TTL_DAYS],
  );
  return { id: row.id, token, role: input.role.name, expiresAt: row.expires_at };
}

/** Pending invites first, then the latest finished ones. */
export async function listInvites(db: Db, workspaceId: string, limit = 50): Promise<Invite[]> {
  const rows = await db.query(
    `${SELECT} WHERE i.workspace_id = $1
      ORDER BY (i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()) DESC, i.created_at DESC LIMIT $2`,
    [workspaceId, limit],
  );
  return rows.map(toInvite);
}

export async function revokeInvite(db: Db, workspaceId: string, id: string): Promise<Invite> {
  if (!isUUID(id)) throw new BadInputError(ErrorCode.INVALID_ID, `id must be a UUID; got "${id}"`);
  const updated = await db.query(
    `UPDATE workspace_invites SET revoked_at = now()
      WHERE workspace_id = $1 AND id = $2 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING id`,
    [workspaceId, id],
  );
  const rows = await db.query(`${SELECT} WHERE i.workspace_id = $1 AND i.id = $2`, [workspaceId, id]);
  if (!rows.length) throw new NotFoundError(`No invite with id ${id} in this workspace`);
  if (!(Array.isArray(updated[0]) ? updated[0] : updated).length) throw new ConflictError(`The invite is already ${rows[0].status}`);
  return toInvite(rows[0]);
}

/** The invite behind a link, whatever its state; undefined for a token that was never issued. */
export async function findInvite(db: Db, token: string): Promise<Invite | undefined> {
  if (typeof token !== 'string' || !token.startsWith(INVITE_PREFIX)) return undefined;
  const rows = await db.query(`${SELECT} WHERE i.token_hash = $1`, [hashSecret(token)]);
  return rows.length ? toInvite(rows[0]) : undefined;
}

/**
 * Joins the invite's workspace with its role. Someone who is already a member keeps their
 * role, and the invite stays usable for the person it was meant for.
 */
export async function acceptInvite(db: Db, token: string, userId: string): Promise<{ invite: Invite; alreadyMember: boolean }> {
  const invite = await findInvite(db, token);
  if (!invite) throw new NotFoundError('This invite link is not valid');
  // One acceptance per invite, even when two people open the link at once.
  await db.query('SELECT 1 FROM workspace_invites WHERE workspace_id = $1 AND id = $2 FOR UPDATE', [invite.workspaceId, invite.id]);
  const current = (await findInvite(db, token))!;
  if (current.status !== 'pending')
    throw new ConflictError(`This invite link is ${current.status === 'accepted' ? 'already used' : current.status}`);
  const member = await db.query('SELECT 1 FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [invite.workspaceId, userId]);
  if (member.length) return { invite: current, alreadyMember: true };
  const [role] = await db.query('SELECT assignable_to_users FROM roles WHERE workspace_id = $1 AND id = $2', [
    invite.workspaceId,
    invite.roleId,
  ]);
  if (!role?.assignable_to_users)
    throw new ConflictError(`The role "${invite.roleName}" can no longer be given to members; ask for a new invite`);
  await db.query('INSERT INTO workspace_members (workspace_id, user_id, role_id) VALUES ($1, $2, $3)', [
    invite.workspaceId,
    userId,
    invite.roleId,
  ]);
  await db.query('UPDATE workspace_invites SET accepted_at = now(), accepted_by_user_id = $3 WHERE workspace_id = $1 AND id = $2', [
    invite.workspaceId,
    invite.id,
    userId,
  ]);
  return { invite: { ...current, status: 'accepted' }, alreadyMember: false };
}
