import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { seedDemoIfEmpty } from '../libs/auth/src/demo-seed.js';
import { loadConfig } from '../libs/database/src/config.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '../libs/database/src/data-source.js';

/**
 * `npm start`: the database (embedded unless DATABASE_URL is set; this process owns it),
 * migrations, the demo workspace on a fresh embedded database, then each app in its own
 * process, as in a deployment. Ctrl-C stops the apps, then the database.
 */
const logger = new Logger('start');
const config = loadConfig();
const { url, embedded } = await resolveDatabaseUrl((message) => logger.log(message));

const ds = await new DataSource(dataSourceOptions(url, 2)).initialize();
await runMigrations(ds);
const demo = embedded ? await seedDemoIfEmpty(ds, config.publicUrl) : undefined;
await ds.destroy();

const children: ChildProcess[] = [];
function run(entry: string): Promise<void> {
  const child = fork(fileURLToPath(new URL(entry, import.meta.url)), { env: { ...process.env, DATABASE_URL: url } });
  children.push(child);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      logger.error(`${entry} exited (${signal ?? code}); stopping`);
      void stop(1);
    }
  });
  return new Promise((resolve) => setTimeout(resolve, 0));
}

let stopping = false;
async function stop(code = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  await Promise.all(
    children.map((child) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    })),
  );
  await embedded?.stop();
  process.exit(code);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());

await run('./auth-server/src/main.js');
await run('./records-api/src/main.js');
if (demo) {
  // Printed once, on the first start: the demo secrets are stored only as hashes.
  process.stdout.write(`\n${demo}\n\n`);
}
logger.log(`Starting on ${config.publicUrl}  (REST ${config.publicUrl}/rest, GraphQL ${config.publicUrl}/graphql)`);
