import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEmbeddedPostgres, systemIdentifier } from '#database/embedded-postgres.js';
import { clusterDirFor } from '#database/postgres-as-root.js';
import { freePort } from './public-origin.js';
import { removeCluster, ROOT, runToExit, stopAndRemoveCluster } from './processes.js';

/**
 * docs/operations.md "Refused starts": a DATA_DIR whose pg.json and cluster do not belong
 * together stops every start (launcher, an app alone, the CLI) with one line saying what was
 * found and what to do, exit 78, and nothing in it changes; a new cluster (and Demo) only on a
 * truly empty DATA_DIR.
 */
describe('a start on the wrong data is refused', () => {
  const base = join(ROOT, '.data', `test-refused-${process.pid}`);
  const dirs = { a: `${base}-a`, b: `${base}-b`, lone: `${base}-lone` };

  /** An initialised cluster with its pg.json in `dataDir`, stopped. */
  async function cluster(dataDir: string): Promise<void> {
    const db = await startEmbeddedPostgres({ dataDir, database: 'records' });
    await db.stop();
  }

  beforeAll(async () => {
    for (const dir of Object.values(dirs)) {
      rmSync(dir, { recursive: true, force: true });
      removeCluster(dir);
    }
    await Promise.all([cluster(dirs.a), cluster(dirs.b)]);
  }, 60_000);
  afterAll(async () => {
    for (const dir of Object.values(dirs)) {
      await stopAndRemoveCluster(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  async function start(dataDir: string): Promise<{ code: number | null; output: string }> {
    const port = await freePort();
    return runToExit(
      'start.js',
      { DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'log', PORT: String(port), AUTH_PORT: String(await freePort()) },
      // A start that is not refused would serve: stop it then, so the test fails on its exit code, not a timeout.
      { ms: 60_000, onOutput: (out, child) => /Serving on/.test(out) && child.kill('SIGTERM') },
    );
  }

  /** Exactly one line, the error, in what the process printed (warnings aside: Node.js 20's end of life, say). */
  const oneLine = (output: string, pattern: RegExp) => {
    const lines = output
      .trim()
      .split('\n')
      .filter((line) => !/\bWARN(ING)?\b/.test(line));
    expect(lines).toEqual([expect.stringMatching(pattern)]);
  };

  it('pg.json whose cluster is missing (a copy of DATA_DIR without its data): exit 78, one line, no new cluster, pg.json untouched', async () => {
    rmSync(dirs.lone, { recursive: true, force: true });
    mkdirSync(dirs.lone, { recursive: true });
    copyFileSync(join(dirs.a, 'pg.json'), join(dirs.lone, 'pg.json'));
    const before = readFileSync(join(dirs.lone, 'pg.json'), 'utf8');
    const { code, output } = await start(dirs.lone);
    expect(code).toBe(78);
    oneLine(
      output,
      /pg\.json belongs to a database, but there is no PostgreSQL cluster at .*restore a backup into an empty DATA_DIR \(npm run cli -- restore --from FILE\), or remove .* to start over/,
    );
    expect(output).not.toMatch(/Demo workspace/);
    expect(existsSync(join(clusterDirFor(dirs.lone), 'PG_VERSION'))).toBe(false);
    expect(readFileSync(join(dirs.lone, 'pg.json'), 'utf8')).toBe(before);
  }, 90_000);

  it('a cluster that is not the one pg.json was written for: exit 78 from the launcher, an app alone and (non-zero) the CLI, the cluster untouched', async () => {
    const saved = readFileSync(join(dirs.a, 'pg.json'));
    const id = systemIdentifier(clusterDirFor(dirs.a));
    copyFileSync(join(dirs.b, 'pg.json'), join(dirs.a, 'pg.json'));
    try {
      const wrong = /the PostgreSQL cluster at .* \(system identifier \d+\) is not the one .*pg\.json was written for \(\d+\)/;
      const launcher = await start(dirs.a);
      expect(launcher.code).toBe(78);
      oneLine(launcher.output, wrong);
      const port = await freePort();
      const alone = await runToExit('records-api/src/main.js', {
        DATA_DIR: dirs.a,
        DATABASE_URL: '',
        LOG_LEVEL: 'log',
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        AUTH_PROXY: 'off',
      });
      expect(alone.code).toBe(78);
      oneLine(alone.output, wrong);
      const cli = await runToExit(
        'cli/src/main.js',
        { DATA_DIR: dirs.a, DATABASE_URL: '' },
        { ms: 30_000, args: ['role:list', '--workspace', 'x'] },
      );
      expect(cli.code).not.toBe(0);
      oneLine(cli.output, new RegExp(`^error: ${wrong.source}`));
      expect(systemIdentifier(clusterDirFor(dirs.a))).toBe(id);
    } finally {
      writeFileSync(join(dirs.a, 'pg.json'), saved);
    }
  }, 120_000);

  it('a cluster in DATA_DIR whose pg.json is missing is not replaced: exit 78, one line', async () => {
    const clusterDir = clusterDirFor(dirs.b);
    // As root a cluster user postgres cannot reach lives outside DATA_DIR; one left there without pg.json is an earlier checkout's (README "To start over").
    if (clusterDir !== join(dirs.b, 'pg')) return;
    const id = systemIdentifier(clusterDir);
    rmSync(join(dirs.b, 'pg.json'));
    const { code, output } = await start(dirs.b);
    expect(code).toBe(78);
    oneLine(output, /pg holds a PostgreSQL cluster but .*pg\.json \(its password and port\) is missing/);
    expect(systemIdentifier(clusterDir)).toBe(id);
    expect(existsSync(join(dirs.b, 'pg.json'))).toBe(false);
  }, 90_000);

  it('an unreadable pg.json: exit 78, one line, nothing replaced', async () => {
    const saved = readFileSync(join(dirs.a, 'pg.json'));
    writeFileSync(join(dirs.a, 'pg.json'), '{"port": 5432, "pass');
    try {
      const { code, output } = await start(dirs.a);
      expect(code).toBe(78);
      oneLine(output, /pg\.json cannot be read \(.*\): it holds the embedded database's password/);
      expect(readFileSync(join(dirs.a, 'pg.json'), 'utf8')).toBe('{"port": 5432, "pass');
    } finally {
      writeFileSync(join(dirs.a, 'pg.json'), saved);
    }
  }, 90_000);

  it('a DATA_DIR whose pg.json and cluster belong together starts; its database gets no Demo, even empty', async () => {
    const { code, output } = await start(dirs.a);
    expect(output).toMatch(/Serving on/);
    expect(code).toBe(0);
    expect(output).not.toMatch(/Demo workspace|API key:/);
  }, 90_000);

  it('a pg.json written before the system identifier was kept is accepted and gets it', async () => {
    const file = join(dirs.a, 'pg.json');
    const { systemIdentifier: id, ...legacy } = JSON.parse(readFileSync(file, 'utf8'));
    expect(id).toBe(systemIdentifier(clusterDirFor(dirs.a)));
    writeFileSync(file, JSON.stringify(legacy));
    const db = await startEmbeddedPostgres({ dataDir: dirs.a, database: 'records' });
    await db.stop();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ ...legacy, port: expect.any(Number), systemIdentifier: id });
  }, 60_000);
});
