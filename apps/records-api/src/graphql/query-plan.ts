import {
  Kind,
  getOperationAST,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  visit,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
// graphql-js's own field collection and argument/variable coercion, so a plan reads the
// document exactly as `execute` does (fragments, merged aliases, defaults, coercion).
import { collectFields, collectSubfields } from 'graphql/execution/collectFields.js';
import { getArgumentValues, getVariableValues } from 'graphql/execution/values.js';

/**
 * Thrown when a planned operation meets anything graphql-js would answer differently
 * from a plain walk (an error, a null in a non-null field, a promise below the root, a
 * function-valued property): the caller then runs graphql-js's `execute` (and Apollo) instead.
 */
export class NotPlannable extends Error {}
const NOT_PLANNABLE = new NotPlannable('not plannable');

/** Writes one value of a field's type, with its selection, as JSON text. */
type Write = (value: unknown) => string;
/** Reads a field's value from its parent, as the schema's resolver for it would. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parent is whatever the resolver above returned
type Read = (parent: any) => unknown;

interface RootField {
  key: string;
  def: GraphQLField<unknown, unknown>;
  nodes: readonly FieldNode[];
  write: Write;
}

export interface QueryPlan {
  schema: GraphQLSchema;
  operation: OperationDefinitionNode;
  fragments: Record<string, FragmentDefinitionNode>;
  queryType: GraphQLObjectType;
  root: (RootField | { key: string; typename: string })[];
}

const isThenable = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

/** A promise below the root: graphql-js would await it, so the plan gives up; its rejection is not left unhandled. */
function notPlannableThenable(value: unknown): never {
  void Promise.resolve(value as PromiseLike<unknown>).then(undefined, () => undefined);
  throw NOT_PLANNABLE;
}

/**
 * Nest's resolver for a plain `@Field()` (`root[property] ?? defaultValue`) reads only its
 * parent; any other resolver (relations, DataLoaders, `@ResolveField`) needs graphql-js.
 */
function readerFor(field: GraphQLField<unknown, unknown>): Read | null {
  const resolve = field.resolve;
  if (!resolve) {
    const name = field.name;
    return (parent) => {
      if (typeof parent !== 'object' && typeof parent !== 'function') return undefined; // as graphql-js's default resolver
      const value = parent[name];
      if (typeof value === 'function') throw NOT_PLANNABLE; // graphql-js would call it
      return value;
    };
  }
  if (resolve.name === 'rootFieldResolver' && resolve.length === 1) {
    return (parent) => (resolve as (parent: unknown) => unknown)(parent);
  }
  return null;
}

function compileType(
  schema: GraphQLSchema,
  fragments: QueryPlan['fragments'],
  type: GraphQLOutputType,
  nodes: readonly FieldNode[],
): Write | null {
  if (isNonNullType(type)) {
    const inner = compileType(schema, fragments, type.ofType, nodes);
    if (!inner) return null;
    return (value) => {
      if (isThenable(value)) notPlannableThenable(value);
      if (value == null || value instanceof Error) throw NOT_PLANNABLE;
      return inner(value);
    };
  }
  const inner = compileNullable(schema, fragments, type, nodes);
  if (!inner) return null;
  return (value) => {
    if (isThenable(value)) notPlannableThenable(value);
    if (value instanceof Error) throw NOT_PLANNABLE;
    return value == null ? 'null' : inner(value);
  };
}

function compileNullable(
  schema: GraphQLSchema,
  fragments: QueryPlan['fragments'],
  type: GraphQLOutputType,
  nodes: readonly FieldNode[],
): Write | null {
  if (isListType(type)) {
    const item = compileType(schema, fragments, type.ofType, nodes);
    if (!item) return null;
    return (value) => {
      if (!Array.isArray(value)) throw NOT_PLANNABLE;
      let out = '[';
      for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + item(value[i]);
      return `${out}]`;
    };
  }
  if (isLeafType(type)) {
    return (value) => {
      let serialized: unknown;
      try {
        serialized = type.serialize(value);
      } catch {
        throw NOT_PLANNABLE; // graphql-js reports the field's error
      }
      if (serialized == null) throw NOT_PLANNABLE;
      const json = JSON.stringify(serialized);
      if (typeof json !== 'string') throw NOT_PLANNABLE;
      return json;
    };
  }
  if (isObjectType(type) && !type.isTypeOf)
    return compileObject(schema, fragments, type, collectSubfields(schema, fragments, {}, type, nodes));
  return null; // interfaces and unions: graphql-js resolves the runtime type
}

function compileObject(
  schema: GraphQLSchema,
  fragments: QueryPlan['fragments'],
  type: GraphQLObjectType,
  selection: Map<string, readonly FieldNode[]>,
): Write | null {
  const parts: { prefix: string; read: Read | null; write: Write }[] = [];
  const fields = type.getFields();
  for (const [key, nodes] of selection) {
    const prefix = `${parts.length ? ',' : ''}${JSON.stringify(key)}:`;
    const name = nodes[0].name.value;
    if (name === '__typename') {
      const text = JSON.stringify(type.name);
      parts.push({ prefix, read: null, write: () => text });
      continue;
    }
    const field = fields[name];
    if (!field || nodes.some((node) => node.arguments?.length)) return null;
    const read = readerFor(field);
    const write = read && compileType(schema, fragments, field.type, nodes);
    if (!write) return null;
    parts.push({ prefix, read, write });
  }
  return (value) => {
    let out = '{';
    for (const part of parts) out += part.prefix + part.write(part.read ? part.read(value) : undefined);
    return `${out}}`;
  };
}

/**
 * A query document's plan, or null when graphql-js must execute it: the root fields'
 * resolvers are called as graphql-js calls them (coerced arguments, a resolve info of the
 * same shape), and everything below them must be plain data — fields Nest resolves from
 * the parent's property — which is written straight to JSON text, in collection order,
 * with each leaf serialized by its scalar or enum type. Directives (`@skip`, `@include`
 * with variables), introspection, relation fields, interfaces and unions are left to
 * graphql-js. Issue 12: building graphql-js's result tree (an info object, arguments and a
 * path per field and row) and then stringifying it cost more Node CPU than the rest of a
 * list request.
 */
export function planQuery(schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined): QueryPlan | null {
  const operation = getOperationAST(document, operationName);
  const queryType = schema.getQueryType();
  if (!operation || operation.operation !== 'query' || !queryType) return null;
  let directives = false;
  visit(document, {
    Directive: () => {
      directives = true;
    },
  });
  if (directives) return null;
  const fragments: QueryPlan['fragments'] = Object.create(null);
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  const root: QueryPlan['root'] = [];
  const fields = queryType.getFields();
  for (const [key, nodes] of collectFields(schema, fragments, {}, queryType, operation.selectionSet)) {
    const name = nodes[0].name.value;
    if (name === '__typename') {
      root.push({ key, typename: queryType.name });
      continue;
    }
    const def = fields[name];
    if (!def?.resolve) return null; // __schema, __type
    const write = compileType(schema, fragments, def.type, nodes);
    if (!write) return null;
    root.push({ key, def, nodes, write });
  }
  return { schema, operation, fragments, queryType, root };
}

/** Runs a plan: the `{"data":…}` JSON text graphql-js and JSON.stringify would give, or NotPlannable. */
export async function runPlan(plan: QueryPlan, contextValue: unknown, variables: Record<string, unknown> | undefined): Promise<string> {
  const { schema, operation, fragments, queryType } = plan;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {});
  if (coerced.errors) throw NOT_PLANNABLE;
  const variableValues = coerced.coerced;
  // Every root field's arguments first (a bad one throws before any resolver has started),
  // then the resolvers, each inside a promise, so none is left running unwatched.
  const calls = plan.root.map((field) => {
    if ('typename' in field) return () => field.typename;
    const args = getArgumentValues(field.def, field.nodes[0], variableValues);
    return () => {
      const info: GraphQLResolveInfo = {
        fieldName: field.def.name,
        fieldNodes: field.nodes,
        returnType: field.def.type,
        parentType: queryType,
        path: { prev: undefined, key: field.key, typename: queryType.name },
        schema,
        fragments,
        rootValue: undefined,
        operation,
        variableValues,
      };
      return field.def.resolve!(undefined, args, contextValue, info);
    };
  });
  const values = await Promise.all(calls.map((call) => new Promise<unknown>((resolve) => resolve(call()))));
  let out = '{"data":{';
  plan.root.forEach((field, i) => {
    out += `${i ? ',' : ''}${JSON.stringify(field.key)}:${'typename' in field ? JSON.stringify(field.typename) : field.write(values[i])}`;
  });
  return `${out}}}`;
}
