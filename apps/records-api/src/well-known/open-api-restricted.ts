import type { OpenAPIObject } from '@nestjs/swagger';
import { OBJECTS } from '#records/objects/index.js';
import { relationsOf } from '#records/objects/query-schema.js';
import type { ObjectSchema } from '#records/query/index.js';

/** The fields a role cannot read, by object (`opportunities` → `amount`, …): fieldAccess's `hidden`. */
export type HiddenFields = ReadonlyMap<string, ReadonlySet<string>>;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * One item of the decorators' lists (rest/open-api-decorators.ts) naming `name`: the field
 * or a leaf of it (`amount.amountMicros`), maybe in backticks, maybe with a condition
 * (`name[eq]:"…"`), maybe with its operators in parentheses (`` `stage` (eq, neq) ``).
 */
const item = (name: string) => `\`?${escape(name)}(?:\\.[A-Za-z_]\\w*)*(?:\\[[^\\]]*\\](?::"[^"]*"|:[^\\s,;)]*)?)?\`?(?: \\([^()]*\\))?`;

/**
 * `text` without the list items naming any of `names`: the items of the lists the
 * decorators write, separated by ", " or "; " after a "(", a ":" or "e.g.". A list left
 * empty after a colon says "none"; parentheses left empty go.
 */
export function dropListItems(text: string, names: readonly string[]): string {
  let out = text;
  for (const name of names) {
    const it = item(name);
    out = out
      .replace(new RegExp(`(?:, |; )${it}(?=[,;.)]|\\s|$)`, 'g'), '')
      .replace(new RegExp(`(?<=(?:[(:]|e\\.g\\.) ?)${it}(?:, |; )`, 'g'), '')
      .replace(new RegExp(` \\(${it}\\)`, 'g'), '')
      .replace(new RegExp(`(?<=: )${it}(?=\\.(?:\\s|$))`, 'g'), 'none');
  }
  return out;
}

/** Whether an example value (a filter, an order, a field) names one of `names` as a field. */
const namesAny = (value: string, names: readonly string[]) =>
  names.some((name) => new RegExp(`(^|[^\\w.])${escape(name)}(?=[.[:(,)]|$)`).test(value));

/** Descriptions of `node` and below without the items naming `names`, and without the examples that use them. */
function scrub(node: unknown, names: readonly string[]): void {
  if (!node || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    if (key === 'description' && typeof value === 'string') record[key] = dropListItems(value, names);
    else if (key === 'example' && typeof value === 'string' && namesAny(value, names)) delete record[key];
    else if (key === 'examples' && value && typeof value === 'object' && !Array.isArray(value)) {
      const examples = value as Record<string, { value?: unknown }>;
      for (const [name, example] of Object.entries(examples))
        if (typeof example?.value === 'string' && namesAny(example.value, names)) delete examples[name];
      if (!Object.keys(examples).length) delete record[key];
    } else scrub(value, names);
  }
}

/** The paths of one object: `/rest/<plural>`, its sub-paths, its batch and restore routes. */
const ownPath = (path: string, plural: string) => new RegExp(`^/rest/(batch/|restore/)?${escape(plural)}(/|$)`).test(path);

/**
 * `document` (already a copy) as a role that cannot read `hidden` sees it (docs/authentication.md,
 * "Field permissions"): such a field is no property of its object's model and inputs, and no
 * parameter, example or tag offers it to sort, filter, group, aggregate or match on, nor a
 * relation filter of another object (`company.name`), since each is a 403 for that role.
 */
export function withoutHiddenFields(document: OpenAPIObject, hidden: HiddenFields): OpenAPIObject {
  const schemas = (document.components?.schemas ?? {}) as Record<string, { properties?: Record<string, unknown>; required?: string[] }>;
  for (const object of OBJECTS) {
    const names = hidden.get(object.plural);
    if (!names?.size) continue;
    for (const suffix of ['Model', 'CreateInput', 'UpdateInput']) {
      const schema = schemas[`${object.typeName}${suffix}`];
      if (!schema) continue;
      for (const name of names) delete schema.properties?.[name];
      if (schema.required) schema.required = schema.required.filter((name) => !names.has(name));
    }
  }
  for (const object of OBJECTS) {
    const relations = relationsOf(object.plural, (plural) => ({ name: plural }) as ObjectSchema);
    const names = [
      ...(hidden.get(object.plural) ?? []),
      ...Object.entries(relations).flatMap(([relation, r]) => [...(hidden.get(r.target.name) ?? [])].map((f) => `${relation}.${f}`)),
    ];
    if (!names.length) continue;
    for (const [path, operations] of Object.entries(document.paths)) if (ownPath(path, object.plural)) scrub(operations, names);
    scrub(
      document.tags?.find((t) => t.name === object.plural),
      names,
    );
  }
  // Upserts of every object name the unique fields of all (`emails.primaryEmail`, `domainName.primaryLinkUrl`).
  const everyHidden = [...hidden.values()].flatMap((names) => [...names]);
  for (const operations of Object.values(document.paths))
    for (const operation of Object.values(operations as Record<string, { parameters?: { name?: string }[] }>))
      for (const parameter of operation?.parameters ?? [])
        if (parameter.name === 'upsert' || parameter.name === 'match') scrub(parameter, everyHidden);
  return document;
}
