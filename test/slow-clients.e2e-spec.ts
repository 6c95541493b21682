import { connect, type Socket } from 'node:net';
import { spawnApp, type AppProcess } from './processes.js';

/**
 * A client that sends its request a byte at a time holds a connection for as long as the
 * server lets it (slowloris). Both apps close it once HTTP_HEADERS_TIMEOUT_MS (headers) or
 * HTTP_REQUEST_TIMEOUT_MS (the whole request) has passed, and keep an idle keep-alive
 * connection for HTTP_KEEP_ALIVE_TIMEOUT_MS, set short here.
 */
const HEADERS_MS = 1000;
const REQUEST_MS = 2000;
const KEEP_ALIVE_MS = 4000;

/** A raw connection that writes `first`, then `drip` every 100 ms; resolves when the server closes it. */
function drip(port: number, first: string, dripped: string): Promise<{ closedAfterMs: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let answer = '';
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(first));
    const timer = setInterval(() => socket.writable && socket.write(dripped), 100);
    const giveUp = setTimeout(() => socket.destroy(new Error('still open after 10 s')), 10_000);
    socket.on('data', (d) => (answer += d));
    socket.on('error', (err) => {
      if (/still open/.test(err.message)) reject(err);
    });
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ closedAfterMs: Date.now() - started, answer });
    });
  });
}

describe.each(['records-api', 'auth-server'] as const)('Slow clients on the %s', (name) => {
  let app: AppProcess;

  beforeAll(async () => {
    app = await spawnApp(name, {
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
    });
  }, 60_000);
  afterAll(() => app?.child.kill('SIGKILL'));

  it('closes a connection whose headers drip in, after the headers timeout', async () => {
    const { closedAfterMs, answer } = await drip(app.port, 'GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: ', 'a');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(HEADERS_MS - 100);
    expect(closedAfterMs).toBeLessThan(HEADERS_MS + 4000);
  });

  it('closes a connection whose body drips in, after the request timeout', async () => {
    const head =
      'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n';
    const { closedAfterMs } = await drip(app.port, head, 'a');
    expect(closedAfterMs).toBeGreaterThanOrEqual(REQUEST_MS - 100);
    expect(closedAfterMs).toBeLessThan(REQUEST_MS + 4000);
  });

  it('keeps an idle keep-alive connection past the headers timeout, for the keep-alive timeout', async () => {
    const started = Date.now();
    let answer = '';
    const socket = connect(app.port, '127.0.0.1', () => socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n'));
    socket.on('data', (d) => (answer += d));
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
    const closedAfterMs = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer.toLowerCase()).toContain(`keep-alive: timeout=${KEEP_ALIVE_MS / 1000}`);
    expect(closedAfterMs).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 100);
    expect(closedAfterMs).toBeLessThan(KEEP_ALIVE_MS + 4000);
  });
});
