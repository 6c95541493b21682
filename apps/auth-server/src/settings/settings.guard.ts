import { CanActivate, ExecutionContext, Injectable, SetMetadata, createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { workspacesOf } from '#identity/accounts.js';
import { membershipOf } from '#identity/members.js';
import { SETTINGS_PERMISSION_LABELS } from '#identity/roles.js';
import { ForbiddenError, UnauthenticatedError } from '#errors/errors.js';
import { WebSessions, csrfToken, csrfValid } from '../sessions/web-sessions.js';
import { allows, type Requirement, type SettingsContext, type SettingsRequest } from './settings-context.js';

const REQUIRES = 'settings:requires';
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The permission a settings route needs (the class's, unless the route names its own). */
export const Requires = (requirement: Requirement) => SetMetadata(REQUIRES, requirement);

export class SignInRequired extends UnauthenticatedError {
  constructor() {
    super('Sign in first: the settings pages and their API take a signed-in session, never a bearer token');
  }
}

export class CsrfRejected extends ForbiddenError {
  constructor() {
    super("Missing or wrong CSRF token: send the page's _csrf field or an X-CSRF-Token header (GET /settings/api/session gives it)");
  }
}

export class NoWorkspace extends ForbiddenError {}

/**
 * One guard for every settings route: the signed-in browser session (the Authorization
 * header is never read here, docs/authentication.md), CSRF on every write, the current workspace, and
 * the settings permission the route declares.
 */
@Injectable()
export class SettingsGuard implements CanActivate {
  constructor(
    private readonly ds: DataSource,
    private readonly sessions: WebSessions,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<SettingsRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    const session = await this.sessions.current(req);
    if (!session) throw new SignInRequired();
    if (WRITES.has(req.method) && !csrfValid(req)) throw new CsrfRejected();

    const workspaces = await workspacesOf(this.ds, session.userId);
    const current = workspaces.find((w) => w.id === session.workspaceId) ?? workspaces[0];
    const membership = current && (await membershipOf(this.ds, session.userId, current.id));
    if (!membership) throw new NoWorkspace(`${session.email} is not a member of any workspace; ask an Admin for an invite link`);
    req.settings = {
      userId: session.userId,
      email: session.email,
      workspace: membership.workspace,
      role: membership.role,
      workspaces,
      csrf: csrfToken(req, res),
      path: req.originalUrl.split('?')[0],
    };

    const requirement =
      this.reflector.getAllAndOverride<Requirement | undefined>(REQUIRES, [context.getHandler(), context.getClass()]) ?? 'MEMBER';
    if (!allows(membership.role, requirement)) {
      const needed =
        requirement === 'ANY_SETTINGS'
          ? 'any settings'
          : requirement === 'CREATE_RECORDS'
            ? 'create'
            : `"${SETTINGS_PERMISSION_LABELS[requirement as keyof typeof SETTINGS_PERMISSION_LABELS]}"`;
      throw new ForbiddenError(
        `Your role "${membership.role.name}" in ${membership.workspace.name} does not include the ${needed} permission`,
      );
    }
    return true;
  }
}

export const CurrentSettings = createParamDecorator((_data: unknown, context: ExecutionContext): SettingsContext => {
  const settings = context.switchToHttp().getRequest<SettingsRequest>().settings;
  if (!settings) throw new Error('CurrentSettings used on a route without SettingsGuard');
  return settings;
});
