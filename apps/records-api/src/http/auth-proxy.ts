import type { NextFunction, Request, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import type { Socket } from 'node:net';
import { AppError, ErrorCode } from '#errors/errors.js';
import { sendError } from './body-parsing.js';
import type { RequestWithId } from './request-id.js';

/** What the auth server answers under the public origin (docs/architecture.md). */
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
 * The records API is the front door: the auth server's paths are forwarded to it (AUTH_URL),
 * body untouched. The X-Forwarded-* it sends are its own, never the client's (docs/security.md): the
 * client address as `TRUST_PROXY` resolved it, and the host and scheme of PUBLIC_URL.
 */
export function authProxy(authUrl: string, publicUrl: string) {
  const origin = new URL(publicUrl);
  const proxy = createProxyMiddleware<Request, Response>({
    target: authUrl,
    xfwd: false,
    changeOrigin: false,
    pathFilter: (path) => forwarded(path),
    on: {
      proxyReq: (proxyReq, req) => {
        proxyReq.removeHeader('forwarded');
        proxyReq.setHeader('x-forwarded-for', (req as Request).ip ?? req.socket.remoteAddress ?? '');
        proxyReq.setHeader('x-forwarded-host', origin.host);
        proxyReq.setHeader('x-forwarded-proto', origin.protocol.replace(':', ''));
        // The auth server answers with the same request id the client sees (and logs it).
        const id = (req as RequestWithId).id;
        if (id) proxyReq.setHeader('x-request-id', id);
      },
      error: (_err, req, res) => {
        if ('status' in res && typeof (res as Response).status === 'function' && !(res as Response).headersSent) {
          sendError(
            req as Request,
            res as Response,
            new AppError(502, ErrorCode.INTERNAL_ERROR, ['The authorization server is not reachable']),
          );
        } else {
          (res as Socket).destroy?.();
        }
      },
    },
  });
  // The proxy's own path check parses a URL per request: the API's own paths are told apart first.
  return (req: Request, res: Response, next: NextFunction) => (certainlyOwn(req.url) ? next() : proxy(req, res, next));
}

/**
 * `/rest`, `/graphql` or `/mcp` and below, with nothing URL parsing could turn into another
 * path (dot segments, percent-escapes, backslashes, control characters): never forwarded.
 * Anything else is left to the proxy's own check (`forwarded`, on the parsed path).
 */
function certainlyOwn(url: string): boolean {
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  if (!OWN_PATH.test(path)) return false;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || c === 0x2e /* . */ || c === 0x25 /* % */ || c === 0x5c /* \ */) return false;
  }
  return true;
}
const OWN_PATH = /^\/(?:rest|graphql|mcp)(?:\/|$)/;
