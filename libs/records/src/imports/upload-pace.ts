import { AppError, ErrorCode } from '#errors/errors.js';

const WINDOW_OVER = Symbol('window over');

const tooSlow = (minBytes: number, windowMs: number) =>
  new AppError(408, ErrorCode.REQUEST_TIMEOUT, [
    `the upload sent fewer than ${minBytes} bytes in ${windowMs} ms; send at least that much in every such window`,
  ]);

/**
 * The body's pieces as they arrive, cut with 408 when the client sends fewer than `minBytes`
 * in a window of `windowMs` spent waiting for it (docs/rest.md "Imports"): a client dripping
 * bytes would otherwise hold an upload slot for as long as it likes. Time spent storing what
 * arrived (a slow database slows the client on purpose) is not counted against it.
 */
export async function* atMinimumPace(body: AsyncIterable<Buffer>, minBytes: number, windowMs: number): AsyncGenerator<Buffer> {
  if (minBytes <= 0) {
    yield* body;
    return;
  }
  const pieces = body[Symbol.asyncIterator]();
  let got = 0;
  let waited = 0;
  /** At the end of a window: cut the upload, or start the next window. */
  const windowEnds = () => {
    if (got < minBytes) throw tooSlow(minBytes, windowMs);
    got = 0;
    waited = 0;
  };
  for (;;) {
    const next = pieces.next();
    // The piece never read if the upload is cut goes with the connection, which is closed after the answer.
    next.catch(() => undefined);
    let result: IteratorResult<Buffer> | typeof WINDOW_OVER;
    do {
      const since = performance.now();
      let timer: NodeJS.Timeout | undefined;
      result = await Promise.race([
        next,
        new Promise<typeof WINDOW_OVER>((resolve) => (timer = setTimeout(() => resolve(WINDOW_OVER), Math.max(0, windowMs - waited)))),
      ]);
      clearTimeout(timer);
      waited += performance.now() - since;
      if (result === WINDOW_OVER) windowEnds();
    } while (result === WINDOW_OVER);
    if (result.done) return;
    got += result.value.length;
    if (waited >= windowMs) windowEnds();
    yield result.value;
  }
}
