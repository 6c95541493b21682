import type { NextFunction, Response } from 'express';
import type { Pool } from 'pg';
import { LRUCache } from 'lru-cache';
import type { AuthenticatedRequest } from '#auth/auth.guard.js';
import { hashSecret } from '#identity/secrets.js';
import { SharedFailureLimit, SharedLimit, addressKey } from '#ops/rate-limits.js';
import { AppError, ErrorCode } from '#errors/errors.js';
import { sendError } from './body-parsing.js';
import type { RequestWithId } from './request-id.js';

const pass = (_req: RequestWithId, _res: Response, next: NextFunction) => next();
const addressOf = (req: RequestWithId) => addressKey(req);

function refuse(req: RequestWithId, res: Response, perMinute: number, what: string, seconds: number): void {
  res.setHeader('Retry-After', String(seconds));
  sendError(
    req,
    res,
    new AppError(429, ErrorCode.RATE_LIMITED, [`Rate limit of ${perMinute} ${what} per minute exceeded; retry after ${seconds} s`]),
  );
}

/** Credentials whose workspace this instance has seen (a credential never changes workspace). */
const KNOWN_CREDENTIALS = 10_000;

/**
 * Requests per minute per credential (its hash, never the secret) or, without one, per
 * client address, and per workspace above that (so more keys do not mean more budget),
 * counted across every instance in Postgres (docs/rest: rate limits); each response
 * carries the draft-7 `RateLimit` and `RateLimit-Policy` headers of the budget nearer its
 * end. A credential's workspace is learned from its first authenticated answer on this
 * instance, so counting never waits for authentication. 0 turns a limit off.
 */
export function rateLimitPerCredential(perMinute: number, pool: Pool, perWorkspacePerMinute = 0) {
  if (perMinute === 0 && perWorkspacePerMinute === 0) return pass;
  const limit = perMinute > 0 ? new SharedLimit(pool, 'req', perMinute) : undefined;
  const workspaceLimit = perWorkspacePerMinute > 0 ? new SharedLimit(pool, 'ws', perWorkspacePerMinute) : undefined;
  const workspaces = new LRUCache<string, string>({ max: KNOWN_CREDENTIALS });
  return async (req: RequestWithId & AuthenticatedRequest, res: Response, next: NextFunction) => {
    // The token, not the raw header: `bearer  X` and `Bearer X` are one credential and share one budget.
    const token = /^Bearer +(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    const credential = token ? hashSecret(token) : undefined;
    const workspaceId = credential && workspaces.get(credential);
    if (credential && !workspaceId && workspaceLimit) {
      res.once('finish', () => {
        if (req.principal) workspaces.set(credential, req.principal.workspaceId);
      });
    }
    try {
      const [own, shared] = await Promise.all([
        limit?.consume(credential ?? addressOf(req)),
        workspaceId ? workspaceLimit?.consume(workspaceId) : undefined,
      ]);
      const tighter = !shared || (own && own.remaining <= shared.remaining) ? own : shared;
      if (tighter) res.set(tighter.headers);
      if (own && !own.allowed) return refuse(req, res, perMinute, 'requests', own.retryAfter);
      if (shared && !shared.allowed)
        return refuse(req, res, perWorkspacePerMinute, 'requests in this workspace (all its keys and tokens together)', shared.retryAfter);
    } catch {
      // Counting failed (not the database being away: the insurance limiter covers that); serve rather than refuse.
    }
    next();
  };
}

/**
 * Failed authentications (401) per minute per client address, across instances: made-up
 * tokens each have a budget of their own above, so guessing or flooding with them is
 * capped here. Only failures count (successes cost no query); past the limit the address
 * waits out the window, valid credentials included (as GitHub's API does after repeated
 * bad credentials).
 */
export function rateLimitAuthFailures(perMinute: number, pool: Pool) {
  if (perMinute === 0) return pass;
  const failures = new SharedFailureLimit(pool, 'fail', perMinute);
  return (req: RequestWithId, res: Response, next: NextFunction) => {
    // The address (`req.ip`, resolved through TRUST_PROXY) only when some address is blocked, or at a 401.
    const wait = failures.anyBlocked ? failures.blockedFor(addressOf(req)) : 0;
    if (wait > 0) return refuse(req, res, perMinute, 'failed authentications', wait);
    // Counted before the 401 is sent, so the client's next request already sees it.
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      if (res.statusCode !== 401) return end(...args);
      void failures
        .fail(addressOf(req))
        .catch(() => undefined)
        .finally(() => end(...args));
      return res;
    }) as Response['end'];
    next();
  };
}
