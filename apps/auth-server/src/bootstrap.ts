import 'reflect-metadata';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapterWithPrototypes } from '#net/express-adapter.js';
import type { NestExpressApplication } from '@nestjs/platform-express';
import cookieParser from 'cookie-parser';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { authServerWarnings, loadConfig } from '#config/config.js';
import { RateLimitPool, SharedLimit, addressKey } from '#ops/rate-limits.js';
import { createLogger, requestLogging } from '#ops/logging.js';
import { resolveDatabaseUrl } from '#database/data-source.js';
import { closeOnSignals } from '#ops/shutdown.js';
import { exitIfPortTaken, listenOrExit } from '#ops/ports.js';
import { deleteExpired } from './adapter/postgres-adapter.js';
import { AuthServerModule } from './app.module.js';
import { OIDC_PROVIDER } from './oidc/oidc.tokens.js';
import type { OidcProvider } from './oidc/provider.js';
import { forbidFraming } from '#auth/frame-headers.js';
import { addressList, inAddressList } from '#net/address-list.js';
import { loadCsrfKey } from './sessions/web-sessions.js';
import { settingsApiBodyErrors, settingsHeaders } from './settings/http.js';
import { verifyJsonDepth } from '#net/json-depth.js';

/** Our pages; every other /oauth/* and /.well-known/* path is the provider's. */
const OWN_PAGES = /^\/oauth\/(interaction|assets)\//;
const CLEANUP_EVERY_MS = 10 * 60 * 1000;

/** Registrations (POST) per minute per client address; 429 with Retry-After past it, as an RFC 6749-style JSON error. */
function registrationLimit(perMinute: number, pool: Pool) {
  const limit = new SharedLimit(pool, 'reg', perMinute);
  return async (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST' || perMinute === 0) return next();
    try {
      const outcome = await limit.consume(addressKey(req));
      res.set(outcome.headers);
      if (!outcome.allowed) {
        res.setHeader('Retry-After', String(outcome.retryAfter));
        res.status(429).json({
          error: 'too_many_requests',
          error_description: `At most ${perMinute} registrations per minute; retry after ${outcome.retryAfter} s`,
        });
        return;
      }
    } catch {
      // Counting failed: register rather than refuse.
    }
    next();
  };
}

/** The auth server, configured but not listening (tests listen on a port of their own). */
export async function createAuthServer(): Promise<INestApplication> {
  const config = loadConfig();
  const app = await NestFactory.create<NestExpressApplication>(AuthServerModule, new ExpressAdapterWithPrototypes(config.httpTimeouts), {
    bodyParser: false,
    logger: createLogger(config),
  });
  app.set('trust proxy', config.authProxy ? forwardedBy(config.authTrustProxy) : config.trustProxy);
  app.disable('x-powered-by');
  const provider = app.get<OidcProvider>(OIDC_PROVIDER);
  const ds = app.get(DataSource);
  await loadCsrfKey(ds);

  app.use(publicOriginHeaders(config.publicUrl));
  app.use(forbidFraming);

  // RFC 7591 registration is open, so it is rate limited per client address, across instances.
  app.use('/oauth/register', registrationLimit(config.registrationsPerMinute, app.get(RateLimitPool).pool));
  const logRequests = requestLogging(config);
  if (logRequests) app.use(logRequests);
  const callback = provider.callback();
  app.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.path.startsWith('/oauth/') && !OWN_PAGES.test(req.path)) || req.path.startsWith('/.well-known/')) {
      return callback(req, res);
    }
    next();
  });
  app.use(cookieParser());
  app.use(express.urlencoded({ extended: false, limit: '100kb' }));
  app.use(express.json({ limit: '100kb', verify: verifyJsonDepth }));
  app.use('/settings', settingsHeaders);
  app.use(settingsApiBodyErrors);

  const timer = setInterval(() => void deleteExpired(ds).catch(() => undefined), CLEANUP_EVERY_MS);
  timer.unref();
  return app;
}

/**
 * Behind the records API, the one hop to trust is its connection, from an address
 * AUTH_TRUST_PROXY names (loopback when both run on one machine; their network in
 * docker-compose.yml): it replaces X-Forwarded-For with the one address it resolved. Anyone
 * else who reaches the auth server is the client, whatever X-Forwarded-For they send. Behind
 * an ingress of its own (AUTH_PROXY=off), TRUST_PROXY says which proxies to trust.
 */
function forwardedBy(proxies: string[]): (address: string, hop: number) => boolean {
  const trusted = addressList(proxies);
  return (address, hop) => hop === 0 && inAddressList(trusted, address);
}

/**
 * Every URL the provider builds (issuer metadata, registration_client_uri, redirects) comes
 * from PUBLIC_URL (docs/security.md): whatever Host or X-Forwarded-* a client sent is replaced
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
  // Every start check before the first migration (docs/operations.md "Upgrades"): the port, DATA_DIR, the key (runMigrations).
  await exitIfPortTaken(config.authPort, '127.0.0.1', 'AUTH_PORT', createLogger(config));
  await resolveDatabaseUrl();
  const app = await createAuthServer();
  // Internal: reached through the records API's forwarding (AUTH_URL).
  const logger = new Logger('auth-server');
  closeOnSignals(app, {
    graceMs: config.shutdownGraceMs,
    logger,
    afterClose: async () => (await resolveDatabaseUrl()).embedded?.stop(),
  });
  for (const warning of authServerWarnings(config)) logger.warn(warning);
  await listenOrExit(() => app.listen(config.authPort, config.authHost), config.authPort, config.authHost, 'AUTH_PORT', logger);
  logger.log(`Auth server on ${config.authHost}:${config.authPort} (issuer ${config.publicUrl})`);
  process.send?.({ ready: 'auth-server' });
  return app;
}
