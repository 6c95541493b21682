import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { relocatedClusterDir } from '#database/postgres-as-root.js';
import { freePort } from './public-origin.js';
import { launchIn, ROOT } from './processes.js';

/**
 * As root: `npm start` in a checkout under a mode-700 directory (like /root/app),
 * which user postgres cannot enter, starts, and keeps its data across a restart. The
 * checkout is a hard-linked copy of this one inside such a directory.
 */
const asRoot = process.getuid?.() === 0;
(asRoot ? describe : describe.skip)('as root, in a checkout under a mode-700 directory', () => {
  const privateDir = join(ROOT, '.data', `private-${process.pid}`);
  const app = join(privateDir, 'app');
  const relocated = dirname(relocatedClusterDir(join(app, '.data')));
  let port: number;
  let authPort: number;

  beforeAll(async () => {
    rmSync(privateDir, { recursive: true, force: true });
    mkdirSync(app, { recursive: true, mode: 0o700 });
    mkdirSync(privateDir, { recursive: true, mode: 0o700 });
    // Hard links (cp -al): a real copy of node_modules would take most of a minute.
    execFileSync('cp', ['-al', ...['package.json', 'dist', 'node_modules', 'docs'].map((e) => join(ROOT, e)), app]);
    port = await freePort();
    authPort = await freePort();
  }, 120_000);
  afterAll(() => {
    rmSync(privateDir, { recursive: true, force: true });
    rmSync(relocated, { recursive: true, force: true });
  });

  async function start(): Promise<{ launcher: ChildProcess; output: () => string; exited: Promise<number | null> }> {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      AUTH_PORT: String(authPort),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'log',
    };
    delete env.DATABASE_URL;
    delete env.DATA_DIR;
    delete env.WRS_ROOT;
    const { child: launcher, output, exited } = await launchIn(app, env);
    return { launcher, output, exited };
  }

  it('starts, serves, and finds its data again after a restart', async () => {
    const first = await start();
    expect(first.output()).toMatch(/User postgres cannot enter/);
    const key = /API key: +(wrs_\S+)/.exec(first.output())?.[1];
    expect(key).toBeDefined();
    const list = () => fetch(`http://127.0.0.1:${port}/rest/companies?limit=1`, { headers: { Authorization: `Bearer ${key}` } });
    const before = await list();
    expect(before.status).toBe(200);
    expect(((await before.json()) as any).totalCount).toBe(20);
    expect(existsSync(join(relocated, 'pg', 'PG_VERSION'))).toBe(true);
    first.launcher.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = await start();
    expect(second.output()).not.toMatch(/API key:/); // not a fresh database
    const after = await list();
    expect(after.status).toBe(200);
    expect(((await after.json()) as any).totalCount).toBe(20);
    second.launcher.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 240_000);
});
