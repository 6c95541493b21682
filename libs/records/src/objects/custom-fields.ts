import { BadInputError, ErrorCode } from '#errors/errors.js';
import { isSafeIntegerText, normalizeTimestamp } from '../query/filter.js';
import type { FieldDef } from '../query/types.js';
import type { ObjectDeclaration } from './declaration.js';

/*
 * Custom fields: each workspace's own fields on companies, people and opportunities
 * (docs/data-model.md). Their definitions live in `custom_fields`, their values in the
 * record's `custom` jsonb column keyed by the field's API name (names never change).
 * This file holds the rules both ends share: which definitions are valid, which values a
 * field takes, and how the list parameters reach a value in SQL.
 */

export const CUSTOM_FIELD_TYPES = [
  'TEXT',
  'NUMBER',
  'BOOLEAN',
  'DATE',
  'DATE_TIME',
  'SELECT',
  'MULTI_SELECT',
  'RATING',
  'CURRENCY',
  'LINKS',
  'EMAILS',
  'PHONES',
] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

/** The standard objects, which every workspace has; a workspace's own objects take custom fields too (custom-objects.ts). */
export const CUSTOM_FIELD_OBJECTS: readonly string[] = ['companies', 'people', 'opportunities'];
export type CustomFieldObject = string;

export const MAX_CUSTOM_FIELDS = 100;
export const MAX_OPTIONS = 100;
export const NAME_RULE = /^[a-z][a-zA-Z0-9]{0,62}$/;
export const OPTION_VALUE_RULE = /^[A-Z][A-Z0-9_]*$/;
const MAX_OPTION_VALUE = 63;
const MAX_LABEL = 100;
const MAX_DESCRIPTION = 500;
/** TEXT values and composite text sub-fields. */
export const MAX_TEXT = 10_000;
const RATING_VALUES = ['RATING_1', 'RATING_2', 'RATING_3', 'RATING_4', 'RATING_5'];
const COLORS = ['green', 'turquoise', 'sky', 'blue', 'purple', 'pink', 'red', 'orange', 'yellow', 'gray'];

/**
 * Names no custom field may take on any object: record keys, GraphQL meta fields, filter
 * groups, and every member of Object.prototype (`constructor`, `toString`, `valueOf`, …),
 * which a plain object answers for even when it holds no such key.
 */
export const RESERVED_NAMES = new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  'id',
  'createdAt',
  'updatedAt',
  'deletedAt',
  'workspace',
  'workspaceId',
  'custom',
  'and',
  'or',
  'not',
  'position',
  'searchVector',
  'createdBy',
  'updatedBy',
  'cursor',
  'node',
  'edges',
  'totalCount',
  'pageInfo',
]);

export interface SelectOption {
  value: string;
  label: string;
  color: string | null;
  position: number;
}

/** A custom field as the metadata API shows it. */
export interface CustomField {
  id: string;
  object: CustomFieldObject;
  name: string;
  label: string;
  description: string | null;
  type: CustomFieldType;
  isNullable: boolean;
  defaultValue: unknown;
  isUnique: boolean;
  options: SelectOption[] | null;
  settings: { decimals?: number } | null;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

const COMPOSITE_SUBS: Partial<Record<CustomFieldType, { name: string; kind: 'text' | 'bigint' | 'textList' | 'linkList' }[]>> = {
  CURRENCY: [
    { name: 'amountMicros', kind: 'bigint' },
    { name: 'currencyCode', kind: 'text' },
  ],
  LINKS: [
    { name: 'primaryLinkUrl', kind: 'text' },
    { name: 'primaryLinkLabel', kind: 'text' },
    { name: 'secondaryLinks', kind: 'linkList' },
  ],
  EMAILS: [
    { name: 'primaryEmail', kind: 'text' },
    { name: 'additionalEmails', kind: 'textList' },
  ],
  PHONES: [
    { name: 'primaryPhoneNumber', kind: 'text' },
    { name: 'primaryPhoneCountryCode', kind: 'text' },
    { name: 'primaryPhoneCallingCode', kind: 'text' },
  ],
};

/** The sub-fields of a composite type, or undefined for a scalar type. */
export function compositeSubFields(type: CustomFieldType) {
  return COMPOSITE_SUBS[type];
}

/** The sub-field a composite sorts by (`amount` → amount.amountMicros). */
const SORT_SUB: Partial<Record<CustomFieldType, string>> = {
  CURRENCY: 'amountMicros',
  LINKS: 'primaryLinkUrl',
  EMAILS: 'primaryEmail',
  PHONES: 'primaryPhoneNumber',
};

export function optionValues(field: Pick<CustomField, 'type' | 'options'>): string[] {
  if (field.type === 'RATING') return RATING_VALUES;
  return (field.options ?? []).map((o) => o.value);
}

/** Names a custom field of `object` may not take: the reserved ones and every built-in field, relation and inverse. */
export function takenNames(object: ObjectDeclaration, all: readonly ObjectDeclaration[]): Set<string> {
  const names = new Set(RESERVED_NAMES);
  for (const field of object.fields) {
    names.add(field.name);
    if (field.kind === 'relation') names.add(field.relation);
  }
  for (const other of all)
    for (const field of other.fields) if (field.kind === 'relation' && field.target === object.plural) names.add(field.inverse);
  return names;
}

// ---------------------------------------------------------------------------------------
// Definitions (the metadata API)

type Input = Record<string, unknown>;
const CREATE_KEYS = [
  'object',
  'name',
  'label',
  'description',
  'type',
  'isNullable',
  'defaultValue',
  'isUnique',
  'options',
  'settings',
  'isActive',
];
const UPDATE_KEYS = ['label', 'description', 'isNullable', 'defaultValue', 'options', 'settings', 'isActive'];

function bad(...messages: string[]): BadInputError {
  return new BadInputError(ErrorCode.VALIDATION_FAILED, ...messages);
}

function isPlain(value: unknown): value is Input {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown, path: string, max: number, problems: string[], required: boolean): string | null | undefined {
  if (value === undefined) {
    if (required) problems.push(`${path} is required`);
    return undefined;
  }
  if (value === null && !required) return null;
  if (typeof value !== 'string' || (required && !value.trim())) {
    problems.push(`${path} must be a${required ? ' non-empty' : ''} string`);
    return undefined;
  }
  if (value.length > max) problems.push(`${path} must be at most ${max} characters`);
  if (value.includes('\u0000')) problems.push(`${path} must not contain the NUL character (\\u0000)`);
  return value;
}

function checkOptions(raw: unknown, problems: string[]): SelectOption[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) {
    problems.push('options must be a non-empty array of {value, label, color?, position?}');
    return undefined;
  }
  if (raw.length > MAX_OPTIONS) problems.push(`options: at most ${MAX_OPTIONS} are allowed; got ${raw.length}`);
  const seen = new Set<string>();
  const options: SelectOption[] = [];
  raw.slice(0, MAX_OPTIONS + 1).forEach((item, i) => {
    const path = `options[${i}]`;
    if (!isPlain(item)) return void problems.push(`${path} must be an object {value, label, color?, position?}`);
    for (const key of Object.keys(item))
      if (!['value', 'label', 'color', 'position'].includes(key)) problems.push(`${path}.${key} is not a known field`);
    const value = item.value;
    if (typeof value !== 'string' || !OPTION_VALUE_RULE.test(value) || value.length > MAX_OPTION_VALUE) {
      problems.push(
        `${path}.value must match ${OPTION_VALUE_RULE.source} (capitals, digits, _; at most ${MAX_OPTION_VALUE}), as in "GOLD"`,
      );
    } else if (seen.has(value)) problems.push(`${path}.value "${value}" appears twice`);
    else seen.add(value);
    const label = text(item.label ?? value, `${path}.label`, MAX_LABEL, problems, true);
    const color = item.color ?? null;
    if (color !== null && (typeof color !== 'string' || !COLORS.includes(color)))
      problems.push(`${path}.color must be one of ${COLORS.join(', ')}`);
    const position = item.position ?? i;
    if (typeof position !== 'number' || !Number.isInteger(position) || position < 0 || position > 10_000)
      problems.push(`${path}.position must be an integer from 0 to 10000`);
    options.push({ value: String(value), label: String(label ?? value), color: color as string | null, position: Number(position) });
  });
  return options.sort((a, b) => a.position - b.position);
}

function checkSettings(type: CustomFieldType, raw: unknown, problems: string[]): CustomField['settings'] | undefined {
  if (raw === undefined || raw === null) return null;
  if (!isPlain(raw)) return void problems.push('settings must be an object');
  if (type !== 'NUMBER') {
    if (Object.keys(raw).length) problems.push(`settings: ${type} fields take no settings`);
    return null;
  }
  for (const key of Object.keys(raw))
    if (key !== 'decimals') problems.push(`settings.${key} is not a known setting; NUMBER takes decimals`);
  const decimals = raw.decimals;
  if (decimals !== undefined && (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 8)) {
    problems.push('settings.decimals must be an integer from 0 to 8');
  }
  return decimals === undefined ? {} : { decimals: decimals as number };
}

/** Types a custom field may be unique with (docs/data-model.md, "Unique fields"). */
export const UNIQUE_TYPES: readonly CustomFieldType[] = ['TEXT', 'NUMBER', 'EMAILS', 'LINKS'];

export interface FieldChange {
  label?: string;
  description?: string | null;
  isNullable?: boolean;
  defaultValue?: unknown;
  options?: SelectOption[];
  settings?: CustomField['settings'];
  isActive?: boolean;
  isUnique?: boolean;
}

export type NewField = Omit<CustomField, 'id' | 'createdAt' | 'updatedAt'>;

/**
 * A new field's definition, checked (docs/data-model.md): the name's rule and uniqueness
 * among `existing` fields of the object (active or not) and the built-in names, the type,
 * options for selects, a default that is a valid value.
 */
export function checkNewField(
  body: unknown,
  existingNames: (object: CustomFieldObject) => Set<string>,
  taken: (object: CustomFieldObject) => Set<string>,
  /** The plural names of the workspace's objects (the standard ones and its own). */
  objects: readonly string[] = CUSTOM_FIELD_OBJECTS,
): NewField {
  if (!isPlain(body)) throw bad('body must be a JSON object');
  const problems: string[] = [];
  for (const key of Object.keys(body)) if (!CREATE_KEYS.includes(key)) problems.push(`${key} is not a known field`);
  const object = body.object;
  if (typeof object !== 'string' || !objects.includes(object)) {
    problems.push(`object must be one of ${objects.join(', ')}`);
  }
  const type = body.type;
  if (typeof type !== 'string' || !(CUSTOM_FIELD_TYPES as readonly string[]).includes(type)) {
    problems.push(`type must be one of ${CUSTOM_FIELD_TYPES.join(', ')}`);
  }
  const name = body.name;
  if (typeof name !== 'string' || !NAME_RULE.test(name)) {
    problems.push(
      `name must be camelCase: a lower-case letter, then letters and digits, at most 63 characters (${NAME_RULE.source}), as in "annualRevenue"`,
    );
  } else if (problems.length === 0 || typeof object === 'string') {
    const obj = object as CustomFieldObject;
    if (RESERVED_NAMES.has(name) || (objects.includes(obj) && taken(obj).has(name))) {
      problems.push(`name "${name}" is reserved or a built-in field of ${String(object)}; choose another`);
    } else if (objects.includes(obj) && existingNames(obj).has(name)) {
      problems.push(`name "${name}" is already a custom field of ${String(object)}`);
    }
  }
  if (problems.length) throw bad(...problems);
  const fieldType = type as CustomFieldType;
  const label = text(body.label ?? name, 'label', MAX_LABEL, problems, true) as string;
  const description = text(body.description, 'description', MAX_DESCRIPTION, problems, false) ?? null;
  const bools: Record<string, boolean> = {};
  for (const [key, fallback] of [
    ['isNullable', true],
    ['isUnique', false],
    ['isActive', true],
  ] as const) {
    const value = body[key] ?? fallback;
    if (typeof value !== 'boolean') problems.push(`${key} must be true or false`);
    bools[key] = value === true;
  }
  if (bools.isUnique && !UNIQUE_TYPES.includes(type as CustomFieldType)) {
    problems.push(`isUnique: only ${UNIQUE_TYPES.join(', ')} fields can be unique`);
  }
  if (bools.isUnique && body.defaultValue !== undefined && body.defaultValue !== null) {
    problems.push('isUnique: a unique field cannot have a default value (every new record would hold the same one)');
  }
  let options: SelectOption[] | null = null;
  if (fieldType === 'SELECT' || fieldType === 'MULTI_SELECT') options = checkOptions(body.options, problems) ?? null;
  else if (body.options !== undefined && body.options !== null) problems.push(`options: only SELECT and MULTI_SELECT fields take options`);
  const settings = checkSettings(fieldType, body.settings, problems) ?? null;
  if (problems.length) throw bad(...problems);
  const field: NewField = {
    object: object as CustomFieldObject,
    name: name as string,
    label,
    description,
    type: fieldType,
    isNullable: bools.isNullable,
    defaultValue: null,
    isUnique: bools.isUnique,
    options,
    settings,
    isActive: bools.isActive,
  };
  field.defaultValue = checkDefault(field, body.defaultValue);
  return field;
}

function checkDefault(field: Pick<CustomField, 'type' | 'options' | 'isNullable' | 'name'>, raw: unknown): unknown {
  if (raw === undefined || raw === null) {
    if (!field.isNullable && raw === null) throw bad('defaultValue: a non-nullable field needs a non-null default, or none');
    return null;
  }
  const problems: string[] = [];
  const value = checkValue({ ...field, isNullable: true } as CustomField, raw, 'defaultValue', problems);
  if (problems.length) throw bad(...problems);
  return value;
}

/** A change of label, description, options, default, nullability or `isActive`; `name`, `type` and `object` never change. */
export function checkFieldChange(field: CustomField, body: unknown): FieldChange {
  if (!isPlain(body)) throw bad('body must be a JSON object');
  const problems: string[] = [];
  const change: FieldChange = {};
  for (const key of Object.keys(body)) {
    if (['name', 'type', 'object'].includes(key)) {
      if (body[key] !== field[key as 'name']) problems.push(`${key} cannot change; create a new field instead`);
    } else if (key === 'isUnique') {
      if (typeof body.isUnique !== 'boolean') problems.push('isUnique must be true or false');
      else if (body.isUnique && !UNIQUE_TYPES.includes(field.type))
        problems.push(`isUnique: only ${UNIQUE_TYPES.join(', ')} fields can be unique`);
      else if (body.isUnique !== field.isUnique) change.isUnique = body.isUnique;
    } else if (!UPDATE_KEYS.includes(key)) problems.push(`${key} is not a known field`);
  }
  if (body.label !== undefined) change.label = text(body.label, 'label', MAX_LABEL, problems, true) ?? undefined;
  if (body.description !== undefined) change.description = text(body.description, 'description', MAX_DESCRIPTION, problems, false) ?? null;
  for (const key of ['isNullable', 'isActive'] as const) {
    if (body[key] === undefined) continue;
    if (typeof body[key] !== 'boolean') problems.push(`${key} must be true or false`);
    else change[key] = body[key] as boolean;
  }
  if (body.options !== undefined) {
    if (field.type !== 'SELECT' && field.type !== 'MULTI_SELECT')
      problems.push('options: only SELECT and MULTI_SELECT fields take options');
    else change.options = checkOptions(body.options, problems);
  }
  if (body.settings !== undefined) change.settings = checkSettings(field.type, body.settings, problems);
  if (problems.length) throw bad(...problems);
  if (body.defaultValue !== undefined) {
    const next = { ...field, options: change.options ?? field.options, isNullable: change.isNullable ?? field.isNullable };
    change.defaultValue = checkDefault(next, body.defaultValue);
  }
  return change;
}

// ---------------------------------------------------------------------------------------
// Values (records)

/**
 * The value `object` holds under `name` itself: a field named after an Object.prototype member
 * (made before those names were reserved) reads as absent when the object lacks it, never as
 * the inherited function.
 */
export function ownValue(object: unknown, name: string): unknown {
  return object !== null && typeof object === 'object' && Object.hasOwn(object, name) ? (object as Input)[name] : undefined;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** ISO 4217: three capital letters (custom CURRENCY fields and the built-in amount's currencyCode alike). */
export const CURRENCY_CODE = /^[A-Z]{3}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const URL = /^(https?:\/\/)?[^\s/$.?#][^\s]*$/i;
const TYPE_WORD: Record<CustomFieldType, string> = {
  TEXT: 'a string',
  NUMBER: 'a number',
  BOOLEAN: 'true or false',
  DATE: 'a date such as 2026-12-31',
  DATE_TIME: 'an ISO 8601 date-time such as 2026-12-31T12:00:00Z',
  SELECT: 'one of the options',
  MULTI_SELECT: 'an array of options',
  RATING: 'one of RATING_1 … RATING_5',
  CURRENCY: 'an object {amountMicros, currencyCode}',
  LINKS: 'an object {primaryLinkUrl, primaryLinkLabel, secondaryLinks}',
  EMAILS: 'an object {primaryEmail, additionalEmails}',
  PHONES: 'an object {primaryPhoneNumber, primaryPhoneCountryCode, primaryPhoneCallingCode}',
};

function subText(value: unknown, path: string, max: number, problems: string[], rule?: RegExp, ruleText?: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') {
    problems.push(`${path} must be a string`);
    return null;
  }
  if (value.length > max) problems.push(`${path} must be at most ${max} characters`);
  else if (value.includes('\u0000')) problems.push(`${path} must not contain the NUL character (\\u0000)`);
  else if (rule && !rule.test(value)) problems.push(`${path} must be ${ruleText}`);
  return value;
}

/** The stored form of one value of `field` (null allowed only when nullable), or a problem pushed. */
export function checkValue(field: CustomField, value: unknown, path: string, problems: string[]): unknown {
  if (value === null) {
    if (!field.isNullable) problems.push(`${path} cannot be null`);
    return null;
  }
  const wrong = () =>
    void problems.push(`${path} must be ${TYPE_WORD[field.type]}${field.options ? ` (${optionValues(field).join(', ')})` : ''}`);
  switch (field.type) {
    case 'TEXT':
      return subText(value, path, MAX_TEXT, problems);
    case 'NUMBER':
      if (typeof value !== 'number' || !Number.isFinite(value)) return wrong();
      return field.settings?.decimals !== undefined ? Number(value.toFixed(field.settings.decimals)) : value;
    case 'BOOLEAN':
      return typeof value === 'boolean' ? value : wrong();
    case 'DATE': {
      if (typeof value !== 'string' || !DATE.test(value) || normalizeTimestamp(value) === undefined) return wrong();
      return value;
    }
    case 'DATE_TIME': {
      const ts = typeof value === 'string' ? normalizeTimestamp(value) : undefined;
      if (ts === undefined) return wrong();
      return new Date(ts).toISOString();
    }
    case 'SELECT':
    case 'RATING':
      if (typeof value !== 'string' || !optionValues(field).includes(value)) {
        problems.push(`${path} must be one of ${optionValues(field).join(', ')}; got ${JSON.stringify(value)?.slice(0, 80)}`);
        return undefined;
      }
      return value;
    case 'MULTI_SELECT': {
      if (!Array.isArray(value) || value.length > MAX_OPTIONS) return wrong();
      const allowed = optionValues(field);
      const unknown = value.filter((v) => typeof v !== 'string' || !allowed.includes(v));
      if (unknown.length)
        problems.push(`${path} holds values that are not options (${allowed.join(', ')}): ${JSON.stringify(unknown).slice(0, 120)}`);
      return [...new Set(value as string[])];
    }
    default:
      return checkComposite(field, value, path, problems, wrong);
  }
}

function checkComposite(field: CustomField, value: unknown, path: string, problems: string[], wrong: () => void): unknown {
  if (!isPlain(value)) return wrong();
  const subs = compositeSubFields(field.type)!;
  for (const key of Object.keys(value)) if (!subs.some((s) => s.name === key)) problems.push(`${path}.${key} is not a known field`);
  const out: Record<string, unknown> = {};
  for (const sub of subs) {
    const raw = value[sub.name];
    if (raw === undefined) continue;
    const p = `${path}.${sub.name}`;
    if (sub.kind === 'bigint') {
      if (raw === null) out[sub.name] = null;
      else if ((typeof raw === 'number' && Number.isSafeInteger(raw)) || (typeof raw === 'string' && isSafeIntegerText(raw)))
        out[sub.name] = Number(raw);
      else problems.push(`${p} must be an integer up to ±9007199254740991`);
    } else if (sub.kind === 'textList') {
      if (raw === null) out[sub.name] = [];
      else if (!Array.isArray(raw) || raw.length > 20 || raw.some((v) => typeof v !== 'string' || v.length > 320 || !EMAIL.test(v)))
        problems.push(`${p} must be an array of at most 20 e-mail addresses`);
      else out[sub.name] = raw;
    } else if (sub.kind === 'linkList') {
      if (raw === null) out[sub.name] = [];
      else if (
        !Array.isArray(raw) ||
        raw.length > 20 ||
        raw.some(
          (l) =>
            !isPlain(l) ||
            typeof l.url !== 'string' ||
            l.url.length > 2048 ||
            !URL.test(l.url) ||
            (l.label != null && typeof l.label !== 'string'),
        )
      )
        problems.push(`${p} must be an array of at most 20 {url, label} links`);
      else out[sub.name] = (raw as Input[]).map((l) => ({ url: l.url, label: (l.label as string | undefined) ?? null }));
    } else if (sub.name === 'currencyCode')
      out[sub.name] = subText(raw, p, 3, problems, CURRENCY_CODE, 'an ISO 4217 code: three capital letters such as USD');
    else if (sub.name === 'primaryEmail') out[sub.name] = subText(raw, p, 320, problems, EMAIL, 'an e-mail address');
    else if (sub.name === 'primaryLinkUrl') out[sub.name] = subText(raw, p, 2048, problems, URL, 'a URL or a bare domain such as acme.com');
    else out[sub.name] = subText(raw, p, 200, problems);
  }
  return out;
}

/** A composite's stored value with every sub-field present (a missing one reads as null or []). */
export function fullComposite(type: CustomFieldType, value: unknown): unknown {
  const subs = compositeSubFields(type);
  if (!subs || !isPlain(value)) return value ?? null;
  const out: Record<string, unknown> = {};
  for (const sub of subs) out[sub.name] = value[sub.name] ?? (sub.kind === 'textList' || sub.kind === 'linkList' ? [] : null);
  return out;
}

/**
 * The custom part of a create or update body: the keys that are `fields` names, checked.
 * On create, a field left out takes its default, and a non-nullable one without a default
 * is required. Returns the stored values by name (composites on update: only the sub-fields given).
 */
export function checkCustomValues(
  fields: readonly CustomField[],
  body: Input,
  mode: 'create' | 'update',
  prefix: string,
  problems: string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const path = prefix ? `${prefix}.${field.name}` : field.name;
    const raw = ownValue(body, field.name);
    if (raw === undefined) {
      if (mode === 'update') continue;
      if (field.defaultValue != null) out[field.name] = field.defaultValue;
      else if (!field.isNullable) problems.push(`${path} is required`);
      continue;
    }
    const value = checkValue(field, raw, path, problems);
    if (value !== undefined) out[field.name] = mode === 'create' && value !== null ? fullComposite(field.type, value) : value;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// List parameters (filter and order_by)

const quote = (name: string) => `'${name}'`;

/**
 * The kind of index that serves filters and order on a field (records/data-model.ts keeps
 * one per object, field name and kind, shared by every workspace using that name), or
 * undefined for types filtered without one (BOOLEAN, DATE_TIME, MULTI_SELECT, composites).
 */
export function indexKind(type: CustomFieldType): 'text' | 'number' | undefined {
  if (type === 'TEXT' || type === 'SELECT' || type === 'RATING' || type === 'DATE') return 'text';
  if (type === 'NUMBER') return 'number';
  return undefined;
}

/**
 * The SQL of a field's indexed value over `alias` ('t.' in queries, '' in the index): the
 * same text in both, so the planner matches them. A number is read only from a JSON number,
 * so another workspace's field of the same name holding text can never fail the cast.
 */
export function indexedValue(name: string, kind: 'text' | 'number', alias: string): string {
  if (kind === 'text') return `(${alias}custom->>${quote(name)})`;
  return `(CASE WHEN jsonb_typeof(${alias}custom->${quote(name)}) = 'number' THEN (${alias}custom->>${quote(name)})::float8 END)`;
}

/** The filterable and sortable leaves of one custom field, as the list parameters see them. */
export function customQueryFields(field: CustomField): FieldDef[] {
  const json = `t.custom->${quote(field.name)}`;
  const textOf = indexedValue(field.name, 'text', 't.');
  const read = (row: Record<string, unknown>) => ownValue(row.custom, field.name) ?? null;
  const base = { path: field.name, column: 'custom', nullable: true, sortable: true, read };
  switch (field.type) {
    case 'TEXT':
      return [{ ...base, type: 'text', sql: textOf }];
    case 'NUMBER':
      return [{ ...base, type: 'number', sql: indexedValue(field.name, 'number', 't.') }];
    case 'BOOLEAN':
      return [{ ...base, type: 'boolean', sql: `(${textOf}::boolean)` }];
    case 'DATE':
      return [{ ...base, type: 'date', sql: textOf }];
    case 'DATE_TIME':
      return [{ ...base, type: 'timestamp', sql: `(${textOf}::timestamptz)` }];
    case 'SELECT':
    case 'RATING':
      return [{ ...base, type: 'enum', sql: textOf, values: optionValues(field) }];
    case 'MULTI_SELECT':
      return [{ ...base, type: 'textArray', sql: `(${json})`, sortable: false, values: optionValues(field) }];
    default: {
      const subs = compositeSubFields(field.type)!;
      return subs.flatMap((sub): FieldDef[] => {
        const path = `${field.name}.${sub.name}`;
        const readSub = (row: Record<string, unknown>) => ((read(row) as Input | null)?.[sub.name] ?? null) as unknown;
        const subText = `(${json}->>${quote(sub.name)})`;
        if (sub.kind === 'linkList') return [];
        if (sub.kind === 'textList')
          return [
            {
              path,
              column: 'custom',
              nullable: true,
              sortable: false,
              read: readSub,
              type: 'textArray',
              sql: `(${json}->${quote(sub.name)})`,
            },
          ];
        if (sub.kind === 'bigint')
          return [{ path, column: 'custom', nullable: true, sortable: true, read: readSub, type: 'bigint', sql: `(${subText}::bigint)` }];
        return [{ path, column: 'custom', nullable: true, sortable: true, read: readSub, type: 'text', sql: subText }];
      });
    }
  }
}

/** The leaves a composite custom field sorts by when named whole (`order_by=amount`). */
export function customCompositeSort(field: CustomField): string[] | undefined {
  const sub = SORT_SUB[field.type];
  return sub ? [`${field.name}.${sub}`] : undefined;
}

/** Describes a field for docs and tool descriptions: `tier (SELECT: GOLD, SILVER)`. */
export function describeField(field: CustomField): string {
  const values =
    field.type === 'SELECT' || field.type === 'MULTI_SELECT' || field.type === 'RATING' ? `: ${optionValues(field).join(', ')}` : '';
  return `${field.name} (${field.type}${values}${field.isNullable ? '' : ', required'})${field.description ? ` — ${field.description}` : ''}`;
}
