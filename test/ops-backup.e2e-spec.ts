import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import pg from 'pg';
import { TarWriter } from '#database/tar.js';
import { clusterDirFor, postgresIds, relocatedClusterDir } from '#database/postgres-as-root.js';
import { freePort } from './public-origin.js';
import { launchIn, removeCluster, ROOT, runToExit, waitUntil } from './processes.js';

/**
 * docs/operations.md "Backups": `npm run cli -- backup` while the service runs and writes,
 * `restore` into an empty DATA_DIR of another checkout, and the data comes back exactly: every
 * record up to the last one the backup holds, with no gap. As root the checkouts sit under a
 * mode-700 directory (like /root/app), so the clusters live in the root data home, outside
 * them (README "Backups and starting over"); the vault key is never in the archive and
 * restore refuses a key that does not open the data.
 */
const asRoot = process.getuid?.() === 0;
const home = join(ROOT, '.data', `backup-${process.pid}`);
const quiet = /\bWARN(ING)?\b/;
const errorLines = (output: string) =>
  output
    .trim()
    .split('\n')
    .filter((line) => !quiet.test(line));

/** A checkout of the build (hard links: a copy of node_modules would take most of a minute). */
function checkout(label: string): string {
  const app = join(home, label);
  mkdirSync(app, { recursive: true });
  execFileSync('cp', ['-al', ...['package.json', 'dist', 'node_modules', 'docs'].map((e) => join(ROOT, e)), app]);
  return app;
}

/** The environment of a checkout of its own: its `.data`, its key file, no suite database. */
function ownEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { LOG_LEVEL: 'log', DATABASE_URL: '', DATA_DIR: '', WRS_ROOT: '', VAULT_MASTER_KEY: '', ...extra };
}

const cli = (app: string, args: string[], env: Record<string, string> = {}) =>
  runToExit('cli/src/main.js', ownEnv(env), { cwd: app, args, ms: 120_000 });

interface Started {
  child: ChildProcess;
  port: number;
  output: () => string;
  stop(): Promise<number | null>;
}
const running = new Set<ChildProcess>();

async function npmStart(app: string): Promise<Started> {
  const port = await freePort();
  const env = {
    ...process.env,
    ...ownEnv(),
    PORT: String(port),
    AUTH_PORT: String(await freePort()),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
  };
  const { child, output, exited } = await launchIn(app, env);
  running.add(child);
  return {
    child,
    port,
    output,
    stop: async () => {
      child.kill('SIGTERM');
      const code = await exited;
      running.delete(child);
      return code;
    },
  };
}

/** Nothing of a database in `dataDir`: no pg.json, no cluster wherever it would live. */
function holdsNoDatabase(dataDir: string): boolean {
  return !existsSync(join(dataDir, 'pg.json')) && !existsSync(join(clusterDirFor(dataDir), 'PG_VERSION'));
}

describe('backup and restore of the embedded database', () => {
  beforeAll(() => {
    rmSync(home, { recursive: true, force: true });
    // As root: a directory user postgres cannot enter, as /root is.
    mkdirSync(home, { recursive: true, mode: 0o700 });
    chmodSync(home, 0o700);
  });
  afterAll(async () => {
    for (const child of running) child.kill('SIGKILL');
    for (const label of ['a', 'b', 'c', 'solo', 'solo-restored', 'hostile']) removeCluster(join(home, label, '.data'));
    rmSync(home, { recursive: true, force: true });
  }, 30_000);

  it('a backup taken while the service writes restores, in another checkout, every record up to its last, with no gap; the key is not in it and is checked', async () => {
    const a = checkout('a');
    const first = await npmStart(a);
    if (asRoot) expect(first.output()).toMatch(/User postgres cannot enter/);
    const key = /API key: +(wrs_\S+)/.exec(first.output())![1];
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`http://127.0.0.1:${first.port}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...init.headers },
      });

    // One writer, in order: counter-n is acknowledged only after counter-(n-1).
    let written = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        const res = await api('/rest/companies', { method: 'POST', body: JSON.stringify({ name: `counter-${written + 1}` }) });
        if (res.status !== 201) throw new Error(`write ${written + 1}: ${res.status} ${await res.text()}`);
        written++;
      }
    })();
    await waitUntil(
      () => written >= 20,
      30_000,
      () => 'the first writes',
    );
    const atStart = written;
    const archive = join(home, 'records.tar.gz');
    const backup = await cli(a, ['backup', '--out', archive]);
    const atEnd = written;
    writing = false;
    await writer;
    expect(backup.code).toBe(0);
    expect(backup.output).toMatch(
      /^Backed up the embedded PostgreSQL to .*records\.tar\.gz: [\d.]+ MB, \d+ files, WAL \S+ to \S+, in [\d.]+ s\.$/m,
    );
    expect(await first.stop()).toBe(0);

    // One archive, mode 600, that a plain tar reads, without the vault key in any form.
    expect(statSync(archive).mode & 0o777).toBe(0o600);
    const vaultKey = readFileSync(join(a, '.data', 'vault-master.key'), 'utf8').trim();
    const tarBytes = gunzipSync(readFileSync(archive));
    for (const form of [vaultKey, Buffer.from(vaultKey, 'base64').toString('hex')]) expect(tarBytes.includes(form)).toBe(false);
    expect(tarBytes.includes(Buffer.from(vaultKey, 'base64'))).toBe(false);
    const listing = execFileSync('tar', ['tzf', archive]).toString().split('\n');
    expect(listing).toEqual(expect.arrayContaining(['workspace-records-backup.json', 'pg/PG_VERSION', 'pg/backup_label']));
    expect(listing.filter((name) => /vault-master|pg\.json|postmaster\.pid/.test(name))).toEqual([]);

    if (asRoot) {
      // The issue's restore: a copy of .data alone in a new checkout. Its cluster is elsewhere: refused, named, nothing created.
      const c = checkout('c');
      execFileSync('cp', ['-a', join(a, '.data'), join(c, '.data')]);
      const port = await freePort();
      const copied = await runToExit('start.js', ownEnv({ PORT: String(port), AUTH_PORT: String(await freePort()) }), {
        cwd: c,
        ms: 60_000,
        onOutput: (out, child) => /Serving on/.test(out) && child.kill('SIGTERM'),
      });
      expect(copied.code).toBe(78);
      expect(errorLines(copied.output).filter((l) => !/User postgres cannot enter/.test(l))).toEqual([
        expect.stringMatching(
          new RegExp(
            `pg\\.json belongs to a database, but there is no PostgreSQL cluster at .*; the one it belongs to is at ${relocatedClusterDir(join(a, '.data'))}`,
          ),
        ),
      ]);
      expect(copied.output).not.toMatch(/Demo workspace/);
      expect(existsSync(join(relocatedClusterDir(join(c, '.data')), 'PG_VERSION'))).toBe(false);
    }

    const b = checkout('b');
    const dataB = join(b, '.data');
    const noKey = await cli(b, ['restore', '--from', archive]);
    expect(noKey.code).toBe(1);
    expect(errorLines(noKey.output)).toEqual([
      expect.stringMatching(/^error: no vault key to run with \(the backup holds none, by design\)/),
    ]);
    const wrongKey = await cli(b, ['restore', '--from', archive], { VAULT_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') });
    expect(wrongKey.code).toBe(1);
    expect(errorLines(wrongKey.output)).toEqual([expect.stringMatching(/^error: VAULT_MASTER_KEY does not open this backup's data/)]);
    expect(holdsNoDatabase(dataB)).toBe(true);

    copyFileSync(join(a, '.data', 'vault-master.key'), join(dataB, 'vault-master.key'));
    const restored = await cli(b, ['restore', '--from', archive, '--json']);
    expect(restored.code).toBe(0);
    const result = JSON.parse(restored.output.trim().split('\n').at(-1)!);
    expect(result).toEqual(expect.objectContaining({ dataDir: dataB, workspaces: 1 }));

    const second = await npmStart(b);
    try {
      expect(second.output()).not.toMatch(/API key:|Demo workspace/); // the restored data, not a new Demo
      const { port, password } = JSON.parse(readFileSync(join(dataB, 'pg.json'), 'utf8'));
      const db = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'records' });
      await db.connect();
      let counters: number[];
      try {
        const [{ id }] = (await db.query(`SELECT id FROM workspaces WHERE name = 'Demo'`)).rows;
        const { rows } = await db.query(`SELECT name FROM companies WHERE workspace_id = $1 AND name LIKE 'counter-%'`, [id]);
        counters = rows.map((r) => Number(r.name.slice('counter-'.length))).sort((x, y) => x - y);
      } finally {
        await db.end();
      }
      const last = counters.at(-1)!;
      // Every record up to the last one restored, none missing: the backup is one consistent moment.
      expect(counters).toEqual(Array.from({ length: last }, (_, i) => i + 1));
      // That moment lies inside the backup, while the writes went on.
      expect(last).toBeGreaterThan(atStart);
      expect(last).toBeLessThanOrEqual(atEnd);
      // The old key works on the restored service: the same credentials, the same records.
      const res = await fetch(`http://127.0.0.1:${second.port}/rest/companies?limit=1`, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).totalCount).toBe(20 + last);

      // A second restore into the now used DATA_DIR is refused and changes nothing.
      const again = await cli(b, ['restore', '--from', archive]);
      expect(again.code).toBe(1);
      expect(errorLines(again.output)).toEqual([expect.stringMatching(/already holds a database .*restore only into an empty DATA_DIR/)]);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 300_000);

  (asRoot ? it : it.skip)(
    'as a user other than root: backup (plain tar, the CLI starting Postgres itself) and restore',
    async () => {
      const ids = postgresIds();
      const solo = checkout('solo');
      const soloRestored = checkout('solo-restored');
      for (const dir of [solo, soloRestored]) {
        chownSync(dir, ids.uid, ids.gid);
        chmodSync(dir, 0o700);
      }
      // The checkouts' parent must let that user in.
      chmodSync(home, 0o711);
      const asUser = async (app: string, args: string[], env: Record<string, string> = {}) => {
        const child = spawn(process.execPath, [join(app, 'dist/apps/cli/src/main.js'), ...args], {
          cwd: app,
          uid: ids.uid,
          gid: ids.gid,
          // The suite's SQL recording and test certificate are root's files.
          env: { ...process.env, ...ownEnv(env), SQL_RECORD_FILE: '', NODE_EXTRA_CA_CERTS: '', HOME: app },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout!.on('data', (d) => (out += d));
        child.stderr!.on('data', (d) => (out += d));
        const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
        return { code, output: out };
      };
      try {
        const made = await asUser(solo, ['workspace:create', '--name', 'Solo']);
        expect(made).toEqual({ code: 0, output: expect.stringContaining('Created workspace "Solo"') });
        expect(existsSync(join(solo, '.data', 'pg', 'PG_VERSION'))).toBe(true);
        const archive = join(solo, 'solo.tar');
        const backup = await asUser(solo, ['backup', '--out', archive]);
        expect(backup).toEqual({ code: 0, output: expect.stringMatching(/^Backed up the embedded PostgreSQL/) });
        // Plain tar: the ustar magic at offset 257 of the first header.
        expect(readFileSync(archive).subarray(257, 262).toString()).toBe('ustar');
        mkdirSync(join(soloRestored, '.data'));
        chownSync(join(soloRestored, '.data'), ids.uid, ids.gid);
        const keyFile = join(soloRestored, '.data', 'vault-master.key');
        copyFileSync(join(solo, '.data', 'vault-master.key'), keyFile);
        chownSync(keyFile, ids.uid, ids.gid);
        const restored = await asUser(soloRestored, ['restore', '--from', archive]);
        expect(restored).toEqual({ code: 0, output: expect.stringMatching(/Restored .* 1 workspace\(s\)/) });
        const roles = await asUser(soloRestored, ['role:list', '--workspace', 'Solo', '--json']);
        expect(roles.code).toBe(0);
        expect(
          JSON.parse(roles.output.trim().split('\n').at(-1)!)
            .roles.map((r: { name: string }) => r.name)
            .sort(),
        ).toEqual(['Admin', 'Member', 'Viewer']);
      } finally {
        chmodSync(home, 0o700);
      }
    },
    180_000,
  );

  it('restore refuses a hostile or damaged archive with one line and leaves DATA_DIR empty', async () => {
    const target = join(home, 'hostile');
    const dataDir = join(target, '.data');
    mkdirSync(dataDir, { recursive: true });
    const manifest = JSON.stringify({ format: 1, postgresMajor: 18, systemIdentifier: '1', password: 'x', createdAt: 'now' });
    async function archive(name: string, entries: [string, string][]): Promise<string> {
      const file = join(home, name);
      const out = createWriteStream(file);
      const tar = new TarWriter(out);
      for (const [path, content] of entries) await tar.file(path, Buffer.from(content));
      await tar.end();
      await once(out, 'close');
      return file;
    }
    const restoreFrom = (file: string) =>
      runToExit('cli/src/main.js', ownEnv({ DATA_DIR: dataDir, VAULT_MASTER_KEY: Buffer.alloc(32, 1).toString('base64') }), {
        args: ['restore', '--from', file],
        ms: 60_000,
      });
    const cases: [string, RegExp][] = [
      [
        await archive('escape.tar', [
          ['workspace-records-backup.json', manifest],
          ['pg/../../escaped', 'x'],
        ]),
        /an entry outside the cluster/,
      ],
      [
        await archive('other.tar', [
          ['workspace-records-backup.json', manifest],
          ['etc/passwd', 'x'],
        ]),
        /an entry outside the cluster/,
      ],
      [await archive('no-manifest.tar', [['pg/PG_VERSION', '18']]), /is not a backup made by npm run cli -- backup/],
      [await archive('no-cluster.tar', [['workspace-records-backup.json', manifest]]), /holds no cluster/],
    ];
    // A symbolic link (made by GNU tar) is refused: extracting files through it could write anywhere.
    const linked = join(home, 'linked');
    mkdirSync(join(linked, 'pg'), { recursive: true });
    writeFileSync(join(linked, 'workspace-records-backup.json'), manifest);
    symlinkSync('/etc', join(linked, 'pg', 'global'));
    execFileSync('tar', ['cf', join(home, 'link.tar'), '--format=ustar', '-C', linked, 'workspace-records-backup.json', 'pg']);
    cases.push([join(home, 'link.tar'), /unsupported archive entry pg\/global \(type 2\)/]);
    const cut = join(home, 'cut.tar');
    writeFileSync(cut, readFileSync(cases[3][0]).subarray(0, 700));
    cases.push([cut, /cut short|ends in the middle/]);
    const garbage = join(home, 'garbage.tar');
    writeFileSync(garbage, Buffer.alloc(4096, 'x'));
    cases.push([garbage, /not a tar archive/]);
    for (const [file, message] of cases) {
      const { code, output } = await restoreFrom(file);
      // The progress line aside, one line: the error.
      const lines = errorLines(output).filter((line) => !line.startsWith('Restoring the backup of'));
      expect({ file, code, lines }).toEqual({ file, code: 1, lines: [expect.stringMatching(message)] });
      expect(holdsNoDatabase(dataDir)).toBe(true);
      const parent = dirname(clusterDirFor(dataDir));
      expect(existsSync(parent) ? readdirSync(parent).filter((n) => n.includes('.restore-')) : []).toEqual([]);
    }
    expect(existsSync(join(home, 'escaped'))).toBe(false);
  }, 120_000);

  it('with DATABASE_URL, backup says what to use instead (tools of that server’s major version) and restore refuses', async () => {
    const env = {};
    const backup = await runToExit('cli/src/main.js', env, { args: ['backup', '--out', join(home, 'x.tar')] });
    expect(backup.code).toBe(1);
    expect(errorLines(backup.output)).toEqual([
      expect.stringMatching(
        /^error: backup copies the embedded PostgreSQL only; with DATABASE_URL back up that server with its own tools of PostgreSQL \d+, the server's major version: pg_basebackup .* or pg_dump --format=custom/,
      ),
    ]);
    expect(existsSync(join(home, 'x.tar'))).toBe(false);
    const restore = await runToExit('cli/src/main.js', env, { args: ['restore', '--from', join(home, 'x.tar')] });
    expect(restore.code).toBe(1);
    expect(errorLines(restore.output)).toEqual([expect.stringMatching(/^error: restore writes the embedded PostgreSQL of DATA_DIR/)]);
  }, 60_000);
});
