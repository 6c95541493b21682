import 'reflect-metadata';
import '#ops/json-console.js';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { seedDemoIfEmpty } from '#identity/demo-seed.js';
import { apiNodeFlags, exitOnConfigError, loadConfig } from '#database/config.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { createLogger } from '#ops/logging.js';

/**
 * `npm start`: the database (embedded unless DATABASE_URL is set; this process owns it),
 * migrations, the demo workspace on a fresh embedded database, then each app in its own
 * process, supervised as systemd or pm2 would (SPEC §9):
 * - an app that dies is started again after a backoff (0.5 s doubling to 30 s, back to
 *   0.5 s once it has run for a minute); the other keeps serving;
 * - SIGTERM / SIGINT: each app drains its requests in flight (SHUTDOWN_GRACE_MS), then
 *   the database stops;
 * - if this process is killed outright, the apps exit on losing their IPC channel and the
 *   embedded Postgres is stopped by its guard (libs/database/src/embedded-postgres.ts).
 */
const config = loadConfig();
const logger = createLogger(config);
const log = (message: string) => logger.log(message, 'start');
const { url, embedded } = await resolveDatabaseUrl(log);

const ds = await new DataSource(dataSourceOptions(url, 2)).initialize();
await runMigrations(ds).catch(exitOnConfigError);
const demo = embedded ? await seedDemoIfEmpty(ds, config.publicUrl) : undefined;
await ds.destroy();

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;
const STABLE_AFTER_MS = 60_000;

interface Supervised {
  name: string;
  entry: string;
  child?: ChildProcess;
  startedAt: number;
  failures: number;
  ready: Promise<void>;
}

let stopping = false;
const apps: Supervised[] = [];

function run(app: Supervised): void {
  app.startedAt = Date.now();
  const child = fork(fileURLToPath(new URL(app.entry, import.meta.url)), {
    env: { ...process.env, DATABASE_URL: url },
    execArgv: [...process.execArgv, ...(app.name === 'records-api' ? apiNodeFlags(config) : [])],
  });
  app.child = child;
  app.ready = new Promise((resolve) => child.on('message', (m: { ready?: string }) => m?.ready && resolve()));
  child.on('exit', (code, signal) => {
    if (stopping) return;
    if (Date.now() - app.startedAt > STABLE_AFTER_MS) app.failures = 0;
    const delay = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** app.failures);
    app.failures++;
    logger.error(`${app.name} exited (${signal ?? `code ${code}`}); restarting in ${delay} ms`, undefined, 'start');
    setTimeout(() => stopping || run(app), delay);
  });
}

function supervise(name: string, entry: string): Supervised {
  const app: Supervised = { name, entry, startedAt: 0, failures: 0, ready: Promise.resolve() };
  apps.push(app);
  run(app);
  return app;
}

async function stop(signal: NodeJS.Signals): Promise<void> {
  if (stopping) return;
  stopping = true;
  log(`${signal}: stopping the apps, then the database`);
  await Promise.all(
    apps.map(({ child }) => new Promise<void>((resolve) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      // An app that does not finish draining in time is killed (grace + margin).
      setTimeout(() => child.kill('SIGKILL'), config.shutdownGraceMs + 5_000).unref();
    })),
  );
  await embedded?.stop();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));

const started = [supervise('auth-server', './auth-server/src/main.js'), supervise('records-api', './records-api/src/main.js')];
await Promise.all(started.map((app) => app.ready));
log(`Serving on ${config.publicUrl}  (REST ${config.publicUrl}/rest, GraphQL ${config.publicUrl}/graphql, MCP ${config.publicUrl}/mcp)`);
if (demo) {
  // Printed once, on the first start, and last, so no log line pushes it off the screen:
  // the demo secrets are stored only as hashes.
  process.stdout.write(`\n${demo}\n\n`);
}
