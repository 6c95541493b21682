import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '#errors/errors.js';
import { parseLimit } from './limit.js';
import { rejection } from './rejection.spec-helper.js';

describe('parseLimit', () => {
  it('defaults to 60 when absent or empty', () => {
    expect(parseLimit(undefined)).toBe(60);
    expect(parseLimit('')).toBe(60);
  });

  it('reads digits, including 0 and leading zeros', () => {
    expect(parseLimit('0')).toBe(0);
    expect(parseLimit('1')).toBe(1);
    expect(parseLimit('007')).toBe(7);
    expect(parseLimit('200')).toBe(200);
  });

  it('cuts values above 200 to 200', () => {
    expect(parseLimit('201')).toBe(200);
    expect(parseLimit('99999999999999999999999')).toBe(200);
  });

  it('accepts non-negative integer numbers (GraphQL, MCP)', () => {
    expect(parseLimit(5)).toBe(5);
    expect(parseLimit(500)).toBe(200);
  });

  it.each(['1.5', '-1', 'abc', '1e3', ' 5', '5 ', '+5', '0x10', '５'])('rejects %j', (raw) => {
    const err = rejection(() => parseLimit(raw));
    expect(err.code).toBe(ErrorCode.INVALID_LIMIT);
    expect(err.status).toBe(400);
    expect(err.message).toContain('limit must be a non-negative integer (0 to 200)');
    expect(err.message).toContain(`got ${JSON.stringify(raw)}`);
  });

  it('gives the exact message for 1.5', () => {
    expect(rejection(() => parseLimit('1.5')).message).toBe('limit must be a non-negative integer (0 to 200); got "1.5"');
  });

  it.each([[['5', '6']], [-1], [1.5], [Number.NaN], [null], [{}], [true]])('rejects the non-string %p', (raw) => {
    const err = rejection(() => parseLimit(raw));
    expect(err.code).toBe(ErrorCode.INVALID_LIMIT);
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/^limit must be/);
  });

  it('says a repeated parameter was given more than once', () => {
    expect(rejection(() => parseLimit(['5', '6'])).message).toContain('more than once');
  });

  it('names another parameter when asked', () => {
    const err = rejection(() => parseLimit('x', 'first'));
    expect(err.message).toBe('first must be a non-negative integer (0 to 200); got "x"');
  });
});
