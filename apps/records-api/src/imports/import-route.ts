import type { Request } from 'express';

/** `POST /rest/imports` reads its own body as a stream: the JSON body parser and idempotency keys leave it alone. */
export function isImportUpload(req: Pick<Request, 'method' | 'originalUrl'>): boolean {
  return req.method === 'POST' && /^\/rest\/imports\/?$/.test(req.originalUrl.split('?')[0]);
}
