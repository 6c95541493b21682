import type { ApolloServerPlugin } from '@apollo/server';
import {
  GraphQLError,
  Kind,
  getNamedType,
  isLeafType,
  type DocumentNode,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';
import { fieldExtensionsEstimator, getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { EMBEDDED_PER_RECORD } from '#records/service/constants.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '#records/query/index.js';

/** `companies { edges { node { people { edges { node { company { name } } } } } } }` is 8 deep. */
export const MAX_DEPTH = 8;

/**
 * The most records one operation may return (see `recordCost`): a full default page of
 * companies with their people (60 × 61) fits, 200 companies with their people do not.
 */
export const MAX_COST = 5000;

/**
 * Refuses operations nested deeper than `max` fields (introspection fields aside, so
 * tools can still read the schema). Fragments are measured once each, so a document
 * that spreads fragments many times cannot make this rule slow.
 */
export function depthLimitRule(max = MAX_DEPTH): ValidationRule {
  return (context) => {
    const fragmentDepths = new Map<string, number>();
    const measure = (set: SelectionSetNode, visiting: Set<string>): number => {
      let deepest = 0;
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          if (selection.name.value.startsWith('__')) continue;
          deepest = Math.max(deepest, 1 + (selection.selectionSet ? measure(selection.selectionSet, visiting) : 0));
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          deepest = Math.max(deepest, measure(selection.selectionSet, visiting));
        } else {
          const name = selection.name.value;
          if (visiting.has(name)) continue; // a cycle: NoFragmentCyclesRule reports it
          if (!fragmentDepths.has(name)) {
            const fragment = context.getFragment(name);
            visiting.add(name);
            fragmentDepths.set(name, fragment ? measure(fragment.selectionSet, visiting) : 0);
            visiting.delete(name);
          }
          deepest = Math.max(deepest, fragmentDepths.get(name)!);
        }
      }
      return deepest;
    };
    return {
      OperationDefinition(operation) {
        const depth = measure(operation.selectionSet, new Set());
        if (depth > max) {
          context.reportError(
            new GraphQLError(
              `The operation is ${depth} fields deep; at most ${max} levels are allowed. ` +
                'Query the nested records separately, e.g. people(filter: {companyId: {eq: …}}).',
              { nodes: [operation] },
            ),
          );
        }
      },
    };
  };
}

/** Introspection fields that return lists: each one nested in another multiplies the answer. */
const INTROSPECTION_LISTS = new Set(['types', 'fields', 'args', 'inputFields', 'interfaces', 'possibleTypes', 'enumValues', 'directives']);

/**
 * What an operation asks of introspection: `__schema` and `__type` fields (each alias and
 * each fragment spread counts), how many fields their selections hold in all, fragments
 * expanded, and how deeply their lists nest.
 */
interface IntrospectionUse {
  schemas: number;
  types: number;
  fields: number;
  listDepth: number;
}

export const INTROSPECTION_LIMITS = {
  /** Tools read the schema once per document; 760 aliased `__schema` answered 19 MB and held the event loop for seconds. */
  schemas: 1,
  types: 10,
  /** graphql-js's full introspection query (every option on) selects 230 fields, fragments expanded. */
  fields: 500,
  /** `__schema { types { fields { args } } }`; one more (`fields { type { fields … } }`) multiplies by the schema's size again. */
  listDepth: 3,
} as const;

/**
 * Bounds introspection, which the depth rule and the cost estimate leave alone (its fields
 * return no records): at most one `__schema` and ten `__type` per operation, 500 fields
 * selected under them and lists nested three deep. graphql-js's full introspection query
 * and every IDE's fit. Fragments are measured once each, so spreads cannot make it slow.
 */
export function introspectionLimitRule(limits = INTROSPECTION_LIMITS): ValidationRule {
  return (context) => {
    const none: IntrospectionUse = { schemas: 0, types: 0, fields: 0, listDepth: 0 };
    const fragments = new Map<string, { outside: IntrospectionUse; inside: IntrospectionUse }>();
    const add = (a: IntrospectionUse, b: IntrospectionUse, listDepth = Math.max(a.listDepth, b.listDepth)): IntrospectionUse => ({
      schemas: a.schemas + b.schemas,
      types: a.types + b.types,
      fields: a.fields + b.fields,
      listDepth,
    });
    // A fragment is measured both as plain selections and as selections inside introspection.
    const fragment = (name: string, inside: boolean, visiting: Set<string>): IntrospectionUse => {
      if (visiting.has(name)) return none; // a cycle: NoFragmentCyclesRule reports it
      let measured = fragments.get(name);
      if (!measured) {
        const definition = context.getFragment(name);
        visiting.add(name);
        measured = definition
          ? { outside: measure(definition.selectionSet, false, visiting), inside: measure(definition.selectionSet, true, visiting) }
          : { outside: none, inside: none };
        visiting.delete(name);
        fragments.set(name, measured);
      }
      return inside ? measured.inside : measured.outside;
    };
    const measure = (set: SelectionSetNode, inside: boolean, visiting: Set<string>): IntrospectionUse => {
      let use = none;
      for (const selection of set.selections) {
        if (selection.kind === Kind.FRAGMENT_SPREAD) {
          use = add(use, fragment(selection.name.value, inside, visiting));
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          use = add(use, measure(selection.selectionSet, inside, visiting));
        } else {
          const name = selection.name.value;
          const root = !inside && (name === '__schema' || name === '__type');
          if (!inside && !root) {
            if (selection.selectionSet) use = add(use, measure(selection.selectionSet, false, visiting));
            continue;
          }
          const below = selection.selectionSet ? measure(selection.selectionSet, true, visiting) : none;
          const self: IntrospectionUse = {
            schemas: name === '__schema' && root ? 1 : 0,
            types: name === '__type' && root ? 1 : 0,
            fields: 1,
            listDepth: below.listDepth + (INTROSPECTION_LISTS.has(name) ? 1 : 0),
          };
          use = add(use, add(self, below, Math.max(use.listDepth, self.listDepth)));
        }
      }
      return use;
    };
    return {
      OperationDefinition(operation) {
        const use = measure(operation.selectionSet, false, new Set());
        const problems = [
          use.schemas > limits.schemas && `${use.schemas} __schema fields (at most ${limits.schemas})`,
          use.types > limits.types && `${use.types} __type fields (at most ${limits.types})`,
          use.fields > limits.fields && `${use.fields} introspection fields (at most ${limits.fields}, fragments expanded)`,
          use.listDepth > limits.listDepth && `introspection lists nested ${use.listDepth} deep (at most ${limits.listDepth})`,
        ].filter(Boolean);
        if (problems.length) {
          context.reportError(
            new GraphQLError(
              `The operation asks too much of introspection: ${problems.join(', ')}. Read the schema once, e.g. with graphql-js's getIntrospectionQuery().`,
              {
                nodes: [operation],
              },
            ),
          );
        }
      },
    };
  };
}

/**
 * The rules every GraphQL document must pass besides graphql-js's own, wherever it is
 * validated: Apollo's pipeline and the query fast path (graphql-fast-path.ts) share this list.
 */
export const VALIDATION_RULES: readonly ValidationRule[] = [depthLimitRule(), introspectionLimitRule()];

/** Page size a connection field may return, as the resolvers will read it. */
export function pageSize(args: { first?: unknown; last?: unknown }): number {
  const raw = args.first ?? args.last;
  const size = typeof raw === 'number' ? raw : DEFAULT_LIMIT;
  return Math.max(0, Math.min(size, MAX_LIMIT));
}

/** Complexity of the list fields (set on them with `complexity:`). */
export const connectionCost = ({ args, childComplexity }: { args: Record<string, unknown>; childComplexity: number }) =>
  pageSize(args) * (1 + childComplexity);
export const singleRecordCost = ({ childComplexity }: { childComplexity: number }) => 1 + childComplexity;
export const batchCost = ({ args, childComplexity }: { args: Record<string, unknown>; childComplexity: number }) =>
  (Array.isArray(args.data) ? args.data.length : 1) * (1 + childComplexity);

/**
 * Fields without a `complexity` of their own: scalars cost nothing, and plain objects
 * (edges, node, pageInfo, domainName…) cost what they select. So an operation's cost is
 * the most records it can return.
 */
const recordCost: ComplexityEstimator = ({ field, childComplexity }) => (isLeafType(getNamedType(field.type)) ? 0 : childComplexity);

/**
 * The most records an operation may return (see `recordCost`), or `undefined` when its
 * variables are invalid (execution reports them as BAD_USER_INPUT). Throws the
 * GRAPHQL_VALIDATION_FAILED error an operation with too many fields gets.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
  variables: Record<string, unknown> | undefined,
): number | undefined {
  try {
    return getComplexity({ schema, query: document, operationName, variables, estimators: [fieldExtensionsEstimator(), recordCost] });
  } catch (err) {
    if (/maximum allowed number of nodes/.test((err as Error).message)) throw refuse('The operation has too many fields');
    return undefined;
  }
}

const refuse = (message: string) => new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400 } } });

/**
 * Refuses operations above MAX_COST before they run. A plugin rather than a validation
 * rule because the cost depends on variables (`first: $n`), which rules do not see.
 */
export function complexityLimitPlugin(max = MAX_COST): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, schema }) {
          const cost = operationCost(schema, document, request.operationName ?? undefined, request.variables);
          if (cost !== undefined && cost > max) {
            throw refuse(
              `The operation may return ${cost} records; at most ${max} are allowed. Each list multiplies what it ` +
                `selects by its page size (first or last, default ${DEFAULT_LIMIT}; Company.people counts ${EMBEDDED_PER_RECORD}): ` +
                'ask for smaller pages or fewer nested lists.',
            );
          }
        },
      };
    },
  };
}
