import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';
import http from 'node:http';
import type { HttpTimeouts } from '#config/config.js';

/**
 * Nest's Express adapter, with the HTTP server's requests and responses born with Express's
 * prototypes. Express 5 calls `Object.setPrototypeOf(req, app.request)` (and the same for
 * `res`) on every request (application.js `app.handle`); V8 then moves each object to a
 * fresh hidden class, which cost about 90 µs of CPU per request in a bare Express app and
 * made every request's objects survive minor collections into the old generation (about 2
 * MB promoted per scavenge and a mark-compact every few hundred milliseconds under load;
 * issue 12). Here Node's server constructs subclasses of IncomingMessage and ServerResponse
 * whose prototypes sit in front of Express's, and `app.request`/`app.response` are those
 * prototypes, so Express's call finds the prototype already in place and changes nothing.
 * HTTPS and Nest's connection-closing options keep Nest's own server. `timeouts` bound how
 * long a client may take (HTTP_HEADERS_TIMEOUT_MS and its siblings).
 */
export class ExpressAdapterWithPrototypes extends ExpressAdapter {
  constructor(private readonly timeouts?: HttpTimeouts) {
    super();
  }

  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions || options?.forceCloseConnections || options?.return503OnClosing) {
      super.initHttpServer(options);
      if (this.timeouts) applyTimeouts(this.getHttpServer(), this.timeouts);
      return;
    }
    const app = this.getInstance<Express>();
    class Request extends http.IncomingMessage {}
    class Response extends http.ServerResponse<Request> {}
    Object.setPrototypeOf(Request.prototype, app.request);
    Object.setPrototypeOf(Response.prototype, app.response);
    app.request = Request.prototype as unknown as Express['request'];
    app.response = Response.prototype as unknown as Express['response'];
    const server = http.createServer(
      {
        IncomingMessage: Request,
        ServerResponse: Response,
        ...(this.timeouts ? { connectionsCheckingInterval: checkingInterval(this.timeouts) } : {}),
      },
      app,
    );
    if (this.timeouts) applyTimeouts(server, this.timeouts);
    this.setHttpServer(server);
  }
}

/**
 * Node enforces the headers and request timeouts only when it sweeps its connections
 * (`connectionsCheckingInterval`, 30 s by default), so a 15 s headers timeout would in fact
 * be up to 45 s: the sweep runs at a quarter of the shorter timeout, at most once a second.
 */
function checkingInterval(t: HttpTimeouts): number {
  const shortest = Math.min(...[t.headersMs, t.requestMs].filter((ms) => ms > 0));
  return Number.isFinite(shortest) ? Math.max(100, Math.min(1000, Math.floor(shortest / 4))) : 30_000;
}

function applyTimeouts(server: http.Server, t: HttpTimeouts): void {
  server.requestTimeout = t.requestMs;
  server.headersTimeout = t.headersMs;
  server.keepAliveTimeout = t.keepAliveMs;
}
