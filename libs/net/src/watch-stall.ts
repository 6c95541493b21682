import type { Response } from 'express';
import { unacknowledgedBytes } from './unacknowledged-bytes.js';

/**
 * Destroys `res` once its client has taken no byte for `timeoutMs` while the response waits
 * for it to drain. "Taken" is what the client's TCP stack acknowledged (libs/net
 * unacknowledged-bytes.ts), not what the socket handed to the kernel: the kernel's send
 * buffer takes bytes in bursts a steady slow reader spaces out by a minute and more. Where
 * the kernel does not tell, the socket's own counters are all there is.
 */
export function watchStall(res: Response, timeoutMs: number): () => void {
  const tick = Math.min(1000, Math.max(50, Math.floor(timeoutMs / 4)));
  let stopped = false;
  let checking = false;
  let last: string | undefined;
  let since = Date.now();
  const check = async () => {
    const socket = res.socket;
    if (!res.writableNeedDrain || !socket) {
      last = undefined;
      since = Date.now();
      return;
    }
    const unacknowledged = await unacknowledgedBytes(socket);
    const mark = `${socket.bytesWritten}:${socket.writableLength}:${unacknowledged}`;
    if (stopped) return;
    if (mark !== last) {
      last = mark;
      since = Date.now();
    } else if (Date.now() - since >= timeoutMs) {
      stop();
      res.destroy(new Error(`the client took nothing for ${timeoutMs} ms`));
    }
  };
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    void check().finally(() => (checking = false));
  }, tick);
  timer.unref();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return stop;
}
