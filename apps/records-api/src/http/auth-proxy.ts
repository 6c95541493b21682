import type { Request, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import type { Socket } from 'node:net';
import { AppError, ErrorCode } from '../../../../libs/records/src/errors.js';
import { sendError } from './body-parsing.js';
import type { RequestWithId } from './request-id.js';

/** What the auth server answers under the public origin (SPEC §1). */
export const AUTH_SERVER_PATHS = [
  '/oauth',
  '/login',
  '/signup',
  '/logout',
  '/settings',
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
];

function forwarded(path: string): boolean {
  return AUTH_SERVER_PATHS.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/**
 * The records API is the front door: the auth server's paths are forwarded to it, body
 * untouched, with X-Forwarded-* so the issuer's URLs stay the public ones.
 */
export function authProxy(authPort: number) {
  return createProxyMiddleware<Request, Response>({
    target: `http://127.0.0.1:${authPort}`,
    xfwd: true,
    changeOrigin: false,
    pathFilter: (path) => forwarded(path),
    on: {
      // The auth server answers with the same request id the client sees (and logs it).
      proxyReq: (proxyReq, req) => {
        const id = (req as RequestWithId).id;
        if (id) proxyReq.setHeader('x-request-id', id);
      },
      error: (_err, req, res) => {
        if ('status' in res && typeof (res as Response).status === 'function' && !(res as Response).headersSent) {
          sendError(req as Request, res as Response, new AppError(502, ErrorCode.INTERNAL_ERROR, ['The authorization server is not reachable']));
        } else {
          (res as Socket).destroy?.();
        }
      },
    },
  });
}
