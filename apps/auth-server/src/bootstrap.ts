import 'reflect-metadata';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../../libs/database/src/config.js';
import { runMigrations } from '../../../libs/database/src/data-source.js';
import { AuthServerModule } from './app.module.js';

export async function startAuthServer(): Promise<INestApplication> {
  const config = loadConfig();
  const app = await NestFactory.create(AuthServerModule, { logger: ['fatal', 'error', 'warn', 'log'] });
  app.enableShutdownHooks();
  await runMigrations(app.get(DataSource));
  // Internal: reached through the records API's forwarding, not published.
  await app.listen(config.authPort, '127.0.0.1');
  new Logger('auth-server').log(`Auth server on 127.0.0.1:${config.authPort}`);
  return app;
}
