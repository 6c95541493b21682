import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { hashSecret } from '#identity/secrets.js';
import { ensureOidcKeys } from '#identity/signing-keys.js';
import { loadConfig } from '#config/config.js';

/** `__Host-` names when the origin is https: no sibling host or path can set them (RFC 6265bis §4.1.3.2). */
export function cookieName(base: string): string {
  return loadConfig().publicUrl.startsWith('https:') ? `__Host-${base}` : base;
}
export const sessionCookie = () => cookieName('wrs_session');
export const csrfCookie = () => cookieName('wrs_csrf');
/** oidc-provider's own session cookie (configured in oidc/configuration.ts). */
export const providerSessionCookie = () => (loadConfig().publicUrl.startsWith('https:') ? '__Host-wrs_op_session' : '_session');
const SESSION_TTL_MS = 14 * 24 * 3600 * 1000;

export interface WebSession {
  userId: string;
  email: string;
  csrfToken: string;
  /** The workspace the settings pages act on (null: the person's first one). */
  workspaceId: string | null;
}

function cookieOptions(maxAge?: number) {
  // HttpOnly and SameSite=Lax always; Secure when the public origin is https.
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: loadConfig().publicUrl.startsWith('https:'),
    path: '/',
    ...(maxAge ? { maxAge } : {}),
  };
}

/** Signed-in browser sessions for our pages: an opaque cookie, stored only as a hash. */
@Injectable()
export class WebSessions {
  constructor(private readonly ds: DataSource) {}

  async start(req: Request, res: Response, userId: string, workspaceId?: string): Promise<void> {
    const token = randomBytes(32).toString('base64url');
    await this.ds.query(
      `INSERT INTO web_sessions (id_hash, user_id, csrf_token, workspace_id, expires_at) VALUES ($1, $2, $3, $4, now() + interval '14 days')`,
      [hashSecret(token), userId, randomBytes(24).toString('base64url'), workspaceId ?? null],
    );
    res.cookie(sessionCookie(), token, cookieOptions(SESSION_TTL_MS));
    // A new session, a new CSRF token (OWASP: rotate at sign-in).
    req.cookies = { ...(req.cookies ?? {}), [sessionCookie()]: token };
    csrfToken(req, res);
  }

  async current(req: Request): Promise<WebSession | undefined> {
    const token = req.cookies?.[sessionCookie()];
    if (typeof token !== 'string' || !token) return undefined;
    const rows = await this.ds.query(
      `SELECT s.user_id, u.email, s.csrf_token, s.workspace_id FROM web_sessions s JOIN users u ON u.id = s.user_id
        WHERE s.id_hash = $1 AND s.expires_at > now()`,
      [hashSecret(token)],
    );
    return rows.length
      ? { userId: rows[0].user_id, email: rows[0].email, csrfToken: rows[0].csrf_token, workspaceId: rows[0].workspace_id }
      : undefined;
  }

  /** Remembers the workspace the settings pages act on, for this browser session only. */
  async setWorkspace(req: Request, workspaceId: string): Promise<void> {
    const token = req.cookies?.[sessionCookie()];
    if (typeof token !== 'string' || !token) return;
    await this.ds.query('UPDATE web_sessions SET workspace_id = $2 WHERE id_hash = $1', [hashSecret(token), workspaceId]);
  }

  /** The member typed the password again in this browser session (the vault's reveal asks for it: docs/vault.md). */
  async confirmPassword(req: Request, userId: string): Promise<void> {
    const token = req.cookies?.[sessionCookie()];
    if (typeof token !== 'string' || !token) return;
    await this.ds.query('UPDATE web_sessions SET password_confirmed_at = now() WHERE id_hash = $1 AND user_id = $2', [
      hashSecret(token),
      userId,
    ]);
  }

  /** Whether this session's last password check is less than `minutes` old, by the database's clock. */
  async passwordConfirmedWithin(req: Request, minutes: number): Promise<boolean> {
    const token = req.cookies?.[sessionCookie()];
    if (typeof token !== 'string' || !token) return false;
    const rows = await this.ds.query(
      `SELECT 1 FROM web_sessions WHERE id_hash = $1 AND password_confirmed_at > now() - make_interval(mins => $2)`,
      [hashSecret(token), minutes],
    );
    return rows.length > 0;
  }

  async end(req: Request, res: Response): Promise<void> {
    const token = req.cookies?.[sessionCookie()];
    if (typeof token === 'string' && token) await this.ds.query('DELETE FROM web_sessions WHERE id_hash = $1', [hashSecret(token)]);
    res.clearCookie(sessionCookie(), cookieOptions());
  }
}

let csrfKey: Buffer | undefined;

/** The CSRF key, derived from the provider's cookie keys in the database so every instance shares it. */
export async function loadCsrfKey(ds: DataSource): Promise<void> {
  const { cookies } = await ensureOidcKeys(ds);
  csrfKey = createHmac('sha256', cookies[0]).update('wrs csrf v1').digest();
}

/**
 * What a form's CSRF token is bound to: the signed-in session, else the authorization
 * server's session (pages of an authorization request), else a random pre-session cookie.
 */
function binding(req: Request, res: Response | undefined): string | undefined {
  const session = req.cookies?.[sessionCookie()];
  if (typeof session === 'string' && session) return `session:${session}`;
  const provider = req.cookies?.[providerSessionCookie()];
  if (typeof provider === 'string' && provider) return `provider:${provider}`;
  const seed = req.cookies?.[csrfCookie()];
  if (typeof seed === 'string' && seed.length >= 32) return `pre:${seed}`;
  if (!res) return undefined;
  const fresh = randomBytes(24).toString('base64url');
  res.cookie(csrfCookie(), fresh, cookieOptions());
  req.cookies = { ...(req.cookies ?? {}), [csrfCookie()]: fresh };
  return `pre:${fresh}`;
}

function tokenFor(bound: string): string {
  if (!csrfKey) throw new Error('loadCsrfKey() must run before the pages are served');
  return createHmac('sha256', csrfKey).update(bound).digest('base64url');
}

/**
 * The CSRF token of the forms on this page (OWASP "signed double-submit"): an HMAC of the
 * session it is bound to, so a cookie planted by another page on the host proves nothing
 * (docs/security.md). Signed in, the `wrs_csrf` cookie mirrors the token for scripts that were
 * given it; it is never what the check trusts.
 */
export function csrfToken(req: Request, res: Response): string {
  const bound = binding(req, res)!;
  const token = tokenFor(bound);
  if (!bound.startsWith('pre:') && req.cookies?.[csrfCookie()] !== token) {
    res.cookie(csrfCookie(), token, cookieOptions());
    req.cookies = { ...(req.cookies ?? {}), [csrfCookie()]: token };
  }
  return token;
}

/**
 * A write is accepted from our own pages only: the token sent must be the one bound to
 * this browser's session, and a browser that says where the request came from (Origin,
 * Sec-Fetch-Site) must say it came from PUBLIC_URL — a page on another port of the same
 * host is same-site, and SameSite cookies do not stop it.
 */
export function csrfValid(req: Request): boolean {
  // Fetch Metadata first: browsers send it whatever the Referrer-Policy (our settings
  // pages' `no-referrer` makes their own form posts say `Origin: null`).
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) {
    if (site !== 'same-origin' && site !== 'none') return false;
  } else {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== 'null' && origin !== new URL(loadConfig().publicUrl).origin) return false;
  }
  const bound = binding(req, undefined);
  const sent = (req.body as Record<string, unknown> | undefined)?._csrf ?? req.headers['x-csrf-token'];
  if (!bound || typeof sent !== 'string') return false;
  const expected = Buffer.from(tokenFor(bound));
  const actual = Buffer.from(sent);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** A same-origin path to go back to, never an open redirect. */
export function safeReturn(value: unknown): string | undefined {
  return typeof value === 'string' && /^\/(?![/\\])[^\s]*$/.test(value) ? value : undefined;
}
