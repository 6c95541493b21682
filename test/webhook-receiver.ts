import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface Receipt {
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
}

/**
 * A real HTTP endpoint on loopback that records every POST. `answers` are the statuses to
 * give, in order (then `fallback`). While `hang` is set a request is accepted and never
 * answered (a target that is down behind a load balancer); `hung` counts those. While
 * `hold` is set a request is recorded but its answer waits for `answerHeld()`; `held`
 * counts those still waiting.
 */
export class Receiver {
  readonly receipts: Receipt[] = [];
  answers: number[] = [];
  fallback = 200;
  hang = false;
  hung = 0;
  hold = false;
  private waiting: (() => void)[] = [];
  private server?: Server;
  private waiters: { n: number; resolve: () => void }[] = [];
  url = '';

  async start(path = '/hook'): Promise<this> {
    this.server = createServer((req, res) => {
      if (this.hang) {
        this.hung++;
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        this.receipts.push({ at: Date.now(), headers: req.headers, body, json });
        const status = this.answers.length ? this.answers.shift()! : this.fallback;
        const answer = () => res.writeHead(status, { 'content-type': 'text/plain' }).end(`answer ${status}`);
        if (this.hold) this.waiting.push(answer);
        else answer();
        this.waiters = this.waiters.filter((w) => (this.receipts.length >= w.n ? (w.resolve(), false) : true));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${port}${path}`;
    return this;
  }

  get held(): number {
    return this.waiting.length;
  }

  /** Answers the requests held so far (and stops holding new ones). */
  answerHeld(): void {
    this.hold = false;
    for (const answer of this.waiting.splice(0)) answer();
  }

  /** Resolves once `n` requests arrived in all (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs = 60_000): Promise<void> {
    if (this.receipts.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`expected ${n} deliveries, got ${this.receipts.length}`)), timeoutMs);
      this.waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  /** Every receipt checked with the standardwebhooks package (not our code); returns the parsed bodies. */
  verified(secret: string): any[] {
    const wh = new Webhook(secret);
    return this.receipts.map((r) => wh.verify(r.body, r.headers as Record<string, string>));
  }

  close(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/**
 * An endpoint that answers every POST with `answer(the Authorization header it got)` as JSON:
 * what an echo service, or a thief's, would do with a token a webhook sends.
 */
export class EchoReceiver {
  readonly auth: string[] = [];
  private server?: Server;
  url = '';

  constructor(private readonly answer: (authorization: string) => unknown = (authorization) => ({ youSent: authorization })) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const authorization = String(req.headers.authorization ?? '');
        this.auth.push(authorization);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.answer(authorization)));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/hook`;
    return this;
  }

  close(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The settings of every webhook worker the tests run. The suites share one database and so
 * one queue, and any worker may take any job: they must all behave alike (retries every
 * 300 ms doubling, disabled after 4 s of failures, loopback http targets allowed).
 */
export const TEST_WORKER_ENV = {
  WEBHOOKS_WORKER: 'on',
  WEBHOOKS_ALLOW_PRIVATE: '1',
  WEBHOOK_RETRY_BASE_MS: '300',
  WEBHOOK_DISABLE_AFTER_MS: '4000',
};
