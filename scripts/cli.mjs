// `npm run cli -- <command>`: the operator CLI (apps/cli) run from the built code in dist/,
// built first only when the build is stale (README "Operator CLI"). A rebuild every time
// cost 4 to 5 s a command.
//
// Stale: dist/.cli-build-stamp is missing, or any file or directory the build reads
// (tsconfig.build.json's apps/, libs/ and bench/, the tsconfig files, package.json) was
// modified at or after the moment the build it records started. A directory's time moves
// when a file in it is added, removed or renamed; git writes every file a checkout or pull
// changes. A build made some other way (`npm run build`, `npm start`) leaves the stamp as
// it was: the next command rebuilds once if sources moved since the stamp, never runs code
// older than the sources. The build's output goes to stderr, so `--json` keeps stdout to
// exactly one JSON object. Commands started together (an agent's, after a pull) build
// once: the others wait for it. Where there are no sources (the Docker image), it runs
// dist/ as it is.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const STAMP = join(ROOT, 'dist', '.cli-build-stamp');
const LOCK = join(ROOT, 'dist', '.cli-build.lock');
/** A lock older than this was left by a build that died. */
const LOCK_ABANDONED_MS = 10 * 60_000;
const ENTRY = join(ROOT, 'dist', 'apps', 'cli', 'src', 'main.js');
const INPUTS = ['apps', 'libs', 'bench', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

/** The latest modification time (ms) under `path`, directories included. */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  let latest = stat.mtimeMs;
  if (stat.isDirectory()) for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

function builtFrom() {
  try {
    return existsSync(ENTRY) ? JSON.parse(readFileSync(STAMP, 'utf8')).sourcesAsOf : undefined;
  } catch {
    return undefined;
  }
}

function stale() {
  // No sources to build from (the Docker image holds dist/ only): the build is what there is.
  if (!existsSync(join(ROOT, 'apps'))) return false;
  const asOf = builtFrom();
  return typeof asOf !== 'number' || INPUTS.some((input) => newest(join(ROOT, input)) >= asOf);
}

/** Runs the build; its exit status. */
function build() {
  const startedAt = Date.now();
  process.stderr.write('The build is older than the sources: building first (npm run build)…\n');
  // The npm that runs this script, else the one on PATH.
  const npm = process.env.npm_execpath;
  const result = spawnSync(npm ? process.execPath : 'npm', [...(npm ? [npm] : []), 'run', 'build', '--silent'], {
    cwd: ROOT,
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (result.status === 0) writeFileSync(STAMP, JSON.stringify({ sourcesAsOf: startedAt }) + '\n');
  return result.status ?? result.signal ?? result.error?.message;
}

/** Builds unless another command's build (waited for) made the build fresh; the failed build's status, if any. */
async function buildOnce() {
  mkdirSync(dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    try {
      if (Date.now() - statSync(LOCK).mtimeMs > LOCK_ABANDONED_MS) rmSync(LOCK, { recursive: true, force: true });
    } catch {
      // released meanwhile
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    if (!stale()) return 0;
  }
  try {
    return stale() ? build() : 0;
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

if (stale()) {
  const status = await buildOnce();
  if (status !== 0) {
    const message = `the build failed (exit ${status}); see above`;
    process.stderr.write(`error: ${message}\n`);
    if (process.argv.includes('--json')) process.stdout.write(JSON.stringify({ error: { code: 'INTERNAL_ERROR', message } }) + '\n');
    process.exit(1);
  }
}
await import(pathToFileURL(ENTRY).href);
