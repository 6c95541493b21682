import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import { createApiKey, findRole, listRoles, revokeApiKey, type CreatedApiKey, type Db } from '#identity/accounts.js';
import { countRevokedApiKeys, findApiKeySummary, listApiKeys, type ApiKeySummary } from '#identity/api-keys.js';
import { assertCanGrant, findRoleById } from '#identity/roles.js';
import type { RoleEntity } from '#database/entities/index.js';
import { BadInputError, ErrorCode, NotFoundError } from '#errors/errors.js';

/** `?include=revoked` of the list (page and API); nothing else is taken. */
export function includeRevoked(include: unknown): boolean {
  if (include === undefined) return false;
  if (include === 'revoked') return true;
  throw new BadInputError(
    ErrorCode.VALIDATION_FAILED,
    `include must be "revoked" or left out; got ${typeof include === 'string' ? `"${include.slice(0, 100)}"` : 'it more than once'}`,
  );
}
import { audited } from '../audited.js';
import type { SettingsContext } from '../settings-context.js';

export interface NewApiKey {
  name: string;
  /** A role id, or a role name (the JSON API takes either). */
  role: { id?: string; name?: string };
  expiresAt: Date;
}

/** API keys of the current workspace; every change is audited. The pages and the JSON API both call this. */
@Injectable()
export class ApiKeysService {
  constructor(private readonly ds: DataSource) {}

  /** Revoked keys only when asked for (`revoked: true`): they never work again, so the list is about the others. */
  list(ctx: SettingsContext, o: { revoked: boolean }): Promise<ApiKeySummary[]> {
    return listApiKeys(this.ds, ctx.workspace.id, o);
  }

  revokedCount(ctx: SettingsContext): Promise<number> {
    return countRevokedApiKeys(this.ds, ctx.workspace.id);
  }

  async find(ctx: SettingsContext, id: string): Promise<ApiKeySummary> {
    if (!isUUID(id)) throw new BadInputError(ErrorCode.INVALID_ID, `id must be a UUID; got "${id}"`);
    const key = await findApiKeySummary(this.ds, ctx.workspace.id, id);
    if (!key) throw new NotFoundError(`No API key with id ${id} in this workspace`);
    return key;
  }

  /** Roles a key can get: assignable to API keys. */
  async roles(ctx: SettingsContext): Promise<RoleEntity[]> {
    return (await listRoles(this.ds, ctx.workspace.id)).filter((r) => r.assignableToApiKeys);
  }

  create(ctx: SettingsContext, input: NewApiKey): Promise<CreatedApiKey> {
    return audited(this.ds, ctx, async (tx) => {
      const role = await this.role(tx, ctx, input.role);
      // Settings permissions never reach a key, so only object permissions are compared.
      assertCanGrant(ctx.role, role, false);
      const key = await createApiKey(tx, {
        workspaceId: ctx.workspace.id,
        role,
        name: input.name,
        expiresAt: input.expiresAt,
        createdByUserId: ctx.userId,
      });
      return {
        result: key,
        audit: {
          action: 'api_key.create',
          target: { type: 'api_key', id: key.id, label: key.name },
          details: { role: role.name, expiresAt: key.expiresAt },
        },
      };
    });
  }

  /** Idempotent: revoking a revoked key answers with the first revocation, and is logged once. */
  revoke(ctx: SettingsContext, id: string): Promise<{ id: string; name: string; revokedAt: string }> {
    return audited(this.ds, ctx, async (tx) => {
      if (!isUUID(id)) throw new BadInputError(ErrorCode.INVALID_ID, `id must be a UUID; got "${id}"`);
      const key = await findApiKeySummary(tx, ctx.workspace.id, id);
      if (!key) throw new NotFoundError(`No API key with id ${id} in this workspace`);
      const revoked = await revokeApiKey(tx, id, ctx.workspace.id);
      const result = { ...revoked, name: key.name };
      if (key.revokedAt) return { result };
      return {
        result,
        audit: { action: 'api_key.revoke', target: { type: 'api_key', id, label: key.name }, details: { role: key.role.name } },
      };
    });
  }

  private async role(db: Db, ctx: SettingsContext, ref: NewApiKey['role']): Promise<RoleEntity> {
    try {
      if (ref.id) return await findRoleById(db, ctx.workspace.id, ref.id);
      if (ref.name) return await findRole(db, ctx.workspace.id, ref.name);
    } catch (err) {
      if (err instanceof NotFoundError) throw new BadInputError(ErrorCode.VALIDATION_FAILED, `role: ${err.messages[0]}`);
      throw err;
    }
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'role is required: choose a role for the key');
  }
}
