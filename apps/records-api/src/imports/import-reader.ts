import { parse, type CsvError } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import type { ObjectDefinition } from '../records/object-definitions.js';
import { checkHeader, recordBody, type ImportColumn } from './import-columns.js';

/** One record of an uploaded file: its body, or why it cannot be one. */
export interface ImportItem {
  /** 1 = the first record after the header (CSV) or the first line (NDJSON). */
  row: number;
  body?: Record<string, unknown>;
  problems?: string[];
  /** Bytes of the file read up to the end of this record (progress). */
  bytes: number;
}

/** A record (CSV) or line (NDJSON) longer than this is refused, so a broken quote cannot make the parser hold the rest of the file. */
export const MAX_RECORD_BYTES = 1024 * 1024;

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The header row of a CSV upload, from its first bytes: parsed with csv-parse like the rest
 * (BOM, quotes, CRLF), and checked against the object's columns (400 before anything is queued).
 */
export function csvHeader(head: Buffer, def: ObjectDefinition): ImportColumn[] {
  const body = head.subarray(0, 3).equals(UTF8_BOM) ? head.subarray(3) : head;
  if (body[0] === 0x0a || (body[0] === 0x0d && body[1] === 0x0a)) return checkHeader([''], def);
  const newline = body.indexOf(0x0a);
  let first: string[] | undefined;
  try {
    // The first line alone; a header cell holding a newline is not a field path anyway.
    [first] = parseSync(newline < 0 ? body : body.subarray(0, newline + 1), { to_line: 1, relax_column_count: true }) as string[][];
  } catch (err) {
    return checkHeader([`(unreadable: ${(err as Error).message})`], def);
  }
  return checkHeader(first ?? [''], def);
}

/**
 * The records of a CSV file, in order, from its chunks: csv-parse (RFC 4180 quoting, BOM,
 * CRLF or LF) called on one chunk at a time, whose `on_record`/`on_skip` hooks run while the
 * chunk is parsed, so each call yields that chunk's records and refused records in file order.
 * A record csv-parse refuses (a broken quote, a wrong number of cells, one over
 * MAX_RECORD_BYTES) is a problem of that row; parsing goes on with the next.
 */
export async function* csvItems(chunks: AsyncIterable<Buffer>, def: ObjectDefinition): AsyncGenerator<ImportItem[]> {
  let columns: ImportColumn[] | undefined;
  let row = 0;
  let items: ImportItem[] = [];
  const parser = parse({
    bom: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: MAX_RECORD_BYTES,
    on_record: (cells: string[], context) => {
      if (!columns) {
        columns = checkHeader(cells, def);
        return null;
      }
      const problems: string[] = [];
      const body = recordBody(columns, cells, problems);
      items.push({ row: ++row, bytes: context.bytes, ...(problems.length ? { problems } : { body }) });
      return null;
    },
    on_skip: (err: CsvError | undefined) => {
      items.push({ row: ++row, bytes: parser.info.bytes, problems: [`not a CSV record: ${err?.message ?? 'unreadable'}`] });
      return undefined;
    },
  });
  let failure: Error | undefined;
  parser.on('error', (err) => (failure = err));
  // Records are taken in on_record; nothing is pushed to the readable side.
  parser.resume();
  for await (const chunk of chunks) {
    await new Promise<void>((resolve) => parser.write(chunk, () => resolve()));
    if (failure) throw failure;
    if (items.length) {
      yield items;
      items = [];
    }
  }
  await new Promise<void>((resolve) => parser.end(() => resolve()));
  if (failure) throw failure;
  if (items.length) yield items;
}

/**
 * The lines of an NDJSON file, each a JSON object shaped as a REST create body. Lines are
 * split on LF (a CR before it is dropped) across chunk boundaries; blank lines are skipped
 * but counted, so `row` is the line number. A line over MAX_RECORD_BYTES is refused without
 * being held whole.
 */
export async function* ndjsonItems(chunks: AsyncIterable<Buffer>): AsyncGenerator<ImportItem[]> {
  let carry: Buffer[] = [];
  let carried = 0;
  let tooLong = false;
  let line = 0;
  let bytes = 0;
  const take = (piece: Buffer, items: ImportItem[]) => {
    line++;
    if (tooLong) {
      tooLong = false;
      items.push({ row: line, bytes, problems: [`the line is longer than ${MAX_RECORD_BYTES} bytes`] });
      return;
    }
    let text = piece.toString('utf8');
    if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      items.push({ row: line, bytes, problems: [`not valid JSON: ${(err as Error).message.slice(0, 200)}`] });
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      items.push({ row: line, bytes, problems: ['each line must be a JSON object (a record as a REST create takes it)'] });
    else items.push({ row: line, bytes, body: value as Record<string, unknown> });
  };
  for await (const chunk of chunks) {
    const items: ImportItem[] = [];
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end >= 0; end = chunk.indexOf(0x0a, start)) {
      bytes += end + 1 - start;
      const piece = carry.length ? Buffer.concat([...carry, chunk.subarray(start, end)]) : chunk.subarray(start, end);
      carry = [];
      carried = 0;
      take(piece, items);
      start = end + 1;
    }
    const rest = chunk.subarray(start);
    bytes += rest.length;
    if (carried + rest.length > MAX_RECORD_BYTES) {
      tooLong = true;
      carry = [];
      carried = 0;
    } else if (rest.length) {
      carry.push(Buffer.from(rest));
      carried += rest.length;
    }
    if (items.length) yield items;
  }
  const last: ImportItem[] = [];
  if (carried || tooLong) take(Buffer.concat(carry), last);
  if (last.length) yield last;
}
