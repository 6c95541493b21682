import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { BadInputError, ErrorCode } from '#errors/errors.js';

function flatten(errors: ValidationError[], prefix: string, out: string[]): string[] {
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    // A required field left out: say so, not the length or type rules it also fails.
    if (error.value === undefined && error.constraints && !error.constraints.whitelistValidation) {
      out.push(`${path} is required`);
      continue;
    }
    for (const [rule, message] of Object.entries(error.constraints ?? {})) {
      if (rule === 'whitelistValidation') out.push(`${path} is not a known field`);
      else out.push(message.startsWith(error.property) ? path + message.slice(error.property.length) : `${path}: ${message}`);
    }
    flatten(error.children ?? [], path, out);
  }
  return out;
}

/** Keys class-transformer never copies onto the instance, so whitelisting alone would drop them silently. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** Records are at most three levels deep; anything far deeper is refused before it is walked. */
const MAX_DEPTH = 16;

/**
 * What class-validator cannot see: reserved keys (refused like any unknown field) and strings
 * holding U+0000, which Postgres text cannot store (it would fail the INSERT with a 500).
 */
function precheck(value: unknown, path: string, out: string[], depth = 0): string[] {
  if (depth > MAX_DEPTH) {
    out.push(`${path} is nested more than ${MAX_DEPTH} levels deep`);
  } else if (typeof value === 'string') {
    if (value.includes('\u0000')) out.push(`${path || 'body'} must not contain the NUL character (\\u0000)`);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => precheck(item, `${path}[${i}]`, out, depth + 1));
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      const child = path ? `${path}.${key}` : key;
      if (RESERVED_KEYS.has(key)) out.push(`${child} is not a known field`);
      else precheck((value as Record<string, unknown>)[key], child, out, depth + 1);
    }
  }
  return out;
}

/**
 * Validates a request body against an input class: types, formats, and unknown fields
 * (refused, never dropped). Messages name the field path and the rule.
 */
export function validateInput<T extends object>(cls: new () => T, raw: unknown, prefix = ''): T {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, `${prefix || 'body'} must be a JSON object`);
  }
  const pre = precheck(raw, prefix, []);
  if (pre.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...pre);
  const instance = plainToInstance(cls, raw);
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  if (errors.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...flatten(errors, prefix, []));
  return instance;
}
