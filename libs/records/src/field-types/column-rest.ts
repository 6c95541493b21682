import { ApiProperty, ApiPropertyOptional } from './api-property.js';
import { IsOptional, IsString, IsUrl, MaxLength, ValidateBy } from 'class-validator';
import { normalizeTimestamp } from '../query/filter.js';
import { namedClass, property, type Ctor } from '../service/decorate.js';
import { LINK } from './shared.js';

/*
 * What the REST body classes and response models of the standard objects (rest-classes.ts)
 * share across the field types held in columns of their own: class-validator rules that
 * are not class-validator's own, and the classes of a link, made once.
 */

/** `acme.com` or `https://acme.com/x`: a bare domain is accepted and kept as given (docs/rest.md). */
export const URL_RULE = { require_protocol: false, protocols: ['http', 'https'] };
export const SAFE = Number.MAX_SAFE_INTEGER;

export const IsTimestamp = () =>
  ValidateBy({
    name: 'isTimestamp',
    validator: {
      validate: (value) => typeof value === 'string' && normalizeTimestamp(value) !== undefined,
      defaultMessage: (args) => `${args?.property} must be an ISO 8601 date or date-time such as 2026-12-31 or 2026-12-31T12:00:00Z`,
    },
  });

const inputs = new Map<string, Ctor>();
const models = new Map<string, Ctor>();

/** The class of `name`, made once: a composite type's input (`inputs`) or model (`models`), shared by every object. */
export function cached(kind: 'input' | 'model', name: string, build: (cls: Ctor) => void): Ctor {
  const map = kind === 'input' ? inputs : models;
  let cls = map.get(name);
  if (!cls) {
    cls = namedClass(name);
    map.set(name, cls);
    build(cls);
  }
  return cls;
}

export const linkInput = () =>
  cached('input', 'LinkInput', (cls) => {
    property(cls, 'url', String, [
      ApiProperty({ description: LINK.url.description, maxLength: LINK.url.maxLength, example: 'https://acme.com/about' }),
      IsString(),
      IsUrl(URL_RULE),
      MaxLength(LINK.url.maxLength),
    ]);
    property(cls, 'label', Object, [
      ApiPropertyOptional({ type: String, nullable: true, maxLength: LINK.label.maxLength, example: 'About us' }),
      IsOptional(),
      IsString(),
      MaxLength(LINK.label.maxLength),
    ]);
  });

export const linkModel = () =>
  cached('model', 'LinkModel', (cls) => {
    property(cls, 'url', String, [ApiProperty({ example: 'https://acme.com/about' })]);
    property(cls, 'label', Object, [ApiProperty({ type: String, nullable: true, example: 'About us' })]);
  });
