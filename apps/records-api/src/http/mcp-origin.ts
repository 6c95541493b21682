import type { NextFunction, Request, Response } from 'express';

/**
 * Streamable HTTP transport, "Security Warning": servers MUST validate `Origin` against
 * DNS rebinding (SPEC §13). A browser page may call /mcp only from PUBLIC_URL's origin or
 * one listed in MCP_ALLOWED_ORIGINS; requests without `Origin` (non-browser clients) pass.
 */
export function mcpOriginCheck(publicUrl: string, allowed: string[]) {
  const origins = new Set([new URL(publicUrl).origin, ...allowed]);
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    if (origin === undefined || origins.has(origin)) return next();
    res
      .status(403)
      .json({ jsonrpc: '2.0', error: { code: -32000, message: `Forbidden: Origin ${origin} may not call /mcp (set MCP_ALLOWED_ORIGINS to allow it)` }, id: null });
  };
}
