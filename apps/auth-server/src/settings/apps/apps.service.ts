import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { listRoles } from '#identity/accounts.js';
import { assertCanGrant, findRoleById } from '#identity/roles.js';
import {
  createServerApp,
  deleteServerApp,
  findServerApp,
  listServerApps,
  rotateServerAppSecret,
  type CreatedServerApp,
  type ServerAppSummary,
} from '#identity/server-apps.js';
import type { RoleEntity } from '#database/entities/index.js';
import { BadInputError, ErrorCode, NotFoundError } from '#errors/errors.js';
import { audited } from '../audited.js';
import type { SettingsContext } from '../settings-context.js';

/** Server apps (OAuth client_credentials clients) of the current workspace; secrets are shown once. */
@Injectable()
export class ServerAppsService {
  constructor(private readonly ds: DataSource) {}

  list(ctx: SettingsContext): Promise<ServerAppSummary[]> {
    return listServerApps(this.ds, ctx.workspace.id);
  }

  find(ctx: SettingsContext, id: string): Promise<ServerAppSummary> {
    return findServerApp(this.ds, ctx.workspace.id, id);
  }

  /** An app acts like an API key, so it takes the roles assignable to API keys. */
  async roles(ctx: SettingsContext): Promise<RoleEntity[]> {
    return (await listRoles(this.ds, ctx.workspace.id)).filter((r) => r.assignableToApiKeys);
  }

  create(ctx: SettingsContext, input: { name: string; roleId: string }): Promise<CreatedServerApp> {
    return audited(this.ds, ctx, async (tx) => {
      if (!input.roleId) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'role is required: choose a role for the app');
      const role = await findRoleById(tx, ctx.workspace.id, input.roleId).catch((err) => {
        throw err instanceof NotFoundError ? new BadInputError(ErrorCode.VALIDATION_FAILED, `role: ${err.messages[0]}`) : err;
      });
      assertCanGrant(ctx.role, role, false);
      const app = await createServerApp(tx, { workspaceId: ctx.workspace.id, role, name: input.name, createdByUserId: ctx.userId });
      return {
        result: app,
        audit: {
          action: 'server_app.create',
          target: { type: 'server_app', id: app.id, label: app.name },
          details: { clientId: app.clientId, role: role.name },
        },
      };
    });
  }

  rotate(ctx: SettingsContext, id: string): Promise<ServerAppSummary & { clientSecret: string }> {
    return audited(this.ds, ctx, async (tx) => {
      // A new secret is the app's whole reach: only for someone who could have created it.
      const current = await findServerApp(tx, ctx.workspace.id, id);
      assertCanGrant(ctx.role, await findRoleById(tx, ctx.workspace.id, current.role.id), false);
      const app = await rotateServerAppSecret(tx, ctx.workspace.id, id);
      return {
        result: app,
        audit: {
          action: 'server_app.rotate_secret',
          target: { type: 'server_app', id, label: app.name },
          details: { clientId: app.clientId },
        },
      };
    });
  }

  delete(ctx: SettingsContext, id: string): Promise<ServerAppSummary> {
    return audited(this.ds, ctx, async (tx) => {
      const app = await deleteServerApp(tx, ctx.workspace.id, id);
      return {
        result: app,
        audit: {
          action: 'server_app.delete',
          target: { type: 'server_app', id, label: app.name },
          details: { clientId: app.clientId, role: app.role.name },
        },
      };
    });
  }
}
