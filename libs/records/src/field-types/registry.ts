import { address } from './address.js';
import { boolean } from './boolean.js';
import { currency } from './currency.js';
import { date } from './date.js';
import { dateTime } from './date-time.js';
import { emails } from './emails.js';
import { fullName } from './full-name.js';
import { links } from './links.js';
import { multiSelect } from './multi-select.js';
import { number } from './number.js';
import { phones } from './phones.js';
import { rating } from './rating.js';
import { richText } from './rich-text.js';
import { relation } from './relation.js';
import { select } from './select.js';
import { text } from './text.js';
import type { ColumnSurface, CompositeType, FieldType } from './types.js';
import { uuid } from './uuid.js';

/*
 * Every field type, once (docs/decisions/0056-field-type-registry.md), in the order lists
 * show them (the metadata API's messages, the settings page). Adding a type: its module,
 * its line here, and a migration that lets `custom_fields.type` hold it.
 */
const BY_NAME = {
  TEXT: text,
  NUMBER: number,
  BOOLEAN: boolean,
  DATE: date,
  DATE_TIME: dateTime,
  SELECT: select,
  MULTI_SELECT: multiSelect,
  RATING: rating,
  CURRENCY: currency,
  LINKS: links,
  EMAILS: emails,
  PHONES: phones,
  FULL_NAME: fullName,
  ADDRESS: address,
  RICH_TEXT: richText,
  UUID: uuid,
} satisfies Record<string, FieldType>;

export type FieldTypeName = keyof typeof BY_NAME;

/**
 * Types that are no value of a type list (RELATION: docs/decisions/0062-standard-fields-in-the-registry.md):
 * the standard objects' links, and a custom relation's two fields, which the metadata API
 * makes from a `relation` of their own (docs/decisions/0066-relations.md), not from the type list.
 */
const STANDARD_ONLY = { RELATION: relation } satisfies Record<string, FieldType>;

/** A type a standard object's field may have: any custom field's, and those of STANDARD_ONLY. */
export type StandardTypeName = FieldTypeName | keyof typeof STANDARD_ONLY;

for (const [name, type] of [...Object.entries(BY_NAME), ...Object.entries(STANDARD_ONLY)]) {
  if (type.name !== name) throw new Error(`field type ${type.name} is registered as ${name}`);
}

export const FIELD_TYPES: readonly FieldType[] = Object.values(BY_NAME);
export const FIELD_TYPE_NAMES = Object.keys(BY_NAME) as FieldTypeName[];

/** The module of a type (a name read from `custom_fields`, which its CHECK keeps to these, or a standard field's). */
export function fieldType(name: string): FieldType {
  if (Object.hasOwn(BY_NAME, name)) return BY_NAME[name as FieldTypeName];
  if (Object.hasOwn(STANDARD_ONLY, name)) return STANDARD_ONLY[name as keyof typeof STANDARD_ONLY];
  throw new Error(`unknown field type ${name}`);
}

/** Composite types by name: the standard objects' composite fields (declaration.ts) name one. */
export const COMPOSITES: Record<string, CompositeType> = Object.fromEntries(
  FIELD_TYPES.flatMap((type) => (type.composite ? [[type.name, type.composite]] : [])),
);

export function composite(type: string): CompositeType {
  const found = Object.hasOwn(COMPOSITES, type) ? COMPOSITES[type] : undefined;
  if (!found) throw new Error(`unknown composite type ${type}`);
  return found;
}

/** What a standard object's field of this type is on the surfaces of columns (ColumnSurface). */
export function columnSurface(name: string): ColumnSurface {
  const surface = fieldType(name).column;
  if (!surface) throw new Error(`a standard object's field cannot be of type ${name}`);
  return surface;
}
