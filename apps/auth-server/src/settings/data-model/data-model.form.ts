import { BadInputError, ErrorCode } from '#errors/errors.js';
import { FIELD_TYPES, fieldType } from '#records/field-types/index.js';
import type { CustomField } from '#records/objects/index.js';

/*
 * The /settings/data-model forms as the bodies the metadata API takes (docs/settings.md), so
 * the service checks a page's field exactly as it checks an API call. The forms are plain
 * HTML: repeated inputs arrive as arrays, a checkbox only when ticked.
 */

const str = (value: unknown): string => (typeof value === 'string' ? value : Array.isArray(value) ? String(value[0] ?? '') : '');
const list = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : value === undefined ? [] : [String(value)]);
/** A type whose fields take options (SELECT, MULTI_SELECT). */
const takesOptions = (type: unknown) => FIELD_TYPES.some((t) => t.name === type && t.options);

/** An option as the form sends it: `label` left out defaults to the value in the service. */
export interface FormOption {
  value: string;
  label?: string;
  color: string | null;
  position: number;
}

/** A body for the service, and how each options[i] is called on the page and its value as typed, for its messages. */
export interface FormBody {
  body: Record<string, unknown>;
  optionNames: string[];
  optionValues: string[];
}

/** What the add form had, to fill it again after an error. */
export interface NewFieldValues {
  object: string;
  name: string;
  label: string;
  description: string;
  type: string;
  options: string;
  isNullable: boolean;
}

export function newFieldValues(raw: Record<string, unknown> | undefined): NewFieldValues {
  const b = raw ?? {};
  return {
    object: str(b.object),
    name: str(b.name).trim(),
    label: str(b.label).trim(),
    description: str(b.description).trim(),
    type: str(b.type),
    options: str(b.options),
    isNullable: b.isNullable === 'on',
  };
}

/**
 * The add form: Options is one option per line, `VALUE|Label` (the label may be left out);
 * blank lines are skipped. Label and Description left empty are left out (the label is then
 * the name).
 */
export function newFieldBody(v: NewFieldValues): FormBody {
  const body: Record<string, unknown> = { object: v.object, name: v.name, type: v.type, isNullable: v.isNullable };
  if (v.label) body.label = v.label;
  if (v.description) body.description = v.description;
  const lines = v.options
    .split(/\r?\n/)
    .map((line, i) => ({ line: line.trim(), number: i + 1 }))
    .filter((l) => l.line);
  const problems: string[] = [];
  const options: FormOption[] = lines.map(({ line, number }, position) => {
    const parts = line.split('|').map((p) => p.trim());
    if (parts.length > 2) problems.push(`options, line ${number}: write VALUE|Label, as in GOLD|Gold (a label has no |)`);
    return { value: parts[0], ...(parts[1] ? { label: parts[1] } : {}), color: null, position };
  });
  if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
  if (options.length) body.options = options;
  else if (takesOptions(v.type))
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `options: a ${v.type} field needs at least one option, one per line as VALUE|Label`,
    );
  return { body, optionNames: lines.map((l) => `line ${l.number}`), optionValues: options.map((o) => o.value) };
}

/** One row of the options editor on a field's page. */
export interface OptionRow {
  value: string;
  label: string;
  color: string | null;
  /** Already an option of the field: its value is fixed, it can be relabelled or removed. */
  existing: boolean;
  remove: boolean;
}

/** What the edit form had, to fill it again after an error. */
export interface EditFieldValues {
  label: string;
  description: string;
  isNullable: boolean;
  options: OptionRow[];
}

/**
 * The edit form: label, description, "can be empty", and for selects one row per option
 * (`optionValue` hidden, `optionLabel`, `optionColor` hidden, `optionRemove` ticked by value)
 * then empty rows to add options (`newValue`, `newLabel`).
 */
export function editFieldValues(field: CustomField, raw: Record<string, unknown> | undefined): EditFieldValues {
  const b = raw ?? {};
  const values = list(b.optionValue);
  const labels = list(b.optionLabel);
  const colors = list(b.optionColor);
  const removed = new Set(list(b.optionRemove));
  const known = new Set((field.options ?? []).map((o) => o.value));
  const existing: OptionRow[] = values
    .filter((value) => known.has(value))
    .map((value) => {
      const i = values.indexOf(value);
      return { value, label: (labels[i] ?? '').trim(), color: colors[i] || null, existing: true, remove: removed.has(value) };
    });
  const newLabels = list(b.newLabel);
  const added: OptionRow[] = list(b.newValue).map((value, i) => ({
    value: value.trim(),
    label: (newLabels[i] ?? '').trim(),
    color: null,
    existing: false,
    remove: false,
  }));
  return {
    label: str(b.label).trim(),
    description: str(b.description).trim(),
    isNullable: b.isNullable === 'on',
    options: [...existing, ...added],
  };
}

/** Only what changed, so the audit entry names what changed and an unchanged form writes nothing. */
export function editFieldBody(field: CustomField, v: EditFieldValues): FormBody {
  const body: Record<string, unknown> = {};
  if (v.label !== field.label) body.label = v.label;
  if ((v.description || null) !== (field.description ?? null)) body.description = v.description || null;
  if (v.isNullable !== field.isNullable) body.isNullable = v.isNullable;
  const optionNames: string[] = [];
  const optionValues: string[] = [];
  if (fieldType(field.type).options) {
    let added = 0;
    const options: FormOption[] = [];
    for (const row of v.options) {
      if (!row.existing) added++;
      if (row.remove || (!row.existing && !row.value && !row.label)) continue;
      options.push({ value: row.value, ...(row.label ? { label: row.label } : {}), color: row.color, position: options.length });
      optionNames.push(row.existing ? `option ${row.value}` : `new option ${added}`);
      optionValues.push(row.value);
    }
    if (!options.length)
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        `options: a ${field.type} field keeps at least one option; add one before removing the last`,
      );
    const before = (field.options ?? []).map((o) => [o.value, o.label, o.color]);
    const after = options.map((o) => [o.value, o.label ?? o.value, o.color]);
    if (JSON.stringify(before) !== JSON.stringify(after)) body.options = options;
  }
  return { body, optionNames, optionValues };
}

const VALUE_RULE = /^options\[(\d+)\]\.value must match /;

/**
 * The service's messages in the page's words: `options[2].label …` as the page calls the
 * row, `options, line 3: label …`. Values the rule refuses (lower case, a space) are said
 * once for all of them, naming each line and value, instead of the rule's pattern per line.
 */
export function pageMessages(messages: string[], optionNames: string[], optionValues: string[] = []): string[] {
  const refused = messages
    .map((m) => VALUE_RULE.exec(m)?.[1])
    .filter((i): i is string => i !== undefined)
    .map(Number);
  const named = messages
    .filter((m) => !VALUE_RULE.test(m))
    .map((m) =>
      m.replace(/^options\[(\d+)\]\.?/, (whole, i: string) => (optionNames[Number(i)] ? `options, ${optionNames[Number(i)]}: ` : whole)),
    );
  if (!refused.length) return named;
  const where = rows(refused.map((i) => optionNames[i] ?? `option ${i + 1}`));
  const values = listed(refused.map((i) => `"${shorten(optionValues[i] ?? '')}"`));
  const verb = refused.length === 1 ? 'is not an option value' : 'are not option values';
  return [
    `options, ${where}: ${values} ${verb}: a value is capitals, digits and _, starting with a capital, as in GOLD (at most 63 characters)`,
    ...named,
  ];
}

/** `line 1`, `line 4` → `lines 1 and 4`; `new option 2` alone stays as it is. */
function rows(names: string[]): string {
  if (names.length === 1) return names[0];
  const parts = names.map((n) => /^(.*) (\d+)$/.exec(n));
  const prefix = parts[0]?.[1];
  if (parts.every((p) => p && p[1] === prefix)) return `${prefix}s ${listed(parts.map((p) => p![2]))}`;
  return listed(names);
}

const listed = (items: string[]) => (items.length === 1 ? items[0] : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`);
const shorten = (text: string) => (text.length > 40 ? `${text.slice(0, 39)}…` : text);

/** What the new object form had, to fill it again after an error. */
export interface NewObjectValues {
  nameSingular: string;
  namePlural: string;
  labelSingular: string;
  labelPlural: string;
  description: string;
}

export function newObjectValues(raw: Record<string, unknown> | undefined): NewObjectValues {
  const b = raw ?? {};
  return {
    nameSingular: str(b.nameSingular).trim(),
    namePlural: str(b.namePlural).trim(),
    labelSingular: str(b.labelSingular).trim(),
    labelPlural: str(b.labelPlural).trim(),
    description: str(b.description).trim(),
  };
}

/** The body `POST /rest/metadata/objects` takes: labels left empty are left out (the service derives them from the names). */
export function newObjectBody(v: NewObjectValues): Record<string, unknown> {
  const body: Record<string, unknown> = { nameSingular: v.nameSingular, namePlural: v.namePlural };
  if (v.labelSingular) body.labelSingular = v.labelSingular;
  if (v.labelPlural) body.labelPlural = v.labelPlural;
  if (v.description) body.description = v.description;
  return body;
}

/** What an object's settings form had. */
export interface EditObjectValues {
  labelSingular: string;
  labelPlural: string;
  description: string;
  labelIdentifierField: string;
}

export function editObjectValues(raw: Record<string, unknown> | undefined): EditObjectValues {
  const b = raw ?? {};
  return {
    labelSingular: str(b.labelSingular).trim(),
    labelPlural: str(b.labelPlural).trim(),
    description: str(b.description).trim(),
    labelIdentifierField: str(b.labelIdentifierField),
  };
}

/** Only what changed (the audit entry names it; an unchanged form writes nothing). */
export function editObjectBody(
  object: { labelSingular: string; labelPlural: string; description: string | null; labelIdentifierField: string },
  v: EditObjectValues,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (v.labelSingular !== object.labelSingular) body.labelSingular = v.labelSingular;
  if (v.labelPlural !== object.labelPlural) body.labelPlural = v.labelPlural;
  if ((v.description || null) !== (object.description ?? null)) body.description = v.description || null;
  if (v.labelIdentifierField && v.labelIdentifierField !== object.labelIdentifierField) body.labelIdentifierField = v.labelIdentifierField;
  return body;
}
