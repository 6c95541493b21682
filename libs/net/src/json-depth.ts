/**
 * How deeply JSON bodies may nest. Records, filters and JSON-RPC messages need a dozen
 * levels; code that walks a body recursively (`JSON.stringify`, schema validators) overflows
 * the stack near a few thousand, which 1 MB of `[` reaches easily.
 */
export const MAX_JSON_DEPTH = 64;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * The deepest nesting of a JSON text, read from its raw bytes before it is parsed, stopping
 * as soon as it passes `max`: one linear pass, no recursion, nothing allocated. Brackets
 * inside strings do not count. Malformed text is measured as it stands; the parser then
 * refuses it.
 */
export function jsonDepthExceeds(bytes: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

/** An error for body-parser's `verify` hook: http-errors keeps its `status` and `type`. */
export class JsonTooDeepError extends Error {
  readonly status = 400;
  readonly statusCode = 400;
  readonly expose = true;
  readonly type = 'entity.too.deep';

  constructor(readonly max = MAX_JSON_DEPTH) {
    super(`The request body nests deeper than ${max} levels of objects and arrays`);
  }
}

/** body-parser's `verify` option: refuses a body nested deeper than MAX_JSON_DEPTH before it is parsed. */
export function verifyJsonDepth(_req: unknown, _res: unknown, buf: Buffer): void {
  if (jsonDepthExceeds(buf)) throw new JsonTooDeepError();
}
