import type { Response } from 'express';
import { pipeline } from 'node:stream';
import { watchStall } from '#net/watch-stall.js';
import type { RunningExport } from '#records/service/exports.service.js';

/**
 * An export as the HTTP answer (docs/rest.md "Exports"): headers, then Postgres's bytes piped
 * with backpressure, so a slow reader slows the statement rather than filling memory.
 *
 * - The client goes away: the pipe breaks and the export is finished with that error, which
 *   closes its connection and so stops the statement (exports.service.ts).
 * - The client stays but takes nothing (its TCP stack acknowledges no byte while the
 *   response waits to drain) for `stallTimeoutMs`: the response is destroyed, with the same
 *   effect. A slow reader is not cut: each step its receive window reopens is progress.
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
  const stopWatching = stallTimeoutMs > 0 ? watchStall(res, stallTimeoutMs) : undefined;
  return new Promise((resolve) => {
    pipeline(running.body, res, (err) => {
      stopWatching?.();
      running.finish(err ?? undefined);
      resolve();
    });
  });
}
