import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Module, forwardRef } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { BearerAuthService } from '../../../../libs/auth/src/bearer-auth.service.js';
import { loadConfig } from '../../../../libs/database/src/config.js';
import { AppModule } from '../app.module.js';
import { CompaniesService } from '../companies/companies.service.js';
import { PeopleService } from '../people/people.service.js';
import { CompaniesResolver } from './companies.resolver.js';
import { graphqlContextFactory } from './graphql-context.js';
import { IdempotencyStore } from '../http/idempotency.js';
import { graphqlIdempotencyPlugin } from './graphql-idempotency.js';
import { formatGraphqlError, graphqlRequestIdPlugin } from './graphql-errors.js';
import { PeopleResolver } from './people.resolver.js';
import { complexityLimitPlugin, depthLimitRule } from './query-limits.js';

/** Relative to the working directory (the repository root for `npm start` and the tests). */
export const SCHEMA_FILE = 'apps/records-api/schema.gql';

function graphqlOptions(auth: BearerAuthService, companies: CompaniesService, people: PeopleService, idempotency: IdempotencyStore): ApolloDriverConfig {
  const production = process.env.NODE_ENV === 'production';
  return {
    path: '/graphql',
    // Written on every start outside production, so changes show in review; in memory in production.
    autoSchemaFile: production ? true : SCHEMA_FILE,
    sortSchema: true,
    // Clients generate code from the schema; it is public in the docs anyway.
    introspection: true,
    graphiql: !production,
    context: graphqlContextFactory({ auth, companies, people, publicUrl: loadConfig().publicUrl }),
    formatError: formatGraphqlError,
    includeStacktraceInErrorResponses: false,
    // Nest's driver otherwise resets the status of any response with `data` to 200,
    // which hid the 503 of a mutation that lost the database midway (SPEC §9).
    preserveHttpStatusForExecutionErrors: false,
    validationRules: [depthLimitRule()],
    // Cache control would wrap every field resolver; we send no cache hints.
    plugins: [complexityLimitPlugin(), graphqlRequestIdPlugin(), ApolloServerPluginCacheControlDisabled(), graphqlIdempotencyPlugin(idempotency)],
  };
}

/**
 * `POST /graphql` (SPEC §4), code-first. The services come from AppModule (its exports),
 * so REST, GraphQL and MCP share one RecordStore and CountCache; forwardRef because
 * AppModule imports this module.
 */
@Module({
  imports: [
    forwardRef(() => AppModule),
    GraphQLModule.forRootAsync<ApolloDriverConfig>({
      driver: ApolloDriver,
      imports: [forwardRef(() => AppModule)],
      inject: [BearerAuthService, CompaniesService, PeopleService, IdempotencyStore],
      useFactory: graphqlOptions,
    }),
  ],
  providers: [CompaniesResolver, PeopleResolver],
})
export class GraphqlApiModule {}
