import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { BadInputError, ErrorCode } from '../../../../libs/records/src/errors.js';

function flatten(errors: ValidationError[], prefix: string, out: string[]): string[] {
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    for (const [rule, message] of Object.entries(error.constraints ?? {})) {
      if (rule === 'whitelistValidation') out.push(`${path} is not a known field`);
      else out.push(message.startsWith(error.property) ? path + message.slice(error.property.length) : `${path}: ${message}`);
    }
    flatten(error.children ?? [], path, out);
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
  const instance = plainToInstance(cls, raw);
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  if (errors.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...flatten(errors, prefix, []));
  return instance;
}
