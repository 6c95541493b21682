import { HeaderMap, type ApolloServerPlugin, type GraphQLResponse } from '@apollo/server';
import { isDatabaseUnavailable, RETRY_AFTER_SECONDS } from '#ops/database-unavailable.js';
import { ErrorCode } from '#errors/errors.js';
import type { Principal } from '#auth/principal.js';
import {
  fingerprint,
  IDEMPOTENCY_HEADER,
  invalidKey,
  isValidKey,
  keyInUse,
  keyReused,
  scopeOf,
  type IdempotencyStore,
  withDerivedIds,
  type KeyScope,
} from '../http/idempotency.js';
import type { GraphqlContext } from './graphql-context.js';
import { databaseUnavailableError } from './graphql-errors.js';

/**
 * Errors that mean "not done, try again" (as a status ≥ 500), or that are about the caller
 * rather than the write (as 401, 403, 429): such a response is not kept.
 */
const NOT_KEPT = new Set([
  'INTERNAL_SERVER_ERROR',
  ErrorCode.SERVICE_UNAVAILABLE,
  ErrorCode.QUERY_TIMEOUT,
  'UNAUTHENTICATED',
  'FORBIDDEN',
  ErrorCode.RATE_LIMITED,
]);

function refusal(status: number, code: string, message: string): GraphQLResponse {
  return {
    http: { status, headers: new HeaderMap() },
    body: { kind: 'single', singleResult: { errors: [{ message, extensions: { code } }] } },
  };
}

/**
 * `Idempotency-Key` on GraphQL mutations (README.md, Operations), with the same store and rules as
 * `/rest` (http/idempotency.ts). The fingerprint is the query, operation name and
 * variables. Queries ignore the header. Listed last, so it keeps the final response.
 */
export function graphqlIdempotencyPlugin(store: IdempotencyStore): ApolloServerPlugin<GraphqlContext> {
  return {
    async requestDidStart({ request }) {
      const key = request.http?.headers.get(IDEMPOTENCY_HEADER);
      if (key === undefined) return;
      let claimed: KeyScope | undefined;
      return {
        async responseForOperation({ operation, contextValue }) {
          if (operation.operation !== 'mutation') return null;
          if (!isValidKey(key)) return refusal(400, invalidKey().code, invalidKey().message);
          const scope = scopeOf(contextValue.principal);
          const print = fingerprint('POST', '/graphql', {
            query: request.query,
            operationName: request.operationName ?? null,
            variables: request.variables ?? null,
          });
          let claim;
          try {
            claim = await store.claim(scope, key, 'POST', '/graphql', print);
          } catch (err) {
            if (!isDatabaseUnavailable(err)) throw err;
            const unavailable = databaseUnavailableError();
            const response = refusal(503, 'SERVICE_UNAVAILABLE', unavailable.message);
            response.http.headers.set('retry-after', String(RETRY_AFTER_SECONDS));
            return response;
          }
          if (claim.kind === 'reused' || claim.kind === 'in_use') {
            const error = claim.kind === 'reused' ? keyReused() : keyInUse();
            return refusal(error.status, error.code, error.message);
          }
          if (claim.kind === 'replay') {
            return {
              http: { status: claim.response.status, headers: new HeaderMap([['idempotent-replayed', 'true']]) },
              body: { kind: 'single', singleResult: JSON.parse(claim.response.body) },
            };
          }
          claimed = scope;
          (contextValue.req as KeyedRequest).idempotency = { scope, key, unfinished: Boolean(claim.unfinished) };
          return null;
        },
        async willSendResponse({ response }) {
          if (!claimed) return;
          const status = response.http.status ?? 200;
          const single = response.body.kind === 'single' ? response.body.singleResult : undefined;
          const failed = status >= 500 || !single || single.errors?.some((e) => NOT_KEPT.has(String(e.extensions?.code)));
          if (failed) await store.release(claimed, key).catch(() => undefined);
          else
            await store
              .complete(claimed, key, { status, contentType: 'application/json', body: JSON.stringify(single) })
              .catch(() => undefined);
        },
      };
    },
  };
}

/** A GraphQL request whose mutation holds an Idempotency-Key (set by the plugin before execution). */
type KeyedRequest = GraphqlContext['req'] & { idempotency?: { scope: KeyScope; key: string; unfinished: boolean } };

/**
 * The principal a create mutation runs with under an Idempotency-Key, as `/rest` does it
 * (http/idempotency.ts, withDerivedIds), each record's position being the mutation field's
 * name in the response (its alias) and its index. Without a key: unchanged.
 */
export function keyedCreate(context: GraphqlContext, field: string, principal: Principal, records: unknown[], upsert: boolean): Principal {
  const keyed = (context.req as KeyedRequest).idempotency;
  if (!keyed) return principal;
  return withDerivedIds(principal, records, { ...keyed, upsert, position: (i) => `${field}\n${i}` });
}
