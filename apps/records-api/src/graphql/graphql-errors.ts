import type { ApolloServerPlugin } from '@apollo/server';
import { Logger } from '@nestjs/common';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { isDatabaseUnavailable, isStatementTimeout, RETRY_AFTER_SECONDS, statementTimeoutMessage } from '#ops/database-unavailable.js';
import { AppError } from '#errors/errors.js';
import type { GraphqlContext } from './graphql-context.js';

/** AppError status → GraphQL `extensions.code` (docs/graphql.md). */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'BAD_USER_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
};

const INTERNAL = 'INTERNAL_SERVER_ERROR';
const UNAVAILABLE = 'SERVICE_UNAVAILABLE';
const QUERY_TIMEOUT = 'QUERY_TIMEOUT';
/** Codes answered with HTTP 503 and Retry-After. */
const RETRY_LATER = new Set([UNAVAILABLE, QUERY_TIMEOUT]);

/** README.md, Operations: the database is away → `extensions.code: SERVICE_UNAVAILABLE` and HTTP 503 with Retry-After. */
export function databaseUnavailableError(requestId?: string): GraphQLError {
  return new GraphQLError(`The database is unavailable; retry after ${RETRY_AFTER_SECONDS} s`, {
    extensions: {
      code: UNAVAILABLE,
      requestId,
      http: { status: 503, headers: new Map([['retry-after', String(RETRY_AFTER_SECONDS)]]) },
    },
  });
}

/**
 * graphql-js stops coercing variables after 50 errors with an uncoded error of its own
 * (getVariableValues' maxErrors); it is the client's input all the same.
 */
function isTooManyVariableErrors(error: unknown): boolean {
  return error instanceof GraphQLError && error.message.startsWith('Too many errors processing variables');
}

/** The error a resolver threw, under graphql-js's located wrappers. */
function originalOf(error: unknown): unknown {
  let current = error;
  while (current instanceof GraphQLError && current.originalError) current = current.originalError;
  return current;
}

/** The first `extensions.code` on the way down to the original error. */
function codeOf(error: unknown): unknown {
  for (let current = error; current instanceof GraphQLError; current = current.originalError) {
    if (current.extensions.code !== undefined) return current.extensions.code;
  }
  return undefined;
}

/** Neither a domain error with a client status nor an error Apollo or graphql-js coded. */
function isInternal(error: unknown, original = originalOf(error)): boolean {
  if (isDatabaseUnavailable(original) || isStatementTimeout(original) || RETRY_LATER.has(codeOf(error) as string)) return false;
  if (original instanceof AppError) return !CODE_BY_STATUS[original.status];
  if (isTooManyVariableErrors(original)) return false;
  const code = codeOf(error);
  return code === undefined || code === INTERNAL;
}

/**
 * The one error mapping of the GraphQL transport. Domain errors keep their messages and
 * gain a code (`subCode` keeps the REST code, e.g. INVALID_FILTER); errors Apollo or
 * graphql-js already coded (GRAPHQL_VALIDATION_FAILED, BAD_USER_INPUT for variables, …)
 * pass through; anything else is a plain "Internal server error" (logged with the request
 * id by graphqlRequestIdPlugin).
 */
export function formatGraphqlError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = originalOf(error);
  const { message, locations, path } = formatted;
  if (isTooManyVariableErrors(original)) return { message, locations, path, extensions: { code: 'BAD_USER_INPUT' } };
  if (formatted.extensions?.code === QUERY_TIMEOUT || isStatementTimeout(original)) {
    return { message: statementTimeoutMessage(), locations, path, extensions: { code: QUERY_TIMEOUT } };
  }
  if (formatted.extensions?.code === UNAVAILABLE || isDatabaseUnavailable(original)) {
    const { message: unavailable } = databaseUnavailableError();
    return { message: unavailable, locations, path, extensions: { code: UNAVAILABLE } };
  }
  if (isInternal(error, original) && formatted.extensions?.code === INTERNAL) {
    return { message: 'Internal server error', locations, path, extensions: { code: INTERNAL } };
  }
  if (original instanceof AppError) {
    return {
      message: original.message,
      locations,
      path,
      extensions: {
        code: CODE_BY_STATUS[original.status],
        subCode: original.code,
        messages: original.messages,
        ...(original.details ? { details: original.details } : {}),
      },
    };
  }
  return { message, locations, path, extensions: formatted.extensions };
}

/**
 * Puts the request id (also in the `X-Request-Id` response header) on every error, and
 * logs the internal ones with it: formatError cannot see the request.
 */
export function graphqlRequestIdPlugin(): ApolloServerPlugin<GraphqlContext> {
  const logger = new Logger('GraphQL');
  return {
    async contextCreationDidFail({ error }) {
      if (isInternal(error)) logger.error(`GraphQL context: ${(originalOf(error) as Error)?.stack ?? String(error)}`);
    },
    async requestDidStart() {
      return {
        async didEncounterErrors({ contextValue, errors }) {
          for (const error of errors.filter((e) => isInternal(e))) {
            const original = originalOf(error);
            logger.error(`[${contextValue.req?.id}] ${(original as Error)?.stack ?? String(original)}`);
          }
        },
        async willSendResponse({ contextValue, response }) {
          if (response.body.kind !== 'single' || !response.body.singleResult.errors) return;
          if (response.body.singleResult.errors.some((e) => RETRY_LATER.has(e.extensions?.code as string))) {
            response.http.status = 503;
            response.http.headers.set('retry-after', String(RETRY_AFTER_SECONDS));
          }
          const requestId = contextValue.req?.id;
          response.body.singleResult.errors = response.body.singleResult.errors.map((e) => ({
            ...e,
            extensions: { ...e.extensions, requestId },
          }));
        },
      };
    },
  };
}
