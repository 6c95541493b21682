import type { NextFunction, Request, Response } from 'express';

/**
 * No page of ours may be framed (docs/security.md; clickjacking on sign-in, consent and settings
 * buttons): CSP `frame-ancestors 'none'` and, for older browsers, X-Frame-Options. Routes
 * with a fuller policy (the settings pages) replace the CSP with one that says the same.
 */
export function forbidFraming(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
  res.setHeader('X-Frame-Options', 'DENY');
  next();
}
