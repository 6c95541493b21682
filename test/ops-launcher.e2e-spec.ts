import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { clusterDirFor } from '#database/postgres-as-root.js';
import { freePort } from './public-origin.js';
import { alive, childrenOf, commandOf, httpJson, postmasterOf, stopAndRemoveCluster, ROOT, waitUntil } from './processes.js';

/**
 * The launcher (README "Operations"): `npm start`'s process (dist/apps/start.js) as a
 * supervisor, with its own embedded Postgres under a data directory of its own, killed for real.
 * As root the data directory sits in a mode-700 directory, as a checkout under /root does,
 * so the cluster lives where postgres-as-root.ts puts it, not under the data directory.
 */
describe('launcher (npm start)', () => {
  const asRoot = process.getuid?.() === 0;
  const privateDir = join(ROOT, '.data', `private-launcher-${process.pid}`);
  const dataDir = asRoot ? join(privateDir, 'data') : join(ROOT, '.data', `test-launcher-${process.pid}`);
  let port: number;
  let authPort: number;
  let apiKey: string | undefined;
  const launchers: ChildProcess[] = [];

  beforeAll(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    if (asRoot) mkdirSync(privateDir, { recursive: true, mode: 0o700 });
    port = await freePort();
    authPort = await freePort();
  });
  afterAll(async () => {
    for (const l of launchers) if (l.exitCode === null) l.kill('SIGKILL');
    await stopAndRemoveCluster(dataDir);
    rmSync(asRoot ? privateDir : dataDir, { recursive: true, force: true });
  }, 30_000);

  async function launch(
    options: { detached?: boolean } = {},
  ): Promise<{ launcher: ChildProcess; output: () => string; exited: Promise<number | null> }> {
    const launcher = spawn(process.execPath, [join(ROOT, 'dist/apps/start.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(port),
        AUTH_PORT: String(authPort),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        DATABASE_URL: '',
        LOG_LEVEL: 'log',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own, as `npm start` in a terminal has: Ctrl-C signals the whole group.
      detached: options.detached ?? false,
    });
    launchers.push(launcher);
    let out = '';
    launcher.stdout!.on('data', (d) => (out += d));
    launcher.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));
    await waitUntil(
      () => /Serving on/.test(out),
      60_000,
      () => `the launcher to serve:\n${out}`,
    );
    return { launcher, output: () => out, exited };
  }

  const status = (url: string) =>
    fetch(url).then(
      (r) => r.status,
      () => 0,
    );
  const appPid = (launcherPid: number, entry: string) => childrenOf(launcherPid).find((pid) => commandOf(pid).includes(entry));

  it('restarts a killed app while the other keeps serving; a SIGKILLed launcher takes its apps and Postgres down within 10 s', async () => {
    const { launcher, output } = await launch();
    // The first-start banner comes last, after the apps' own start lines.
    expect(output().trimEnd()).toMatch(/API key: +wrs_\S+[\s\S]*curl[^\n]*$/);
    apiKey = /API key: +(wrs_\S+)/.exec(output())![1];
    expect(output()).not.toMatch(/Mapped \{/);

    const api = appPid(launcher.pid!, 'records-api')!;
    const auth = appPid(launcher.pid!, 'auth-server')!;
    expect(api).toBeDefined();
    expect(auth).toBeDefined();
    expect(await status(`http://127.0.0.1:${port}/health/ready`)).toBe(200);
    // The records API runs with its heap bounded (API_HEAP_MB, default 160); the auth server as Node sizes it.
    expect(commandOf(api)).toMatch(/--max-old-space-size=160 .*records-api/);
    expect(commandOf(auth)).not.toMatch(/max-old-space-size/);

    process.kill(api, 'SIGKILL');
    await waitUntil(() => !alive(api), 5_000);
    expect(await status(`http://127.0.0.1:${authPort}/health/live`)).toBe(200);
    expect(await status(`http://127.0.0.1:${port}/health/live`)).toBe(0);
    await waitUntil(
      async () => (await status(`http://127.0.0.1:${port}/health/ready`)) === 200,
      15_000,
      () => `records API back:\n${output()}`,
    );
    expect(appPid(launcher.pid!, 'records-api')).not.toBe(api);
    expect(alive(auth)).toBe(true);
    expect(output()).toMatch(/records-api exited \(SIGKILL\); restarting in \d+ ms/);

    const apps = childrenOf(launcher.pid!).filter((pid) => /records-api|auth-server/.test(commandOf(pid)));
    const postgres = postmasterOf(dataDir)!;
    expect(alive(postgres)).toBe(true);
    launcher.kill('SIGKILL');
    const killedAt = Date.now();
    await waitUntil(
      () => !apps.some(alive) && !alive(postgres),
      10_000,
      () => `apps ${apps.filter(alive)} and postgres ${alive(postgres)} to stop`,
    );
    expect(Date.now() - killedAt).toBeLessThan(10_000);
  }, 120_000);

  it('starts again on the same data (no new demo), and stops cleanly on SIGTERM', async () => {
    const { launcher, output, exited } = await launch();
    expect(output()).not.toMatch(/API key/);
    expect(output()).not.toMatch(/PUBLIC_URL/); // it names PORT's port: no warning
    const postgres = postmasterOf(dataDir)!;
    const apps = childrenOf(launcher.pid!).filter((pid) => /records-api|auth-server/.test(commandOf(pid)));
    expect(apps).toHaveLength(2);
    launcher.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(apps.some(alive)).toBe(false);
    expect(alive(postgres)).toBe(false);
  }, 120_000);

  const ready = () => status(`http://127.0.0.1:${port}/health/ready`);

  it('watches Postgres: one restarted outside the launcher is still stopped on SIGTERM, one that dies is logged and started again', async () => {
    const { launcher, output, exited } = await launch();
    const apps = childrenOf(launcher.pid!).filter((pid) => /records-api|auth-server/.test(commandOf(pid)));
    const first = postmasterOf(dataDir)!;
    expect(alive(first)).toBe(true);

    // An operator's `pg_ctl restart` (as user postgres when root: Postgres refuses to run as root).
    const pgCtl = join(dirname(readlinkSync(`/proc/${first}/exe`)), 'pg_ctl');
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
    const restart = spawnSync(pgCtl, ['restart', '-D', clusterDirFor(dataDir), '-m', 'fast', '-w', '-l', '/dev/null'], {
      ...(asRoot ? { uid: id('-u'), gid: id('-g') } : {}),
      stdio: 'ignore',
      timeout: 30_000,
    });
    expect(restart.status).toBe(0);
    const second = postmasterOf(dataDir)!;
    expect(second).not.toBe(first);
    expect(alive(second)).toBe(true);
    await waitUntil(
      async () => (await ready()) === 200,
      20_000,
      () => `ready after the restart:\n${output()}`,
    );
    // The launcher took it over ("was restarted outside the launcher", or "is back" when it looked in between).
    await waitUntil(
      () => output().includes(`(pid ${second})`),
      10_000,
      () => `the launcher to watch pid ${second}:\n${output()}`,
    );

    // A postmaster that dies is reported and started again, as an app is.
    process.kill(second, 'SIGKILL');
    await waitUntil(
      () => {
        const now = postmasterOf(dataDir);
        return now !== undefined && now !== second && alive(now);
      },
      20_000,
      () => `Postgres started again:\n${output()}`,
    );
    expect(output()).toMatch(new RegExp(`PostgreSQL \\(pid ${second}\\) exited; restarting in \\d+ ms`));
    const third = postmasterOf(dataDir)!;
    await waitUntil(
      async () => (await ready()) === 200,
      20_000,
      () => `ready after Postgres came back:\n${output()}`,
    );

    launcher.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(apps.some(alive)).toBe(false);
    expect(alive(third)).toBe(false);
  }, 120_000);

  it('Ctrl-C (SIGINT to the whole process group) drains: requests in flight get their answers, /health/ready answers 503 meanwhile, then everything stops', async () => {
    expect(apiKey).toBeDefined();
    const { launcher, output, exited } = await launch({ detached: true });
    const apps = childrenOf(launcher.pid!).filter((pid) => /records-api|auth-server/.test(commandOf(pid)));
    const postgres = postmasterOf(dataDir)!;
    const { port: pgPort, password } = JSON.parse(readFileSync(join(dataDir, 'pg.json'), 'utf8')) as { port: number; password: string };
    const locker = new pg.Client({ host: '127.0.0.1', port: pgPort, user: 'postgres', password, database: 'records' });
    locker.on('error', () => undefined); // a failing run stops Postgres under it: the assertions tell
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE companies IN EXCLUSIVE MODE'); // reads pass, inserts wait
      const N = 6;
      const pending = Array.from({ length: N }, (_, i) =>
        httpJson(`http://127.0.0.1:${port}/rest/companies`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}` },
          body: { name: `sigint-${i}` },
        }).catch((err) => ({ status: 0, body: String(err) })),
      );
      await waitUntil(
        async () =>
          (await locker.query('SELECT pg_stat_clear_snapshot()'),
          await locker.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%INSERT INTO%companies%'`,
          )).rows[0].n === N,
        15_000,
        () => `${N} inserts waiting on the lock`,
      );

      process.kill(-launcher.pid!, 'SIGINT');
      const readyDuringDrain = async () =>
        (await httpJson(`http://127.0.0.1:${port}/health/ready`).catch(() => ({ status: 0, body: undefined }))) as {
          status: number;
          body: any;
        };
      await waitUntil(
        async () => (await readyDuringDrain()).status === 503,
        5_000,
        () => `/health/ready to answer 503 while draining:\n${output()}`,
      );
      expect((await readyDuringDrain()).body).toEqual({ status: 'unavailable', checks: { database: 'draining' } });
      // Whatever reached the postmaster would have stopped it by now.
      await new Promise((r) => setTimeout(r, 500));
      expect(alive(postgres)).toBe(true);

      await locker.query('COMMIT');
      await locker.end(); // before Postgres stops under it
      const answers = await Promise.all(pending);
      expect(answers.map((a) => a.status)).toEqual(Array(N).fill(201));
      expect(await exited).toBe(0);
      expect(apps.some(alive)).toBe(false);
      expect(alive(postgres)).toBe(false);
    } finally {
      await locker.end().catch(() => undefined);
    }
  }, 120_000);
});
