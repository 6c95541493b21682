import { HttpException } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import { isDatabaseUnavailable, isStatementTimeout, RETRY_AFTER_SECONDS, statementTimeoutMessage } from '#ops/database-unavailable.js';
import { AppError, CODE_BY_STATUS, ErrorCode } from '#errors/errors.js';
import { MAX_JSON_DEPTH } from '#net/json-depth.js';

export interface ErrorBody {
  statusCode: number;
  error: string;
  code: string;
  messages: string[];
  requestId?: string;
}

/** body-parser errors carry a `type` (https://github.com/expressjs/body-parser#errors). */
const BODY_PARSER: Record<string, [number, ErrorCode, string[]]> = {
  'entity.too.large': [413, ErrorCode.PAYLOAD_TOO_LARGE, ['The request body is larger than the 1 MB limit']],
  'entity.parse.failed': [400, ErrorCode.INVALID_JSON, ['The request body is not valid JSON']],
  'entity.too.deep': [400, ErrorCode.INVALID_JSON, [`The request body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`]],
  'encoding.unsupported': [415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, ['Unsupported content encoding']],
  'charset.unsupported': [415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, ['Unsupported charset; send UTF-8 JSON']],
};

/** Any thrown value → the documented error shape. Unknown errors become a plain 500. */
export function toErrorBody(exception: unknown): ErrorBody {
  const make = (statusCode: number, code: string, messages: string[]): ErrorBody => ({
    statusCode,
    error: STATUS_CODES[statusCode] ?? 'Error',
    code,
    messages,
  });
  if (exception instanceof AppError) return make(exception.status, exception.code, exception.messages);
  const parserType = (exception as { type?: string })?.type;
  if (parserType && BODY_PARSER[parserType]) return make(...BODY_PARSER[parserType]);
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status < 500) {
      const message = status === 404 ? 'No such route' : exception.message;
      return make(status, CODE_BY_STATUS[status] ?? 'BAD_REQUEST', [message]);
    }
  }
  if (isStatementTimeout(exception)) return make(503, ErrorCode.QUERY_TIMEOUT, [statementTimeoutMessage()]);
  if (isDatabaseUnavailable(exception)) return databaseUnavailableBody();
  return make(500, ErrorCode.INTERNAL_ERROR, ['Internal server error']);
}

/** README.md, Operations: the database is away; nothing was written, try again (with `Retry-After`). */
export function databaseUnavailableBody(): ErrorBody {
  return {
    statusCode: 503,
    error: STATUS_CODES[503]!,
    code: ErrorCode.SERVICE_UNAVAILABLE,
    messages: [`The database is unavailable; retry after ${RETRY_AFTER_SECONDS} s`],
  };
}

/** The headers that go with an error body: `Retry-After` on 503. */
export function errorHeaders(body: ErrorBody): Record<string, string> {
  return body.statusCode === 503 ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : {};
}
