import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { BadInputError, ErrorCode } from '#errors/errors.js';
import type { ObjectDefinition } from '../service/object-definitions.js';
import { CsvRecords, UnclosedQuote, type CsvRecord } from './csv-records.js';
import { checkHeader, importColumns, recordBody, type ImportColumn } from './import-columns.js';

/** One record of an uploaded file: its body, or why it cannot be one. */
export interface ImportItem {
  /** 1 = the first record after the header (CSV) or the first line (NDJSON). */
  row: number;
  /** The line of the file it starts on, and the line it ends on (a quoted CSV cell may hold line breaks). */
  line: number;
  lastLine: number;
  body?: Record<string, unknown>;
  problems?: string[];
  /** Bytes of the file up to the end of this record: where a resumed import reads on. */
  bytes: number;
}

/** Where a resumed import reads on: just past the last committed record, its row and its line. */
export interface ReadFrom {
  bytes: number;
  rows: number;
  lines: number;
}

/** Told the lines of the file read so far (blank lines and a header row count): the summary accounts for every line. */
export interface LinesRead {
  lines(count: number): void;
}

/** The file is kept in chunks of this size (the last one shorter). */
export const CHUNK_BYTES = 1024 * 1024;

/** A record (CSV) or line (NDJSON) longer than this is refused without being held whole. */
export const MAX_RECORD_BYTES = 1024 * 1024;

/**
 * The file is read in pieces of at most this size, the event loop yielded between them, so
 * that parsing never holds this process's requests for more than a few milliseconds.
 */
const PIECE_BYTES = 64 * 1024;

/** The file cannot be read on from here: the import fails with this message (the rows before it stay imported). */
export class UnreadableFile extends Error {}

/**
 * The most cells a record may have, and keys a JSON object of a line: the object's columns
 * (every field, every composite's sub-field, `id`), which no valid record exceeds.
 */
export function maxCells(def: ObjectDefinition): number {
  return importColumns(def).size;
}

/**
 * The header row of a CSV upload, from its first chunk (`whole`: the chunk is the whole
 * file): framed as the records are, and checked against the object's columns. A problem is
 * a 400 before anything is stored.
 */
export function csvHeader(head: Buffer, def: ObjectDefinition, whole: boolean): ImportColumn[] {
  const limit = maxCells(def);
  const reader = new CsvRecords({ maxCells: limit, maxRecordBytes: MAX_RECORD_BYTES });
  let first: CsvRecord | undefined;
  try {
    [first] = reader.push(head);
    if (!first && whole) [first] = reader.end();
  } catch (err) {
    if (!(err instanceof UnclosedQuote)) throw err;
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `the header row: a quote opens a cell on line ${err.line} and is never closed`);
  }
  const problem = first ? first.problem : reader.unfinishedProblem;
  if (problem) {
    const known = problem.startsWith('it has more than') ? `; ${def.object} has ${limit} columns` : '';
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `the header row is not a CSV record: ${problem}${known}`);
  }
  if (!first) throw new BadInputError(ErrorCode.VALIDATION_FAILED, `the header row must end within the first ${head.length} bytes`);
  if (first.line !== 1) return checkHeader([''], def);
  return checkHeader(first.cells!, def);
}

/** The file's chunks in pieces of at most PIECE_BYTES, with a turn for the event loop before each piece after the first. */
async function* pieces(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let first = true;
  for await (const chunk of chunks) {
    for (let at = 0; at < chunk.length; at += PIECE_BYTES) {
      if (!first) await yieldToEventLoop();
      first = false;
      yield chunk.subarray(at, at + PIECE_BYTES);
    }
  }
}

/**
 * The records of a CSV file in file order, a piece at a time (csv-records.ts frames them by
 * RFC 4180): each record's body, or why it is refused (a broken quote, another number of
 * cells than the header row's, over MAX_RECORD_BYTES), with its row and line. `columns` and
 * `from` resume an import past its committed rows. A quote that never closes throws
 * UnreadableFile once the file has been read to its end.
 */
export async function* csvItems(
  chunks: AsyncIterable<Buffer>,
  def: ObjectDefinition,
  resume?: { columns: ImportColumn[]; from: ReadFrom },
  read?: LinesRead,
): AsyncGenerator<ImportItem[]> {
  let columns = resume?.columns;
  let row = resume?.from.rows ?? 0;
  const reader = new CsvRecords({
    cells: columns?.length,
    maxCells: maxCells(def),
    maxRecordBytes: MAX_RECORD_BYTES,
    offset: resume?.from.bytes,
    line: resume ? resume.from.lines + 1 : 1,
  });
  const items = (records: CsvRecord[]): ImportItem[] => {
    const out: ImportItem[] = [];
    for (const record of records) {
      if (!columns) {
        // The header row, checked when the file was uploaded.
        if (record.problem) throw new UnreadableFile(`the header row is not a CSV record: ${record.problem}`);
        try {
          columns = checkHeader(record.cells!, def);
        } catch (err) {
          // The object's fields changed since the upload was checked.
          if (!(err instanceof BadInputError)) throw err;
          throw new UnreadableFile(`the header row: ${err.messages.join('; ')}`);
        }
        continue;
      }
      const item: ImportItem = { row: ++row, line: record.line, lastLine: record.lastLine, bytes: record.end };
      if (record.problem) item.problems = [`not a CSV record: ${record.problem}`];
      else {
        const problems: string[] = [];
        const body = recordBody(columns, record.cells!, problems);
        if (problems.length) item.problems = problems;
        else item.body = body;
      }
      out.push(item);
    }
    return out;
  };
  try {
    for await (const piece of pieces(chunks)) {
      const out = items(reader.push(piece));
      read?.lines(reader.lines);
      if (out.length) yield out;
    }
    const out = items(reader.end());
    read?.lines(reader.lines);
    if (out.length) yield out;
  } catch (err) {
    if (!(err instanceof UnclosedQuote)) throw err;
    throw new UnreadableFile(
      `line ${err.line}: a quote opens a cell there and is never closed, so by RFC 4180 the rest of the file (lines ${err.line} to ${err.lastLine}) is one cell; ` +
        `the rows before line ${err.line} were read, nothing from it on`,
    );
  }
}

/**
 * Whether every JSON object in `line` has at most `max` keys, read without parsing it (strings
 * skipped): a line of a hundred thousand keys is refused before JSON.parse spends tens of
 * milliseconds of the event loop on an object no record can be.
 */
export function keysWithin(line: string, max: number): boolean {
  const counts: number[] = [];
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) counts.push(0);
    else if (c === 0x7d) counts.pop();
    else if (c === 0x3a && counts.length && ++counts[counts.length - 1] > max) return false;
  }
  return true;
}

/**
 * The lines of an NDJSON file, each a JSON object shaped as a REST create body. Lines are
 * split on LF (a CR before it is dropped) across pieces; blank lines are skipped but counted,
 * so `row` is the line number. A line over MAX_RECORD_BYTES is refused without being held
 * whole, and one with an object of more keys than the object has columns without being parsed.
 */
export async function* ndjsonItems(
  chunks: AsyncIterable<Buffer>,
  def: ObjectDefinition,
  from?: ReadFrom,
  read?: LinesRead,
): AsyncGenerator<ImportItem[]> {
  const limit = maxCells(def);
  let carry: Buffer[] = [];
  let carried = 0;
  let tooLong = false;
  let line = from?.lines ?? 0;
  let bytes = from?.bytes ?? 0;
  const take = (piece: Buffer, items: ImportItem[]) => {
    line++;
    const item = { row: line, line, lastLine: line, bytes };
    if (tooLong) {
      tooLong = false;
      items.push({ ...item, problems: [`the line is longer than ${MAX_RECORD_BYTES} bytes`] });
      return;
    }
    let text = piece.toString('utf8');
    if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return;
    if (!keysWithin(text, limit)) {
      items.push({ ...item, problems: [`the line has an object of more than ${limit} keys (${def.object} has ${limit} columns)`] });
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      items.push({ ...item, problems: [`not valid JSON: ${(err as Error).message.slice(0, 200)}`] });
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      items.push({ ...item, problems: ['each line must be a JSON object (a record as a REST create takes it)'] });
    else items.push({ ...item, body: value as Record<string, unknown> });
  };
  for await (const chunk of pieces(chunks)) {
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
    read?.lines(line);
    if (items.length) yield items;
  }
  const last: ImportItem[] = [];
  if (carried || tooLong) take(Buffer.concat(carry), last);
  read?.lines(line);
  if (last.length) yield last;
}
