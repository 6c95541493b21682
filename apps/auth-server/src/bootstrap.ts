import 'reflect-metadata';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import cookieParser from 'cookie-parser';
import express, { type NextFunction, type Request, type Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import { DataSource } from 'typeorm';
import { loadConfig, logLevels } from '../../../libs/database/src/config.js';
import { deleteExpired } from './adapter/postgres-adapter.js';
import { AuthServerModule } from './app.module.js';
import { OIDC_PROVIDER } from './oidc/oidc.tokens.js';
import type { OidcProvider } from './oidc/provider.js';
import { forbidFraming } from '../../../libs/auth/src/frame-headers.js';
import { loadCsrfKey } from './sessions/web-sessions.js';
import { settingsApiBodyErrors, settingsHeaders } from './settings/http.js';

/** Our pages; every other /oauth/* and /.well-known/* path is the provider's. */
const OWN_PAGES = /^\/oauth\/(interaction|assets)\//;
const CLEANUP_EVERY_MS = 10 * 60 * 1000;

/** The auth server, configured but not listening (tests listen on a port of their own). */
export async function createAuthServer(): Promise<INestApplication> {
  const config = loadConfig();
  const app = await NestFactory.create<NestExpressApplication>(AuthServerModule, {
    bodyParser: false,
    logger: logLevels(config.logLevel),
  });
  // Behind the records API, the one hop to trust is the loopback connection it forwards on
  // (it replaces X-Forwarded-For with the address it resolved); behind an ingress of its
  // own (AUTH_PROXY=off), TRUST_PROXY says which proxies to trust.
  app.set('trust proxy', config.authProxy ? (address: string, hop: number) => hop === 0 && isLoopback(address) : config.trustProxy);
  app.disable('x-powered-by');
  app.enableShutdownHooks();
  const provider = app.get<OidcProvider>(OIDC_PROVIDER);
  const ds = app.get(DataSource);
  await loadCsrfKey(ds);

  app.use(publicOriginHeaders(config.publicUrl));
  app.use(forbidFraming);

  // RFC 7591 registration is open, so it is rate limited per client address.
  app.use('/oauth/register', rateLimit({ windowMs: 60_000, limit: config.registrationsPerMinute, standardHeaders: 'draft-7', legacyHeaders: false }));
  const callback = provider.callback();
  app.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.path.startsWith('/oauth/') && !OWN_PAGES.test(req.path)) || req.path.startsWith('/.well-known/')) {
      return callback(req, res);
    }
    next();
  });
  app.use(cookieParser());
  app.use(express.urlencoded({ extended: false, limit: '100kb' }));
  app.use(express.json({ limit: '100kb' }));
  app.use('/settings', settingsHeaders);
  app.use(settingsApiBodyErrors);

  const timer = setInterval(() => void deleteExpired(ds).catch(() => undefined), CLEANUP_EVERY_MS);
  timer.unref();
  return app;
}

function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/**
 * Every URL the provider builds (issuer metadata, registration_client_uri, redirects) comes
 * from PUBLIC_URL (SPEC §10): whatever Host or X-Forwarded-* a client sent is replaced
 * before oidc-provider (which trusts X-Forwarded-Host/Proto, `provider.proxy`) reads them.
 */
function publicOriginHeaders(publicUrl: string) {
  const origin = new URL(publicUrl);
  const proto = origin.protocol.replace(':', '');
  return (req: Request, _res: Response, next: NextFunction) => {
    req.headers['x-forwarded-host'] = origin.host;
    req.headers['x-forwarded-proto'] = proto;
    delete req.headers.forwarded;
    next();
  };
}

export async function startAuthServer(): Promise<INestApplication> {
  const config = loadConfig();
  const app = await createAuthServer();
  // Internal: reached through the records API's forwarding.
  await app.listen(config.authPort, '127.0.0.1');
  new Logger('auth-server').log(`Auth server on 127.0.0.1:${config.authPort} (issuer ${config.publicUrl})`);
  return app;
}
