import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { wwwAuthenticate } from '../../../../libs/auth/src/www-authenticate.js';
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
      res.setHeader('WWW-Authenticate', wwwAuthenticate(this.publicUrl, req.path.startsWith('/mcp') ? '/mcp' : '', withToken));
    }
    res.status(body.statusCode).json(body);
  }
}
