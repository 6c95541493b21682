import { arrayMaxSize, isEmail, isIn, isInt, isNumber, isUUID, isURL, matches, max, maxLength, min } from 'class-validator';
import { composite, CURRENCY_CODE, LINK, type FieldDeclaration, type ObjectDeclaration, type SubField } from '../objects/index.js';
import { normalizeTimestamp } from '../query/index.js';
import { URL_RULE } from './rest-classes.js';

/*
 * A body that is certainly valid, checked without class-validator's machinery: the same rules
 * as the object's input classes (rest-classes.ts), applied with class-validator's own
 * functions (isEmail, isURL, maxLength, … with the same options), field by field. It answers
 * only "valid" or "not sure": on "not sure" the input classes run as before and say what is
 * wrong, so every error message comes from one place. plainToInstance + validateSync took
 * 13.5 µs per company body, this check 3.4 µs (20,000 bodies, warm; docs/benchmark.md).
 * input-fast-check.spec.ts compares the two on generated bodies: whatever this accepts,
 * the classes accept too, and both give the same columns.
 */

type Check = (value: unknown) => boolean;

const SAFE = Number.MAX_SAFE_INTEGER;

/** A JSON object (a plain or null-prototype object, not an array). */
function plainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A string Postgres can store (no U+0000, which validateInput's precheck refuses). */
const storable = (value: string) => !value.includes('\u0000');
const text = (value: unknown): value is string => typeof value === 'string' && storable(value);
const absent = (value: unknown) => value === undefined || value === null;

/** Every key is a known one, each known key's value passes its check, and the required keys are there. */
function objectOf(checks: ReadonlyMap<string, Check>, required: readonly string[] = []): Check {
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

const link = objectOf(
  new Map<string, Check>([
    ['url', (v) => text(v) && isURL(v, URL_RULE) && maxLength(v, LINK.url.maxLength)],
    ['label', (v) => absent(v) || (text(v) && maxLength(v, LINK.label.maxLength))],
  ]),
  ['url'],
);

function subCheck(sub: SubField): Check {
  switch (sub.kind) {
    case 'text': {
      const format: Check =
        sub.format === 'email'
          ? (v) => isEmail(v)
          : sub.format === 'url'
            ? (v) => isURL(v as string, URL_RULE)
            : sub.format === 'currency'
              ? (v) => matches(v as string, CURRENCY_CODE)
              : () => true;
      const length: Check = sub.format === 'currency' ? () => true : (v) => maxLength(v, sub.maxLength!);
      return (v) => absent(v) || (text(v) && format(v) && length(v));
    }
    case 'bigint':
      return (v) => absent(v) || (isInt(v) && min(v, -SAFE) && max(v, SAFE));
    case 'number':
      return (v) =>
        absent(v) ||
        (isNumber(v, { allowNaN: false, allowInfinity: false }) &&
          (sub.min === undefined || min(v, sub.min)) &&
          (sub.max === undefined || max(v, sub.max)));
    case 'textList':
      return (v) => absent(v) || (Array.isArray(v) && arrayMaxSize(v, sub.maxItems!) && v.every((item) => text(item) && isEmail(item)));
    case 'linkList':
      return (v) => absent(v) || (Array.isArray(v) && arrayMaxSize(v, sub.maxItems!) && v.every(link));
  }
}

function fieldCheck(field: FieldDeclaration, mode: 'create' | 'update'): Check {
  switch (field.kind) {
    case 'text': {
      const valid = (v: unknown) => text(v) && v !== '' && maxLength(v, field.maxLength);
      if (!field.required) return (v) => absent(v) || (text(v) && maxLength(v, field.maxLength));
      return mode === 'create' ? valid : (v) => v === undefined || valid(v);
    }
    case 'enum': {
      const values = [...field.values];
      return (v) => v === undefined || isIn(v, values);
    }
    case 'timestamp':
      return (v) => absent(v) || (text(v) && normalizeTimestamp(v) !== undefined);
    case 'relation':
      return (v) => absent(v) || isUUID(v);
    case 'composite': {
      const nested = objectOf(new Map(composite(field.type).subFields.map((sub) => [sub.name, subCheck(sub)])));
      return (v) => absent(v) || nested(v);
    }
  }
}

/** `(body) => true` only when the object's create (or update) input class would accept the body. */
export function fastInputCheck(object: ObjectDeclaration, mode: 'create' | 'update'): (body: unknown) => boolean {
  const checks = new Map<string, Check>();
  if (mode === 'create') checks.set('id', (v) => v === undefined || isUUID(v));
  for (const field of object.fields) checks.set(field.name, fieldCheck(field, mode));
  const required = mode === 'create' ? object.fields.filter((f) => f.kind === 'text' && f.required).map((f) => f.name) : [];
  return objectOf(checks, required);
}
