import { isoFromTimestamptz } from './sql.js';

describe('isoFromTimestamptz', () => {
  it.each([
    ['2026-11-22 05:16:25.092+00', '2026-11-22T05:16:25.092Z'],
    ['2026-11-22 05:16:25.09+00', '2026-11-22T05:16:25.090Z'],
    ['2026-11-22 05:16:25+00', '2026-11-22T05:16:25.000Z'],
    ['2026-11-22 05:16:25.123456+00', '2026-11-22T05:16:25.123Z'],
  ])('%s → %s', (text, iso) => {
    expect(isoFromTimestamptz(text)).toBe(iso);
  });

  it('falls back to a Date for other zones', () => {
    expect(isoFromTimestamptz('2026-11-22 07:16:25.5+02')).toBe('2026-11-22T05:16:25.500Z');
  });
});
