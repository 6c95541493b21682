import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { hashSecret } from '../../../../libs/auth/src/secrets.js';
import { loadConfig } from '../../../../libs/database/src/config.js';

export const SESSION_COOKIE = 'wrs_session';
export const CSRF_COOKIE = 'wrs_csrf';
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
  return { httpOnly: true, sameSite: 'lax' as const, secure: loadConfig().publicUrl.startsWith('https:'), path: '/', ...(maxAge ? { maxAge } : {}) };
}

/** Signed-in browser sessions for our pages: an opaque cookie, stored only as a hash. */
@Injectable()
export class WebSessions {
  constructor(private readonly ds: DataSource) {}

  async start(res: Response, userId: string, workspaceId?: string): Promise<void> {
    const token = randomBytes(32).toString('base64url');
    await this.ds.query(
      `INSERT INTO web_sessions (id_hash, user_id, csrf_token, workspace_id, expires_at) VALUES ($1, $2, $3, $4, now() + interval '14 days')`,
      [hashSecret(token), userId, randomBytes(24).toString('base64url'), workspaceId ?? null],
    );
    res.cookie(SESSION_COOKIE, token, cookieOptions(SESSION_TTL_MS));
  }

  async current(req: Request): Promise<WebSession | undefined> {
    const token = req.cookies?.[SESSION_COOKIE];
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
    const token = req.cookies?.[SESSION_COOKIE];
    if (typeof token !== 'string' || !token) return;
    await this.ds.query('UPDATE web_sessions SET workspace_id = $2 WHERE id_hash = $1', [hashSecret(token), workspaceId]);
  }

  async end(req: Request, res: Response): Promise<void> {
    const token = req.cookies?.[SESSION_COOKIE];
    if (typeof token === 'string' && token) await this.ds.query('DELETE FROM web_sessions WHERE id_hash = $1', [hashSecret(token)]);
    res.clearCookie(SESSION_COOKIE, cookieOptions());
  }
}

/**
 * CSRF protection for forms (OWASP double-submit cookie): a random token in an HttpOnly,
 * SameSite=Lax cookie, repeated in a hidden field; a cross-site form cannot read it.
 */
export function csrfToken(req: Request, res: Response): string {
  const existing = req.cookies?.[CSRF_COOKIE];
  if (typeof existing === 'string' && existing.length >= 32) return existing;
  const token = randomBytes(24).toString('base64url');
  res.cookie(CSRF_COOKIE, token, cookieOptions());
  req.cookies = { ...(req.cookies ?? {}), [CSRF_COOKIE]: token };
  return token;
}

export function csrfValid(req: Request): boolean {
  const cookie = req.cookies?.[CSRF_COOKIE];
  const sent = (req.body as Record<string, unknown> | undefined)?._csrf ?? req.headers['x-csrf-token'];
  if (typeof cookie !== 'string' || typeof sent !== 'string' || cookie.length !== sent.length) return false;
  return timingSafeEqual(Buffer.from(cookie), Buffer.from(sent));
}

/** A same-origin path to go back to, never an open redirect. */
export function safeReturn(value: unknown): string | undefined {
  return typeof value === 'string' && /^\/(?![/\\])[^\s]*$/.test(value) ? value : undefined;
}
