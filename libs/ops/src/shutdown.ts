import type { INestApplication, LoggerService } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { startDraining } from './shutdown-state.js';

export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/**
 * SIGTERM / SIGINT (README "Shutdown"): let the requests in flight finish (at most
 * `graceMs`), then close the app (its pools), then `afterClose` (the embedded Postgres this
 * process owns), then exit. Nest's own shutdown hooks close the pools first, which is what
 * turned requests in flight into resets and 500s.
 *
 * While it drains the listener stays open: `/health/*` still answers (readiness with 503,
 * so a load balancer takes the instance out; a refused connection reads as a dead host),
 * and any other new request gets a 503 with Retry-After and `Connection: close`, which a
 * client retries elsewhere. Only the requests that arrived before the signal are waited for.
 */
export function closeOnSignals(
  app: INestApplication,
  options: { graceMs: number; logger: LoggerService; afterClose?: () => Promise<void> },
): void {
  const server = app.getHttpServer() as Server;
  const inFlight = new Set<ServerResponse>();
  let closing = false;

  const handlers = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (closing) {
      res.setHeader('Connection', 'close');
      if (!req.url?.startsWith('/health/')) return turnAway(res);
    } else {
      inFlight.add(res);
      res.once('close', () => inFlight.delete(res));
    }
    for (const handler of handlers) handler.call(server, req, res);
  });

  const close = async (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    startDraining();
    options.logger.log(`${signal}: draining ${inFlight.size} request(s) in flight (grace ${options.graceMs} ms)`, 'Shutdown');
    const deadline = Date.now() + options.graceMs;
    while (inFlight.size > 0 && Date.now() < deadline) {
      server.closeIdleConnections();
      await new Promise((r) => setTimeout(r, 20));
    }
    if (inFlight.size > 0)
      options.logger.warn(`${inFlight.size} request(s) still running after ${options.graceMs} ms; closing their connections`, 'Shutdown');
    server.close();
    server.closeAllConnections();
    let code = 0;
    try {
      await app.close();
      await options.afterClose?.();
    } catch (err) {
      options.logger.error(`shutdown: ${(err as Error)?.stack ?? err}`, 'Shutdown');
      code = 1;
    }
    process.exit(code);
  };
  process.on('SIGTERM', () => void close('SIGTERM'));
  process.on('SIGINT', () => void close('SIGINT'));
}

/** The documented error shape (README "Errors"), without anything of the app: it is stopping. */
function turnAway(res: ServerResponse): void {
  const body = JSON.stringify({
    statusCode: 503,
    error: 'Service Unavailable',
    code: 'SERVICE_UNAVAILABLE',
    messages: ['This instance is shutting down; retry (another instance, or this service once restarted)'],
    requestId: randomUUID(),
  });
  res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Retry-After': '1' });
  res.end(body);
}
