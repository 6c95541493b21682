import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLUnionType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLNamedType,
  type GraphQLType,
} from 'graphql';

/*
 * A copy of a schema in which every type is made anew, in the same order, without the
 * syntax trees `extendSchema` leaves on each type and field (docs/graphql.md, "Schemas per
 * workspace"). A workspace's schema is built from SDL; kept as `extendSchema` returns it, a
 * 300-field workspace held 1.24 MB (2.6 MB with token locations); copied, 0.34 MB
 * (`.scratch`-style measurement in docs/decisions/0052-graphql-schemas-bounded-in-bytes.md).
 * Scalars and introspection types are shared with the source. `editField` may change an
 * object type's field on the way (the guarded schema of restricted roles).
 */

export type FieldEdit = (
  typeName: string,
  fieldName: string,
  field: GraphQLFieldConfig<unknown, unknown>,
) => GraphQLFieldConfig<unknown, unknown>;

type Mapped<T> = { [key: string]: T };

function mapValues<T, R>(map: Mapped<T>, fn: (value: T, key: string) => R): Mapped<R> {
  const result: Mapped<R> = Object.create(null);
  for (const key of Object.keys(map)) result[key] = fn(map[key], key);
  return result;
}

export function copySchema(schema: GraphQLSchema, editField?: FieldEdit, o: { outputsOnly?: boolean } = {}): GraphQLSchema {
  const config = schema.toConfig();
  const typeMap: Mapped<GraphQLNamedType> = Object.create(null);
  // `outputsOnly`: input objects and enums are shared with `schema` (a type may belong to several schemas), only the
  // output types are made anew — what a field edit changes. Half the nodes of a workspace's schema are its inputs.
  for (const type of config.types)
    typeMap[type.name] = o.outputsOnly && (isInputObjectType(type) || isEnumType(type)) ? type : copyNamed(type);

  function replace<T extends GraphQLType>(type: T): T {
    if (isListType(type)) return new GraphQLList(replace(type.ofType)) as unknown as T;
    if (isNonNullType(type)) return new GraphQLNonNull(replace(type.ofType)) as unknown as T;
    return typeMap[(type as GraphQLNamedType).name] as unknown as T;
  }
  const args = (map: GraphQLFieldConfigArgumentMap) => mapValues(map, (arg) => ({ ...arg, type: replace(arg.type), astNode: undefined }));
  const fields = (typeName: string, map: GraphQLFieldConfigMap<unknown, unknown>) =>
    mapValues(map, (field, name) => {
      const copied = { ...field, type: replace(field.type), args: field.args && args(field.args), astNode: undefined };
      return editField ? editField(typeName, name, copied) : copied;
    });
  const inputFields = (map: GraphQLInputFieldConfigMap) =>
    mapValues(map, (field) => ({ ...field, type: replace(field.type), astNode: undefined }));
  const named = <T extends GraphQLNamedType>(types: readonly T[]) => types.map((t) => typeMap[t.name] as T);

  function copyNamed(type: GraphQLNamedType): GraphQLNamedType {
    if (isScalarType(type) || isIntrospectionType(type)) return type;
    const bare = { astNode: undefined, extensionASTNodes: [] };
    if (isObjectType(type)) {
      const c = type.toConfig();
      return new GraphQLObjectType({ ...c, ...bare, interfaces: () => named(c.interfaces), fields: () => fields(c.name, c.fields) });
    }
    if (isInterfaceType(type)) {
      const c = type.toConfig();
      return new GraphQLInterfaceType({ ...c, ...bare, interfaces: () => named(c.interfaces), fields: () => fields(c.name, c.fields) });
    }
    if (isUnionType(type)) {
      const c = type.toConfig();
      return new GraphQLUnionType({ ...c, ...bare, types: () => named(c.types) });
    }
    if (isEnumType(type)) {
      const c = type.toConfig();
      return new GraphQLEnumType({ ...c, ...bare, values: mapValues(c.values, (value) => ({ ...value, astNode: undefined })) });
    }
    if (isInputObjectType(type)) {
      const c = type.toConfig();
      return new GraphQLInputObjectType({ ...c, ...bare, fields: () => inputFields(c.fields) });
    }
    throw new Error(`Unexpected type ${String(type)}`);
  }

  const root = (type: GraphQLObjectType | null | undefined) => (type ? (typeMap[type.name] as GraphQLObjectType) : undefined);
  return new GraphQLSchema({
    ...config,
    astNode: undefined,
    extensionASTNodes: [],
    types: Object.values(typeMap),
    query: root(config.query),
    mutation: root(config.mutation),
    subscription: root(config.subscription),
  });
}

/**
 * Types, fields, arguments and enum values of a schema: what its size in memory follows
 * (docs/decisions/0052-graphql-schemas-bounded-in-bytes.md); `outputsOnly` for a copy that shares the rest (copySchema).
 */
export function schemaNodes(schema: GraphQLSchema, o: { outputsOnly?: boolean } = {}): number {
  let nodes = 0;
  for (const type of Object.values(schema.getTypeMap())) {
    if (o.outputsOnly && (isInputObjectType(type) || isEnumType(type))) continue;
    nodes++;
    if (isObjectType(type) || isInterfaceType(type)) for (const field of Object.values(type.getFields())) nodes += 1 + field.args.length;
    else if (isInputObjectType(type)) nodes += Object.keys(type.getFields()).length;
    else if (isEnumType(type)) nodes += type.getValues().length;
  }
  return nodes;
}
