import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import type { DocumentNode } from 'graphql';
import { BearerAuthService } from '#auth/bearer-auth.service.js';
import { loadConfig } from '#config/config.js';
import { OBJECT_RESOLVERS } from './object.resolver.js';
import { SearchResolver } from './search.resolver.js';
import { VaultResolver } from '../vault/vault.resolver.js';
import { RecordsService } from '#records/service/records.service.js';
import { RecordsModule } from '#records/service/records.module.js';
import { graphqlContextFactory } from './graphql-context.js';
import { IdempotencyStore } from '../http/idempotency.js';
import { ApiAuthModule } from '../http/api-auth.module.js';
import { graphqlIdempotencyPlugin } from './graphql-idempotency.js';
import { formatGraphqlError, graphqlRequestIdPlugin } from './graphql-errors.js';
import { complexityLimitPlugin, VALIDATION_RULES } from './query-limits.js';
import { MAX_QUERY_TOKENS } from './graphql-fast-path.js';
import { WorkspaceGraphql, WorkspaceGraphqlModule } from './workspace-graphql.js';

/**
 * Apollo's parsed-document cache, measured as Apollo measures it (the AST's JSON length,
 * ~40 bytes per character of document): its default of 30 MiB held ~70 MB of heap after
 * alias-heavy documents, in a process whose old generation is 160 MB.
 */
const APOLLO_DOCUMENT_STORE_BYTES = 4 * 1024 * 1024;
/**
 * Apollo's cache for automatic persisted queries (query texts by hash), shared by the base
 * server and every workspace server: its default of 30 MiB per server let one client fill
 * the heap through many servers.
 */
const APOLLO_CACHE_BYTES = 2 * 1024 * 1024;

/** Relative to the working directory (the repository root for `npm start` and the tests). */
export const SCHEMA_FILE = 'apps/records-api/schema.gql';

function graphqlOptions(
  auth: BearerAuthService,
  records: RecordsService,
  idempotency: IdempotencyStore,
  workspaces: WorkspaceGraphql,
): ApolloDriverConfig {
  const production = process.env.NODE_ENV === 'production';
  return workspaces.configure({
    path: '/graphql',
    // Written on every start outside production, so changes show in review; in memory in production.
    autoSchemaFile: production ? true : SCHEMA_FILE,
    sortSchema: true,
    // Clients generate code from the schema; it is public in the docs anyway.
    introspection: true,
    // A browser opening /graphql gets a page on how to call it (graphqlPageForBrowsers): GraphiQL loads from a CDN.
    graphiql: false,
    context: graphqlContextFactory({ auth, records, publicUrl: loadConfig().publicUrl }),
    formatError: formatGraphqlError,
    includeStacktraceInErrorResponses: false,
    // Nest's driver otherwise resets the status of any response with `data` to 200,
    // which hid the 503 of a mutation that lost the database midway (README.md, Operations).
    preserveHttpStatusForExecutionErrors: false,
    validationRules: [...VALIDATION_RULES],
    documentStore: new InMemoryLRUCache<DocumentNode>({ maxSize: APOLLO_DOCUMENT_STORE_BYTES }),
    cache: new InMemoryLRUCache<string>({ maxSize: APOLLO_CACHE_BYTES }),
    // graphql-js stops a parse beyond this many tokens, so a 1 MB body cannot become a 50 MB AST.
    parseOptions: { maxTokens: MAX_QUERY_TOKENS },
    // Cache control would wrap every field resolver; we send no cache hints.
    plugins: [
      complexityLimitPlugin(),
      graphqlRequestIdPlugin(),
      ApolloServerPluginCacheControlDisabled(),
      graphqlIdempotencyPlugin(idempotency),
    ],
  });
}

/**
 * `POST /graphql` (docs/graphql.md), code-first, one resolver per declared object. The services
 * come from RecordsModule, so REST, GraphQL and MCP share one RecordsService and CountCache.
 */
@Module({
  imports: [
    RecordsModule,
    ApiAuthModule,
    WorkspaceGraphqlModule,
    GraphQLModule.forRootAsync<ApolloDriverConfig>({
      driver: ApolloDriver,
      imports: [RecordsModule, ApiAuthModule, WorkspaceGraphqlModule],
      inject: [BearerAuthService, RecordsService, IdempotencyStore, WorkspaceGraphql],
      useFactory: graphqlOptions,
    }),
  ],
  providers: [...OBJECT_RESOLVERS, SearchResolver, VaultResolver],
})
export class GraphqlApiModule {}
