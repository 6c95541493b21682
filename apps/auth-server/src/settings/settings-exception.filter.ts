import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { STATUS_CODES } from 'node:http';
import { redactPath } from '#ops/logging.js';
import { AppError, CODE_BY_STATUS, ErrorCode } from '#errors/errors.js';
import { safeReturn } from '../sessions/web-sessions.js';
import { messagePage } from '../views/pages.js';
import { settingsMessagePage } from '../views/settings/layout.js';
import type { SettingsRequest } from './settings-context.js';
import { CsrfRejected, SignInRequired } from './settings.guard.js';

const TITLES: Record<number, string> = {
  400: 'That did not work',
  403: 'Not allowed',
  404: 'Not found',
  409: 'That did not work',
};

export function isSettingsApi(path: string): boolean {
  return path.startsWith('/settings/api/');
}

/**
 * Errors of the settings routes: JSON in the REST error shape on /settings/api/*, a page
 * everywhere else (sign-in for a missing session). Nothing internal reaches the browser.
 */
@Catch()
export class SettingsExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('settings');

  catch(exception: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<SettingsRequest>();
    const res = host.switchToHttp().getResponse<Response>();
    const { statusCode, code, messages } = describe(exception);
    if (statusCode >= 500) this.logger.error(`${req.method} ${redactPath(req.path)}: ${(exception as Error)?.stack ?? exception}`);
    res.setHeader('Cache-Control', 'no-store');

    if (isSettingsApi(req.path)) {
      const requestId = req.headers['x-request-id'];
      res.status(statusCode).json({
        statusCode,
        error: STATUS_CODES[statusCode] ?? 'Error',
        code,
        messages,
        ...(typeof requestId === 'string' && /^[\w.:-]{1,128}$/.test(requestId) ? { requestId } : {}),
      });
      return;
    }
    if (exception instanceof SignInRequired) {
      const back = req.method === 'GET' ? safeReturn(req.originalUrl) : undefined;
      res.redirect(303, `/login?return=${encodeURIComponent(back ?? '/settings')}`);
      return;
    }
    const title = exception instanceof CsrfRejected ? 'Form expired' : (TITLES[statusCode] ?? 'Something went wrong');
    const message = exception instanceof CsrfRejected ? 'The form expired. Go back, reload the page and try again.' : messages.join(' ');
    const back = { href: '/settings', label: 'Back to settings' };
    res
      .status(statusCode)
      .send(req.settings ? settingsMessagePage(req.settings, { title, message, back }) : messagePage(title, message, back));
  }
}

function describe(exception: unknown): { statusCode: number; code: string; messages: string[] } {
  if (exception instanceof AppError) return { statusCode: exception.status, code: exception.code, messages: exception.messages };
  const parserType = (exception as { type?: string })?.type;
  if (parserType === 'entity.parse.failed')
    return { statusCode: 400, code: ErrorCode.INVALID_JSON, messages: ['The request body is not valid JSON'] };
  if (parserType === 'entity.too.large')
    return { statusCode: 413, code: ErrorCode.PAYLOAD_TOO_LARGE, messages: ['The request body is too large'] };
  if (exception instanceof HttpException && exception.getStatus() < 500) {
    const status = exception.getStatus();
    return {
      statusCode: status,
      code: CODE_BY_STATUS[status] ?? 'BAD_REQUEST',
      messages: [status === 404 ? 'No such page' : exception.message],
    };
  }
  return { statusCode: 500, code: ErrorCode.INTERNAL_ERROR, messages: ['Internal server error'] };
}
