import { jsonDepthExceeds, MAX_JSON_DEPTH } from './json-depth.js';

const bytes = (text: string) => Buffer.from(text);
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('jsonDepthExceeds', () => {
  it('allows MAX_JSON_DEPTH levels and refuses one more, arrays and objects alike', () => {
    expect(jsonDepthExceeds(bytes(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(jsonDepthExceeds(bytes(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    const objects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    expect(jsonDepthExceeds(bytes(objects(MAX_JSON_DEPTH)))).toBe(false);
    expect(jsonDepthExceeds(bytes(objects(MAX_JSON_DEPTH + 1)))).toBe(true);
  });

  it('measures nesting, not the number of brackets', () => {
    const wide = `[${Array.from({ length: 10_000 }, () => '[1]').join(',')}]`;
    expect(jsonDepthExceeds(bytes(wide))).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ name: '['.repeat(500), other: 'say \\"[[[[\\" and "{{{{"' + '{'.repeat(500) });
    expect(jsonDepthExceeds(bytes(text))).toBe(false);
    expect(jsonDepthExceeds(bytes(`["\\\\", ${nested(MAX_JSON_DEPTH)}]`))).toBe(true);
  });

  it('reads a megabyte of brackets without recursion', () => {
    expect(jsonDepthExceeds(bytes('['.repeat(1_000_000)))).toBe(true);
  });
});
