import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { projectRoot } from '#config/config.js';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '#database/data-source.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '#database/embedded-postgres.js';
import { clusterDirFor, relocatedClusterDir } from '#database/postgres-as-root.js';
import { freePort } from './public-origin.js';

/**
 * Process-level tests (crashes, outages, shutdown) need a Postgres of their own: stopping
 * the suite's shared one would fail every other test file running in parallel.
 */
export const ROOT = projectRoot();

export interface OwnPostgres {
  dataDir: string;
  db: EmbeddedDatabase;
  url: string;
  stop(): Promise<void>;
  /** Start it again on the same data (and port, when free). */
  restart(): Promise<void>;
  remove(): Promise<void>;
}

export async function ownPostgres(label: string): Promise<OwnPostgres> {
  const dataDir = join(ROOT, '.data', `test-${label}-${process.pid}`);
  rmSync(dataDir, { recursive: true, force: true });
  removeCluster(dataDir);
  const own: OwnPostgres = {
    dataDir,
    db: await startEmbeddedPostgres({ dataDir, database: 'records' }),
    get url() {
      return own.db.url;
    },
    async stop() {
      await own.db.stop();
    },
    async restart() {
      own.db = await startEmbeddedPostgres({ dataDir, database: 'records' });
    },
    async remove() {
      await own.db.stop().catch(() => undefined);
      removeCluster(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  const ds = await new DataSource(dataSourceOptions(own.url, 2)).initialize();
  await runMigrations(ds);
  await ds.destroy();
  return own;
}

/** An own Postgres (see ownPostgres) with one workspace and an Admin API key in it. */
export async function ownPostgresWithKey(label: string): Promise<{ pg: OwnPostgres; key: string; workspaceId: string }> {
  const pg = await ownPostgres(label);
  const ds = await new DataSource(dataSourceOptions(pg.url, 2)).initialize();
  try {
    const workspace = await createWorkspace(ds, label);
    const role = await findRole(ds, workspace.id, 'Admin');
    const { secret } = await createApiKey(ds, {
      workspaceId: workspace.id,
      role,
      name: label,
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    return { pg, key: secret, workspaceId: workspace.id };
  } finally {
    await ds.destroy();
  }
}

export interface AppProcess {
  child: ChildProcess;
  port: number;
  url: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `node dist/apps/<app>/src/main.js` on a free port (each app starts alone, README "Operations"). */
export async function spawnApp(
  app: 'records-api' | 'auth-server',
  env: Record<string, string>,
  options: { ipc?: boolean } = {},
): Promise<AppProcess> {
  // A port given in env (PORT, AUTH_PORT) is kept: a pair of apps needs to know each other's.
  const port = Number(env[app === 'records-api' ? 'PORT' : 'AUTH_PORT']) || (await freePort());
  const portVar = app === 'records-api' ? { PORT: String(port) } : { AUTH_PORT: String(port) };
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps', app, 'src/main.js')], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'error', AUTH_PROXY: 'off', PUBLIC_URL: `http://127.0.0.1:${port}`, ...portVar, ...env },
    // With an IPC channel the app answers `{stats}` requests (libs/ops/src/process-stats.ts), as under the launcher.
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(
    async () => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${app} exited while starting:\n${out}`);
      return (await fetch(`${url}/health/live`).catch(() => undefined))?.status === 200;
    },
    30_000,
    () => `${app} to start:\n${out}`,
  );
  return { child, port, url, output: () => out, exited };
}

export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  ms: number,
  what: () => string = () => 'condition',
): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`Timed out after ${ms} ms waiting for ${what()}`);
}

/** The figures an app started with `ipc` keeps about itself; `reset` starts its event-loop delay histogram anew. */
export function statsOf(app: AppProcess, what: 'read' | 'reset' = 'read'): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no stats answer within 10 s')), 10_000);
    const listener = (message: { stats?: Record<string, number> }) => {
      if (!message?.stats) return;
      clearTimeout(timer);
      app.child.off('message', listener);
      resolve(message.stats);
    };
    app.child.on('message', listener);
    app.child.send({ stats: what });
  });
}

/** True when a process with this pid exists (and is not a zombie). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Pids whose parent is `pid` (from /proc). */
export function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/**
 * The postmaster of an embedded cluster, from its `postmaster.pid`, wherever the code put
 * the cluster (as root it can live under /var/lib/workspace-records, see postgres-as-root.ts).
 */
export function postmasterOf(dataDir: string): number | undefined {
  try {
    return Number(readFileSync(join(clusterDirFor(dataDir), 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Removes the cluster a test created for `dataDir` when it lives outside it (as root,
 * ~50 MB under /var/lib/workspace-records/data each); one inside goes with the data dir.
 */
export function removeCluster(dataDir: string): void {
  if (process.getuid?.() === 0) rmSync(dirname(relocatedClusterDir(dataDir)), { recursive: true, force: true });
}

/** After a test that ran its own cluster for `dataDir`: stops whatever postmaster runs it, then removes it. */
export async function stopAndRemoveCluster(dataDir: string): Promise<void> {
  const pg = postmasterOf(dataDir);
  if (pg && alive(pg)) process.kill(pg, 'SIGINT');
  await waitUntil(() => !pg || !alive(pg), 15_000).catch(() => undefined);
  removeCluster(dataDir);
}

/** A JSON request with node:http (Jest's sandboxed fetch did not start concurrent bodies reliably). */
export function httpJson(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = httpRequest(url, {
      method: options.method ?? 'GET',
      headers: {
        ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) } : {}),
        ...options.headers,
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * `node dist/apps/<entry> [args]` (in `cwd`, default this checkout) with `env` over this process's environment, until it exits (killed
 * with SIGKILL after `ms`, 20 s by default): its exit code and output. `onOutput` sees the output so far.
 */
export async function runToExit(
  entry: string,
  env: Record<string, string>,
  options: { ms?: number; cwd?: string; args?: string[]; onOutput?: (out: string, child: ChildProcess) => void } = {},
): Promise<{ code: number | null; output: string }> {
  const cwd = options.cwd ?? ROOT;
  const child = spawn(process.execPath, [join(cwd, 'dist/apps', entry), ...(options.args ?? [])], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const seen = (d: Buffer) => {
    out += d;
    options.onOutput?.(out, child);
  };
  child.stdout!.on('data', seen);
  child.stderr!.on('data', seen);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.ms ?? 20_000);
  const code = await exited;
  clearTimeout(timer);
  return { code, output: out };
}

export interface Launched {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** `node dist/apps/start.js` (what `npm start` runs after its build) in checkout `app` with `env`, once it serves. */
export async function launchIn(app: string, env: NodeJS.ProcessEnv): Promise<Launched> {
  const child = spawn(process.execPath, [join(app, 'dist/apps/start.js')], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitUntil(
    () => {
      if (child.exitCode !== null) throw new Error(`npm start exited:\n${out}`);
      return /Serving on/.test(out);
    },
    90_000,
    () => `npm start to serve:\n${out}`,
  );
  return { child, output: () => out, exited };
}

/** An app on `env` until it is up (then stopped) or exits: whether it came up, its output and exit code. */
export async function tryStart(
  app: 'records-api' | 'auth-server',
  env: Record<string, string>,
): Promise<{ started: boolean; code: number | null; output: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [resolve(ROOT, 'dist/apps', app, 'src/main.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      AUTH_PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      AUTH_PROXY: 'off',
      WEBHOOKS_WORKER: 'off',
      LOG_LEVEL: 'error',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let started = false;
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  await waitUntil(
    async () => {
      if (child.exitCode !== null || child.signalCode !== null) return true;
      started = (await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => undefined))?.ok === true;
      return started;
    },
    60_000,
    () => `${app} to start or stop:\n${output}`,
  );
  if (started) child.kill('SIGTERM');
  return { started, code: await exited, output };
}
