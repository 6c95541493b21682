import { Controller, Get, Param, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DataSource, type EntityManager } from 'typeorm';
import { createUser } from '#identity/accounts.js';
import { acceptInvite, findInvite, type Invite } from '#identity/invites.js';
import { AppError } from '#errors/errors.js';
import { WebSessions, csrfToken, csrfValid } from '../../sessions/web-sessions.js';
import { messagePage } from '../../views/pages.js';
import { invitePage } from '../../views/settings/invites.js';
import { audited } from '../audited.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';

const GONE: Record<Exclude<Invite['status'], 'pending'>, string> = {
  accepted: 'This invite link was already used. Ask for a new one.',
  revoked: 'This invite was cancelled. Ask for a new one.',
  expired: 'This invite link has expired. Ask for a new one.',
};

/**
 * The page behind an invite link (no settings permission: the person may not be a member
 * yet, or not even have an account). Signed in → join; signed out → sign in and come
 * back, or create an account here and join in one step.
 */
@Controller('settings/invites/:token')
@UseFilters(SettingsExceptionFilter)
export class InvitesController {
  constructor(
    private readonly ds: DataSource,
    private readonly sessions: WebSessions,
  ) {}

  @Get()
  async show(@Param('token') token: string, @Req() req: Request, @Res() res: Response) {
    const invite = await this.pending(token, res);
    if (!invite) return;
    const session = await this.sessions.current(req);
    res.send(invitePage({ invite, token, csrf: csrfToken(req, res), signedInAs: session?.email }));
  }

  @Post()
  async accept(@Param('token') token: string, @Req() req: Request, @Res() res: Response) {
    const invite = await this.pending(token, res);
    if (!invite) return;
    const session = await this.sessions.current(req);
    if (!session) return res.redirect(303, `/settings/invites/${token}`);
    if (!csrfValid(req))
      return res
        .status(403)
        .send(
          invitePage({ invite, token, csrf: csrfToken(req, res), signedInAs: session.email, error: 'The form expired; please try again.' }),
        );
    const joined = await this.join(token, invite, { userId: session.userId, email: session.email });
    await this.sessions.setWorkspace(req, invite.workspaceId);
    res.redirect(303, joined ? `/settings?joined=${invite.workspaceId}` : '/settings');
  }

  @Post('signup')
  async signup(@Param('token') token: string, @Req() req: Request, @Res() res: Response) {
    const invite = await this.pending(token, res);
    if (!invite) return;
    const body = req.body ?? {};
    const again = (status: number, error: string) =>
      res.status(status).send(invitePage({ invite, token, csrf: csrfToken(req, res), email: String(body.email ?? ''), error }));
    if (!csrfValid(req)) return again(403, 'The form expired; please try again.');
    let userId: string;
    try {
      userId = await this.ds.transaction(async (tx) => {
        const user = await createUser(this.ds, String(body.email ?? ''), String(body.password ?? ''), tx);
        await this.join(token, invite, { userId: user.id, email: user.email }, tx);
        return user.id;
      });
    } catch (err) {
      if (err instanceof AppError && err.status < 500) {
        return again(
          err.status,
          err.status === 409 && /already exists/.test(err.message)
            ? `${err.messages[0]}. Sign in to join instead.`
            : err.messages.join(' '),
        );
      }
      throw err;
    }
    await this.sessions.start(req, res, userId, invite.workspaceId);
    res.redirect(303, `/settings?joined=${invite.workspaceId}`);
  }

  /** True when the person joined; false when they were a member already (the invite stays unused). */
  private join(token: string, invite: Invite, person: { userId: string; email: string }, tx?: EntityManager): Promise<boolean> {
    const ctx = { ...person, workspace: { id: invite.workspaceId, name: invite.workspaceName } };
    return audited(tx ?? this.ds, ctx, async (db) => {
      const { alreadyMember } = await acceptInvite(db, token, person.userId);
      return {
        result: !alreadyMember,
        audit: alreadyMember
          ? undefined
          : {
              action: 'invite.accept',
              target: { type: 'member', id: person.userId, label: person.email },
              details: { role: invite.roleName, inviteId: invite.id },
            },
      };
    });
  }

  /** The invite when it can still be used; otherwise the page that says why, and undefined. */
  private async pending(token: string, res: Response): Promise<Invite | undefined> {
    const invite = await findInvite(this.ds, token);
    if (!invite) {
      res.status(404).send(messagePage('Invite not found', 'This invite link is not valid. Check that you copied all of it.'));
      return undefined;
    }
    if (invite.status !== 'pending') {
      res.status(410).send(messagePage('Invite no longer valid', GONE[invite.status], { href: '/settings', label: 'Go to settings' }));
      return undefined;
    }
    return invite;
  }
}
