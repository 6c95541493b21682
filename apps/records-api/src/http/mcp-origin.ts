import type { NextFunction, Request, Response } from 'express';
import { isLoopbackHost } from '#net/loopback.js';

function isLoopbackOrigin(origin: string): boolean {
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.hostname);
}

/**
 * Streamable HTTP transport, "Security Warning": servers MUST validate `Origin` against
 * DNS rebinding (docs/mcp.md). A browser page may call /mcp only from PUBLIC_URL's origin or
 * one listed in MCP_ALLOWED_ORIGINS; requests without `Origin` (non-browser clients) pass.
 * A service on a loopback PUBLIC_URL (development) also takes loopback origins on any
 * port, as the MCP SDKs do, so local tools such as MCP Inspector work unconfigured: a
 * rebinding attacker's page has its own host name as origin, never a loopback one.
 */
export function mcpOriginCheck(publicUrl: string, allowed: string[]) {
  const origins = new Set([new URL(publicUrl).origin, ...allowed]);
  const local = isLoopbackOrigin(new URL(publicUrl).origin);
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    if (origin === undefined || origins.has(origin) || (local && isLoopbackOrigin(origin))) return next();
    res.status(403).json({
      jsonrpc: '2.0',
      error: { code: -32000, message: `Forbidden: Origin ${origin} may not call /mcp (set MCP_ALLOWED_ORIGINS to allow it)` },
      id: null,
    });
  };
}
