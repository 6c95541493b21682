import { parse } from 'csv-parse/sync';
import { CsvRecords, UnclosedQuote, type CsvRecord } from './csv-records.js';

/** RFC 4180 framing of import files (csv-records.ts): the same records whatever the pieces the file arrives in. */

const MAX = 1024 * 1024;

function frame(text: string | Buffer, cuts: number[] = [], o: { maxRecordBytes?: number } = {}): CsvRecord[] {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const reader = new CsvRecords({ maxCells: 100, maxRecordBytes: o.maxRecordBytes ?? MAX });
  const out: CsvRecord[] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(...reader.push(bytes.subarray(at, cut)));
    at = cut;
  }
  out.push(...reader.end());
  return out;
}

/** Every way of cutting the text in two and in three (every position), and byte by byte. */
function everyCut(text: string): number[][] {
  const n = Buffer.byteLength(text);
  const cuts: number[][] = [Array.from({ length: n }, (_, i) => i)];
  for (let a = 0; a <= n; a++) {
    cuts.push([a]);
    for (let b = a; b <= n; b += 3) cuts.push([a, b]);
  }
  return cuts;
}

describe('CsvRecords', () => {
  const samples = [
    'a,b\n1,2\n',
    'a,b\r\n"x ""y""",z\r\n',
    '\ufeffname,d\n"multi\nline, cell","q"\n\n\nlast,row',
    'a,b\n"unterminated""",x\n"",""\n',
    'a\n"x"\r\n"y"',
    'a,b\n"bad"oops,1\nnext,2\n',
    'a,b\nBro"ken,1\n1,2,3\nok,"fine"\n',
    'a,b\n"x"\ry,1\nok,2\r',
    'h\n\r\n \n"tail"\r',
  ];

  it.each(samples)('frames %j the same way at every cut', (text) => {
    const whole = frame(text);
    for (const cuts of everyCut(text)) expect(frame(text, cuts)).toEqual(whole);
  });

  it('reads what csv-parse reads in well-formed files, with lines and byte ends', () => {
    const text = '\ufeffname,d\r\n"Say ""hi""",a.com\r\n"Two\nlines",b\n\nplain,"q,uoted"\n"",\n';
    const records = frame(text);
    expect(records.map((r) => r.cells)).toEqual(parse(text, { bom: true, skip_empty_lines: true, record_delimiter: ['\r\n', '\n'] }));
    expect(records.map((r) => [r.line, r.lastLine])).toEqual([
      [1, 1],
      [2, 2],
      [3, 4],
      [6, 6],
      [7, 7],
    ]);
    expect(records[records.length - 1].end).toBe(Buffer.byteLength(text));
    expect(records[0].end).toBe(Buffer.byteLength('\ufeffname,d\r\n'));
  });

  it('refuses a bad closing quote alone and goes on at the next line', () => {
    const records = frame('a,b\n"name-bad,"oops\n"x","y"\n');
    expect(records.slice(1)).toEqual([
      { line: 2, lastLine: 2, end: 20, problem: expect.stringMatching(/^Invalid Closing Quote: "o" follows .* line 2/) },
      { line: 3, lastLine: 3, end: 28, cells: ['x', 'y'] },
    ]);
  });

  it('counts cells without keeping more than the header row has', () => {
    const wide = 'a,b\n' + 'x,'.repeat(200_000) + 'x\nok,1\n';
    const records = frame(wide);
    expect(records[1]).toMatchObject({ line: 2, problem: 'Invalid Record Length: this record has 200001 cells, the header row 2' });
    expect(records[2]).toMatchObject({ line: 3, cells: ['ok', '1'] });
    const header = frame('x,'.repeat(150) + 'x\n');
    expect(header[0]).toEqual({ line: 1, lastLine: 1, end: 302, problem: 'it has more than 100 cells' });
  });

  it('refuses a record longer than maxRecordBytes without keeping it, at any cut', () => {
    const text = 'a\n"' + 'y'.repeat(50) + '\n' + 'y'.repeat(50) + '"\nnext\n';
    const whole = frame(text, [], { maxRecordBytes: 40 });
    expect(whole.slice(1)).toEqual([
      { line: 2, lastLine: 3, end: 106, problem: 'the record is longer than 40 bytes' },
      { line: 4, lastLine: 4, end: 111, cells: ['next'] },
    ]);
    for (const cuts of [[5], [10, 60], [2, 50, 104, 105]]) expect(frame(text, cuts, { maxRecordBytes: 40 })).toEqual(whole);
  });

  it('throws UnclosedQuote with the line the quote opened on and the lines of the file', () => {
    const text = 'a,b\n1,2\n"open,3\n4,5\n6,7\n';
    for (const cuts of [[], [9], [3, 12]]) {
      let thrown: unknown;
      try {
        frame(text, cuts);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(UnclosedQuote);
      expect(thrown).toMatchObject({ line: 3, lastLine: 5 });
    }
  });

  it('resumes at a byte offset and line', () => {
    const text = 'a,b\n1,2\n"x\ny",3\n4,5\n';
    const all = frame(text);
    const from = all[1];
    const reader = new CsvRecords({ cells: 2, maxCells: 100, maxRecordBytes: MAX, offset: from.end, line: from.lastLine + 1 });
    const rest = [...reader.push(Buffer.from(text).subarray(from.end)), ...reader.end()];
    expect(rest).toEqual(all.slice(2));
    expect(reader.lines).toBe(5);
  });
});
