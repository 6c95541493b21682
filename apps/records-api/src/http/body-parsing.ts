import express, { type NextFunction, type Request, type Response } from 'express';
import { verifyJsonDepth } from '#net/json-depth.js';
import { AppError, ErrorCode } from '#errors/errors.js';
import { errorHeaders, toErrorBody } from './error-body.js';
import type { RequestWithId } from './request-id.js';
import { isImportUpload } from '#records/imports/import-route.js';

export const BODY_LIMIT = '1mb';
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH']);

export function sendError(req: RequestWithId, res: Response, exception: unknown): void {
  const body = { ...toErrorBody(exception), requestId: req.id };
  res.set(errorHeaders(body)).status(body.statusCode).json(body);
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * JSON bodies only (except an import's upload, docs/rest.md "Imports"), at most 1 MB: a body of another type is 415, a larger one 413, broken
 * JSON or JSON nested deeper than MAX_JSON_DEPTH 400; each in the documented error shape
 * (body-parser errors never reach Nest's filters).
 */
export function jsonBodies() {
  const parse = express.json({ limit: BODY_LIMIT, type: ['application/json', 'application/*+json'], verify: verifyJsonDepth });
  return (req: RequestWithId, res: Response, next: NextFunction) => {
    if (isImportUpload(req)) return next(); // a CSV or NDJSON stream, read by the imports service
    if (WRITE_METHODS.has(req.method) && hasBody(req) && !req.is(['application/json', 'application/*+json'])) {
      return sendError(
        req,
        res,
        new AppError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, [
          `Content-Type must be application/json; got "${req.headers['content-type'] ?? 'none'}"`,
        ]),
      );
    }
    parse(req, res, (err?: unknown) => (err ? sendError(req, res, err) : next()));
  };
}
