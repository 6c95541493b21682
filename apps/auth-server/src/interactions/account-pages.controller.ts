import { Controller, Get, Header, Logger, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DataSource } from 'typeorm';
import { addAccountNotice, signUp } from '#identity/accounts.js';
import { AppError } from '#errors/errors.js';
import { postgresAdapter } from '../adapter/postgres-adapter.js';
import { addressKey } from '#ops/rate-limits.js';
import { SignInThrottle, Throttled, throttledMessage } from '../sessions/sign-in-throttle.js';
import { WebSessions, csrfToken, csrfValid, providerSessionCookie, safeReturn } from '../sessions/web-sessions.js';
import { loginPage, logoutPage, messagePage, signupPage } from '../views/pages.js';
import { STYLESHEET } from '../views/style.js';

/**
 * What sign-up answers, whether the e-mail was new or not (OWASP Authentication Cheat
 * Sheet, "Authentication and error messages"): nobody is signed in, the page asks to sign in.
 */
const SIGNED_UP =
  'Sign in to continue. If this e-mail address was new here, its account and workspace are ready. If it already had an account, nothing was changed and the account’s owner has been told.';

/** Sign-in, sign-up and sign-out outside an authorization request (and the way back into one). Sign-in lands on /settings (settings/). */
@Controller()
export class AccountPagesController {
  private readonly logger = new Logger('SignUp');

  constructor(
    private readonly ds: DataSource,
    private readonly sessions: WebSessions,
    private readonly throttle: SignInThrottle,
  ) {}

  @Get('oauth/assets/style.css')
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=3600')
  stylesheet() {
    return STYLESHEET;
  }

  @Get('login')
  async loginForm(@Req() req: Request, @Res() res: Response) {
    const returnTo = safeReturn(req.query.return);
    if (await this.sessions.current(req)) return res.redirect(303, returnTo ?? '/settings');
    res.send(
      loginPage({
        action: '/login',
        csrf: csrfToken(req, res),
        returnTo,
        signupHref: `/signup${returnTo ? `?return=${encodeURIComponent(returnTo)}` : ''}`,
      }),
    );
  }

  @Post('login')
  async login(@Req() req: Request, @Res() res: Response) {
    const body = req.body ?? {};
    const returnTo = safeReturn(body.return);
    const csrf = csrfToken(req, res);
    const again = (status: number, error: string) =>
      res.status(status).send(loginPage({ action: '/login', csrf, email: body.email, error, returnTo, signupHref: '/signup' }));
    if (!csrfValid(req)) return again(403, 'The form expired; please try again.');
    const user = await this.throttle.signIn(this.ds, String(body.email ?? ''), String(body.password ?? ''), addressKey(req));
    if (user instanceof Throttled) return again(429, throttledMessage(res, user));
    if (!user) return again(401, 'Wrong e-mail or password.');
    await this.sessions.start(req, res, user.id);
    res.redirect(303, returnTo ?? '/settings');
  }

  @Get('signup')
  signupForm(@Req() req: Request, @Res() res: Response) {
    res.send(signupPage({ csrf: csrfToken(req, res), returnTo: safeReturn(req.query.return) }));
  }

  @Post('signup')
  async signup(@Req() req: Request, @Res() res: Response) {
    const body = req.body ?? {};
    const returnTo = safeReturn(body.return);
    const csrf = csrfToken(req, res);
    const again = (status: number, error: string) =>
      res.status(status).send(signupPage({ csrf, email: body.email, workspace: body.workspace, error, returnTo }));
    if (!csrfValid(req)) return again(403, 'The form expired; please try again.');
    const throttled = await this.throttle.signUp(addressKey(req));
    if (throttled) return again(429, throttledMessage(res, throttled));
    try {
      const outcome = await signUp(this.ds, String(body.email ?? ''), String(body.password ?? ''), String(body.workspace ?? ''));
      if ('existing' in outcome) {
        const { userId } = outcome.existing;
        // Not awaited: the answer must take no longer than a new account's.
        void addAccountNotice(this.ds, userId, 'signup_with_existing_email')
          .then(() =>
            this.logger.warn(`A sign-up used the e-mail address of user ${userId}; nothing was created, the owner is told on /settings`),
          )
          .catch((err) => this.logger.error(`account notice for user ${userId} not stored: ${err?.message ?? err}`));
      }
    } catch (err) {
      if (err instanceof AppError && err.status < 500) return again(err.status, err.messages.join(' '));
      throw err;
    }
    res.status(200).send(
      loginPage({
        action: '/login',
        csrf,
        email: body.email,
        notice: SIGNED_UP,
        returnTo,
        signupHref: `/signup${returnTo ? `?return=${encodeURIComponent(returnTo)}` : ''}`,
      }),
    );
  }

  @Get('logout')
  async logoutForm(@Req() req: Request, @Res() res: Response) {
    const session = await this.sessions.current(req);
    if (!session) return res.send(messagePage('Signed out', 'You are not signed in.', { href: '/login', label: 'Sign in' }));
    res.send(logoutPage({ csrf: csrfToken(req, res), email: session.email }));
  }

  @Post('logout')
  async logout(@Req() req: Request, @Res() res: Response) {
    if (!csrfValid(req)) return res.status(403).send(messagePage('Form expired', 'Please go back and try again.'));
    await this.sessions.end(req, res);
    // Also end the authorization server's own session, so the next authorization asks to sign in.
    const providerSession = req.cookies?.[providerSessionCookie()];
    if (typeof providerSession === 'string') await new (postgresAdapter(this.ds))('Session').destroy(providerSession);
    res.clearCookie(providerSessionCookie(), { path: '/' });
    res.clearCookie(`${providerSessionCookie()}.sig`, { path: '/' });
    res.send(messagePage('Signed out', 'You are signed out.', { href: '/login', label: 'Sign in again' }));
  }
}
