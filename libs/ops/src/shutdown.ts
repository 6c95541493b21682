import type { INestApplication, LoggerService } from '@nestjs/common';
import type { Server } from 'node:http';
import { startDraining } from './shutdown-state.js';

export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/**
 * SIGTERM / SIGINT (SPEC §9): stop accepting connections, let the requests in flight
 * finish (at most `graceMs`), then close the app (its pools), then `afterClose` (the
 * embedded Postgres this process owns), then exit. Nest's own shutdown hooks close the
 * pools first, which is what turned requests in flight into resets and 500s.
 */
export function closeOnSignals(app: INestApplication, options: { graceMs: number; logger: LoggerService; afterClose?: () => Promise<void> }): void {
  const server = app.getHttpServer() as Server;
  let inFlight = 0;
  server.on('request', (_req, res) => {
    inFlight++;
    res.once('close', () => inFlight--);
  });

  let closing = false;
  const close = async (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    startDraining();
    options.logger.log(`${signal}: draining ${inFlight} request(s) in flight (grace ${options.graceMs} ms)`, 'Shutdown');
    server.close(); // no new connections; idle keep-alive connections are closed now
    const deadline = Date.now() + options.graceMs;
    while (inFlight > 0 && Date.now() < deadline) {
      server.closeIdleConnections();
      await new Promise((r) => setTimeout(r, 20));
    }
    if (inFlight > 0) options.logger.warn(`${inFlight} request(s) still running after ${options.graceMs} ms; closing their connections`, 'Shutdown');
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
