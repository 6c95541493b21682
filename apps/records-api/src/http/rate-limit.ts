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
  return limiter(perMinute, 'requests', {
    keyGenerator: (req) => {
      // The token, not the raw header: `bearer  X` and `Bearer X` are one credential and share one budget.
      const token = /^Bearer +(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
      return token ? hashSecret(token) : `ip:${ipKeyGenerator(req.ip ?? '')}`;
    },
  });
}

/**
 * Failed authentications (401) per minute per client address: made-up tokens each have a
 * budget of their own above, so guessing or flooding with them is capped here. Only
 * failures count; past the limit the address waits out the window, valid credentials
 * included (as GitHub's API does after repeated bad credentials).
 */
export function rateLimitAuthFailures(perMinute: number) {
  if (perMinute === 0) return (_req: RequestWithId, _res: Response, next: NextFunction) => next();
  return limiter(perMinute, 'failed authentications', {
    keyGenerator: (req) => `ip:${ipKeyGenerator(req.ip ?? '')}`,
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req, res) => res.statusCode !== 401,
  });
}

function limiter(perMinute: number, what: string, options: Partial<Parameters<typeof rateLimit>[0]>) {
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    ...options,
    handler: (req, res, _next, used) => {
      const resetTime = (req as RequestWithId & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const seconds = resetTime ? Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000)) : used.windowMs / 1000;
      res.setHeader('Retry-After', String(seconds));
      sendError(req, res, new AppError(429, ErrorCode.RATE_LIMITED, [`Rate limit of ${perMinute} ${what} per minute exceeded; retry after ${seconds} s`]));
    },
  });
}
