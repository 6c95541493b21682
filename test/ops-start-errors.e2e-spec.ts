import { createServer, type Server } from 'node:net';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './public-origin.js';
import { alive, postmasterOf, runToExit, stopAndRemoveCluster, ROOT } from './processes.js';

/** Holds a port the way another `npm start` would. */
function occupy(host: string, port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
const portOf = (server: Server) => (server.address() as { port: number }).port;
const close = (server: Server) => new Promise((resolve) => server.close(resolve));

/**
 * A start that cannot work says why in one line and exits non-zero, instead of the
 * launcher restarting an app that cannot listen, with a stack trace, forever.
 */
describe('npm start fails clearly', () => {
  const dataDir = join(ROOT, '.data', `test-start-errors-${process.pid}`);

  beforeAll(() => rmSync(dataDir, { recursive: true, force: true }));
  afterAll(async () => {
    await stopAndRemoveCluster(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  /** `node dist/apps/<entry>` on this file's data dir until it exits (killed after `ms`); its exit code and output. */
  const run = (entry: string, env: Record<string, string>, options: Parameters<typeof runToExit>[2] = {}) =>
    runToExit(entry, { DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'log', ...env }, options);

  const noRestartNorStack = (output: string) => {
    expect(output).not.toMatch(/restarting in/);
    expect(output).not.toMatch(/^\s+at /m);
  };

  it('PORT in use: one line naming the port and PORT, exit code 78, nothing restarted', async () => {
    const taken = await occupy('0.0.0.0');
    try {
      const port = portOf(taken);
      const { code, output } = await run('start.js', {
        PORT: String(port),
        AUTH_PORT: String(await freePort()),
        PUBLIC_URL: `http://localhost:${port}`,
      });
      expect(code).toBe(78);
      expect(output.match(new RegExp(`port ${port} is in use — is another \`npm start\` running\\? set PORT`, 'g'))).toHaveLength(1);
      noRestartNorStack(output);
    } finally {
      await close(taken);
    }
  }, 30_000);

  it('AUTH_PORT in use, or equal to PORT: one line, exit code 78', async () => {
    const taken = await occupy('127.0.0.1');
    try {
      const port = await freePort();
      const authPort = portOf(taken);
      const busy = await run('start.js', { PORT: String(port), AUTH_PORT: String(authPort), PUBLIC_URL: `http://localhost:${port}` });
      expect(busy.code).toBe(78);
      expect(busy.output).toMatch(new RegExp(`port ${authPort} is in use — is another \`npm start\` running\\? set AUTH_PORT`));
      noRestartNorStack(busy.output);
    } finally {
      await close(taken);
    }
    const port = await freePort();
    const same = await run('start.js', { PORT: String(port), AUTH_PORT: String(port), PUBLIC_URL: `http://localhost:${port}` });
    expect(same.code).toBe(78);
    expect(same.output).toMatch(new RegExp(`AUTH_PORT and PORT are both ${port}`));
    noRestartNorStack(same.output);
  }, 30_000);

  it('a port taken while the apps start is fatal too: exit code 78, one line, Postgres stopped', async () => {
    const port = await freePort();
    let taken: Promise<Server> | undefined;
    const { code, output } = await run(
      'start.js',
      { PORT: String(port), AUTH_PORT: String(await freePort()), PUBLIC_URL: `http://localhost:${port}` },
      {
        ms: 90_000,
        // After the launcher's own check, before the records API listens.
        onOutput: (out) => void (/Embedded PostgreSQL listening/.test(out) && (taken ??= occupy('0.0.0.0', port))),
      },
    );
    await close(await taken!);
    expect(code).toBe(78);
    expect(output).toMatch(new RegExp(`port ${port} is in use — is another \`npm start\` running\\? set PORT`));
    noRestartNorStack(output);
    const pg = postmasterOf(dataDir);
    expect(pg === undefined || !alive(pg)).toBe(true);
  }, 120_000);

  it('an app alone whose port is taken exits with code 78 and one line', async () => {
    const taken = await occupy('0.0.0.0');
    try {
      const port = portOf(taken);
      const { code, output } = await run('records-api/src/main.js', {
        PORT: String(port),
        AUTH_PROXY: 'off',
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        DATABASE_URL: process.env.DATABASE_URL!,
      });
      expect(code).toBe(78);
      expect(output).toMatch(new RegExp(`port ${port} is in use .* set PORT`));
      expect(output).not.toMatch(/^\s+at /m);
    } finally {
      await close(taken);
    }
  }, 60_000);

  it('warns in one line when PUBLIC_URL names another local port than PORT, and that Node < 22 is past its end of life', async () => {
    const port = await freePort();
    const other = await freePort();
    const { code, output } = await run(
      'start.js',
      { PORT: String(port), AUTH_PORT: String(await freePort()), PUBLIC_URL: `http://localhost:${other}` },
      { ms: 90_000, onOutput: (out, child) => /Serving on/.test(out) && child.kill('SIGTERM') },
    );
    expect(code).toBe(0);
    expect(
      output.match(new RegExp(`PUBLIC_URL http://localhost:${other} names port ${other} but PORT is ${port}[^\n]*OAuth[^\n]*\n`, 'g')),
    ).toHaveLength(1);
    const eol = output.match(/Node\.js \d+ is past its end of life[^\n]*Node\.js 22 and 24 are supported/g);
    if (Number(process.versions.node.split('.')[0]) < 22) expect(eol).toHaveLength(1);
    else expect(eol).toBeNull();
  }, 120_000);
});
