/**
 * The records of a CSV file by RFC 4180, framed byte by byte as the file's pieces come in
 * (docs/decisions/0047-import-quotes-and-fairness.md): cells separated by commas, records by
 * LF or CRLF, a cell that starts with a quote runs to the quote that closes it (a doubled
 * quote inside is one quote; commas and line breaks inside are text), a UTF-8 BOM at the
 * start of the file is skipped, and an empty line is no record.
 *
 * A record that breaks these rules is refused on its own and framing goes on after it:
 * after a closing quote followed by anything but a comma or a line end, at the next LF; a
 * quote inside an unquoted cell is text and refuses its record; so does another number of
 * cells than the header row's (cells are counted, never kept past that number) and a record
 * longer than `maxRecordBytes` (its bytes are not kept). A quote that is never closed makes
 * the rest of the file one cell: `end()` throws UnclosedQuote, naming the line it opened on.
 */

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export interface CsvRecord {
  /** The line of the file the record starts on (1 = the first line). */
  line: number;
  /** The line its line end is on (a quoted cell may hold line breaks). */
  lastLine: number;
  /** The byte of the file just past the record and its line end. */
  end: number;
  cells?: string[];
  /** Why these bytes are not a record, when they are not one. */
  problem?: string;
}

/** The file ended inside a quoted cell that opened on `line`; the file has `lastLine` lines. */
export class UnclosedQuote extends Error {
  constructor(
    readonly line: number,
    readonly lastLine: number,
  ) {
    super(`a quote opens a cell on line ${line} and is never closed`);
  }
}

const enum State {
  /** Before the first byte of a cell. */
  CellStart,
  Unquoted,
  Quoted,
  /** A quote inside a quoted cell: doubled (text) or closing, as the next byte says. */
  QuoteInQuoted,
  /** A closing quote, then CR: only LF may follow. */
  ClosedThenCr,
  /** A record already refused for its quotes: the rest of its line is skipped. */
  SkipLine,
}

export interface CsvRecordsOptions {
  /**
   * The number of cells each record must have (the header row's), for an import resumed past
   * its header row; left out, the first record is the header row and sets it.
   */
  cells?: number;
  /** The header row may have at most this many cells. */
  maxCells: number;
  maxRecordBytes: number;
  /** Where in the file the first piece starts (a resumed import), and the line that is. */
  offset?: number;
  line?: number;
}

export class CsvRecords {
  /** The header row's number of cells, once it is read. */
  private expected: number | undefined;
  /**
   * The current record's bytes read in earlier pieces, at the start of `carry` (kept while the
   * record may still be read; grown by doubling, so a long record costs one copy of each byte).
   */
  private carry: Buffer | undefined;
  private carried = 0;
  /** File offset just past the bytes pushed so far. */
  private fileEnd: number;
  private line: number;
  private state = State.CellStart;
  private recordStart: number;
  private recordLine: number;
  private quoteLine = 0;
  /** File offset of the quote that may close the current quoted cell. */
  private quoteAt = 0;
  private cellStart: number;
  private cellQuoted = false;
  private cellEscapes = false;
  /** False once the record is refused (too long, too many cells, a bad quote): its bytes and cells are no longer kept. */
  private keep = true;
  private cells: string[] = [];
  private count = 0;
  private problem: string | undefined;
  private lastByte = -1;
  /** At the start of the file, bytes that may be the start of a BOM. */
  private head: Buffer | undefined;

  constructor(private readonly o: CsvRecordsOptions) {
    this.expected = o.cells;
    this.fileEnd = o.offset ?? 0;
    if (this.fileEnd === 0) this.head = Buffer.alloc(0);
    this.recordStart = this.cellStart = this.fileEnd;
    this.line = this.recordLine = o.line ?? 1;
  }

  /** Lines of the file read so far: every LF, and a last line without one. */
  get lines(): number {
    return this.lastByte >= 0 && this.lastByte !== LF ? this.line : this.line - 1;
  }

  /** Why the record read so far cannot be one, before it ends (a header row already past maxCells cells). */
  get unfinishedProblem(): string | undefined {
    return this.recordStart < this.fileEnd ? this.problem : undefined;
  }

  /** The records that end in `piece`, including those that began in earlier pieces. */
  push(piece: Buffer): CsvRecord[] {
    const out: CsvRecord[] = [];
    if (this.head) {
      // The file's first bytes, until they show whether it starts with a UTF-8 BOM.
      piece = Buffer.concat([this.head, piece]);
      if (piece.length < 3 && BOM.subarray(0, piece.length).equals(piece)) {
        this.head = piece;
        return out;
      }
      this.head = undefined;
      if (piece.subarray(0, 3).equals(BOM)) {
        piece = piece.subarray(3);
        this.fileEnd = this.recordStart = this.cellStart = 3;
      }
    }
    if (!piece.length) return out;
    const carried = this.carried;
    let buf = piece;
    if (carried) {
      if (this.carry!.length < carried + piece.length) {
        const grown = Buffer.allocUnsafe(Math.max(carried + piece.length, 2 * this.carry!.length));
        this.carry!.copy(grown, 0, 0, carried);
        this.carry = grown;
      }
      piece.copy(this.carry!, carried);
      buf = this.carry!.subarray(0, carried + piece.length);
    }
    /** File offset of buf[0]. */
    const base = this.fileEnd - carried;
    this.fileEnd += piece.length;
    this.lastByte = piece[piece.length - 1];
    for (let i = carried; i < buf.length; i++) {
      const c = buf[i];
      switch (this.state) {
        case State.CellStart:
          if (c === QUOTE) {
            this.state = State.Quoted;
            this.quoteLine = this.line;
            this.cellQuoted = true;
            this.cellStart = base + i + 1;
          } else if (c === COMMA) this.endCell(buf, base, base + i);
          else if (c === LF) this.endRecord(buf, base, base + i, out);
          else this.state = State.Unquoted;
          break;
        case State.Unquoted:
          if (c === COMMA) this.endCell(buf, base, base + i);
          else if (c === LF) this.endRecord(buf, base, base + i, out);
          else if (c === QUOTE && !this.problem)
            this.refuse(
              `Invalid Opening Quote: a quote inside an unquoted cell (cell ${this.count + 1}, line ${this.line}); quote the whole cell and double the quotes in it`,
            );
          break;
        case State.Quoted:
          if (c === QUOTE) {
            this.state = State.QuoteInQuoted;
            this.quoteAt = base + i;
          }
          break;
        case State.QuoteInQuoted:
          if (c === QUOTE) {
            this.state = State.Quoted;
            this.cellEscapes = true;
          } else if (c === COMMA) this.endCell(buf, base, base + i, this.quoteAt);
          else if (c === LF) this.endRecord(buf, base, base + i, out, this.quoteAt);
          else if (c === CR) this.state = State.ClosedThenCr;
          else this.refuseLine(c);
          break;
        case State.ClosedThenCr:
          if (c === LF) this.endRecord(buf, base, base + i, out, this.quoteAt);
          else this.refuseLine(CR);
          break;
        case State.SkipLine:
          if (c === LF) this.endRecord(buf, base, base + i, out);
          break;
      }
      if (c === LF) this.line++;
      if (this.keep && base + i + 1 - this.recordStart > this.o.maxRecordBytes)
        this.refuse(`the record is longer than ${this.o.maxRecordBytes} bytes`);
    }
    // A record that goes on in the next piece: its bytes so far, to read its cells once it ends.
    this.carried = 0;
    if (this.keep && this.recordStart < this.fileEnd) {
      const from = this.recordStart - base;
      const length = buf.length - from;
      if (buf === piece) {
        if (!this.carry || this.carry.length < length) this.carry = Buffer.allocUnsafe(Math.max(2 * length, 64 * 1024));
        piece.copy(this.carry, 0, from);
      } else if (from > 0) this.carry!.copyWithin(0, from, buf.length);
      this.carried = length;
    }
    return out;
  }

  /** The last record, when the file does not end with a line end; UnclosedQuote if it ends inside a quoted cell. */
  end(): CsvRecord[] {
    const out: CsvRecord[] = [];
    if (this.head?.length) {
      const head = this.head;
      this.head = undefined;
      out.push(...this.push(head));
    }
    if (this.state === State.Quoted) throw new UnclosedQuote(this.quoteLine, this.lines);
    if (this.recordStart < this.fileEnd) {
      const buf = this.carry?.subarray(0, this.carried) ?? Buffer.alloc(0);
      const closed = this.state === State.QuoteInQuoted || this.state === State.ClosedThenCr ? this.quoteAt : undefined;
      this.endRecord(buf, this.recordStart, this.fileEnd, out, closed);
      // No line end follows the last record.
      for (const record of out) record.end = this.fileEnd;
    }
    this.carry = undefined;
    this.carried = 0;
    return out;
  }

  /** The record is refused for `problem` (the first one found is kept): its bytes and cells are no longer kept. */
  private refuse(problem: string): void {
    this.problem ??= problem;
    this.keep = false;
    this.cells = [];
  }

  /** Ends the cell whose text ends before `end` (its closing quote, for a quoted cell); `at` is the comma or line end after it. */
  private endCell(buf: Buffer, base: number, at: number, closingQuote?: number): void {
    this.count++;
    if (this.expected === undefined && this.count > this.o.maxCells) this.refuse(`it has more than ${this.o.maxCells} cells`);
    // More cells than the header row's: refused at its end, when its count is known; none of its cells is kept meanwhile.
    if (this.expected !== undefined && this.count > this.expected && this.keep) {
      this.keep = false;
      this.cells = [];
    }
    if (this.keep && !this.problem) {
      let text = buf.toString('utf8', this.cellStart - base, (closingQuote ?? at) - base);
      if (this.cellEscapes) text = text.replaceAll('""', '"');
      this.cells.push(text);
    }
    this.state = State.CellStart;
    this.cellQuoted = false;
    this.cellEscapes = false;
    this.cellStart = at + 1;
  }

  /** A closing quote followed by `c`: the record is refused, and framing goes on at the next line. */
  private refuseLine(c: number): void {
    this.refuse(
      `Invalid Closing Quote: ${JSON.stringify(String.fromCharCode(c))} follows the quote that closes cell ${this.count + 1} on line ${this.line} (a quote inside a quoted cell is doubled: "")`,
    );
    this.state = State.SkipLine;
  }

  /** The line end at file offset `lf` (or the end of the file) ends the record: its last cell, then its checks. */
  private endRecord(buf: Buffer, base: number, lf: number, out: CsvRecord[], closingQuote?: number): void {
    if (this.state !== State.SkipLine) {
      let end = lf;
      // CRLF: the CR is not text of an unquoted last cell.
      if (closingQuote === undefined && end > this.cellStart && this.keep && buf[end - 1 - base] === CR) end--;
      if (this.count === 0 && !this.cellQuoted && end === this.cellStart && !this.problem) {
        this.nextRecord(lf + 1);
        return;
      }
      this.endCell(buf, base, end, closingQuote);
    }
    const record: CsvRecord = { line: this.recordLine, lastLine: this.line, end: lf + 1 };
    if (this.problem) record.problem = this.problem;
    else if (this.expected !== undefined && this.count !== this.expected)
      record.problem = `Invalid Record Length: this record has ${this.count} cell${this.count === 1 ? '' : 's'}, the header row ${this.expected}`;
    else record.cells = this.cells;
    this.expected ??= this.count;
    out.push(record);
    this.nextRecord(lf + 1);
  }

  private nextRecord(start: number): void {
    this.recordLine = this.line + 1;
    this.recordStart = this.cellStart = start;
    this.state = State.CellStart;
    this.cells = [];
    this.count = 0;
    this.cellQuoted = false;
    this.cellEscapes = false;
    this.keep = true;
    this.problem = undefined;
  }
}
