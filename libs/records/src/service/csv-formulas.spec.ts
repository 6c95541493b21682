import { csvCell, guardedCell, unguardedCell } from './csv-formulas.js';

describe('CSV cells made outside Postgres (refused rows of an import)', () => {
  it('puts a quote before text a spreadsheet would run as a formula, as guardedCellSql does, and imports take it off', () => {
    for (const formula of ['=1+1', '+cmd', '-2+3', '@SUM(A1)', '\tx', '\rx', "'=already quoted", "''+twice"]) {
      expect(guardedCell(formula)).toBe(`'${formula}`);
      expect(unguardedCell(guardedCell(formula))).toBe(formula);
    }
    for (const text of ['name is not a known field', "it's fine", "'quoted", '', '5 = 5']) expect(guardedCell(text)).toBe(text);
  });

  it('quotes a cell only when it holds a comma, a quote or a line break (RFC 4180), doubling its quotes', () => {
    expect(csvCell('plain text')).toBe('plain text');
    expect(csvCell('a, b')).toBe('"a, b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('cr\r')).toBe('"cr\r"');
  });
});
