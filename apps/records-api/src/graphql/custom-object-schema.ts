import type { GraphQLFieldConfig, GraphQLResolveInfo } from 'graphql';
import type { Principal } from '#auth/principal.js';
import {
  BASE_GRAPHQL_ROOT_FIELDS,
  BASE_GRAPHQL_TYPES,
  customObjectDeclaration,
  ENUM_TYPE_ENDINGS,
  objectRootFieldNames,
  objectRootFields,
  objectTypeNames,
  OBJECTS,
  type CustomField,
  type WorkspaceObject,
} from '#records/objects/index.js';
import type { WorkspaceModel } from '#records/service/data-model.js';
import { ObjectService } from '#records/service/object-service.js';
import type { GraphqlContext } from './graphql-context.js';
import { OBJECT_DOCS, PAGE_ARG_DOCS } from './object-docs.js';
import { batchCost, connectionCost, singleRecordCost } from './query-limits.js';
import * as resolvers from './record-resolvers.js';
import type { FieldEdit } from './schema-copy.js';

/*
 * A workspace's custom objects in its GraphQL schema (docs/graphql.md "Custom objects"): each
 * active one is typed as a standard object is (`Ticket`, `TicketConnection`, `TicketEdge`,
 * its create, update, filter and order inputs, `Ticket<Field>Enum` for its select fields),
 * with the standard objects' root fields, argument names, nullability, descriptions and
 * costs. Its fields are mapped by the custom fields' mapper (workspace-schema.ts). The
 * resolvers are those of the standard objects (record-resolvers.ts), attached by object
 * name, never by workspace: workspaces whose objects are identical share one schema, and
 * each request reads its own workspace's records (docs/decisions/0058-graphql-custom-objects.md).
 */

/** A custom field's GraphQL types, as the custom fields' mapper gives them; the types it defines go to `types`. */
export interface MappedField {
  output: string;
  input: string;
  filter: string;
  order?: string;
}
export type FieldMapper = (typeName: string, field: CustomField, types: string[]) => MappedField;

const doc = (text: string | null | undefined) => (text ? `${JSON.stringify(text)} ` : '');
/** The name of a type an SDL definition makes (`enum TicketPriorityEnum { … }`). */
const definedName = (sdl: string) => /^(?:enum|input|type|scalar|union|interface) (\w+)/.exec(sdl.trimStart())?.[1];

interface Served {
  object: WorkspaceObject;
  typeName: string;
  pluralType: string;
  fields: (MappedField & { field: CustomField })[];
}

/**
 * The active custom objects a workspace's schema serves, in the order they were made, with
 * their type names. Names are checked when an object is made (checkNewObject); one whose
 * names are taken all the same is left out of GraphQL rather than make a schema that cannot
 * be built. Decided from names alone, so the SDL and the resolvers agree.
 */
const servedOf = new WeakMap<WorkspaceModel, Map<string, Omit<Served, 'fields'>>>();
function servedObjects(model: WorkspaceModel): Map<string, Omit<Served, 'fields'>> {
  let served = servedOf.get(model);
  if (served) return served;
  served = new Map();
  const types = new Set([...BASE_GRAPHQL_TYPES, ...OBJECTS.flatMap((o) => objectTypeNames(o.singular))]);
  const roots = new Set([...BASE_GRAPHQL_ROOT_FIELDS, ...OBJECTS.flatMap((o) => objectRootFieldNames(o.singular, o.plural))]);
  for (const object of model.objects) {
    if (!object.isActive) continue;
    const { typeName, pluralType } = customObjectDeclaration(object);
    const own = objectTypeNames(object.nameSingular);
    const fields = objectRootFieldNames(object.nameSingular, object.namePlural);
    // A type named like an enum (`…Enum`) could be made again by a select field.
    if (ENUM_TYPE_ENDINGS.test(typeName) || own.some((t) => types.has(t)) || fields.some((f, i) => roots.has(f) || fields.indexOf(f) !== i))
      continue;
    own.forEach((t) => types.add(t));
    fields.forEach((f) => roots.add(f));
    served.set(object.namePlural, { object, typeName, pluralType });
  }
  servedOf.set(model, served);
  return served;
}

/** The GraphQL type names of the custom objects `model`'s schema serves, with their plural names. */
export function customObjectTypes(model: WorkspaceModel): Map<string, string> {
  return new Map([...servedObjects(model).values()].map((o) => [o.typeName, o.object.namePlural]));
}

/**
 * The SDL of a workspace's custom objects; `defined` is what the schema defines for the
 * standard objects' custom fields already. Two select fields may make one enum name
 * (`ticket.priorityStatus`, `ticketPriority.status`): the older field keeps it and the
 * other is left out of GraphQL (REST serves it all the same).
 */
export function customObjectsSdl(model: WorkspaceModel, defined: readonly string[], map: FieldMapper): string[] {
  const served = new Map([...servedObjects(model)].map(([plural, o]) => [plural, { ...o, fields: [] } as Served]));
  if (!served.size) return [];
  const types = new Set([...BASE_GRAPHQL_TYPES, ...[...served.values()].flatMap((o) => objectTypeNames(o.object.nameSingular))]);
  for (const sdl of defined) types.add(definedName(sdl) ?? '');
  const enums: string[] = [];
  // In the order the fields were made, so a new field never takes an older one's enum name.
  for (const field of model.valueFields) {
    const object = served.get(field.object);
    if (!object) continue;
    const made: string[] = [];
    const mapped = map(object.typeName, field, made);
    const names = made.map(definedName);
    if (names.some((name) => !name || types.has(name))) continue;
    names.forEach((name) => types.add(name!));
    enums.push(...made);
    object.fields.push({ field, ...mapped });
  }
  return [...enums, ...[...served.values()].flatMap(objectSdl)];
}

function objectSdl({ object, typeName: t, pluralType, fields }: Served): string[] {
  const { nameSingular: singular, namePlural: plural } = object;
  const { query, mutation } = objectRootFields(singular, plural);
  const [list, one, groupBy] = query;
  const [create, createMany, update, remove, restore] = mutation;
  const line = (name: string, type: string, text?: string | null) => `${doc(text)}${name}: ${type}`;
  const each = (pick: (m: Served['fields'][number]) => string | undefined, text?: (m: Served['fields'][number]) => string | null) =>
    fields.flatMap((m) => {
      const type = pick(m);
      return type ? [line(m.field.name, type, text?.(m))] : [];
    });
  const inputs = each(
    (m) => m.input,
    (m) => m.field.description,
  );
  const ordered = fields.find((m) => m.order === 'OrderByDirection')?.field.name ?? 'id';
  const page = (['first', 'after', 'last', 'before'] as const)
    .map((name) => line(name, name === 'first' || name === 'last' ? 'Int' : 'String', PAGE_ARG_DOCS[name]))
    .join(' ');
  const upsert = `${doc(OBJECT_DOCS.upsertArg)}upsert: Boolean = false`;
  return [
    `${doc(object.description)}type ${t} { id: UUID! ${each(
      (m) => m.output,
      (m) => m.field.description ?? m.field.label,
    ).join(' ')} createdAt: DateTime! updatedAt: DateTime! ${line('deletedAt', 'DateTime', OBJECT_DOCS.deletedAt(singular))} }`,
    `type ${t}Edge { node: ${t}! cursor: String! }`,
    `type ${t}Connection { ${line('totalCount', 'Int!', OBJECT_DOCS.totalCount(pluralType))} edges: [${t}Edge!]! pageInfo: PageInfo! }`,
    `input ${t}CreateInput { ${line('id', 'UUID', OBJECT_DOCS.createId)} ${inputs.join(' ')} }`,
    // An input type needs a field: an object whose fields are all inactive has nothing to update.
    ...(inputs.length ? [`${doc(OBJECT_DOCS.updateInput)}input ${t}UpdateInput { ${inputs.join(' ')} }`] : []),
    `${doc(OBJECT_DOCS.filterInput)}input ${t}FilterInput { id: UUIDFilter ${each((m) => m.filter).join(' ')} ` +
      `createdAt: DateFilter updatedAt: DateFilter ${line('deletedAt', 'DateFilter', OBJECT_DOCS.filterDeletedAt(plural))} ` +
      `and: [${t}FilterInput!] or: [${t}FilterInput!] not: ${t}FilterInput }`,
    `${doc(OBJECT_DOCS.orderByInput(`{${ordered}: AscNullsFirst}`))}input ${t}OrderByInput { id: OrderByDirection ${each((m) => m.order).join(' ')} ` +
      'createdAt: OrderByDirection updatedAt: OrderByDirection deletedAt: OrderByDirection }',
    `extend type Query { ${list}(${page} filter: ${t}FilterInput ${line('orderBy', `[${t}OrderByInput!]`, OBJECT_DOCS.orderByArg)}): ${t}Connection! ` +
      `${doc(OBJECT_DOCS.one(singular))}${one}(filter: ${t}FilterInput!): ${t} ` +
      `${doc(OBJECT_DOCS.groupBy(plural))}${groupBy}(groupBy: [String!], aggregate: [String!], filter: ${t}FilterInput): GroupByResult! }`,
    `extend type Mutation { ${create}(data: ${t}CreateInput! ${upsert}): ${t}! ` +
      `${doc(OBJECT_DOCS.createMany(plural))}${createMany}(data: [${t}CreateInput!]! ${upsert}): [${t}!]! ` +
      (inputs.length ? `${update}(id: UUID! data: ${t}UpdateInput!): ${t}! ` : '') +
      `${doc(OBJECT_DOCS.remove(singular))}${remove}(id: UUID!): ${t}! ` +
      `${doc(OBJECT_DOCS.restore(singular))}${restore}(id: UUID!): ${t}! }`,
  ];
}

type Args = Record<string, unknown>;
type Resolve = (service: ObjectService, principal: Principal, args: Args, context: GraphqlContext, info: GraphQLResolveInfo) => unknown;
type Cost = typeof connectionCost | typeof singleRecordCost | typeof batchCost;
type Operation = { resolve: Resolve; cost?: Cost };

const creates =
  (create: typeof resolvers.createRecord | typeof resolvers.createRecords): Resolve =>
  (service, principal, args, context, info) =>
    create(service, principal, args.data, args.upsert as boolean, context, info);

/** What an object's root fields call and cost, in objectRootFields' order: list, one, groupBy. */
const QUERIES: Operation[] = [
  { resolve: (service, principal, args, _context, info) => resolvers.listRecords(service, principal, args, info), cost: connectionCost },
  { resolve: (service, principal, args) => resolvers.firstRecord(service, principal, args.filter as object), cost: singleRecordCost },
  {
    resolve: (service, principal, args) =>
      resolvers.groupRecords(service, principal, args.groupBy, args.aggregate, (args.filter as object | undefined) ?? null),
  },
];
/** create, createMany, update, delete, restore. */
const MUTATIONS: Operation[] = [
  { resolve: creates(resolvers.createRecord), cost: singleRecordCost },
  { resolve: creates(resolvers.createRecords), cost: batchCost },
  {
    resolve: (service, principal, args) => resolvers.updateRecord(service, principal, args.id as string, args.data),
    cost: singleRecordCost,
  },
  {
    resolve: (service, principal, args, _context, info) => resolvers.deleteRecord(service, principal, args.id as string, info),
    cost: singleRecordCost,
  },
  { resolve: (service, principal, args) => resolvers.restoreRecord(service, principal, args.id as string), cost: singleRecordCost },
];

/**
 * Attaches the standard objects' resolvers and costs (query-limits.ts) to the root fields
 * customObjectsSdl added for `model`'s objects; fields that have a resolver (the base
 * schema's) are left as they are. Passed to copySchema.
 */
export function customObjectResolvers(model: WorkspaceModel): FieldEdit {
  const byField = new Map<string, Operation & { plural: string }>();
  for (const { object } of servedObjects(model).values()) {
    const plural = object.namePlural;
    const { query, mutation } = objectRootFields(object.nameSingular, plural);
    query.forEach((name, i) => byField.set(`Query.${name}`, { ...QUERIES[i], plural }));
    mutation.forEach((name, i) => byField.set(`Mutation.${name}`, { ...MUTATIONS[i], plural }));
  }
  return (typeName, name, field): GraphQLFieldConfig<unknown, unknown> => {
    const found = field.resolve ? undefined : byField.get(`${typeName}.${name}`);
    if (!found) return field;
    const { plural, resolve, cost } = found;
    return {
      ...field,
      extensions: cost ? { ...field.extensions, complexity: cost } : field.extensions,
      resolve: (_source, args, context, info) => {
        const { records, principal } = context as GraphqlContext;
        return resolve(new ObjectService(records, plural), principal, args, context as GraphqlContext, info);
      },
    };
  };
}
