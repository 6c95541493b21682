import 'reflect-metadata';
import '#ops/json-console.js';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { seedDemoIfEmpty } from '#identity/demo-seed.js';
import { apiNodeFlags, exitOnConfigError, loadConfig, startWarnings } from '#config/config.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations, startEmbedded } from '#database/data-source.js';
import type { EmbeddedDatabase } from '#database/embedded-postgres.js';
import { createLogger, pinoRoot } from '#ops/logging.js';
import { EXIT_CONFIG, portProblem } from '#ops/ports.js';

/**
 * `npm start`: the database (embedded unless DATABASE_URL is set; this process owns it),
 * migrations, the demo workspace on a fresh embedded database, then each app in its own
 * process, supervised as systemd or pm2 would (README "Operations"):
 * - a port that is taken, or an app that exits with EX_CONFIG, ends the start with one line
 *   and a non-zero code: restarting cannot help;
 * - an app that dies is started again after a backoff (0.5 s doubling to 30 s, back to
 *   0.5 s once it has run for a minute); the other keeps serving; so is the embedded
 *   Postgres, watched through its `postmaster.pid` (an operator may restart it);
 * - SIGTERM / SIGINT: each app drains its requests in flight (SHUTDOWN_GRACE_MS), then
 *   the database stops. Apps and Postgres run in process groups of their own, so a Ctrl-C
 *   (SIGINT to the terminal's whole group) reaches only this process, which orders the stop;
 * - if this process is killed outright, the apps exit on losing their IPC channel and the
 *   embedded Postgres is stopped by its guard (libs/database/src/embedded-postgres.ts).
 */
const config = loadConfig();
const logger = createLogger(config);
const log = (message: string) => logger.log(message, 'start');
for (const warning of startWarnings(config)) logger.warn(warning, 'start');

const portTaken =
  config.authPort === config.port
    ? `AUTH_PORT and PORT are both ${config.port}: the auth server needs a port of its own; set AUTH_PORT`
    : ((await portProblem(config.port, '0.0.0.0', 'PORT')) ?? (await portProblem(config.authPort, config.authHost, 'AUTH_PORT')));
if (portTaken) {
  logger.error(portTaken, undefined, 'start');
  process.exit(EXIT_CONFIG);
}

// DATA_DIR that does not hold what it says (docs/operations.md "Refused starts"): one line, exit 78.
let { url, embedded } = await resolveDatabaseUrl(log).catch(exitOnConfigError);

const ds = await new DataSource(dataSourceOptions(url, 2)).initialize();
await runMigrations(ds, log).catch(exitOnConfigError);
// A Demo only in a cluster this start made (a truly empty DATA_DIR), never in an operator's database, even an empty one.
const demo = embedded?.initialised ? await seedDemoIfEmpty(ds, config.publicUrl) : undefined;
await ds.destroy();

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;
const STABLE_AFTER_MS = 60_000;
const backoff = (failures: number) => Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** failures);

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
    // Out of the terminal's process group: a Ctrl-C reaches this process only, which drains
    // the apps and then stops Postgres, in that order. Killed outright, this process still
    // takes the apps along: they exit when the IPC channel closes (apps/*/src/main.ts).
    detached: true,
  });
  app.child = child;
  app.ready = new Promise((resolve) => child.on('message', (m: { ready?: string }) => m?.ready && resolve()));
  child.on('exit', (code, signal) => {
    if (stopping) return;
    if (code === EXIT_CONFIG) {
      logger.error(`${app.name} cannot start as configured (see above); stopping`, undefined, 'start');
      void stop('configuration error', EXIT_CONFIG);
      return;
    }
    if (Date.now() - app.startedAt > STABLE_AFTER_MS) app.failures = 0;
    const delay = backoff(app.failures);
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

/**
 * The embedded Postgres, watched as the apps are: a postmaster that dies is logged and
 * started again (the apps answer 503 meanwhile and recover by themselves); one an operator
 * restarted on the same cluster is taken over, so that a stop still stops it.
 */
let restartingPostgres: Promise<void> | undefined;
function watchPostgres(db: EmbeddedDatabase): NodeJS.Timeout {
  let known = db.postmaster();
  let startedAt = Date.now();
  let failures = 0;
  return setInterval(() => {
    if (stopping || restartingPostgres || !embedded) return;
    const pid = embedded.postmaster();
    if (pid !== undefined) {
      if (pid !== known) log(`PostgreSQL (pid ${pid}) was restarted outside the launcher; watching it`);
      known = pid;
      return;
    }
    if (Date.now() - startedAt > STABLE_AFTER_MS) failures = 0;
    const delay = backoff(failures);
    failures++;
    logger.error(`PostgreSQL (pid ${known}) exited; restarting in ${delay} ms`, undefined, 'start');
    restartingPostgres = (async () => {
      await new Promise((r) => setTimeout(r, delay));
      if (stopping) return;
      try {
        const previous = embedded!;
        embedded = await startEmbedded(log);
        previous.release();
        startedAt = Date.now();
        known = embedded.postmaster();
        log(`PostgreSQL is back (pid ${known})`);
        if (embedded.url !== url) {
          // Another port (its own was taken meanwhile): the apps must connect anew.
          url = embedded.url;
          for (const { child } of apps) child?.kill('SIGTERM');
        }
      } catch (err) {
        logger.error(`PostgreSQL did not start again: ${(err as Error)?.message ?? err}`, undefined, 'start');
      }
    })().finally(() => (restartingPostgres = undefined));
  }, 500);
}
const postgresWatch = embedded?.owned ? watchPostgres(embedded) : undefined;

async function stop(reason: string, code = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  log(`${reason}: stopping the apps, then the database`);
  await Promise.all(
    apps.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          // An app that does not finish draining in time is killed (grace + margin).
          setTimeout(() => child.kill('SIGKILL'), config.shutdownGraceMs + 5_000).unref();
        }),
    ),
  );
  clearInterval(postgresWatch);
  await restartingPostgres;
  await embedded?.stop();
  process.exit(code);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));

const started = [supervise('auth-server', './auth-server/src/main.js'), supervise('records-api', './records-api/src/main.js')];
await Promise.all(started.map((app) => app.ready));
if (stopping) await new Promise(() => undefined); // an app could not start: stop() exits
log(`Serving on ${config.publicUrl}  (REST ${config.publicUrl}/rest, GraphQL ${config.publicUrl}/graphql, MCP ${config.publicUrl}/mcp)`);
if (demo) {
  // Printed once, on the first start, and last, so no log line pushes it off the screen:
  // the demo secrets are stored only as hashes. With LOG_FORMAT=json it is one more JSON
  // line (`banner: "demo"`), not scrubbed of its API key, so stdout stays a pure JSON stream.
  if (config.logFormat === 'json') pinoRoot(config).info({ context: 'start', banner: 'demo' }, demo);
  else process.stdout.write(`\n${demo}\n\n`);
}
