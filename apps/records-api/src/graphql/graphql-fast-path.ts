import type { NextFunction, Response } from 'express';
import { execute, getOperationAST, parse, specifiedRules, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { GraphqlContext, GraphqlRequest } from './graphql-context.js';
import { MAX_COST, VALIDATION_RULES, operationCost } from './query-limits.js';
import { planQuery, runPlan, type QueryPlan } from './query-plan.js';

/** Query documents kept parsed and validated (by text and operation name); the least recently used goes first. */
const MAX_DOCUMENTS = 500;
/**
 * And at most this many characters of document text in all. A document parsed without
 * locations keeps ~16 bytes of AST per character (a 29 KB document of aliased fields:
 * 460 KB), its plan about as much again, and its text is the key: this bounds the cache
 * near 10 MB whatever is sent (500 documents of 20 000 characters kept 550 MB and ended
 * the process), and still holds 500 documents of 500 characters.
 */
const MAX_CACHED_CHARS = 250_000;
/** Longer documents are left to Apollo alone rather than kept. */
export const MAX_QUERY_CHARS = 20_000;
/** Tokens one document may have, here and in Apollo (graphql-js stops parsing beyond it). */
export const MAX_QUERY_TOKENS = 20_000;

interface Prepared {
  document: DocumentNode;
  operationName: string | undefined;
  /** The cost of an operation without variables (it cannot change). */
  fixedCost?: number;
  /** Set when the operation's result can be written without graphql-js's executor (query-plan.ts). */
  plan: QueryPlan | null;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Answers the client would get from Apollo as `application/json` (what `*` / no Accept negotiate to). */
function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return !accept.includes('graphql-response') && (accept.includes('application/json') || accept.includes('*/*'));
}

/**
 * `POST /graphql` queries that succeed, answered without Apollo's request pipeline: the
 * document is parsed and validated (graphql-js's rules and VALIDATION_RULES, as Apollo
 * does) once per text, the cost is checked with the same function as Apollo's
 * complexity plugin, and it runs with the same context (bearer authentication,
 * DataLoaders) and resolvers: through its plan (query-plan.ts: root resolvers called as
 * graphql-js calls them, plain fields below written straight to JSON) when it has one,
 * through graphql-js's `execute` otherwise. Everything else goes on to Apollo untouched —
 * mutations (Idempotency-Key), GET, other Accept or body shapes, invalid or too costly
 * documents, a missing credential — and so does any query whose execution reports an
 * error: a query changes nothing, so Apollo runs it again and answers with the codes,
 * statuses and request ids it always gives. Issue 12: Apollo's request pipeline (plugins,
 * header maps, negotiation, per-request parse-cache lookups and complexity walks) cost
 * about as much Node CPU as the query itself.
 */
export function graphqlFastPath(deps: {
  /** The schema the request is served by: its workspace's, or the base one (undefined until built). */
  schema: (req: GraphqlRequest) => GraphQLSchema | undefined;
  context: (args: { req: GraphqlRequest }) => Promise<GraphqlContext>;
}) {
  // 'apollo': a document that is not for the fast path (invalid, a mutation…), known without parsing it again.
  const prepared = new LRUCache<string, Prepared | 'apollo'>({
    max: MAX_DOCUMENTS,
    maxSize: MAX_CACHED_CHARS,
    sizeCalculation: (_entry, key) => Math.max(1, key.length),
  });
  // Documents are kept per schema: a workspace's schema differs from the base one, and its plans too.
  const schemaIds = new WeakMap<GraphQLSchema, number>();
  let nextSchemaId = 0;
  const idOf = (schema: GraphQLSchema) => {
    let id = schemaIds.get(schema);
    if (id === undefined) schemaIds.set(schema, (id = nextSchemaId++));
    return id;
  };

  function prepare(schema: GraphQLSchema, query: string, operationName: string | undefined): Prepared | null {
    let document: DocumentNode;
    try {
      // No locations: only Apollo reports errors, and it parses the document again with them.
      document = parse(query, { noLocation: true, maxTokens: MAX_QUERY_TOKENS });
    } catch {
      return null;
    }
    if (validate(schema, document, [...specifiedRules, ...VALIDATION_RULES]).length) return null;
    const operation = getOperationAST(document, operationName);
    if (operation?.operation !== 'query') return null;
    const fixedCost = operation.variableDefinitions?.length ? undefined : (operationCost(schema, document, operationName, {}) ?? Infinity);
    return { document, operationName, fixedCost, plan: planQuery(schema, document, operationName) };
  }

  function prepareAndKeep(schema: GraphQLSchema, key: string, query: string, operationName: string | undefined): Prepared | null {
    let entry: Prepared | null;
    try {
      entry = prepare(schema, query, operationName);
    } catch {
      entry = null; // too many fields, or anything else Apollo reports
    }
    prepared.set(key, entry ?? 'apollo');
    return entry;
  }

  return async (req: GraphqlRequest, res: Response, next: NextFunction) => {
    const body: unknown = req.body;
    if (req.method !== 'POST' || !acceptsJson(req.headers.accept) || !isPlainObject(body)) return next();
    const { query, variables, operationName, extensions } = body;
    if (typeof query !== 'string' || query.length > MAX_QUERY_CHARS || extensions !== undefined) return next();
    if (!(variables == null || isPlainObject(variables)) || !(operationName == null || typeof operationName === 'string')) return next();
    if (!req.is('application/json')) return next();
    const schema = deps.schema(req);
    if (!schema) return next();
    const key = `${idOf(schema)}\n${operationName ?? ''}\n${query}`;
    const known = prepared.get(key);
    if (known === 'apollo') return next();
    try {
      // Who asks comes before any work on the document: without a credential Apollo answers
      // 401 before it parses anything, and only callers it knows can fill the cache.
      const context = await deps.context({ req });
      const entry = known ?? prepareAndKeep(schema, key, query, operationName ?? undefined);
      if (!entry) return next();
      const cost = entry.fixedCost ?? operationCost(schema, entry.document, entry.operationName, variables ?? undefined);
      if (cost === undefined || cost > MAX_COST) return next();
      let json: string;
      if (entry.plan) {
        json = `${await runPlan(entry.plan, context, variables ?? undefined)}\n`;
      } else {
        const result = await execute({
          schema,
          document: entry.document,
          operationName: entry.operationName,
          contextValue: context,
          variableValues: variables ?? undefined,
        });
        if (result.errors?.length || !result.data) return next();
        json = `${JSON.stringify({ data: result.data })}\n`;
      }
      res.status(200);
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.setHeader('content-length', Buffer.byteLength(json));
      res.end(json);
    } catch {
      next(); // Apollo answers (401, 503, …) as it always does
    }
  };
}
