import type { Request, Response } from 'express';
import { AppError } from '#errors/errors.js';

/** `POST /rest/imports` reads its own body as a stream: the JSON body parser and idempotency keys leave it alone. */
export function isImportUpload(req: Pick<Request, 'method' | 'originalUrl'>): boolean {
  return req.method === 'POST' && /^\/rest\/imports\/?$/.test(req.originalUrl.split('?')[0]);
}

/**
 * An upload answered before the end of its body (413, 429, a bad header row): the rest is
 * read and dropped so the client gets the answer. A client cut for being too slow (408) is
 * not waited for: its connection is closed once the answer is sent.
 */
export function afterUpload(req: Request, res: Response, refused: unknown): void {
  if (req.readableEnded) return;
  if (refused instanceof AppError && refused.status === 408) {
    res.setHeader('Connection', 'close');
    res.once('finish', () => req.socket.destroy());
  } else req.resume();
}
