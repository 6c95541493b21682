import type { Type } from '@nestjs/common';
import { ArgsType, Field, Float, InputType, ObjectType, registerEnumType } from '@nestjs/graphql';
import {
  COMPOSITES,
  fieldType,
  requiredOnCreate,
  subFieldGraphql,
  type CompositeType,
  type GraphqlTypes as RegistryGraphql,
} from '#records/field-types/index.js';
import { OBJECTS, relationFields, type ObjectDeclaration, type StandardField } from '#records/objects/index.js';
import {
  ArrayFilter,
  BigFloatFilter,
  Connection,
  DateFilter,
  FilterIs,
  OrderByDirection,
  StringFilter,
  UUIDFilter,
} from './types/common.types.js';
import { PageArgs } from './types/page.args.js';
import { BigFloatScalar, DateTimeScalar, UUIDScalar } from './types/scalars.js';
import { namedClass, property, type Ctor } from '#records/service/decorate.js';
import { OBJECT_DOCS } from './object-docs.js';

/*
 * GraphQL types of every object (docs/graphql.md; docs/architecture.md; names as in Twenty), made from the
 * declarations: the object, its connection and edge, create/update inputs, filter and
 * order inputs, and list arguments. Each field's types are those its registry type names
 * (the names a custom field's SDL has), made here as Nest classes; composite types once each.
 * The service layer validates `data` with the REST input classes, so the rules are the same.
 */

export interface GraphqlTypes {
  object: Ctor;
  connection: Type<unknown>;
  create: Ctor;
  update: Ctor;
  filter: Ctor;
  orderBy: Ctor;
  args: Ctor;
}

const made = new Map<string, Ctor>();

function once(name: string, build: (cls: Ctor) => void, decorate: (cls: Ctor) => void): Ctor {
  let cls = made.get(name);
  if (!cls) {
    cls = namedClass(name);
    made.set(name, cls);
    build(cls);
    decorate(cls);
  }
  return cls;
}

const desc = (text: string | undefined) => (text ? { description: text } : {});

const linkMetadata = () =>
  once(
    'LinkMetadata',
    (cls) => {
      property(cls, 'url', String, [Field(() => String)]);
      property(cls, 'label', Object, [Field(() => String, { nullable: true })]);
    },
    (cls) => ObjectType('LinkMetadata')(cls),
  );

const linkMetadataInput = () =>
  once(
    'LinkMetadataInput',
    (cls) => {
      property(cls, 'url', String, [Field(() => String)]);
      property(cls, 'label', Object, [Field(() => String, { nullable: true })]);
    },
    (cls) => InputType('LinkMetadataInput')(cls),
  );

/**
 * The code-first class of a GraphQL type the registry names (`String`, `StringFilter`,
 * `Links`, `[LinkMetadata!]!`): what a field's type gives by name, made here as Nest classes.
 */
interface Named {
  type: () => object;
  list: boolean;
  nullable: boolean;
}

const SCALARS: Record<string, () => object> = {
  String: () => String,
  Float: () => Float,
  BigFloat: () => BigFloatScalar,
  DateTime: () => DateTimeScalar,
  UUID: () => UUIDScalar,
  StringFilter: () => StringFilter,
  DateFilter: () => DateFilter,
  UUIDFilter: () => UUIDFilter,
  BigFloatFilter: () => BigFloatFilter,
  ArrayFilter: () => ArrayFilter,
  OrderByDirection: () => OrderByDirection,
  LinkMetadata: linkMetadata,
  LinkMetadataInput: linkMetadataInput,
};

/** The composite types' four classes by their GraphQL names. */
const COMPOSITE_CLASSES: Record<string, () => object> = Object.fromEntries(
  Object.values(COMPOSITES).flatMap((type) => [
    [type.graphql.object, () => compositeObject(type)],
    [type.graphql.input, () => compositeInput(type)],
    [type.graphql.filter, () => compositeFilter(type)],
    [type.graphql.orderBy, () => compositeOrderBy(type)],
  ]),
);

const enums = new Map<string, object>();

/** An enum the registry names (`OpportunityStageEnum`), registered once with its values, and its filter. */
function enumClasses(found: { name: string; values: string[] }): void {
  if (enums.has(found.name)) return;
  const type = Object.fromEntries(found.values.map((v) => [v, v]));
  registerEnumType(type, { name: found.name });
  enums.set(found.name, type);
  const filter = `${found.name}Filter`;
  once(
    filter,
    (cls) => {
      property(cls, 'eq', Object, [Field(() => type, { nullable: true })]);
      property(cls, 'neq', Object, [Field(() => type, { nullable: true })]);
      property(cls, 'in', Array, [Field(() => [type], { nullable: true })]);
      property(cls, 'is', Object, [Field(() => FilterIs, { nullable: true })]);
    },
    (cls) => InputType(filter)(cls),
  );
}

/** `Name`, `Name!`, `[Name!]` or `[Name!]!` as a class, whether it is a list, and whether it may be null. */
function named(text: string): Named {
  const nullable = !text.endsWith('!');
  const list = text.startsWith('[');
  const name = text.replace(/[[\]!]/g, '');
  // An enum and its filter are made before they are named (typesOf).
  const enumType = enums.get(name);
  const enumFilter = made.get(name);
  const of = SCALARS[name] ?? COMPOSITE_CLASSES[name] ?? (enumType ? () => enumType : enumFilter ? () => enumFilter : undefined);
  if (!of) throw new Error(`no GraphQL type ${name} in the base schema`);
  // Made now: Nest collects a class's metadata when the schema is built, and one decorated later is unknown to it.
  const value = of();
  return { type: () => (list ? [value] : value), list, nullable };
}

function compositeObject(type: CompositeType): Ctor {
  return once(
    type.graphql.object,
    (cls) => {
      for (const sub of type.subFields) {
        const { type: of, list, nullable } = named(subFieldGraphql(sub).output);
        property(cls, sub.name, list ? Array : Object, [
          Field(of, { ...(nullable ? { nullable: true } : {}), ...desc(sub.docs?.graphql) }),
        ]);
      }
    },
    (cls) => ObjectType(type.graphql.object)(cls),
  );
}

function compositeInput(type: CompositeType): Ctor {
  return once(
    type.graphql.input,
    (cls) => {
      for (const sub of type.subFields) {
        const { type: of, list } = named(subFieldGraphql(sub).input);
        property(cls, sub.name, list ? Array : Object, [Field(of, { nullable: true, ...desc(sub.docs?.graphqlInput) })]);
      }
    },
    (cls) => InputType(type.graphql.input)(cls),
  );
}

function compositeFilter(type: CompositeType): Ctor {
  return once(
    type.graphql.filter,
    (cls) => {
      for (const sub of type.subFields.filter((s) => s.filterable)) {
        // A number sub-field's FloatFilter is defined per workspace, with the custom fields that need it (workspace-schema.ts).
        const filter = subFieldGraphql(sub).filter;
        if (!filter || !SCALARS[filter])
          throw new Error(`${type.name}.${sub.name}: the base schema has no ${filter} for a standard object's field`);
        property(cls, sub.name, Object, [Field(named(filter).type, { nullable: true })]);
      }
    },
    (cls) => InputType(type.graphql.filter)(cls),
  );
}

function compositeOrderBy(type: CompositeType): Ctor {
  return once(
    type.graphql.orderBy,
    (cls) => {
      for (const sub of type.subFields.filter((s) => s.sortable)) {
        property(cls, sub.name, Object, [Field(() => OrderByDirection, { nullable: true })]);
      }
    },
    (cls) => InputType(type.graphql.orderBy)(cls),
  );
}

/** A standard field's GraphQL types, as its registry type names them (its enum registered first). */
function typesOf(object: ObjectDeclaration, field: StandardField): RegistryGraphql {
  const types = fieldType(field.type).graphql(field, object.typeName);
  if (types.enum) enumClasses(types.enum);
  return types;
}

function inputDescription(field: StandardField, mode: 'create' | 'update'): string | undefined {
  const docs = field.docs;
  if (mode === 'create') return docs?.graphqlCreate ?? docs?.create;
  return docs?.graphqlUpdate ?? docs?.update ?? (fieldType(field.type).composite ? undefined : docs?.create);
}

function inputProperty(cls: Ctor, object: ObjectDeclaration, field: StandardField, mode: 'create' | 'update'): void {
  const options = { nullable: true, ...desc(inputDescription(field, mode)) };
  const { type, list } = named(typesOf(object, field).input);
  const create = mode === 'create';
  const byDefault = create && field.defaultValue !== undefined ? desc(`Default ${field.defaultValue}.`) : {};
  property(cls, field.name, list ? Array : Object, [
    Field(type, create && requiredOnCreate(field) ? { ...options, nullable: false } : { ...options, ...byDefault }),
  ]);
}

/** `[{name: AscNullsFirst}, …]` or `[{name: {lastName: AscNullsFirst}}, …]`, from the first declared field. */
function orderExample(object: ObjectDeclaration): string {
  const first = object.fields[0];
  const sortBy = first && fieldType(first.type).sortBy;
  if (sortBy) return `{${first.name}: {${sortBy[sortBy.length - 1]}: AscNullsFirst}}`;
  return `{${first?.name ?? 'id'}: AscNullsFirst}`;
}

const byObject = new Map<string, GraphqlTypes>();

export function graphqlTypes(object: ObjectDeclaration): GraphqlTypes {
  const found = byObject.get(object.plural);
  if (found) return found;
  const { typeName, singular, plural } = object;

  const node = namedClass(typeName);
  // Registered before fields that point back here (Company ↔ Person) are resolved.
  const types = { object: node } as GraphqlTypes;
  byObject.set(plural, types);

  property(node, 'id', String, [Field(() => UUIDScalar)]);
  for (const field of object.fields) {
    const { type, list } = named(typesOf(object, field).output);
    // Null only when the field may be and its type has a null (a composite is an object of empty sub-fields).
    const nullable = field.isNullable && fieldType(field.type).empty() === null;
    property(node, field.name, list ? Array : Object, [
      Field(type, { ...(nullable ? { nullable } : {}), ...desc(field.docs?.description) }),
    ]);
  }
  property(node, 'createdAt', String, [Field(() => DateTimeScalar)]);
  property(node, 'updatedAt', String, [Field(() => DateTimeScalar)]);
  property(node, 'deletedAt', Object, [Field(() => DateTimeScalar, { nullable: true, description: OBJECT_DOCS.deletedAt(singular) })]);
  ObjectType(typeName)(node);

  const connectionName = `${typeName}Connection`;
  const connection = { [connectionName]: class extends Connection(node, typeName, object.pluralType) {} }[connectionName];
  ObjectType(connectionName)(connection);
  types.connection = connection;

  types.create = namedClass(`${typeName}CreateInput`);
  property(types.create, 'id', Object, [Field(() => UUIDScalar, { nullable: true, description: OBJECT_DOCS.createId })]);
  for (const field of object.fields) inputProperty(types.create, object, field, 'create');
  InputType(`${typeName}CreateInput`)(types.create);

  types.update = namedClass(`${typeName}UpdateInput`);
  for (const field of object.fields) inputProperty(types.update, object, field, 'update');
  InputType(`${typeName}UpdateInput`, { description: OBJECT_DOCS.updateInput })(types.update);

  const filter = namedClass(`${typeName}FilterInput`);
  types.filter = filter;
  property(filter, 'id', Object, [Field(() => UUIDFilter, { nullable: true })]);
  for (const field of object.fields) {
    property(filter, field.name, Object, [Field(named(typesOf(object, field).filter).type, { nullable: true })]);
  }
  // One hop across a relation (docs/graphql.md): `people(filter: {company: {name: {ilike: "%acme%"}}})`.
  for (const field of relationFields(object)) {
    const target = OBJECTS.find((o) => o.plural === field.target)!;
    property(filter, field.relation, Object, [
      Field(() => graphqlTypes(target).filter, {
        nullable: true,
        description: `${plural} whose ${field.relation} (a live ${target.singular}) matches; its own relations cannot be crossed.`,
      }),
    ]);
  }
  for (const source of OBJECTS) {
    for (const field of relationFields(source)) {
      if (field.target !== plural) continue;
      property(filter, field.inverse, Object, [
        Field(() => graphqlTypes(source).filter, {
          nullable: true,
          description: `${plural} with at least one live ${source.singular} in ${field.inverse} that matches; its own relations cannot be crossed.`,
        }),
      ]);
    }
  }
  property(filter, 'createdAt', Object, [Field(() => DateFilter, { nullable: true })]);
  property(filter, 'updatedAt', Object, [Field(() => DateFilter, { nullable: true })]);
  property(filter, 'deletedAt', Object, [Field(() => DateFilter, { nullable: true, description: OBJECT_DOCS.filterDeletedAt(plural) })]);
  property(filter, 'and', Array, [Field(() => [filter], { nullable: true })]);
  property(filter, 'or', Array, [Field(() => [filter], { nullable: true })]);
  property(filter, 'not', Object, [Field(() => filter, { nullable: true })]);
  InputType(`${typeName}FilterInput`, { description: OBJECT_DOCS.filterInput })(filter);

  const orderBy = namedClass(`${typeName}OrderByInput`);
  types.orderBy = orderBy;
  property(orderBy, 'id', Object, [Field(() => OrderByDirection, { nullable: true })]);
  for (const field of object.fields) {
    const order = typesOf(object, field).order;
    if (order) property(orderBy, field.name, Object, [Field(named(order).type, { nullable: true })]);
  }
  for (const name of ['createdAt', 'updatedAt', 'deletedAt'])
    property(orderBy, name, Object, [Field(() => OrderByDirection, { nullable: true })]);
  InputType(`${typeName}OrderByInput`, { description: OBJECT_DOCS.orderByInput(orderExample(object)) })(orderBy);

  const argsName = `${object.pluralType}Args`;
  const args = { [argsName]: class extends PageArgs {} }[argsName] as Ctor;
  property(args, 'filter', Object, [Field(() => filter, { nullable: true })]);
  property(args, 'orderBy', Array, [Field(() => [orderBy], { nullable: true, description: OBJECT_DOCS.orderByArg })]);
  ArgsType()(args);
  types.args = args;
  return types;
}

/** Made at import, before the GraphQL module builds the schema. */
export const GRAPHQL_TYPES: ReadonlyMap<string, GraphqlTypes> = new Map(OBJECTS.map((o) => [o.plural, graphqlTypes(o)]));
