import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';

/**
 * A server that answers outbound requests (client metadata documents, webhook deliveries)
 * the worst ways it can, written as raw bytes on the socket so that nothing in Node's own
 * server smooths them out: every status line from 100 to 999, bodies over any limit or
 * without end, resets in the middle, answers that are not HTTP, TLS that is not trusted or
 * not TLS, and a server that never answers. A process whose outbound fetches meet all of
 * these must still be up afterwards.
 *
 * Each case is a path; `targets()` lists every case's URL. `requests` records each path
 * asked for, so a test can also count how often one URL was fetched.
 */
export interface HostileServer {
  /** `https://127.0.0.1:<port>` (or http when started without TLS). */
  origin: string;
  /** Every hostile case as a URL: `origin` + a path, plus the untrusted and non-TLS origins' URLs. */
  targets(): string[];
  /** Paths asked for, in order (from every listener of this helper). */
  requests: string[];
  close(): Promise<void>;
}

/** Status codes from 100 to 999, the valid and the nonsensical alike. */
export const EVERY_STATUS = Array.from({ length: 900 }, (_, i) => 100 + i);

const BIG = 6 * 1024;

/** The cases beyond the plain status lines, by path. */
const CASES: Record<string, (socket: Socket) => void> = {
  // A body past the 5 KB limit, announced and not announced.
  '/large': (s) => s.end(head(200, { 'content-length': BIG }) + 'x'.repeat(BIG)),
  '/large-chunked': (s) => s.end(head(200, { 'transfer-encoding': 'chunked' }) + `${BIG.toString(16)}\r\n${'x'.repeat(BIG)}\r\n0\r\n\r\n`),
  '/large-204': (s) => s.end(head(204, { 'content-length': BIG }) + 'x'.repeat(BIG)),
  '/large-304': (s) => s.end(head(304, { 'content-length': BIG }) + 'x'.repeat(BIG)),
  // A body that never ends, as fast as the reader takes it.
  '/endless': (s) => {
    s.write(head(200, { 'transfer-encoding': 'chunked' }));
    const chunk = `4000\r\n${'x'.repeat(0x4000)}\r\n`;
    const more = () => {
      while (!s.destroyed && s.write(chunk));
      if (!s.destroyed) s.once('drain', more);
    };
    more();
  },
  // A body that never ends, one byte at a time.
  '/drip': (s) => {
    s.write(head(200, { 'content-length': 1_000_000 }));
    const timer = setInterval(() => (s.destroyed ? clearInterval(timer) : s.write('x')), 100);
  },
  // Headers one byte at a time, never finished.
  '/drip-headers': (s) => {
    const timer = setInterval(() => (s.destroyed ? clearInterval(timer) : s.write('X')), 100);
    s.write('HTTP/1.1 200 OK\r\nx-slow: ');
  },
  // Resets (RST) in the status line, in the headers and in the body; a FIN before the body's end.
  '/reset-status': (s) => {
    s.write('HTTP/1.1 2');
    setTimeout(() => reset(s), 20);
  },
  '/reset-headers': (s) => {
    s.write('HTTP/1.1 200 OK\r\ncontent-type: appl');
    setTimeout(() => reset(s), 20);
  },
  '/reset-body': (s) => {
    s.write(head(200, { 'content-length': 1000 }) + '{"client_id":');
    setTimeout(() => reset(s), 20);
  },
  '/reset-chunked-body': (s) => {
    s.write(head(200, { 'transfer-encoding': 'chunked' }) + '10\r\n{"client_id":');
    setTimeout(() => reset(s), 20);
  },
  '/short-body': (s) => s.end(head(200, { 'content-length': 1000 }) + '{"client_id":'),
  // Not HTTP, or HTTP that breaks its own rules.
  '/garbage': (s) => s.end('this is not HTTP\r\n\r\n'),
  '/empty': (s) => s.end(),
  '/http09': (s) => s.end('{"client_id":"x"}'),
  '/bad-content-length': (s) => s.end(head(200, { 'content-length': 'abc' }) + '{}'),
  '/two-content-lengths': (s) => s.end(head(200, { 'content-length': '2\r\ncontent-length: 3' }) + '{}x'),
  '/bad-chunk': (s) => s.end(head(200, { 'transfer-encoding': 'chunked' }) + 'zz\r\n{}\r\n0\r\n\r\n'),
  '/huge-headers': (s) => s.end(head(200, { 'content-length': 2, 'x-big': 'y'.repeat(100 * 1024) }) + '{}'),
  '/bad-header-name': (s) => s.end('HTTP/1.1 200 OK\r\nbad header: x\r\ncontent-length: 2\r\n\r\n{}'),
  '/no-reason': (s) => s.end('HTTP/1.1 200\r\ncontent-length: 2\r\n\r\n{}'),
  '/negative-status': (s) => s.end('HTTP/1.1 -1 Nope\r\ncontent-length: 2\r\n\r\n{}'),
  '/status-0': (s) => s.end('HTTP/1.1 0 Nope\r\ncontent-length: 2\r\n\r\n{}'),
  '/status-1000': (s) => s.end('HTTP/1.1 1000 Nope\r\ncontent-length: 2\r\n\r\n{}'),
  '/http2-preface': (s) => s.end('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
  '/informational-then-nothing': (s) => s.write('HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n'),
  '/switching-protocols': (s) => s.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n\x00\x01'),
  // Never a byte.
  '/silent': () => undefined,
};

/** An RST, on the TCP socket under a TLS one too (resetAndDestroy works on TCP handles only). */
function reset(socket: Socket): void {
  const tcp = (socket as Socket & { _parent?: Socket })._parent ?? socket;
  tcp.resetAndDestroy();
  socket.destroy();
}

function head(status: number, headers: Record<string, string | number>): string {
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return `HTTP/1.1 ${status} Hostile\r\ncontent-type: application/json\r\nconnection: close\r\n${lines.join('')}\r\n`;
}

/** A status line with a small JSON body (a body is sent even where HTTP forbids one). */
function answerStatus(socket: Socket, status: number): void {
  const body = '{"client_id":"hostile","redirect_uris":["http://127.0.0.1:8765/callback"]}';
  socket.end(head(status, { 'content-length': Buffer.byteLength(body) }) + body);
}

/** Reads the request head, then acts on its path; never reads a body. */
function hostile(requests: string[]) {
  return (socket: Socket) => {
    socket.on('error', () => undefined);
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (!received.includes('\r\n\r\n') && received.length < 64 * 1024) return;
      socket.off('data', onData);
      const path = /^[A-Z]+ (\S+)/.exec(received)?.[1]?.split('?')[0] ?? '/';
      requests.push(path);
      const status = /^\/status\/(\d+)$/.exec(path);
      if (status) return answerStatus(socket, Number(status[1]));
      (CASES[path] ?? ((s: Socket) => answerStatus(s, 404)))(socket);
    };
    socket.on('data', onData);
  };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A self-signed certificate that nothing trusts. */
function untrustedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'wrs-hostile-tls-'));
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}

/**
 * Starts the hostile server: over TLS with `tls` (a certificate the caller's target
 * process trusts, e.g. the test certificate of the global setup), else plain http. With TLS,
 * two more listeners answer every path: one whose certificate nothing trusts, one that
 * speaks plain HTTP where TLS is expected.
 */
export async function startHostileServer(
  o: { tls?: { key: string | Buffer; cert: string | Buffer }; statuses?: number[] } = {},
): Promise<HostileServer> {
  const requests: string[] = [];
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const track = (server: Server, event: 'connection' | 'secureConnection') => {
    server.on(event, (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    server.on('tlsClientError', () => undefined);
    servers.push(server);
    return server;
  };
  const main = o.tls
    ? track(createTlsServer({ key: o.tls.key, cert: o.tls.cert }, hostile(requests)), 'secureConnection')
    : track(createTcpServer(hostile(requests)), 'connection');
  const scheme = o.tls ? 'https' : 'http';
  const origin = `${scheme}://127.0.0.1:${await listen(main)}`;
  const extra: string[] = [];
  if (o.tls) {
    const untrusted = track(createTlsServer(untrustedCertificate(), hostile(requests)), 'secureConnection');
    extra.push(`https://127.0.0.1:${await listen(untrusted)}/status/200`);
    const plain = track(createTcpServer(hostile(requests)), 'connection');
    extra.push(`https://127.0.0.1:${await listen(plain)}/status/200`);
  }
  const statuses = o.statuses ?? EVERY_STATUS;
  return {
    origin,
    requests,
    targets: () => [...statuses.map((s) => `${origin}/status/${s}`), ...Object.keys(CASES).map((p) => `${origin}${p}`), ...extra],
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}
