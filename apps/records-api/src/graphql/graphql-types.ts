import type { Type } from '@nestjs/common';
import { ArgsType, Field, Float, InputType, ObjectType, registerEnumType } from '@nestjs/graphql';
import {
  composite,
  OBJECTS,
  type CompositeType,
  type EnumField,
  type FieldDeclaration,
  type ObjectDeclaration,
  type SubField,
} from '#records/objects/index.js';
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
 * order inputs, and list arguments. Composite types are made once per composite type.
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

function subScalar(sub: SubField) {
  return sub.kind === 'bigint' ? BigFloatScalar : sub.kind === 'number' ? Float : String;
}

function compositeObject(type: CompositeType): Ctor {
  return once(
    type.graphql.object,
    (cls) => {
      for (const sub of type.subFields) {
        if (sub.kind === 'textList') property(cls, sub.name, Array, [Field(() => [String])]);
        else if (sub.kind === 'linkList') {
          const item = linkMetadata();
          property(cls, sub.name, Array, [Field(() => [item])]);
        } else property(cls, sub.name, Object, [Field(() => subScalar(sub), { nullable: true, ...desc(sub.docs?.graphql) })]);
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
        const options = { nullable: true, ...desc(sub.docs?.graphqlInput) };
        if (sub.kind === 'textList') property(cls, sub.name, Array, [Field(() => [String], options)]);
        else if (sub.kind === 'linkList') {
          const item = linkMetadataInput();
          property(cls, sub.name, Array, [Field(() => [item], options)]);
        } else property(cls, sub.name, Object, [Field(() => subScalar(sub), options)]);
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
        if (sub.kind === 'number')
          throw new Error(`${type.name}.${sub.name}: the base schema has no FloatFilter for a standard object's number`);
        const filter = sub.kind === 'textList' ? ArrayFilter : sub.kind === 'bigint' ? BigFloatFilter : StringFilter;
        property(cls, sub.name, Object, [Field(() => filter, { nullable: true })]);
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

const enums = new Map<string, object>();

/** `OpportunityStageEnum`: values as declared. */
export function graphqlEnum(field: EnumField): object {
  let found = enums.get(field.enumName);
  if (!found) {
    found = Object.fromEntries(field.values.map((v) => [v, v]));
    registerEnumType(found, { name: field.enumName });
    enums.set(field.enumName, found);
  }
  return found;
}

function enumFilter(field: EnumField): Ctor {
  const name = `${field.enumName}Filter`;
  const type = graphqlEnum(field);
  return once(
    name,
    (cls) => {
      property(cls, 'eq', Object, [Field(() => type, { nullable: true })]);
      property(cls, 'neq', Object, [Field(() => type, { nullable: true })]);
      property(cls, 'in', Array, [Field(() => [type], { nullable: true })]);
      property(cls, 'is', Object, [Field(() => FilterIs, { nullable: true })]);
    },
    (cls) => InputType(name)(cls),
  );
}

function inputDescription(field: FieldDeclaration, mode: 'create' | 'update'): string | undefined {
  const docs = field.docs;
  if (mode === 'create') return docs?.graphqlCreate ?? docs?.create;
  return docs?.graphqlUpdate ?? docs?.update ?? (field.kind === 'composite' ? undefined : docs?.create);
}

function inputProperty(cls: Ctor, field: FieldDeclaration, mode: 'create' | 'update'): void {
  const options = { nullable: true, ...desc(inputDescription(field, mode)) };
  switch (field.kind) {
    case 'text':
      property(cls, field.name, String, [
        Field(() => String, mode === 'create' && field.required ? { ...options, nullable: false } : options),
      ]);
      break;
    case 'enum': {
      const type = graphqlEnum(field);
      property(cls, field.name, Object, [
        Field(() => type, { ...options, ...(mode === 'create' ? desc(`Default ${field.default}.`) : {}) }),
      ]);
      break;
    }
    case 'timestamp':
      property(cls, field.name, Object, [Field(() => DateTimeScalar, options)]);
      break;
    case 'relation':
      property(cls, field.name, Object, [Field(() => UUIDScalar, options)]);
      break;
    case 'composite': {
      const type = compositeInput(composite(field.type));
      property(cls, field.name, Object, [Field(() => type, options)]);
      break;
    }
  }
}

/** `[{name: AscNullsFirst}, …]` or `[{name: {lastName: AscNullsFirst}}, …]`, from the first declared field. */
function orderExample(object: ObjectDeclaration): string {
  const first = object.fields[0];
  if (first?.kind === 'composite') {
    const sortBy = composite(first.type).sortBy;
    return `{${first.name}: {${sortBy[sortBy.length - 1]}: AscNullsFirst}}`;
  }
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
    switch (field.kind) {
      case 'text':
        property(node, field.name, String, [Field(() => String, { nullable: !field.required, ...desc(field.docs?.description) })]);
        break;
      case 'enum': {
        const type = graphqlEnum(field);
        property(node, field.name, String, [Field(() => type, desc(field.docs?.description))]);
        break;
      }
      case 'timestamp':
        property(node, field.name, Object, [Field(() => DateTimeScalar, { nullable: true, ...desc(field.docs?.description) })]);
        break;
      case 'relation':
        property(node, field.name, Object, [Field(() => UUIDScalar, { nullable: true })]);
        break;
      case 'composite': {
        const type = compositeObject(composite(field.type));
        property(node, field.name, Object, [Field(() => type)]);
        break;
      }
    }
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
  for (const field of object.fields) inputProperty(types.create, field, 'create');
  InputType(`${typeName}CreateInput`)(types.create);

  types.update = namedClass(`${typeName}UpdateInput`);
  for (const field of object.fields) inputProperty(types.update, field, 'update');
  InputType(`${typeName}UpdateInput`, { description: OBJECT_DOCS.updateInput })(types.update);

  const filter = namedClass(`${typeName}FilterInput`);
  types.filter = filter;
  property(filter, 'id', Object, [Field(() => UUIDFilter, { nullable: true })]);
  for (const field of object.fields) {
    const type =
      field.kind === 'text'
        ? StringFilter
        : field.kind === 'enum'
          ? enumFilter(field)
          : field.kind === 'timestamp'
            ? DateFilter
            : field.kind === 'relation'
              ? UUIDFilter
              : compositeFilter(composite(field.type));
    property(filter, field.name, Object, [Field(() => type, { nullable: true })]);
  }
  // One hop across a relation (docs/graphql.md): `people(filter: {company: {name: {ilike: "%acme%"}}})`.
  for (const field of object.fields) {
    if (field.kind !== 'relation') continue;
    const target = OBJECTS.find((o) => o.plural === field.target)!;
    property(filter, field.relation, Object, [
      Field(() => graphqlTypes(target).filter, {
        nullable: true,
        description: `${plural} whose ${field.relation} (a live ${target.singular}) matches; its own relations cannot be crossed.`,
      }),
    ]);
  }
  for (const source of OBJECTS) {
    for (const field of source.fields) {
      if (field.kind !== 'relation' || field.target !== plural) continue;
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
    const type = field.kind === 'composite' ? compositeOrderBy(composite(field.type)) : OrderByDirection;
    property(orderBy, field.name, Object, [Field(() => type, { nullable: true })]);
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
