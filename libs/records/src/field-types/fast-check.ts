import { isURL, maxLength } from 'class-validator';
import { URL_RULE } from './column-rest.js';
import { LINK } from './shared.js';

/*
 * The parts of input-fast-check.ts (a body certainly valid, checked without
 * class-validator's machinery) that the field types held in columns of their own share.
 */

export type Check = (value: unknown) => boolean;

/** A JSON object (a plain or null-prototype object, not an array). */
function plainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A string Postgres can store (no U+0000, which validateInput's precheck refuses). */
const storable = (value: string) => !value.includes('\u0000');
export const text = (value: unknown): value is string => typeof value === 'string' && storable(value);
export const absent = (value: unknown) => value === undefined || value === null;

/** Every key is a known one, each known key's value passes its check, and the required keys are there. */
export function objectOf(checks: ReadonlyMap<string, Check>, required: readonly string[] = []): Check {
  return (value) => {
    if (!plainObject(value)) return false;
    for (const key of required) if (value[key] === undefined) return false;
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) return false;
      const check = checks.get(key);
      if (!check || !check(value[key])) return false;
    }
    // Own keys `for … in` does not see (non-enumerable ones) go the slow way.
    return Object.getOwnPropertyNames(value).length === Object.keys(value).length;
  };
}

export const link = objectOf(
  new Map<string, Check>([
    ['url', (v) => text(v) && isURL(v, URL_RULE) && maxLength(v, LINK.url.maxLength)],
    ['label', (v) => absent(v) || (text(v) && maxLength(v, LINK.label.maxLength))],
  ]),
  ['url'],
);
