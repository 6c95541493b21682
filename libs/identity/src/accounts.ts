import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { isUUID } from 'class-validator';
import { createHash } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import {
  RECORD_OBJECTS,
  ApiKeyEntity,
  RoleEntity,
  SETTINGS_PERMISSIONS,
  UserEntity,
  WorkspaceEntity,
  WorkspaceMemberEntity,
  type ObjectPermissions,
} from '#database/entities/index.js';
import { BadInputError, ConflictError, ErrorCode, NotFoundError } from '#errors/errors.js';
import { capExpiry } from './api-key-expiry.js';
import { hashSecret, newApiKeySecret } from './secrets.js';

/**
 * Workspaces, users, members, roles and API keys: used by the operator CLI, the first-start
 * demo and the settings pages. Never reachable with an API key or OAuth token.
 */

/** A data source, or the entity manager of a transaction the caller runs. */
export type Db = DataSource | EntityManager;

function allObjects(read: boolean, write: boolean, destroy = false): ObjectPermissions {
  const actions = { read, create: write, update: write, delete: write, ...(destroy ? { destroy } : {}) };
  // `*`: every object the role does not name, the workspace's own objects among them (roles.ts OTHER_OBJECTS).
  return Object.fromEntries([...RECORD_OBJECTS, '*'].map((object) => [object, { ...actions }]));
}

export const DEFAULT_ROLES = [
  {
    name: 'Admin',
    description: 'Everything, including workspace settings',
    // `destroy` (erasure: docs/rest.md "Erasure") is Admin's alone; other roles cannot hold it.
    objectPermissions: allObjects(true, true, true),
    settingsPermissions: [...SETTINGS_PERMISSIONS],
    assignableToUsers: true,
    assignableToApiKeys: true,
    isEditable: false,
  },
  {
    name: 'Member',
    description: 'All record actions, no settings',
    objectPermissions: allObjects(true, true),
    settingsPermissions: [],
    assignableToUsers: true,
    assignableToApiKeys: false,
    isEditable: true,
  },
  {
    name: 'Viewer',
    description: 'Read only',
    objectPermissions: allObjects(true, false),
    settingsPermissions: [],
    assignableToUsers: true,
    assignableToApiKeys: true,
    isEditable: true,
  },
] as const;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** OWASP Password Storage Cheat Sheet: argon2id, 19 MiB, 2 iterations, 1 lane. */
export function hashPassword(password: string): Promise<string> {
  return argon2Hash(password, { memoryCost: 19456, timeCost: 2, parallelism: 1 });
}

export async function createWorkspace(ds: DataSource | EntityManager, name: string): Promise<WorkspaceEntity> {
  const trimmed = name?.trim();
  if (!trimmed || trimmed.length > 200) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'name must be 1 to 200 characters');
  }
  const manager = 'manager' in ds ? ds.manager : ds;
  return manager.transaction(async (tx) => {
    const taken = await tx.query('SELECT 1 FROM workspaces WHERE lower(name) = lower($1)', [trimmed]);
    if (taken.length) throw new ConflictError(`A workspace named "${trimmed}" already exists`);
    const workspace = await tx.save(WorkspaceEntity, tx.create(WorkspaceEntity, { name: trimmed }));
    await tx.save(
      RoleEntity,
      DEFAULT_ROLES.map((role) =>
        tx.create(RoleEntity, { ...role, settingsPermissions: [...role.settingsPermissions], workspaceId: workspace.id }),
      ),
    );
    return workspace;
  });
}

/** Every workspace, for the operator (`workspace:list`), with its members and the API keys that still work. */
export function listWorkspaces(ds: Db): Promise<{ id: string; name: string; createdAt: Date; members: number; apiKeys: number }[]> {
  return ds.query(
    `SELECT w.id, w.name, w.created_at AS "createdAt",
            (SELECT count(*)::int FROM workspace_members m WHERE m.workspace_id = w.id) AS members,
            (SELECT count(*)::int FROM api_keys k WHERE k.workspace_id = w.id AND k.revoked_at IS NULL AND k.expires_at > now()) AS "apiKeys"
       FROM workspaces w
      ORDER BY lower(w.name), w.id`,
  );
}

export async function findWorkspace(ds: DataSource, idOrName: string): Promise<WorkspaceEntity> {
  const rows = await ds.query(
    isUUID(idOrName) ? 'SELECT id, name FROM workspaces WHERE id = $1' : 'SELECT id, name FROM workspaces WHERE lower(name) = lower($1)',
    [idOrName],
  );
  if (!rows.length) throw new NotFoundError(`No workspace with id or name "${idOrName}"`);
  return rows[0];
}

export async function findRole(ds: Db, workspaceId: string, name: string): Promise<RoleEntity> {
  const role = await ds
    .getRepository(RoleEntity)
    .createQueryBuilder('r')
    .where('r.workspace_id = :workspaceId AND lower(r.name) = lower(:name)', { workspaceId, name })
    .getOne();
  if (!role) {
    const names = (await listRoles(ds, workspaceId)).map((r) => r.name).join(', ');
    throw new NotFoundError(`No role "${name}" in this workspace (roles: ${names})`);
  }
  return role;
}

export function listRoles(ds: Db, workspaceId: string): Promise<RoleEntity[]> {
  return ds.getRepository(RoleEntity).find({ where: { workspaceId }, order: { createdAt: 'ASC', name: 'ASC' } });
}

/** The one password rule: the sign-up pages state it and set `minlength` from it. */
export const PASSWORD_MIN_LENGTH = 8;

/** What a new user's e-mail and password must be, before anyone looks whether the e-mail is taken. */
function checkNewUser(email: string, password: string): void {
  if (!EMAIL.test(email ?? '')) throw new BadInputError(ErrorCode.VALIDATION_FAILED, `email must be an e-mail address; got "${email}"`);
  checkPassword(password);
}

export async function createUser(
  ds: DataSource,
  email: string,
  password: string,
  manager: EntityManager = ds.manager,
): Promise<UserEntity> {
  checkNewUser(email, password);
  const taken = await manager.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [email]);
  if (taken.length) throw new ConflictError(`A user with e-mail ${email} already exists`);
  const [user] = await manager.query('INSERT INTO users (email, password_hash) VALUES ($1, $2) RETURNING id, email, created_at', [
    email,
    await hashPassword(password),
  ]);
  return { id: user.id, email: user.email, createdAt: user.created_at } as UserEntity;
}

/** The one password rule, for sign-up, user:create and user:set-password alike. */
export function checkPassword(password: string | undefined): void {
  if (!password || password.length < PASSWORD_MIN_LENGTH) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `password must be at least ${PASSWORD_MIN_LENGTH} characters`);
  }
}

/**
 * A new password for an existing account (the operator's `user:set-password`): hashed as
 * at sign-up; the person's signed-in browser sessions (settings pages and the
 * authorization server's) end, and the account's sign-in failure count starts again.
 * OAuth grants and API keys are left alone.
 */
export async function setPassword(ds: DataSource, email: string, password: string): Promise<{ id: string; email: string }> {
  checkPassword(password);
  const user = await findUserByEmail(ds, email);
  const passwordHash = await hashPassword(password);
  await ds.transaction(async (tx) => {
    await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [user.id, passwordHash]);
    await tx.query('DELETE FROM web_sessions WHERE user_id = $1', [user.id]);
    await tx.query(`DELETE FROM oidc_models WHERE model = 'Session' AND payload->>'accountId' = $1`, [user.id]);
    // The sign-in throttle's per-account counter (apps/auth-server/src/sessions/sign-in-throttle.ts).
    const accountKey = createHash('sha256').update(user.email.trim().toLowerCase()).digest('hex');
    await tx.query('DELETE FROM auth_throttle WHERE key = $1', [`signin-account:${accountKey}`]);
  });
  return { id: user.id, email: user.email };
}

export async function findUserByEmail(ds: DataSource, email: string): Promise<UserEntity> {
  const rows = await ds.query('SELECT id, email FROM users WHERE lower(email) = lower($1)', [email]);
  if (!rows.length) throw new NotFoundError(`No user with e-mail ${email}`);
  return rows[0];
}

export async function addMember(ds: Db, workspaceId: string, userId: string, role: RoleEntity): Promise<void> {
  if (!role.assignableToUsers) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `role "${role.name}" cannot be assigned to users`);
  }
  const existing = await ds.query('SELECT 1 FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [workspaceId, userId]);
  if (existing.length) throw new ConflictError('The user is already a member of this workspace');
  await ds.getRepository(WorkspaceMemberEntity).insert({ workspaceId, userId, roleId: role.id });
}

export interface CreatedApiKey {
  id: string;
  name: string;
  role: string;
  expiresAt: string;
  /** Shown once; only its hash is stored. */
  secret: string;
}

export async function createApiKey(
  ds: Db,
  input: { workspaceId: string; role: RoleEntity; name: string; expiresAt: Date; createdByUserId?: string },
): Promise<CreatedApiKey> {
  const name = input.name?.trim();
  if (!name || name.length > 100) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'name must be 1 to 100 characters');
  if (!input.role.assignableToApiKeys) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `role "${input.role.name}" cannot be assigned to API keys`);
  }
  if (input.expiresAt.getTime() <= Date.now()) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'expiresAt must be in the future');
  }
  const secret = newApiKeySecret();
  const repo = ds.getRepository(ApiKeyEntity);
  const saved = await repo.save(
    repo.create({
      workspaceId: input.workspaceId,
      name,
      roleId: input.role.id,
      secretHash: hashSecret(secret),
      expiresAt: capExpiry(input.expiresAt),
      createdByUserId: input.createdByUserId ?? null,
    }),
  );
  return { id: saved.id, name: saved.name, role: input.role.name, expiresAt: saved.expiresAt.toISOString(), secret };
}

/** Revokes a key (of that workspace only, when one is given); revoking twice keeps the first time. */
export async function revokeApiKey(ds: Db, id: string, workspaceId?: string): Promise<{ id: string; revokedAt: string }> {
  if (!isUUID(id)) throw new BadInputError(ErrorCode.INVALID_ID, `id must be a UUID; got "${id}"`);
  const rows = await ds.query(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
      WHERE id = $1 AND ($2::uuid IS NULL OR workspace_id = $2) RETURNING id, revoked_at`,
    [id, workspaceId ?? null],
  );
  const row = rows[0]?.[0] ?? rows[0];
  if (!row?.id) throw new NotFoundError(`No API key with id ${id}`);
  return { id: row.id, revokedAt: new Date(row.revoked_at).toISOString() };
}

/** The user for these credentials, or undefined; the same time is spent when the e-mail is unknown. */
export async function verifyCredentials(
  ds: DataSource,
  email: string,
  password: string,
): Promise<{ id: string; email: string } | undefined> {
  const rows = await ds.query('SELECT id, email, password_hash FROM users WHERE lower(email) = lower($1)', [email ?? '']);
  const hash = rows[0]?.password_hash ?? (await dummyHash());
  const ok = await argon2Verify(hash, password ?? '').catch(() => false);
  return ok && rows.length ? { id: rows[0].id, email: rows[0].email } : undefined;
}

let dummy: Promise<string> | undefined;
function dummyHash(): Promise<string> {
  dummy ??= hashPassword('not-a-real-password');
  return dummy;
}

export function workspacesOf(ds: Db, userId: string): Promise<{ id: string; name: string; role: string }[]> {
  return ds.query(
    `SELECT w.id, w.name, r.name AS role FROM workspace_members m
       JOIN workspaces w ON w.id = m.workspace_id
       JOIN roles r ON r.workspace_id = m.workspace_id AND r.id = m.role_id
      WHERE m.user_id = $1 ORDER BY lower(w.name)`,
    [userId],
  );
}

/** Thrown inside sign-up's transaction to roll back the workspace of an e-mail that has an account. */
class AccountExists extends Error {
  constructor(readonly userId: string) {
    super('account exists');
  }
}

/**
 * Sign-up: a new user and a new workspace in which the user is Admin, all or nothing. An
 * e-mail that already has an account gets `{ existing }` and nothing is created or changed;
 * the form's checks (e-mail, password, workspace name) and the password hashing run the
 * same either way, so neither the answer nor its time tells the two apart.
 */
export async function signUp(
  ds: DataSource,
  email: string,
  password: string,
  workspaceName: string,
): Promise<{ user: UserEntity; workspace: WorkspaceEntity } | { existing: { userId: string } }> {
  checkNewUser(email, password);
  try {
    return await ds.transaction(async (tx) => {
      const workspace = await createWorkspace(tx, workspaceName);
      const taken = await tx.query('SELECT id FROM users WHERE lower(email) = lower($1)', [email]);
      if (taken.length) {
        await hashPassword(password);
        throw new AccountExists(taken[0].id);
      }
      const user = await createUser(ds, email, password, tx);
      const admin = await tx.query(`SELECT id FROM roles WHERE workspace_id = $1 AND name = 'Admin'`, [workspace.id]);
      await tx.query('INSERT INTO workspace_members (workspace_id, user_id, role_id) VALUES ($1, $2, $3)', [
        workspace.id,
        user.id,
        admin[0].id,
      ]);
      return { user, workspace };
    });
  } catch (err) {
    if (err instanceof AccountExists) return { existing: { userId: err.userId } };
    throw err;
  }
}

/** Notices for an account's owner, shown on their settings home (nothing here sends mail). */
export type AccountNoticeKind = 'signup_with_existing_email';

export async function addAccountNotice(db: Db, userId: string, kind: AccountNoticeKind): Promise<void> {
  await db.query('INSERT INTO account_notices (user_id, kind) VALUES ($1, $2)', [userId, kind]);
}

/** The owner's notices of the last 30 days, newest first. */
export async function recentAccountNotices(db: Db, userId: string): Promise<{ kind: AccountNoticeKind; createdAt: Date }[]> {
  const rows = await db.query(
    `SELECT kind, created_at FROM account_notices WHERE user_id = $1 AND created_at > now() - interval '30 days' ORDER BY created_at DESC LIMIT 5`,
    [userId],
  );
  return rows.map((r: { kind: AccountNoticeKind; created_at: Date }) => ({ kind: r.kind, createdAt: r.created_at }));
}
