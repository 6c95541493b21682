import { inlineParams } from './inline-params.js';

describe('inlineParams', () => {
  it('writes each $n as a quoted literal, keeping the cast after it', () => {
    expect(inlineParams('SELECT 1 WHERE a = $1 AND b = ANY($2::uuid[]) AND c LIKE $3::text', ['x', ['u1', 'u2'], 'y%'])).toBe(
      "SELECT 1 WHERE a = 'x' AND b = ANY(ARRAY['u1', 'u2']::uuid[]) AND c LIKE 'y%'::text",
    );
    const ten = [...'abcdefghij'];
    expect(inlineParams(ten.map((_, i) => `$${i + 1}`).join(','), ten)).toBe(ten.map((v) => `'${v}'`).join(','));
  });

  it('quotes what would end or escape a literal', () => {
    expect(inlineParams('$1', ["O'Brien"])).toBe("'O''Brien'");
    expect(inlineParams('$1', ['back\\slash'])).toBe(" E'back\\\\slash'");
    expect(inlineParams('$1', ["'); DROP TABLE companies; --"])).toBe("'''); DROP TABLE companies; --'");
    expect(inlineParams('ARRAY[$1]', [[]])).toBe('ARRAY[ARRAY[]]');
  });

  it('leaves $n inside literals, quoted identifiers and comments alone', () => {
    expect(inlineParams(`SELECT '$1', "$1", E'\\'$1', x -- $1\n, /* $1 */ $1`, ['v'])).toBe(
      `SELECT '$1', "$1", E'\\'$1', x -- $1\n, /* $1 */ 'v'`,
    );
    expect(inlineParams(`SELECT 'it''s $1', $1`, ['v'])).toBe(`SELECT 'it''s $1', 'v'`);
  });

  it('refuses what it cannot write safely', () => {
    expect(() => inlineParams('$1', [1])).toThrow(/neither a string/);
    expect(() => inlineParams('$1', [{ a: 1 }])).toThrow(/neither a string/);
    expect(() => inlineParams('$2', ['a'])).toThrow(/\$2 has no value/);
    expect(() => inlineParams('$1', ['a', 'b'])).toThrow(/not used/);
    expect(() => inlineParams('$1', ['a\u0000'])).toThrow(/NUL/);
    expect(() => inlineParams(`'open`, [])).toThrow(/unterminated/);
    expect(() => inlineParams('$$x$$', [])).toThrow(/dollar-quoted/);
  });
});
