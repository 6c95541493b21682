import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { Request } from 'express';
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { hashSecret } from '#identity/secrets.js';
import { sessionCookie } from '../sessions/web-sessions.js';

const TTL_MINUTES = 10;

/**
 * A secret shown once, after a redirect (POST → 303 → GET), so that reloading the page
 * neither shows it again nor creates another key. It waits at most 10 minutes, sealed
 * (AES-256-GCM) with a key derived from the browser's session cookie: the database holds
 * only the cookie's hash, so what it stores cannot be opened without that browser.
 * The first GET deletes it.
 */
@Injectable()
export class OneTimeSecrets {
  constructor(private readonly ds: DataSource) {}

  async put(req: Request, kind: string, value: Record<string, unknown>): Promise<string> {
    const session = sessionToken(req);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', keyOf(session), iv);
    const body = Buffer.concat([cipher.update(JSON.stringify({ kind, value }), 'utf8'), cipher.final()]);
    const sealed = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    await this.ds.query('DELETE FROM settings_flashes WHERE expires_at <= now()');
    const [row] = await this.ds.query(
      `INSERT INTO settings_flashes (session_hash, sealed, expires_at) VALUES ($1, $2, now() + make_interval(mins => $3)) RETURNING id`,
      [hashSecret(session), sealed, TTL_MINUTES],
    );
    return row.id;
  }

  /** The value, once; undefined when it was already shown, expired, or belongs to another session. */
  async take<T extends Record<string, unknown>>(req: Request, kind: string, id: string): Promise<T | undefined> {
    if (!isUUID(id)) return undefined;
    const session = sessionToken(req);
    const result = await this.ds.query(
      'DELETE FROM settings_flashes WHERE id = $1 AND session_hash = $2 RETURNING sealed, expires_at > now() AS live',
      [id, hashSecret(session)],
    );
    const row = (Array.isArray(result[0]) ? result[0] : result)[0];
    if (!row?.live) return undefined;
    try {
      const sealed = Buffer.from(row.sealed, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', keyOf(session), sealed.subarray(0, 12));
      decipher.setAuthTag(sealed.subarray(12, 28));
      const opened = JSON.parse(Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8'));
      return opened.kind === kind ? (opened.value as T) : undefined;
    } catch {
      return undefined;
    }
  }
}

function sessionToken(req: Request): string {
  const token = req.cookies?.[sessionCookie()];
  if (typeof token !== 'string' || !token) throw new Error('one-time secrets need a signed-in session');
  return token;
}

function keyOf(sessionToken: string): Buffer {
  return createHmac('sha256', sessionToken).update('wrs settings one-time secret').digest();
}
