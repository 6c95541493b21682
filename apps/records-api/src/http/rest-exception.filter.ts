import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { MCP_RESOURCE_PATH, MCP_SCOPE, wwwAuthenticate } from '../../../../libs/auth/src/www-authenticate.js';
import { loadConfig } from '../../../../libs/database/src/config.js';
import { toErrorBody } from './error-body.js';
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
      this.logger.error(`${req.method} ${req.path} [${req.id}] ${(exception as Error)?.stack ?? exception}`);
    }
    if (body.statusCode === 401) {
      const withToken = Boolean(req.headers.authorization);
      const mcp = req.path === MCP_RESOURCE_PATH || req.path.startsWith(`${MCP_RESOURCE_PATH}/`);
      res.setHeader(
        'WWW-Authenticate',
        mcp ? wwwAuthenticate(this.publicUrl, MCP_RESOURCE_PATH, withToken, MCP_SCOPE) : wwwAuthenticate(this.publicUrl, '', withToken),
      );
    }
    res.status(body.statusCode).json(body);
  }
}
