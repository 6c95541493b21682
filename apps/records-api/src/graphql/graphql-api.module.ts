import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { BearerAuthService } from '#auth/bearer-auth.service.js';
import { loadConfig } from '#database/config.js';
import { OBJECT_RESOLVERS } from '../objects/object.resolver.js';
import { RecordsService } from '../objects/records.service.js';
import { RecordsModule } from '../records/records.module.js';
import { graphqlContextFactory } from './graphql-context.js';
import { IdempotencyStore } from '../http/idempotency.js';
import { graphqlIdempotencyPlugin } from './graphql-idempotency.js';
import { formatGraphqlError, graphqlRequestIdPlugin } from './graphql-errors.js';
import { complexityLimitPlugin, VALIDATION_RULES } from './query-limits.js';

/** Relative to the working directory (the repository root for `npm start` and the tests). */
export const SCHEMA_FILE = 'apps/records-api/schema.gql';

function graphqlOptions(auth: BearerAuthService, records: RecordsService, idempotency: IdempotencyStore): ApolloDriverConfig {
  const production = process.env.NODE_ENV === 'production';
  return {
    path: '/graphql',
    // Written on every start outside production, so changes show in review; in memory in production.
    autoSchemaFile: production ? true : SCHEMA_FILE,
    sortSchema: true,
    // Clients generate code from the schema; it is public in the docs anyway.
    introspection: true,
    graphiql: !production,
    context: graphqlContextFactory({ auth, records, publicUrl: loadConfig().publicUrl }),
    formatError: formatGraphqlError,
    includeStacktraceInErrorResponses: false,
    // Nest's driver otherwise resets the status of any response with `data` to 200,
    // which hid the 503 of a mutation that lost the database midway (SPEC §9).
    preserveHttpStatusForExecutionErrors: false,
    validationRules: [...VALIDATION_RULES],
    // Cache control would wrap every field resolver; we send no cache hints.
    plugins: [complexityLimitPlugin(), graphqlRequestIdPlugin(), ApolloServerPluginCacheControlDisabled(), graphqlIdempotencyPlugin(idempotency)],
  };
}

/**
 * `POST /graphql` (SPEC §4), code-first, one resolver per declared object. The services
 * come from RecordsModule, so REST, GraphQL and MCP share one RecordStore and CountCache.
 */
@Module({
  imports: [
    RecordsModule,
    GraphQLModule.forRootAsync<ApolloDriverConfig>({
      driver: ApolloDriver,
      imports: [RecordsModule],
      inject: [BearerAuthService, RecordsService, IdempotencyStore],
      useFactory: graphqlOptions,
    }),
  ],
  providers: [...OBJECT_RESOLVERS],
})
export class GraphqlApiModule {}
