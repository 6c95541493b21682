import type { Response } from 'express';
import type { Principal } from '#auth/principal.js';
import { loadConfig } from '#config/config.js';
import { BadInputError, ErrorCode } from '#errors/errors.js';
import { csvCell, guardedCell } from '../service/csv-formulas.js';
import { watchStall } from '#net/watch-stall.js';
import type { ImportsService, RefusedRow } from './imports.service.js';

/** How `GET …/imports/{id}/errors` writes the refused rows (docs/rest.md "Imports"). */
export type ErrorsFormat = 'ndjson' | 'csv';

const FORMATS: Record<ErrorsFormat, { type: string; line: (r: RefusedRow) => string }> = {
  ndjson: { type: 'application/x-ndjson; charset=utf-8', line: (r) => `${JSON.stringify(r)}\n` },
  // A reason can start with text of the file (an NDJSON key is named first): it gets the `'` an export gives a formula.
  csv: { type: 'text/csv; charset=utf-8', line: (r) => `${r.row},${r.line ?? ''},${csvCell(guardedCell(r.messages.join('; ')))}\n` },
};

/** `format=ndjson` (the default) or `format=csv`; anything else is a 400. */
export function errorsFormat(query: Record<string, unknown>): ErrorsFormat {
  const format = query.format;
  if (format === undefined) return 'ndjson';
  if (typeof format !== 'string') throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'format must be given once');
  if (format !== 'ndjson' && format !== 'csv')
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `format must be ndjson or csv; got "${format.slice(0, 100)}"`);
  return format;
}

/**
 * The refused rows of an import as the HTTP answer, for the REST route and the settings
 * page alike. The import is checked (404, 403) before any header is sent; then the rows go
 * out a page at a time as the client takes them (ImportsService.errors reads 1000 per
 * statement), so memory stays bounded at any count. A client that leaves stops the reading;
 * one that takes nothing for EXPORT_STALL_TIMEOUT_MS is cut, as an export's would be; a
 * failure midway breaks the transfer rather than end a short list that looks whole.
 */
export async function sendImportErrors(
  res: Response,
  imports: ImportsService,
  principal: Principal,
  id: string,
  format: ErrorsFormat,
): Promise<void> {
  const { type, line } = FORMATS[format];
  let started = false;
  let gone = false;
  let stopWatching: (() => void) | undefined;
  res.on('close', () => (gone = true));
  const start = () => {
    started = true;
    res.status(200);
    res.setHeader('Content-Type', type);
    res.setHeader('Cache-Control', 'no-store');
    if (format === 'csv') {
      // `id` is a UUID here: the import was found by it.
      res.setHeader('Content-Disposition', `attachment; filename="import-${id}-refused-rows.csv"`);
      res.write('row,line,reason\n');
    }
    const stall = loadConfig().exports.stallTimeoutMs;
    if (stall > 0) stopWatching = watchStall(res, stall);
  };
  try {
    await imports.errors(principal, id, async (refused) => {
      if (gone) return false;
      if (!started) start();
      if (!res.write(line(refused))) await drained(res);
      return !gone;
    });
  } catch (err) {
    if (!started) throw err;
    res.destroy(err as Error);
    return;
  } finally {
    stopWatching?.();
  }
  if (!started) start();
  res.end();
}

/** Resolves when `res` may be written again, or has closed; leaves no listener behind. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
