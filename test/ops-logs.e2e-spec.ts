import { execFile, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '#database/data-source.js';
import { newWorkspace } from './factories.js';
import { ROOT, spawnApp, stopAndRemoveCluster, waitUntil, type AppProcess } from './processes.js';
import { freePort } from './public-origin.js';

/**
 * README.md, Operations logs: LOG_FORMAT=json prints one JSON object per line and one line per request,
 * and no line holds a secret, a token, a password, an Authorization or Cookie header.
 */
describe('JSON logs', () => {
  let api: AppProcess;
  let auth: AppProcess;
  let key: string;
  let workspaceId: string;

  beforeAll(async () => {
    const ds = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 2)).initialize();
    const ws = await newWorkspace(ds, 'logs');
    await ds.destroy();
    key = ws.keys.Admin;
    workspaceId = ws.id;
    const env = { DATABASE_URL: process.env.DATABASE_URL!, LOG_FORMAT: 'json', LOG_LEVEL: 'log' };
    [api, auth] = await Promise.all([spawnApp('records-api', env), spawnApp('auth-server', env)]);
  }, 60_000);
  afterAll(() => {
    api?.child.kill('SIGKILL');
    auth?.child.kill('SIGKILL');
  });

  it('writes one line per request with who called, and never a credential, password, query or cookie', async () => {
    const secretFilter = 'name[eq]:"secret-customer-name"';
    const cookie = 'session=cookie-value-that-must-not-leak';
    const list = await fetch(`${api.url}/rest/companies?limit=1&filter=${encodeURIComponent(secretFilter)}`, {
      headers: { Authorization: `Bearer ${key}`, Cookie: cookie, 'X-Request-Id': 'log-test-1' },
    });
    expect(list.status).toBe(200);
    const made = 'wrs_made-up-token-that-must-not-leak';
    expect(
      (await fetch(`${api.url}/rest/companies`, { headers: { Authorization: `Bearer ${made}`, 'X-Request-Id': 'log-test-2' } })).status,
    ).toBe(401);
    const password = 'password-that-must-not-leak';
    await fetch(`${auth.url}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
      body: new URLSearchParams({ email: 'nobody@example.com', password }).toString(),
      redirect: 'manual',
    });

    api.child.kill('SIGTERM');
    auth.child.kill('SIGTERM');
    await Promise.all([api.exited, auth.exited]);
    const output = api.output() + auth.output();
    const lines = output.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');

    const ok = requests.find((l) => l.requestId === 'log-test-1');
    expect(ok).toMatchObject({ method: 'GET', path: '/rest/companies', status: 200, workspaceId, credentialKind: 'apiKey' });
    expect(ok.credentialId).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof ok.durationMs).toBe('number');
    expect(requests.find((l) => l.requestId === 'log-test-2')).toMatchObject({ path: '/rest/companies', status: 401 });
    expect(requests.find((l) => l.path === '/login')).toMatchObject({ method: 'POST' });

    for (const leak of [key, key.slice(4, 20), made, password, 'cookie-value-that-must-not-leak', 'secret-customer-name', 'Bearer ']) {
      expect({ leak, found: output.includes(leak) }).toEqual({ leak, found: false });
    }
    expect(output).not.toMatch(/authorization|"cookie"/i);
  }, 60_000);
});

/** The start of an ANSI colour (SGR) sequence. */
const ANSI = '\u001b[';

/**
 * Text logs (README.md, Operations): Nest's colours on a terminal only, so a log file or a
 * pipe holds plain lines. FORCE_COLOR and NO_COLOR decide, as for Node itself.
 */
describe('Text logs', () => {
  /** One log line written by the apps' logger in a process of its own; `tty`: under a terminal (`script`). */
  function logLine(env: Record<string, string>, tty = false): Promise<string> {
    const program = `
      const { loadConfig } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/libs/config/src/config.js')).href)});
      const { createLogger } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/libs/ops/src/logging.js')).href)});
      createLogger(loadConfig()).log('a line', 'test');`;
    const node = [process.execPath, '--no-warnings', '--input-type=module', '-e', program];
    const quoted = node.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const [file, args] = tty ? ['script', ['-qec', quoted, '/dev/null']] : [node[0], node.slice(1)];
    // A colour terminal, whatever runs the suite: Node.js counts colours by TERM, and by CI (a CI it does not know has 2).
    const environment: Record<string, string | undefined> = {
      ...process.env,
      TERM: 'xterm-256color',
      LOG_FORMAT: 'text',
      LOG_LEVEL: 'log',
    };
    delete environment.CI;
    return new Promise((resolve, reject) =>
      execFile(file, args as string[], { cwd: ROOT, env: { ...environment, ...env } }, (err, stdout, stderr) =>
        err ? reject(err) : resolve(stdout + stderr),
      ),
    );
  }
  // Jest's workers run with FORCE_COLOR set; each case sets what it tests.
  const saved = { NO_COLOR: process.env.NO_COLOR, FORCE_COLOR: process.env.FORCE_COLOR };
  beforeAll(() => {
    delete process.env.NO_COLOR;
    delete process.env.FORCE_COLOR;
  });
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) if (value !== undefined) process.env[name] = value;
  });

  it('has no colour codes when written to a pipe or a file', async () => {
    const auth = await spawnApp('auth-server', { DATABASE_URL: process.env.DATABASE_URL!, LOG_LEVEL: 'log' });
    auth.child.kill('SIGTERM');
    await auth.exited;
    expect(auth.output()).toMatch(/\[auth-server\] Auth server on /);
    expect(auth.output()).not.toContain(ANSI);
    expect(await logLine({})).toMatch(/\[test\] a line/);
    expect(await logLine({})).not.toContain(ANSI);
  }, 60_000);

  it('keeps them on a terminal, unless NO_COLOR; FORCE_COLOR forces them', async () => {
    expect(await logLine({}, true)).toContain(ANSI);
    expect(await logLine({ NO_COLOR: '1' }, true)).not.toContain(ANSI);
    expect(await logLine({ FORCE_COLOR: '1' })).toContain(ANSI);
    expect(await logLine({ FORCE_COLOR: '0' }, true)).not.toContain(ANSI);
  });
});

/**
 * A pure JSON stream (README.md, Operations): with LOG_FORMAT=json every line the launcher
 * and its apps write on stdout is a JSON object, the first start's demo banner included.
 */
describe('npm start with LOG_FORMAT=json', () => {
  const dataDir = join(ROOT, '.data', `test-json-start-${process.pid}`);
  beforeAll(() => rmSync(dataDir, { recursive: true, force: true }));
  afterAll(async () => {
    await stopAndRemoveCluster(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('writes only JSON lines on stdout, the demo banner as one object with the credentials', async () => {
    const port = await freePort();
    const launcher = spawn(process.execPath, [join(ROOT, 'dist/apps/start.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        DATABASE_URL: '',
        PORT: String(port),
        AUTH_PORT: String(await freePort()),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'log',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    launcher.stdout!.on('data', (d) => (stdout += d));
    launcher.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise((resolve) => launcher.once('exit', resolve));
    try {
      await waitUntil(
        () => /wrs_/.test(stdout),
        120_000,
        () => `the demo banner:\n${stdout}${stderr}`,
      );
    } finally {
      launcher.kill('SIGTERM');
      await exited;
    }
    const lines = stdout.split('\n').filter(Boolean);
    for (const line of lines) expect({ line, json: isJson(line) }).toEqual({ line, json: true });
    const objects = lines.map((l) => JSON.parse(l));
    expect(objects.find((o) => /^Serving on /.test(o.msg))).toMatchObject({ context: 'start' });
    const banner = objects.find((o) => o.banner === 'demo');
    expect(banner).toMatchObject({ context: 'start', level: 30 });
    expect(banner.msg).toMatch(/^Demo workspace "Demo" created/);
    expect(banner.msg).toMatch(/API key: +wrs_[A-Za-z0-9_-]{20,}/);
    expect(banner.msg).toMatch(/Password: +\S{12,}/);
  }, 180_000);
});

function isJson(line: string): boolean {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
}
