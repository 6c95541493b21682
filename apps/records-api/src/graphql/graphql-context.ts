import { GraphQLError } from 'graphql';
import { authenticateRequest, type AuthenticatedRequest } from '#auth/auth.guard.js';
import type { BearerAuthService } from '#auth/bearer-auth.service.js';
import type { Principal } from '#auth/principal.js';
import { InsufficientScopeError } from '#auth/scopes.js';
import { wwwAuthenticate } from '#auth/www-authenticate.js';
import { isDatabaseUnavailable } from '#ops/database-unavailable.js';
import { AppError } from '#errors/errors.js';
import type { RequestWithId } from '../http/request-id.js';
import type { RecordsService } from '#records/service/records.service.js';
import { databaseUnavailableError } from './graphql-errors.js';
import { createLoaders, type Loaders } from './loaders.js';

export type GraphqlRequest = AuthenticatedRequest & RequestWithId;

export interface GraphqlContext {
  req: GraphqlRequest;
  principal: Principal;
  records: RecordsService;
  loaders: Loaders;
}

/**
 * Authenticates before anything is parsed or executed: no valid `Authorization: Bearer`
 * (the only credential read, docs/authentication.md) → HTTP 401 with `WWW-Authenticate` naming the root
 * protected-resource metadata (RFC 9728 §5.1), and no GraphQL execution at all.
 * The principal also lands on `req`, where the global BearerAuthGuard finds it.
 */
export function graphqlContextFactory(deps: { auth: BearerAuthService; records: RecordsService; publicUrl: string }) {
  return async ({ req }: { req: GraphqlRequest }): Promise<GraphqlContext> => {
    let principal: Principal;
    try {
      // The query fast path may have authenticated this request already; Apollo then reuses it.
      principal = await authenticateRequest(deps.auth, req);
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw databaseUnavailableError(req.id);
      if (err instanceof InsufficientScopeError) {
        // A token whose scopes reach nothing here: 403 before any execution, as REST answers it.
        throw new GraphQLError(err.message, {
          extensions: {
            code: err.code,
            requestId: req.id,
            http: {
              status: 403,
              headers: new Map([['www-authenticate', wwwAuthenticate(deps.publicUrl, '', 'insufficient_scope', err.scope)]]),
            },
          },
        });
      }
      if (!(err instanceof AppError) || err.status !== 401) throw err;
      throw new GraphQLError(err.message, {
        extensions: {
          code: 'UNAUTHENTICATED',
          requestId: req.id,
          http: {
            status: 401,
            headers: new Map([['www-authenticate', wwwAuthenticate(deps.publicUrl, '', Boolean(req.headers.authorization))]]),
          },
        },
      });
    }
    return { req, principal, records: deps.records, loaders: createLoaders(principal, deps.records) };
  };
}
