import type { Response } from 'express';
import { pipeline } from 'node:stream';
import type { RunningExport } from '../records/exports.service.js';

/**
 * An export as the HTTP answer (docs/rest.md "Exports"): headers, then Postgres's bytes piped
 * with backpressure, so a slow reader slows the statement rather than filling memory.
 *
 * - The client goes away: the pipe breaks and the export is finished with that error, which
 *   closes its connection and so stops the statement (exports.service.ts).
 * - The client stays but reads nothing (its socket accepts no byte while the response waits
 *   to drain) for `stallTimeoutMs`: the response is destroyed, with the same effect. A slow
 *   reader that makes any progress is never cut.
 * - The statement fails midway: the response is destroyed without its last chunk, so the
 *   client sees a broken transfer, never a short file that looks complete.
 */
export function sendExport(res: Response, running: RunningExport, stallTimeoutMs: number): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', running.contentType);
  res.setHeader('Content-Disposition', `attachment; filename="${running.filename}"`);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (res.req.method === 'HEAD') {
    // The headers are the answer (Express routes HEAD to GET handlers): the statement is not run to the end for nothing.
    running.body.destroy();
    running.finish(new Error('HEAD request'));
    res.end();
    return Promise.resolve();
  }
  if (running.prefix) res.write(running.prefix);
  const watchdog = stallTimeoutMs > 0 ? watchStall(res, stallTimeoutMs) : undefined;
  return new Promise((resolve) => {
    pipeline(running.body, res, (err) => {
      clearInterval(watchdog);
      running.finish(err ?? undefined);
      resolve();
    });
  });
}

/** Destroys `res` once its socket has taken no byte for `timeoutMs` while the response waits for it to drain. */
function watchStall(res: Response, timeoutMs: number): NodeJS.Timeout {
  const tick = Math.min(1000, Math.max(50, Math.floor(timeoutMs / 4)));
  let lastBytes = -1;
  let since = Date.now();
  const timer = setInterval(() => {
    const bytes = res.socket?.bytesWritten ?? 0;
    if (!res.writableNeedDrain || bytes !== lastBytes) {
      lastBytes = bytes;
      since = Date.now();
    } else if (Date.now() - since >= timeoutMs) {
      clearInterval(timer);
      res.destroy(new Error(`the client read nothing for ${timeoutMs} ms`));
    }
  }, tick);
  timer.unref();
  return timer;
}
