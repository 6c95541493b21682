// A real PgBouncer (Debian's package, 1.18: no prepared statements in transaction mode) in
// front of a test database, run as a plain process with its own ini, port and auth file. Plain
// ESM so both the Jest global setup (outside the module mapper) and test files can use it.
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export const PGBOUNCER = process.env.PGBOUNCER_BIN || '/usr/sbin/pgbouncer';

export function pgbouncerAvailable() {
  return existsSync(PGBOUNCER);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * The ini docs/scaling.md "Behind PgBouncer" documents, for `directUrl`'s database: transaction
 * pooling, `poolSize` server connections per user and database (small, so clients really
 * share them), UTC and the statement timeout set on each server connection by PgBouncer.
 */
export function pgbouncerIni({ directUrl, port, dir, poolSize, statementTimeoutMs = 15000, anyDatabase = false }) {
  const url = new URL(directUrl);
  const db = url.pathname.slice(1);
  const server = `host=${url.hostname} port=${url.port || 5432}`;
  const session = `timezone=UTC connect_query='SET statement_timeout = ${statementTimeoutMs}'`;
  return `[databases]
${db} = ${server} dbname=${db} ${session}
${anyDatabase ? `* = ${server} ${session}\n` : ''}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = scram-sha-256
auth_file = ${join(dir, 'userlist.txt')}
pool_mode = transaction
default_pool_size = ${poolSize}
max_client_conn = 500
logfile = ${join(dir, 'pgbouncer.log')}
pidfile = ${join(dir, 'pgbouncer.pid')}
`;
}

/**
 * Starts PgBouncer in front of `directUrl` (same user and password) and resolves with its URL
 * once it accepts connections. As root it runs as user `postgres` (PgBouncer refuses root).
 */
export async function startPgBouncer({ directUrl, poolSize = 3 }) {
  const dir = mkdtempSync(join(tmpdir(), 'wrs-pgbouncer-'));
  const port = await freePort();
  const url = new URL(directUrl);
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" "${password.replace(/"/g, '""')}"\n`, { mode: 0o600 });
  // Tests' databases of their own (useEmptyDatabase) are reached through the same PgBouncer.
  writeFileSync(join(dir, 'pgbouncer.ini'), pgbouncerIni({ directUrl, port, dir, poolSize, anyDatabase: true }));
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const { uid, gid } = postgresUser();
    chmodSync(dir, 0o755);
    for (const file of ['', 'userlist.txt', 'pgbouncer.ini']) chownSync(join(dir, file), uid, gid);
  }
  const args = [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')];
  const child = spawn(PGBOUNCER, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const until = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited ${child.exitCode}: ${stderr}${log(dir)}`);
    if (await accepts(port)) break;
    if (Date.now() > until) throw new Error(`pgbouncer did not listen on ${port} within 10 s: ${log(dir)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const pooled = new URL(directUrl);
  pooled.hostname = '127.0.0.1';
  pooled.port = String(port);
  return {
    url: pooled.toString(),
    port,
    dir,
    pid: child.pid,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGINT'); // immediate shutdown
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function log(dir) {
  try {
    return readFileSync(join(dir, 'pgbouncer.log'), 'utf8').split('\n').slice(-5).join('\n');
  } catch {
    return '';
  }
}

function postgresUser() {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('pgbouncer refuses to run as root and there is no user postgres to run it as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function accepts(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
