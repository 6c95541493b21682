import { Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DataSource } from 'typeorm';
import { workspacesOf } from '#identity/accounts.js';
import type { OidcProvider } from '../oidc/provider.js';
import { OIDC_PROVIDER } from '../oidc/oidc.tokens.js';
import { addressKey } from '#ops/rate-limits.js';
import { SignInThrottle, Throttled, throttledMessage } from '../sessions/sign-in-throttle.js';
import { WebSessions, csrfToken, csrfValid } from '../sessions/web-sessions.js';
import { consentPage, loginPage, messagePage, workspacePickerPage } from '../views/pages.js';

type Details = Awaited<ReturnType<OidcProvider['interactionDetails']>>;

/**
 * The pages of an authorization request: sign in → pick a workspace (when the person has
 * more than one) → consent. The provider keeps the original request in the interaction,
 * so it survives every step; the chosen workspace waits in oauth_interaction_workspaces.
 */
@Controller('oauth/interaction/:uid')
export class InteractionsController {
  constructor(
    @Inject(OIDC_PROVIDER) private readonly provider: OidcProvider,
    private readonly ds: DataSource,
    private readonly sessions: WebSessions,
    private readonly throttle: SignInThrottle,
  ) {}

  @Get()
  async show(@Param('uid') uid: string, @Req() req: Request, @Res() res: Response) {
    const details = await this.details(req, res);
    if (!details) return;
    const csrf = csrfToken(req, res);
    if (details.prompt.name === 'login') {
      const session = await this.sessions.current(req);
      if (session) return this.finish(req, res, { login: { accountId: session.userId } }, false);
      return res.send(
        loginPage({
          action: `/oauth/interaction/${uid}/login`,
          csrf,
          signupHref: `/signup?return=${encodeURIComponent(`/oauth/interaction/${uid}`)}`,
        }),
      );
    }
    const accountId = details.session?.accountId;
    if (!accountId) return res.status(400).send(messagePage('Sign-in expired', 'Please start again from the application.'));
    const workspaces = await workspacesOf(this.ds, accountId);
    if (!workspaces.length) {
      return this.finish(req, res, { error: 'access_denied', error_description: 'the account is not a member of any workspace' }, true);
    }
    const clientName = await this.clientName(details);
    const chosen = await this.chosenWorkspace(uid, workspaces);
    if (!chosen) return res.send(workspacePickerPage({ action: `/oauth/interaction/${uid}/workspace`, csrf, clientName, workspaces }));
    const email = (await this.ds.query('SELECT email FROM users WHERE id = $1', [accountId]))[0]?.email ?? '';
    const scopes = String(details.params.scope ?? 'api').split(' ');
    const redirectTo = redirectTarget(String(details.params.redirect_uri ?? ''));
    res.send(
      consentPage({ action: `/oauth/interaction/${uid}/consent`, csrf, clientName, scopes, workspace: chosen.name, email, redirectTo }),
    );
  }

  @Post('login')
  async login(@Param('uid') uid: string, @Req() req: Request, @Res() res: Response) {
    const details = await this.details(req, res);
    if (!details) return;
    const csrf = csrfToken(req, res);
    const body = req.body ?? {};
    const page = (error: string) =>
      loginPage({
        action: `/oauth/interaction/${uid}/login`,
        csrf,
        email: body.email,
        error,
        signupHref: `/signup?return=${encodeURIComponent(`/oauth/interaction/${uid}`)}`,
      });
    if (!csrfValid(req)) return res.status(403).send(page('The form expired; please try again.'));
    const user = await this.throttle.signIn(this.ds, String(body.email ?? ''), String(body.password ?? ''), addressKey(req));
    if (user instanceof Throttled) return res.status(429).send(page(throttledMessage(res, user)));
    if (!user) return res.status(401).send(page('Wrong e-mail or password.'));
    await this.sessions.start(req, res, user.id);
    return this.finish(req, res, { login: { accountId: user.id } }, false);
  }

  @Post('workspace')
  async pick(@Param('uid') uid: string, @Req() req: Request, @Res() res: Response) {
    const details = await this.details(req, res);
    if (!details) return;
    if (!csrfValid(req)) return res.status(403).send(messagePage('Form expired', 'Please go back and try again.'));
    const accountId = details.session?.accountId;
    const workspaces = accountId ? await workspacesOf(this.ds, accountId) : [];
    const picked = workspaces.find((w) => w.id === req.body?.workspace);
    if (!picked) return res.status(400).send(messagePage('Unknown workspace', 'Choose one of your workspaces.'));
    await this.ds.query(
      `INSERT INTO oauth_interaction_workspaces (uid, workspace_id, expires_at) VALUES ($1, $2, now() + interval '1 hour')
       ON CONFLICT (uid) DO UPDATE SET workspace_id = excluded.workspace_id`,
      [uid, picked.id],
    );
    res.redirect(303, `/oauth/interaction/${uid}`);
  }

  @Post('consent')
  async consent(@Param('uid') uid: string, @Req() req: Request, @Res() res: Response) {
    const details = await this.details(req, res);
    if (!details) return;
    if (!csrfValid(req)) return res.status(403).send(messagePage('Form expired', 'Please go back and try again.'));
    if (req.body?.decision !== 'allow') {
      return this.finish(req, res, { error: 'access_denied', error_description: 'the person denied the request' }, true);
    }
    const accountId = details.session?.accountId;
    const workspace = accountId ? await this.chosenWorkspace(uid, await workspacesOf(this.ds, accountId)) : undefined;
    if (!accountId || !workspace) return res.redirect(303, `/oauth/interaction/${uid}`);

    const { Grant } = this.provider;
    const grant = details.grantId
      ? (await Grant.find(details.grantId))!
      : new Grant({ accountId, clientId: String(details.params.client_id) });
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
      grant.addResourceScope(resource, scopes.join(' '));
    const grantId = await grant.save();
    await this.ds.query(
      `INSERT INTO oauth_grant_workspaces (grant_id, workspace_id, user_id) VALUES ($1, $2, $3)
       ON CONFLICT (grant_id) DO UPDATE SET workspace_id = excluded.workspace_id`,
      [grantId, workspace.id, accountId],
    );
    await this.ds.query('DELETE FROM oauth_interaction_workspaces WHERE uid = $1', [uid]);
    return this.finish(req, res, { consent: { grantId } }, true);
  }

  private async details(req: Request, res: Response): Promise<Details | undefined> {
    try {
      return await this.provider.interactionDetails(req, res);
    } catch {
      res
        .status(400)
        .send(messagePage('Sign-in expired', 'This sign-in link is no longer valid. Please start again from the application.'));
      return undefined;
    }
  }

  private async finish(req: Request, res: Response, result: Record<string, unknown>, merge: boolean) {
    // The provider takes the result and redirects back to the authorization endpoint.
    await this.provider.interactionFinished(req, res, result, { mergeWithLastSubmission: merge });
  }

  private async clientName(details: Details): Promise<string> {
    const client = await this.provider.Client.find(String(details.params.client_id));
    return client?.clientName ?? String(details.params.client_id);
  }

  private async chosenWorkspace(uid: string, workspaces: { id: string; name: string }[]) {
    if (workspaces.length === 1) return workspaces[0];
    const rows = await this.ds.query('SELECT workspace_id FROM oauth_interaction_workspaces WHERE uid = $1 AND expires_at > now()', [uid]);
    return workspaces.find((w) => w.id === rows[0]?.workspace_id);
  }
}

/** Where the consent sends the person: the redirect URI's host, or a native app's scheme (docs/security.md). */
function redirectTarget(uri: string): string {
  try {
    const url = new URL(uri);
    return url.host || `${url.protocol}${url.pathname}`;
  } catch {
    return uri;
  }
}
