import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { isMcpPath } from '#auth/auth.guard.js';
import { InsufficientScopeError } from '#auth/scopes.js';
import { MCP_RESOURCE_PATH, MCP_SCOPE, wwwAuthenticate } from '#auth/www-authenticate.js';
import { loadConfig } from '#config/config.js';
import { redactPath } from '#ops/logging.js';
import { TooManyRequestsError } from '#errors/errors.js';
import { errorHeaders, toErrorBody, type ErrorBody } from './error-body.js';
import type { RequestWithId } from './request-id.js';

/** The one error filter of the HTTP transport (REST and the plain routes). */
@Catch()
export class RestExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');
  private readonly publicUrl = loadConfig().publicUrl;

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType<string>() !== 'http') throw exception; // GraphQL formats its own errors
    const req = host.switchToHttp().getRequest<RequestWithId>();
    const res = host.switchToHttp().getResponse<Response>();
    const body = { ...toErrorBody(exception), requestId: req.id };
    if (body.statusCode === 500) {
      this.logger.error(`${req.method} ${redactPath(req.path)} [${req.id}] ${(exception as Error)?.stack ?? exception}`);
    }
    if (body.statusCode === 401) {
      const withToken = Boolean(req.headers.authorization);
      const mcp = isMcpPath(req.path);
      res.setHeader(
        'WWW-Authenticate',
        mcp ? wwwAuthenticate(this.publicUrl, MCP_RESOURCE_PATH, withToken, MCP_SCOPE) : wwwAuthenticate(this.publicUrl, '', withToken),
      );
    }
    if (exception instanceof InsufficientScopeError) {
      const path = isMcpPath(req.path) ? MCP_RESOURCE_PATH : '';
      res.setHeader('WWW-Authenticate', wwwAuthenticate(this.publicUrl, path, 'insufficient_scope', exception.scope));
    }
    res.set(errorHeaders(body));
    if (exception instanceof TooManyRequestsError) res.setHeader('Retry-After', String(exception.retryAfterSeconds));
    if (body.statusCode >= 500 && isMcpPath(req.path)) {
      res.status(body.statusCode).json(jsonRpcError(body, req.body));
      return;
    }
    res.status(body.statusCode).json(body);
  }
}

/**
 * An MCP client reads JSON-RPC, not the REST shape: server-side failures on `/mcp`
 * (503 while the database is away, 500) answer a JSON-RPC error (README.md, Operations), with the REST
 * code and request id in `data`. -32000 is JSON-RPC 2.0's "server error" range.
 */
export function jsonRpcError(body: ErrorBody, request: unknown) {
  const id = !Array.isArray(request) && request && typeof request === 'object' ? ((request as { id?: unknown }).id ?? null) : null;
  return {
    jsonrpc: '2.0',
    error: { code: -32000, message: `${body.code}: ${body.messages.join('; ')}`, data: { code: body.code, requestId: body.requestId } },
    id,
  };
}
