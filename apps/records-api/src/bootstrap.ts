import 'reflect-metadata';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapterWithPrototypes } from '#net/express-adapter.js';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { forbidFraming } from '#auth/frame-headers.js';
import { loadConfig } from '#config/config.js';
import { createLogger, requestLogging } from '#ops/logging.js';
import { closeOnSignals } from '#ops/shutdown.js';
import { exitIfPortTaken, listenOrExit } from '#ops/ports.js';
import { resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { RateLimitPool } from '#ops/rate-limits.js';
import { AppModule } from './app.module.js';
import { authProxy } from './http/auth-proxy.js';
import { BearerAuthService } from '#auth/bearer-auth.service.js';
import { jsonBodies } from './http/body-parsing.js';
import { IdempotencyStore, restIdempotency } from './http/idempotency.js';
import { mcpOriginCheck } from './http/mcp-origin.js';
import { rateLimitAuthFailures, rateLimitPerCredential } from './http/rate-limit.js';
import { requestId } from './http/request-id.js';
import { OPEN_API_PATH, serveOpenApi } from './well-known/open-api.js';
import { DocsController, graphqlPageForBrowsers } from './well-known/docs.controller.js';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import { graphqlContextFactory } from './graphql/graphql-context.js';
import { DataModel } from '#records/service/data-model.js';
import { workspaceOpenApiMiddleware } from './well-known/open-api-workspace.js';
import type { OpenAPIObject } from '@nestjs/swagger';
import { WorkspaceGraphql, type WithServed } from './graphql/workspace-graphql.js';
import { graphqlFastPath } from './graphql/graphql-fast-path.js';
import { RecordsService } from '#records/service/records.service.js';
import { readRoutingScope } from '#database/read-routing.js';
import { ObjectServices } from '#records/service/object-service.js';
import { RestExceptionFilter } from './http/rest-exception.filter.js';
import { restCreateFastPath } from './rest/create-fast-path.js';

/** The records API, configured but not listening (tests use it with supertest). */
export async function createRecordsApi(): Promise<INestApplication> {
  const config = loadConfig();
  const app = await NestFactory.create<NestExpressApplication>(AppModule, new ExpressAdapterWithPrototypes(config.httpTimeouts), {
    bodyParser: false,
    logger: createLogger(config),
  });
  // Client addresses (rate limits, logs) come through the proxies TRUST_PROXY names, and no others.
  app.set('trust proxy', config.trustProxy);
  app.disable('x-powered-by');
  // No ETag: list pages change with every write, and hashing each body costs CPU on the hot path.
  app.set('etag', false);
  app.use(requestId);
  app.use(forbidFraming);
  const logRequests = requestLogging(config);
  if (logRequests) app.use(logRequests);
  if (config.authProxy) app.use(authProxy(config.authUrl, config.publicUrl));
  app.use('/mcp', mcpOriginCheck(config.publicUrl, config.mcpAllowedOrigins));
  app.use('/graphql', graphqlPageForBrowsers(app.get(DocsController).docs));
  const pool = app.get(RateLimitPool).pool;
  app.use(['/rest', '/graphql', '/mcp'], rateLimitAuthFailures(config.authFailuresPerMinute, pool));
  app.use(['/rest', '/graphql', '/mcp'], rateLimitPerCredential(config.rateLimitPerMinute, pool, config.rateLimitPerWorkspacePerMinute));
  app.use(jsonBodies());
  // Record reads of these requests may go to a read replica (libs/database/src/read-routing.ts); after body parsing, whose stream events run outside the request's context.
  // Without a replica nothing reads the scope, and on Node 20 an AsyncLocalStorage in use costs every promise a hook.
  if (config.databaseReadUrls.length) app.use(['/rest', '/graphql', '/mcp'], readRoutingScope);
  app.use('/rest', restIdempotency(app.get(IdempotencyStore), app.get(BearerAuthService)));
  if (config.restFastPath) {
    app.use(
      restCreateFastPath({
        auth: app.get(BearerAuthService),
        services: app.get(ObjectServices).all,
        filter: new RestExceptionFilter(),
        records: app.get(RecordsService),
        models: app.get(DataModel),
      }),
    );
  }
  const schemaHost = app.get(GraphQLSchemaHost);
  const baseSchema = () => {
    try {
      return schemaHost.schema;
    } catch {
      return undefined; // not built yet
    }
  };
  // Workspaces with custom fields or objects, and restricted roles: their own schema (docs/data-model.md), found
  // before the fast path, which answers successful queries on any schema; what it leaves goes to that schema's
  // server, or on to the base one (Apollo's own middleware, mounted at init).
  const workspaces = app.get(WorkspaceGraphql);
  app.use('/graphql', workspaces.middleware(baseSchema));
  if (config.graphqlFastPath) {
    app.use(
      '/graphql',
      graphqlFastPath({
        schema: (req) => (req as WithServed).graphqlServed?.schema ?? baseSchema(),
        context: graphqlContextFactory({ auth: app.get(BearerAuthService), records: app.get(RecordsService), publicUrl: config.publicUrl }),
      }),
    );
  }
  app.use('/graphql', workspaces.answer());
  // With a credential of a workspace with custom fields, its own document (docs/data-model.md); mounted before the base one.
  const openApi: { document?: OpenAPIObject } = {};
  app.use(
    OPEN_API_PATH,
    workspaceOpenApiMiddleware({ base: () => openApi.document!, auth: app.get(BearerAuthService), models: app.get(DataModel) }),
  );
  openApi.document = serveOpenApi(app, config.publicUrl);
  await runMigrations(app.get(DataSource));
  return app;
}

export async function startRecordsApi(): Promise<INestApplication> {
  const config = loadConfig();
  // Every start check before the first migration (docs/operations.md "Upgrades"): the port, DATA_DIR, the key (runMigrations).
  await exitIfPortTaken(config.port, '0.0.0.0', 'PORT', createLogger(config));
  await resolveDatabaseUrl();
  const app = await createRecordsApi();
  const logger = new Logger('records-api');
  closeOnSignals(app, {
    graceMs: config.shutdownGraceMs,
    logger,
    afterClose: async () => (await resolveDatabaseUrl()).embedded?.stop(),
  });
  await listenOrExit(() => app.listen(config.port, '0.0.0.0'), config.port, '0.0.0.0', 'PORT', logger);
  logger.log(`Records API on ${config.publicUrl} (port ${config.port})`);
  process.send?.({ ready: 'records-api' });
  return app;
}
