import 'reflect-metadata';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { loadConfig, logLevels } from '../../../libs/database/src/config.js';
import { runMigrations } from '../../../libs/database/src/data-source.js';
import { forbidFraming } from '../../../libs/auth/src/frame-headers.js';
import { AppModule } from './app.module.js';
import { authProxy } from './http/auth-proxy.js';
import { jsonBodies } from './http/body-parsing.js';
import { mcpOriginCheck } from './http/mcp-origin.js';
import { rateLimitAuthFailures, rateLimitPerCredential } from './http/rate-limit.js';
import { requestId } from './http/request-id.js';
import { serveOpenApi } from './well-known/open-api.js';


/** The records API, configured but not listening (tests use it with supertest). */
export async function createRecordsApi(): Promise<INestApplication> {
  const config = loadConfig();
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    bodyParser: false,
    logger: logLevels(config.logLevel),
  });
  // Client addresses (rate limits, logs) come through the proxies TRUST_PROXY names, and no others.
  app.set('trust proxy', config.trustProxy);
  app.disable('x-powered-by');
  // No ETag: list pages change with every write, and hashing each body costs CPU on the hot path.
  app.set('etag', false);
  app.use(requestId);
  app.use(forbidFraming);
  if (config.authProxy) app.use(authProxy(config.authPort, config.publicUrl));
  app.use('/mcp', mcpOriginCheck(config.publicUrl, config.mcpAllowedOrigins));
  app.use(['/rest', '/graphql', '/mcp'], rateLimitAuthFailures(config.authFailuresPerMinute));
  app.use(['/rest', '/graphql', '/mcp'], rateLimitPerCredential(config.rateLimitPerMinute));
  app.use(jsonBodies());
  serveOpenApi(app, config.publicUrl);
  app.enableShutdownHooks();
  await runMigrations(app.get(DataSource));
  return app;
}

export async function startRecordsApi(): Promise<INestApplication> {
  const config = loadConfig();
  const app = await createRecordsApi();
  await app.listen(config.port, '0.0.0.0');
  new Logger('records-api').log(`Records API on ${config.publicUrl} (port ${config.port})`);
  return app;
}
