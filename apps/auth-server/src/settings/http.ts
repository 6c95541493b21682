import type { NextFunction, Request, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import { ErrorCode } from '#errors/errors.js';

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/**
 * Every /settings response: never stored by a cache (secrets are shown there once), never
 * framed (clickjacking on revoke buttons), no Referer leaving with an invite token in it.
 */
export function settingsHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
}

/** Body-parser errors on the settings JSON API, in its error shape (they happen before Nest's filters). */
export function settingsApiBodyErrors(err: { type?: string; status?: number }, req: Request, res: Response, next: NextFunction): void {
  if (!req.path.startsWith('/settings/api/')) return next(err);
  const [status, code, message] =
    err.type === 'entity.too.large'
      ? [413, ErrorCode.PAYLOAD_TOO_LARGE, 'The request body is too large']
      : err.type === 'entity.parse.failed'
        ? [400, ErrorCode.INVALID_JSON, 'The request body is not valid JSON']
        : err.type === 'entity.too.deep'
          ? [400, ErrorCode.INVALID_JSON, (err as Error).message]
          : [err.status && err.status < 500 ? err.status : 400, ErrorCode.VALIDATION_FAILED, 'The request body could not be read'];
  res.status(status).json({ statusCode: status, error: STATUS_CODES[status], code, messages: [message] });
}
