import { fieldType } from '../field-types/index.js';
import type { CustomField, CustomFieldObject } from './custom-fields.js';

/**
 * A field unique among a workspace's live records (docs/data-model.md, "Unique fields"):
 * `field` is its API path (`emails.primaryEmail`, `code`, `work.primaryEmail`), which is also
 * where a request body holds its value; `source` is where the stored row holds it (a path
 * into the row as JSON, as the `record_keys` triggers read it); `normalize` is how values
 * are compared: `lower` (trimmed, case-insensitive), `url` (also without scheme, `www.` and
 * trailing `/`) or `exact`.
 */
export interface UniqueField {
  object: CustomFieldObject;
  field: string;
  source: string[];
  normalize: 'exact' | 'lower' | 'url';
  builtIn: boolean;
}

/** The built-in fields that may be unique; workspaces created since unique fields came start with both on. */
export const BUILT_IN_UNIQUE_FIELDS: readonly UniqueField[] = [
  { object: 'people', field: 'emails.primaryEmail', source: ['primary_email'], normalize: 'lower', builtIn: true },
  { object: 'companies', field: 'domainName.primaryLinkUrl', source: ['domain_primary_link_url'], normalize: 'url', builtIn: true },
];

/** The unique-field entry of a custom field of a type that may be unique (its type's rule says which part is compared, and how). */
export function customUniqueField(field: Pick<CustomField, 'object' | 'name' | 'type'>): UniqueField | undefined {
  const rule = fieldType(field.type).unique;
  if (!rule) return undefined;
  return {
    object: field.object,
    field: rule.sub ? `${field.name}.${rule.sub}` : field.name,
    source: ['custom', field.name, ...(rule.sub ? [rule.sub] : [])],
    normalize: rule.normalize,
    builtIn: false,
  };
}

/** The raw value a request body gives for a unique field (a string or number), or undefined. */
export function uniqueValueIn(body: Record<string, unknown>, field: string): string | undefined {
  let value: unknown = body;
  for (const part of field.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' ? value : undefined;
}

/** A value as the `record_key_value` SQL function compares it (for messages and tests). */
export function normalizedKey(normalize: UniqueField['normalize'], raw: string): string | null {
  let value = raw;
  if (normalize !== 'exact') value = value.trim().toLowerCase();
  if (normalize === 'url') value = value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?(www\.)?/, '').replace(/\/+$/, '');
  return value === '' ? null : value;
}
