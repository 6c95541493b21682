import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { DataSource } from 'typeorm';
import { listRoles } from '#identity/accounts.js';
import { createInvite, listInvites, revokeInvite, type Invite } from '#identity/invites.js';
import { changeMemberRole, listMembers, removeMember, type Member } from '#identity/members.js';
import { assertCanGrant, findRoleById, permissionsBeyond } from '#identity/roles.js';
import type { RoleEntity } from '#database/entities/index.js';
import { BadInputError, ErrorCode, ForbiddenError, NotFoundError } from '#errors/errors.js';
import { audited } from '../audited.js';
import type { SettingsContext } from '../settings-context.js';

/**
 * Members and invites of the current workspace (WORKSPACE_MEMBERS). Nobody hands out, or
 * takes away, more than their own role allows.
 */
@Injectable()
export class MembersService {
  constructor(private readonly ds: DataSource) {}

  list(ctx: SettingsContext): Promise<Member[]> {
    return listMembers(this.ds, ctx.workspace.id);
  }

  invites(ctx: SettingsContext): Promise<Invite[]> {
    return listInvites(this.ds, ctx.workspace.id);
  }

  /** Roles a member can get: assignable to users. */
  async roles(ctx: SettingsContext): Promise<RoleEntity[]> {
    return (await listRoles(this.ds, ctx.workspace.id)).filter((r) => r.assignableToUsers);
  }

  async find(ctx: SettingsContext, userId: string): Promise<Member> {
    const member = (await this.list(ctx)).find((m) => m.userId === userId);
    if (!member) throw new NotFoundError(`No member with id ${userId} in this workspace`);
    return member;
  }

  changeRole(ctx: SettingsContext, userId: string, roleId: string): Promise<{ email: string; from: string; to: string }> {
    return audited(this.ds, ctx, async (tx) => {
      await this.assertMayManage(tx, ctx, userId);
      const role = await this.role(tx, ctx, roleId);
      assertCanGrant(ctx.role, role, true);
      const change = await changeMemberRole(tx, ctx.workspace.id, userId, role);
      return {
        result: change,
        audit:
          change.from === change.to
            ? undefined
            : {
                action: 'member.change_role',
                target: { type: 'member', id: userId, label: change.email },
                details: { from: change.from, to: change.to },
              },
      };
    });
  }

  remove(ctx: SettingsContext, userId: string): Promise<{ email: string; role: string }> {
    return audited(this.ds, ctx, async (tx) => {
      await this.assertMayManage(tx, ctx, userId);
      const removed = await removeMember(tx, ctx.workspace.id, userId);
      return {
        result: removed,
        audit: { action: 'member.remove', target: { type: 'member', id: userId, label: removed.email }, details: { role: removed.role } },
      };
    });
  }

  invite(ctx: SettingsContext, roleId: string): Promise<{ id: string; token: string; role: string; expiresAt: Date }> {
    return audited(this.ds, ctx, async (tx) => {
      const role = await this.role(tx, ctx, roleId);
      assertCanGrant(ctx.role, role, true);
      const invite = await createInvite(tx, { workspaceId: ctx.workspace.id, role, createdByUserId: ctx.userId });
      return {
        result: invite,
        audit: {
          action: 'invite.create',
          target: { type: 'invite', id: invite.id, label: role.name },
          details: { role: role.name, expiresAt: invite.expiresAt },
        },
      };
    });
  }

  revokeInvite(ctx: SettingsContext, id: string): Promise<Invite> {
    return audited(this.ds, ctx, async (tx) => {
      const invite = await revokeInvite(tx, ctx.workspace.id, id);
      return {
        result: invite,
        audit: { action: 'invite.revoke', target: { type: 'invite', id, label: invite.roleName }, details: { role: invite.roleName } },
      };
    });
  }

  private async role(tx: EntityManager, ctx: SettingsContext, roleId: string): Promise<RoleEntity> {
    if (!roleId) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'role is required');
    try {
      return await findRoleById(tx, ctx.workspace.id, roleId);
    } catch (err) {
      throw err instanceof NotFoundError ? new BadInputError(ErrorCode.VALIDATION_FAILED, `role: ${err.messages[0]}`) : err;
    }
  }

  /** A member whose role allows more than yours is out of your reach (no demoting or removing them). */
  private async assertMayManage(tx: EntityManager, ctx: SettingsContext, userId: string): Promise<void> {
    const rows = await tx.query(
      `SELECT u.email, r.name, r.object_permissions, r.settings_permissions, r.field_permissions FROM workspace_members m
         JOIN users u ON u.id = m.user_id JOIN roles r ON r.workspace_id = m.workspace_id AND r.id = m.role_id
        WHERE m.workspace_id = $1 AND m.user_id::text = $2`,
      [ctx.workspace.id, userId],
    );
    if (!rows.length) return; // the library call answers 404 / 400 for it
    const target = {
      name: rows[0].name,
      objectPermissions: rows[0].object_permissions,
      settingsPermissions: rows[0].settings_permissions,
      fieldPermissions: rows[0].field_permissions,
    };
    const extra = permissionsBeyond(ctx.role, target, true);
    if (extra.length)
      throw new ForbiddenError(
        `${rows[0].email} has the role "${target.name}", which allows more than your role "${ctx.role.name}" (${extra.join(', ')})`,
      );
  }
}
