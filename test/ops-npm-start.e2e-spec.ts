import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './public-origin.js';
import { alive, childrenOf, commandOf, postmasterOf, stopAndRemoveCluster, ROOT, waitUntil } from './processes.js';

/** Every process below `pid`, children first found first. */
function descendants(pid: number): number[] {
  const found: number[] = [];
  for (let queue = [pid]; queue.length;) {
    const next = childrenOf(queue.shift()!);
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

/**
 * `npm start` itself, as systemd, a container runtime or a terminal runs it: a SIGTERM to
 * npm must reach the launcher (npm passes SIGTERM and SIGINT on to its script's process; a
 * shell between them would not), and the launcher then stops the apps and Postgres.
 */
describe('npm start', () => {
  const dataDir = join(ROOT, '.data', `test-npm-start-${process.pid}`);

  beforeAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true });
  });
  afterAll(async () => {
    await stopAndRemoveCluster(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('SIGTERM to npm stops the launcher, both apps and Postgres, and npm exits 0', async () => {
    const port = await freePort();
    const authPort = await freePort();
    // The npm that runs this suite (`npm test` sets npm_execpath), on this Node: a Node binary
    // from a package (CI's Node 24) has no npm beside it.
    const npmCli = process.env.npm_execpath;
    const npm = spawn(npmCli ? process.execPath : 'npm', npmCli ? [npmCli, 'start'] : ['start'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(port),
        AUTH_PORT: String(authPort),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        DATABASE_URL: '',
        LOG_LEVEL: 'log',
        npm_config_update_notifier: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout!.on('data', (d) => (out += d));
    npm.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    let tree: number[] = [];
    try {
      // npm start builds first.
      await waitUntil(
        () => {
          if (npm.exitCode !== null) throw new Error(`npm start exited:\n${out}`);
          return /Serving on/.test(out);
        },
        200_000,
        () => `npm start to serve:\n${out}`,
      );
      tree = descendants(npm.pid!);
      const node = (pid: number) => commandOf(pid).startsWith(process.execPath) || commandOf(pid).startsWith('node ');
      expect(tree.filter((pid) => node(pid) && /dist\/apps\/(start|records-api|auth-server)/.test(commandOf(pid)))).toHaveLength(3);
      const postgres = postmasterOf(dataDir)!;
      expect(alive(postgres)).toBe(true);

      npm.kill('SIGTERM');
      expect(await exited).toBe(0);
      await waitUntil(
        () => !tree.some(alive) && !alive(postgres),
        20_000,
        () => `${tree.filter(alive).map(commandOf).join('\n')} and postgres (${alive(postgres)}) to stop`,
      );
    } finally {
      // A run that failed before it looked (say, while building) still leaves nothing behind.
      if (!tree.length) tree = descendants(npm.pid!);
      for (const pid of [...tree, npm.pid!]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 300_000);
});
