import type { NextFunction, Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { hashSecret } from '../../../../libs/auth/src/secrets.js';
import { AppError, ErrorCode } from '../../../../libs/records/src/errors.js';
import { sendError } from './body-parsing.js';
import type { RequestWithId } from './request-id.js';

const WINDOW_MS = 60_000;

/**
 * Requests per minute per credential (its hash, never the secret) or, without one, per
 * client address. In-memory: each instance counts its own traffic. 0 turns it off.
 */
export function rateLimitPerCredential(perMinute: number) {
  if (perMinute === 0) return (_req: RequestWithId, _res: Response, next: NextFunction) => next();
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: (req) => {
      // The token, not the raw header: `bearer  X` and `Bearer X` are one credential and share one budget.
      const token = /^Bearer +(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
      return token ? hashSecret(token) : `ip:${ipKeyGenerator(req.ip ?? '')}`;
    },
    handler: (req, res, _next, options) => {
      const resetTime = (req as RequestWithId & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const seconds = resetTime ? Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000)) : options.windowMs / 1000;
      res.setHeader('Retry-After', String(seconds));
      sendError(req, res, new AppError(429, ErrorCode.RATE_LIMITED, [`Rate limit of ${perMinute} requests per minute exceeded; retry after ${seconds} s`]));
    },
  });
}
