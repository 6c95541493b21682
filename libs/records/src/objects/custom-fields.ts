import { BadInputError, ErrorCode } from '#errors/errors.js';
import {
  FIELD_TYPE_NAMES,
  FIELD_TYPES,
  fieldType,
  MAX_OPTIONS,
  ownValue,
  valuesOf,
  type FieldSettings,
  type FieldTypeName,
  type StandardTypeName,
} from '../field-types/index.js';
import { isPlain, type Input } from '../field-types/shared.js';
import type { FieldDef } from '../query/types.js';
import type { ObjectDeclaration } from './declaration.js';
import { relationFields } from './relations.js';

/*
 * Custom fields: each workspace's own fields on companies, people and opportunities
 * (docs/data-model.md). Their definitions live in `custom_fields`, their values in the
 * record's `custom` jsonb column keyed by the field's API name (names never change).
 * This file holds the rules both ends share: which definitions are valid, and the values of
 * a record's custom fields; what a value of each type is, it asks the field-type registry
 * (libs/records/src/field-types/, docs/decisions/0056-field-type-registry.md).
 */

/** The value types a field may be made with (the type list); a RELATION field is made with its relation (custom-relations.ts). */
export const CUSTOM_FIELD_TYPES: readonly FieldTypeName[] = FIELD_TYPE_NAMES;
export type CustomFieldType = StandardTypeName;

/** The plural name of an object of the workspace, standard or its own (custom-objects.ts): custom fields go on any. */
export type CustomFieldObject = string;

export const MAX_CUSTOM_FIELDS = 100;
export { CURRENCY_CODE, indexedValue, MAX_OPTIONS, MAX_TEXT, ownValue } from '../field-types/index.js';
export const NAME_RULE = /^[a-z][a-zA-Z0-9]{0,62}$/;
export const OPTION_VALUE_RULE = /^[A-Z][A-Z0-9_]*$/;
const MAX_OPTION_VALUE = 63;
const MAX_LABEL = 100;
const MAX_DESCRIPTION = 500;
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
  settings: FieldSettings | null;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The sub-fields of a composite type, or undefined for a single-valued type. */
export function compositeSubFields(type: CustomFieldType) {
  return fieldType(type).composite?.subFields;
}

/** A field's values: RATING_1 … RATING_5, or its options'. */
export function optionValues(field: Pick<CustomField, 'type' | 'options'>): string[] {
  return valuesOf(fieldType(field.type), field);
}

/** Names a custom field of `object` may not take: the reserved ones and every built-in field, relation and inverse. */
export function takenNames(object: ObjectDeclaration, all: readonly ObjectDeclaration[]): Set<string> {
  const names = new Set(RESERVED_NAMES);
  for (const field of object.fields) names.add(field.name);
  for (const field of relationFields(object)) names.add(field.relation);
  for (const other of all) for (const field of relationFields(other)) if (field.target === object.plural) names.add(field.inverse);
  return names;
}

// ---------------------------------------------------------------------------------------
// Definitions (the metadata API)

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
  const settings = fieldType(type).settings;
  if (!settings) {
    if (Object.keys(raw).length) problems.push(`settings: ${type} fields take no settings`);
    return null;
  }
  return settings(raw, problems);
}

/** Types that take options, for messages: "SELECT and MULTI_SELECT". */
const OPTION_TYPES = FIELD_TYPES.filter((t) => t.options)
  .map((t) => t.name)
  .join(' and ');

/** Types a custom field may be unique with (docs/data-model.md, "Unique fields"). */
export const UNIQUE_TYPES: readonly CustomFieldType[] = FIELD_TYPE_NAMES.filter((t) => fieldType(t).unique);

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
  objects: readonly string[],
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
  if (fieldType(type as string).options) options = checkOptions(body.options, problems) ?? null;
  else if (body.options !== undefined && body.options !== null) problems.push(`options: only ${OPTION_TYPES} fields take options`);
  const settings = checkSettings(type as CustomFieldType, body.settings, problems) ?? null;
  if (problems.length) throw bad(...problems);
  const field: NewField = {
    object: object as CustomFieldObject,
    name: name as string,
    label,
    description,
    type: type as CustomFieldType,
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
    if (!fieldType(field.type).options) problems.push(`options: only ${OPTION_TYPES} fields take options`);
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

/** The stored form of one value of `field` (null allowed only when nullable), or a problem pushed. */
export function checkValue(field: CustomField, value: unknown, path: string, problems: string[]): unknown {
  if (value === null) {
    if (!field.isNullable) problems.push(`${path} cannot be null`);
    return null;
  }
  return fieldType(field.type).check(field, value, path, problems);
}

/** A composite's stored value with every sub-field present (a missing one reads as null or []); other values as they are. */
export function fullComposite(type: CustomFieldType, value: unknown): unknown {
  return fieldType(type).shown(value);
}

/** What a record shows for a field that holds no value: null, `[]` (MULTI_SELECT), or a composite with every sub-field empty. */
export function absentValue(type: CustomFieldType): unknown {
  return fieldType(type).empty();
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

/**
 * The kind of index that serves filters and order on a field (libs/records/src/service/data-model.ts keeps
 * one per object, field name and kind, shared by every workspace using that name), or
 * undefined for types filtered without one.
 */
export function indexKind(type: CustomFieldType): 'text' | 'number' | undefined {
  return fieldType(type).indexKind;
}

/** The filterable and sortable leaves of one custom field, as the list parameters see them. */
export function customQueryFields(field: CustomField): FieldDef[] {
  return fieldType(field.type).leaves(field);
}

/** The leaves a composite custom field sorts by when named whole (`order_by=amount`). */
export function customCompositeSort(field: CustomField): string[] | undefined {
  return fieldType(field.type).sortBy?.map((sub) => `${field.name}.${sub}`);
}

/** Describes a field for docs and tool descriptions: `tier (SELECT: GOLD, SILVER)`. */
export function describeField(field: CustomField): string {
  const type = fieldType(field.type);
  const values = type.options || type.values ? `: ${optionValues(field).join(', ')}` : '';
  return `${field.name} (${field.type}${values}${field.isNullable ? '' : ', required'})${field.description ? ` — ${field.description}` : ''}`;
}
