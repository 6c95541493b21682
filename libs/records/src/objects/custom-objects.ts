import { BadInputError, ErrorCode } from '#errors/errors.js';
import { relationSettings } from '../field-types/index.js';
import type { ObjectDeclaration, StandardField } from './declaration.js';
import { NAME_RULE } from './custom-fields.js';

/*
 * Objects of a workspace (docs/data-model.md "Custom objects"): the standard ones, seeded for
 * every workspace, and the workspace's own, kept in `objects`; a custom object's records are
 * in `custom_records` (docs/decisions/0057-custom-objects-storage.md). This file holds the
 * rules both the metadata API and the settings page apply, and what the records API makes of
 * a custom object: a declaration like the standard objects', whose fields are all custom.
 */

export const MAX_CUSTOM_OBJECTS = 50;
const MAX_LABEL = 100;
const MAX_DESCRIPTION = 500;

export interface WorkspaceObject {
  id: string;
  nameSingular: string;
  namePlural: string;
  labelSingular: string;
  labelPlural: string;
  description: string | null;
  /** The field that names a record in search, depth and pages: a TEXT or FULL_NAME field. */
  labelIdentifierField: string;
  isCustom: boolean;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

/**
 * The GraphQL type names of the base schema (apps/records-api/schema.gql) and those a
 * workspace's schema adds for custom fields, besides the standard objects' own types
 * (objectTypeNames): no object may make a type of the same name.
 * `test/custom-objects.e2e-spec.ts` checks this list against the committed schema.
 */
export const BASE_GRAPHQL_TYPES: ReadonlySet<string> = new Set([
  ...['AggregateGroup', 'AggregateValue', 'ArrayFilter', 'BigFloat', 'BigFloatFilter', 'Boolean', 'Currency', 'CurrencyFilter'],
  ...['CurrencyInput', 'CurrencyOrderByInput', 'DateFilter', 'DateTime', 'Emails', 'EmailsFilter', 'EmailsInput'],
  ...['EmailsOrderByInput', 'FilterIs', 'Float', 'FullName', 'FullNameFilter', 'FullNameInput', 'FullNameOrderByInput'],
  ...['GroupByResult', 'GroupKey', 'ID', 'Int', 'LinkMetadata', 'LinkMetadataInput', 'Links', 'LinksFilter', 'LinksInput'],
  ...['LinksOrderByInput', 'Mutation', 'OrderByDirection', 'PageInfo', 'Query', 'SearchRecord', 'SearchResult'],
  ...['SearchResultConnection', 'SearchResultEdge', 'SearchableObject', 'String', 'StringFilter', 'Subscription', 'UUID'],
  ...['UUIDFilter', 'FloatFilter', 'BooleanFilter', 'DateOnlyFilter', 'Phones', 'PhonesInput', 'PhonesFilter'],
  ...['PhonesOrderByInput', 'Address', 'AddressInput', 'AddressFilter', 'AddressOrderByInput', 'Upload', 'JSON'],
  ...['OpportunityStageEnum', 'OpportunityStageEnumFilter'],
]);

/**
 * Capitalised names whose OpenAPI schemas (`<Name>Model`, `<Name>CreateInput`, …) or
 * operation ids (`list<Names>`, `get<Name>`, …) the public document has already for
 * something else than an object (`LinkModel`, `ErrorModel`, `listVaultSecrets`): an object
 * named so would overwrite them in its workspace's document.
 * `test/custom-objects-surfaces.e2e-spec.ts` checks this list against the public document.
 */
export const BASE_OPEN_API_NAMES: ReadonlySet<string> = new Set([
  ...['Link', 'Links', 'FullName', 'Emails', 'Currency', 'PageInfo', 'Deleted', 'Error'],
  ...['VaultSecret', 'VaultSecrets', 'DeletedVaultSecret'],
]);

/**
 * Names no object may take, as singular or plural: path segments of `/rest` that are not
 * objects, GraphQL root and meta names, and JavaScript's own property names (an object
 * name is a key of permission and route maps).
 */
const RESERVED_OBJECT_NAMES = new Set(
  [
    ...Object.getOwnPropertyNames(Object.prototype),
    'metadata',
    'batch',
    'restore',
    'imports',
    'import',
    'search',
    'changes',
    'change',
    'vault',
    'webhooks',
    'webhook',
    'openApi',
    'export',
    'groupBy',
    'workspaceMembers',
    'subscription',
    'subscriptions',
    'query',
    'mutation',
    'pageInfo',
    'node',
    'edge',
    'edges',
    'cursor',
    'object',
    'objects',
    'field',
    'fields',
    'record',
    'records',
    'aggregate',
  ].map((n) => n.toLowerCase()),
);

/** Whether no object may be named `name` (a path segment of `/rest` that is no object's, …). */
export const isReservedObjectName = (name: string): boolean => RESERVED_OBJECT_NAMES.has(name.toLowerCase());

const cap = (name: string) => name[0].toUpperCase() + name.slice(1);

/** The GraphQL type names an object makes (its record type, connection, edge and inputs). */
export function objectTypeNames(nameSingular: string): string[] {
  const t = cap(nameSingular);
  return [t, `${t}Connection`, `${t}Edge`, `${t}CreateInput`, `${t}UpdateInput`, `${t}FilterInput`, `${t}OrderByInput`];
}

/** The root fields of an object in GraphQL (docs/graphql.md): list, one, groupBy; create, createMany, update, delete, restore. */
export function objectRootFields(nameSingular: string, namePlural: string): { query: string[]; mutation: string[] } {
  const t = cap(nameSingular);
  return {
    query: [namePlural, nameSingular, `${namePlural}GroupBy`],
    mutation: [`create${t}`, `create${cap(namePlural)}`, `update${t}`, `delete${t}`, `restore${t}`],
  };
}

export function objectRootFieldNames(nameSingular: string, namePlural: string): string[] {
  const { query, mutation } = objectRootFields(nameSingular, namePlural);
  return [...query, ...mutation];
}

/**
 * The root fields of the base schema besides the standard objects' own (objectRootFields):
 * no object may make a field of the same name. `test/custom-objects-graphql.e2e-spec.ts`
 * checks this list against the committed schema.
 */
export const BASE_GRAPHQL_ROOT_FIELDS: ReadonlySet<string> = new Set(['search', 'vaultSecretValue']);

/**
 * Endings of the type names a workspace's schema gives its select fields' enums
 * (`TicketPriorityEnum`, `…EnumFilter`, `…EnumListFilter`): an object's type never ends so,
 * or a field could make the object's type name again.
 */
export const ENUM_TYPE_ENDINGS = /(?:Enum|EnumFilter|EnumListFilter)$/;

type Input = Record<string, unknown>;
const isPlain = (value: unknown): value is Input => typeof value === 'object' && value !== null && !Array.isArray(value);
const bad = (...messages: string[]) => new BadInputError(ErrorCode.VALIDATION_FAILED, ...messages);

function label(value: unknown, path: string, problems: string[], required: boolean): string | null | undefined {
  if (value === undefined || (value === null && !required)) {
    if (required) problems.push(`${path} is required`);
    return value === null ? null : undefined;
  }
  if (typeof value !== 'string' || (required && !value.trim())) {
    problems.push(`${path} must be a${required ? ' non-empty' : ''} string`);
    return undefined;
  }
  const max = path === 'description' ? MAX_DESCRIPTION : MAX_LABEL;
  if (value.length > max) problems.push(`${path} must be at most ${max} characters`);
  if ([...value].some((c) => c.charCodeAt(0) < 32)) problems.push(`${path} must not contain control characters`);
  return value.trim();
}

export interface NewObject {
  nameSingular: string;
  namePlural: string;
  labelSingular: string;
  labelPlural: string;
  description: string | null;
}

const CREATE_KEYS = ['nameSingular', 'namePlural', 'labelSingular', 'labelPlural', 'description'];
const UPDATE_KEYS = ['labelSingular', 'labelPlural', 'description', 'labelIdentifierField', 'isActive'];

/**
 * A new object's definition, checked against the workspace's `existing` objects (standard ones
 * included, active or not): camelCase names, singular and plural distinct, no name another
 * object has in either form, none reserved, no GraphQL type another object or the base schema
 * has, and the limit of custom objects.
 */
export function checkNewObject(body: unknown, existing: readonly WorkspaceObject[]): NewObject {
  if (!isPlain(body)) throw bad('body must be a JSON object');
  const problems: string[] = [];
  for (const key of Object.keys(body)) if (!CREATE_KEYS.includes(key)) problems.push(`${key.slice(0, 64)} is not a known field`);
  const taken = new Set(existing.flatMap((o) => [o.nameSingular.toLowerCase(), o.namePlural.toLowerCase()]));
  const types = new Set([...BASE_GRAPHQL_TYPES, ...existing.flatMap((o) => objectTypeNames(o.nameSingular))]);
  const names: Record<string, string> = {};
  for (const key of ['nameSingular', 'namePlural'] as const) {
    const value = body[key];
    if (typeof value !== 'string' || !NAME_RULE.test(value)) {
      problems.push(
        `${key} must be camelCase: a lower-case letter, then letters and digits, at most 63 characters, as in "${key === 'nameSingular' ? 'ticket' : 'tickets'}"`,
      );
      continue;
    }
    if (isReservedObjectName(value)) problems.push(`${key} "${value}" is reserved; choose another`);
    else if (taken.has(value.toLowerCase())) problems.push(`${key} "${value}" is already the name of an object of this workspace`);
    names[key] = value;
  }
  if (names.nameSingular && names.namePlural && names.nameSingular.toLowerCase() === names.namePlural.toLowerCase()) {
    problems.push('nameSingular and namePlural must differ');
  }
  if (names.nameSingular) {
    const clash = objectTypeNames(names.nameSingular).find((t) => types.has(t));
    if (clash)
      problems.push(`nameSingular "${names.nameSingular}" would make the GraphQL type ${clash}, which exists already; choose another`);
    else if (ENUM_TYPE_ENDINGS.test(cap(names.nameSingular)))
      problems.push(
        `nameSingular "${names.nameSingular}" would make the GraphQL type ${cap(names.nameSingular)}, a name kept for enums; choose another`,
      );
  }
  if (names.nameSingular && names.namePlural) {
    const fields = new Set([...BASE_GRAPHQL_ROOT_FIELDS, ...existing.flatMap((o) => objectRootFieldNames(o.nameSingular, o.namePlural))]);
    const own = objectRootFieldNames(names.nameSingular, names.namePlural);
    const clash = own.find((f, i) => fields.has(f) || own.indexOf(f) !== i);
    if (clash) {
      const why = fields.has(clash) ? ', which exists already' : ' twice';
      problems.push(
        `nameSingular "${names.nameSingular}" and namePlural "${names.namePlural}" would make the GraphQL field ${clash}${why}; choose others`,
      );
    }
  }
  for (const key of ['nameSingular', 'namePlural'] as const) {
    if (names[key] && BASE_OPEN_API_NAMES.has(cap(names[key]))) {
      problems.push(
        `${key} "${names[key]}" would name OpenAPI schemas or operations of the API's own (${cap(names[key])}…); choose another`,
      );
    }
  }
  const labelSingular = label(body.labelSingular ?? (names.nameSingular && cap(names.nameSingular)), 'labelSingular', problems, true);
  const labelPlural = label(body.labelPlural ?? (names.namePlural && cap(names.namePlural)), 'labelPlural', problems, true);
  const description = label(body.description, 'description', problems, false);
  if (!problems.length && existing.filter((o) => o.isCustom).length >= MAX_CUSTOM_OBJECTS) {
    problems.push(`this workspace has ${MAX_CUSTOM_OBJECTS} custom objects, the most allowed; delete one first`);
  }
  if (problems.length) throw bad(...problems);
  return {
    nameSingular: names.nameSingular,
    namePlural: names.namePlural,
    labelSingular: labelSingular!,
    labelPlural: labelPlural!,
    description: description ?? null,
  };
}

export interface ObjectChange {
  labelSingular?: string;
  labelPlural?: string;
  description?: string | null;
  labelIdentifierField?: string;
  isActive?: boolean;
}

/**
 * A change of labels, description, label identifier or `isActive`; names never change.
 * `identifiers` are the object's fields that may name a record (active TEXT and FULL_NAME).
 */
export function checkObjectChange(object: WorkspaceObject, body: unknown, identifiers: readonly string[]): ObjectChange {
  if (!isPlain(body)) throw bad('body must be a JSON object');
  const problems: string[] = [];
  for (const key of Object.keys(body)) {
    if (key === 'nameSingular' || key === 'namePlural') problems.push(`${key} never changes; create another object instead`);
    else if (!UPDATE_KEYS.includes(key)) problems.push(`${key.slice(0, 64)} is not a known field`);
  }
  if (!object.isCustom && Object.keys(body).some((k) => k !== 'description' && k !== 'labelSingular' && k !== 'labelPlural')) {
    problems.push(`${object.namePlural} is a standard object: only its labels and description change`);
  }
  const change: ObjectChange = {};
  for (const key of ['labelSingular', 'labelPlural'] as const) {
    if (body[key] !== undefined) {
      const value = label(body[key], key, problems, true);
      if (value) change[key] = value;
    }
  }
  if (body.description !== undefined) change.description = label(body.description, 'description', problems, false) ?? null;
  if (body.labelIdentifierField !== undefined) {
    if (typeof body.labelIdentifierField !== 'string' || !identifiers.includes(body.labelIdentifierField)) {
      problems.push(
        `labelIdentifierField must name an active TEXT or FULL_NAME field of ${object.namePlural}${identifiers.length ? ` (${identifiers.join(', ')})` : ''}`,
      );
    } else change.labelIdentifierField = body.labelIdentifierField;
  }
  if (body.isActive !== undefined) {
    if (typeof body.isActive !== 'boolean') problems.push('isActive must be true or false');
    else change.isActive = body.isActive;
  }
  if (problems.length) throw bad(...problems);
  return change;
}

/**
 * The declaration the records API derives a custom object's every surface from (as the
 * standard objects' are written): no declared field (its fields are all custom, in the
 * record's `custom` column), its records in `custom_records`.
 */
export function customObjectDeclaration(object: WorkspaceObject): ObjectDeclaration {
  const { nameSingular: singular, namePlural: plural } = object;
  return {
    plural,
    singular,
    typeName: cap(singular),
    pluralType: cap(plural),
    table: 'custom_records',
    article: /^[aeiou]/i.test(singular) ? 'an' : 'a',
    pronoun: 'it',
    sparsePermissions: true,
    fields: [],
    label: [object.labelIdentifierField],
    docs: {
      tag: `${object.labelPlural}: this workspace's own object${object.description ? ` — ${object.description}` : ''}.`,
      createTool: `Creates ${/^[aeiou]/i.test(singular) ? 'an' : 'a'} ${singular} (${object.labelSingular}).`,
      updateTool: `Changes the given fields of ${/^[aeiou]/i.test(singular) ? 'an' : 'a'} ${singular} (partial update); fields left out keep their value.`,
      filterExamples: { [`${object.labelIdentifierField} contains "acme", any case`]: `${object.labelIdentifierField}[ilike]:"%acme%"` },
      orderByExamples: { 'Newest first': 'createdAt[DescNullsLast]' },
      idExample: '0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10',
    },
  };
}

/** A field as `/rest/metadata/objects` lists it: the standard objects' own fields are described as custom ones are, with `isCustom: false`. */
export interface FieldSummary {
  name: string;
  label: string;
  description: string | null;
  type: string;
  isCustom: boolean;
  isNullable: boolean;
  isActive: boolean;
  options?: { value: string; label: string; position: number }[];
  relation?: { type: 'MANY_TO_ONE' | 'ONE_TO_MANY'; targetObject: string; name: string };
}

const words = (name: string) => cap(name.replace(/([A-Z])/g, ' $1').toLowerCase());

/** The fields every record has, then a standard object's declared fields, as the metadata API lists them. */
export function standardFields(object: ObjectDeclaration<StandardField>): FieldSummary[] {
  const field = (name: string, type: string, isNullable: boolean, extra: Partial<FieldSummary> = {}): FieldSummary => ({
    name,
    label: words(name),
    description: null,
    type,
    isCustom: false,
    isNullable,
    isActive: true,
    ...extra,
  });
  // Each as its metadata says: its registry type, whether it may be null, a select's options, a link's target.
  const declared = object.fields.map((f) => {
    const link = relationSettings(f);
    return field(f.name, f.type, f.isNullable, {
      description: f.docs?.description ?? null,
      ...(f.options ? { options: f.options.map((o, position) => ({ value: o.value, label: o.label, position })) } : {}),
      ...(link ? { relation: { type: link.relationType, targetObject: link.targetObject, name: link.relationName } } : {}),
    });
  });
  return [
    field('id', 'UUID', false),
    ...declared,
    field('createdAt', 'DATE_TIME', false),
    field('updatedAt', 'DATE_TIME', false),
    field('deletedAt', 'DATE_TIME', true),
  ];
}
