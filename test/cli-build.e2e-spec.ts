import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './processes.js';

/**
 * `npm run cli` runs the built code and builds first only when a source changed since
 * (README "Operator CLI"), in a copy of the checkout so that its builds leave this one's
 * dist/ alone. Every Node process of a command records its script (NODE_OPTIONS --import),
 * so the test sees whether the TypeScript compiler ran.
 */
describe('npm run cli without a rebuild', () => {
  let root: string;
  let calls = 0;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'wrs-cli-build-'));
    for (const entry of ['apps', 'libs', 'bench', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
      cpSync(join(ROOT, entry), join(root, entry), { recursive: true });
    }
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
    writeFileSync(
      join(root, 'record-process.mjs'),
      "import { appendFileSync } from 'node:fs';\nappendFileSync(process.env.PROCESS_LOG, JSON.stringify(process.argv.slice(1, 2)) + '\\n');\n",
    );
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** `npm run -s cli -- …` in the copy: its output, and whether tsc ran. */
  function npmCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string; compiled: boolean }> {
    const log = join(root, `processes-${++calls}.log`);
    writeFileSync(log, '');
    // The npm that runs this suite (`npm test` sets npm_execpath), else the one on PATH.
    const npm = process.env.npm_execpath;
    return new Promise((resolve) => {
      execFile(
        npm ? process.execPath : 'npm',
        [...(npm ? [npm] : []), 'run', '-s', 'cli', '--', ...args],
        {
          cwd: root,
          env: {
            ...process.env,
            NODE_OPTIONS: `--import=${join(root, 'record-process.mjs')}`,
            PROCESS_LOG: log,
            npm_config_update_notifier: 'false',
          },
          timeout: 240_000,
        },
        (err, stdout, stderr) => {
          const scripts = readFileSync(log, 'utf8');
          resolve({ code: err ? Number(err.code) || -1 : 0, stdout, stderr, compiled: /[\\/]tsc"/.test(scripts) });
        },
      );
    });
  }

  it('builds when there is no build, then runs from it until a source changes', async () => {
    const first = await npmCli(['--help']);
    expect({ code: first.code, compiled: first.compiled }).toEqual({ code: 0, compiled: true });
    expect(first.stdout).toContain('workspace:create');

    const second = await npmCli(['--help']);
    expect({ code: second.code, compiled: second.compiled, stderr: second.stderr }).toEqual({ code: 0, compiled: false, stderr: '' });
    expect(second.stdout).toBe(first.stdout);

    // An edited source (git writes the files a checkout or pull changes): built again, and
    // with --json the build's output stays off stdout.
    const now = new Date();
    utimesSync(join(root, 'libs/identity/src/accounts.ts'), now, now);
    const edited = await npmCli(['workspace:list', '--json']);
    expect({ code: edited.code, compiled: edited.compiled }).toEqual({ code: 0, compiled: true });
    expect(edited.stderr).toMatch(/building first/);
    expect(Object.keys(JSON.parse(edited.stdout))).toEqual(['workspaces']);
    expect(edited.stdout.trim().split('\n')).toHaveLength(1);
  }, 600_000);

  it('counts an added file as a change, and does not run the CLI when the build fails', async () => {
    // An added file moves its directory's time; this one does not compile.
    writeFileSync(join(root, 'libs/identity/src/added.ts'), 'export const added: number = "not a number";\n');
    const broken = await npmCli(['workspace:list', '--json']);
    expect({ code: broken.code, compiled: broken.compiled }).toEqual({ code: 1, compiled: true });
    expect(broken.stderr).toMatch(/error TS2322/);
    expect(JSON.parse(broken.stdout)).toEqual({ error: { code: 'INTERNAL_ERROR', message: expect.stringMatching(/^the build failed/) } });
    // Still stale: the next command builds again rather than run what the failed build left.
    writeFileSync(join(root, 'libs/identity/src/added.ts'), 'export const added = 2;\n');
    const fixed = await npmCli(['--help']);
    expect({ code: fixed.code, compiled: fixed.compiled }).toEqual({ code: 0, compiled: true });
    expect((await npmCli(['--help'])).compiled).toBe(false);
  }, 600_000);

  it('builds once for commands started together', async () => {
    const now = new Date();
    utimesSync(join(root, 'libs/identity/src/accounts.ts'), now, now);
    const together = await Promise.all([npmCli(['--help']), npmCli(['workspace:list', '--json']), npmCli(['--help'])]);
    expect(together.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(together.filter((r) => r.compiled)).toHaveLength(1);
    expect(Object.keys(JSON.parse(together[1].stdout))).toEqual(['workspaces']);
  }, 600_000);

  it('runs the built code as it is where there are no sources (the Docker image)', async () => {
    for (const dir of ['apps', 'libs', 'bench']) rmSync(join(root, dir), { recursive: true });
    rmSync(join(root, 'dist/.cli-build-stamp'));
    const image = await npmCli(['--help']);
    expect({ code: image.code, compiled: image.compiled, stderr: image.stderr }).toEqual({ code: 0, compiled: false, stderr: '' });
    expect(image.stdout).toContain('workspace:create');
  });
});
