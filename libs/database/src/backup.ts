import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip, constants as zlib } from 'node:zlib';
import pg from 'pg';
import { ConfigError } from '#config/config.js';
import { CREDENTIALS_FILE, readCredentials, startEmbeddedPostgres, systemIdentifier, type EmbeddedDatabase } from './embedded-postgres.js';
import { checkValueOpens, MASTER_KEY_FILE, parseMasterKey } from './master-key.js';
import { clusterDirFor, embeddedBinaries, postgresIds } from './postgres-as-root.js';
import { readTar, TarWriter } from './tar.js';

/**
 * `npm run cli -- backup` and `restore` for the embedded PostgreSQL (docs/operations.md
 * "Backups"; docs/decisions/0053-backups-refused-starts-upgrades.md). The embedded binaries
 * have no pg_basebackup or pg_dump, so the backup is PostgreSQL's low-level online backup
 * (PostgreSQL docs, "Making a Base Backup Using the Low Level API"): `pg_backup_start`, a copy
 * of the cluster's files while the service runs on, `pg_backup_stop`, then the WAL from the
 * backup's start to its end, held for the copy by a temporary replication slot. One tar
 * archive (gzip when the name ends in .gz or .tgz): a manifest first, then the cluster under
 * `pg/`. The vault master key is never in it; the manifest carries the database's check value
 * so that `restore` can tell, before it writes anything, whether the key it will run with opens the data.
 */
export const MANIFEST = 'workspace-records-backup.json';
const FORMAT = 1;

interface Manifest {
  format: number;
  createdAt: string;
  postgresVersion: string;
  postgresMajor: number;
  systemIdentifier: string;
  /** The cluster's password for user postgres (it is in the cluster too, hashed): pg.json of the restored DATA_DIR. */
  password: string;
  /** vault_key_check's value when the backup started, absent for a database made before it existed. */
  vaultCheck?: string;
}

export interface BackupResult {
  file: string;
  bytes: number;
  files: number;
  gzip: boolean;
  startLsn: string;
  stopLsn: string;
  walSegments: number;
  seconds: number;
}

export interface RestoreResult {
  from: string;
  dataDir: string;
  clusterDir: string;
  backupCreatedAt: string;
  workspaces: number;
  seconds: number;
}

/**
 * Directories whose contents a base backup leaves out (the server recreates or empties them
 * at start), and files it leaves out, as pg_basebackup does (PostgreSQL docs, "Making a Base
 * Backup Using the Low Level API"). WAL comes separately, from the backup's own range.
 */
const SKIP_CONTENTS = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
]);
const SKIP_AT_TOP = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map', 'backup_manifest', 'backup_label.old']);
const skipFile = (name: string) => name.startsWith('pg_internal.init') || name.endsWith('.tmp');
/** Copied last: PostgreSQL's own base backups send the control file after everything else. */
const CONTROL_FILE = 'global/pg_control';

const isGzipName = (file: string) => /\.(t?gz)$/i.test(file);

/** The embedded database's backup commands refuse DATABASE_URL (see cli "backup"). */
export class BackupError extends ConfigError {}

/** An online backup of the embedded PostgreSQL of `dataDir` into `out` (see the file comment). */
export async function backupEmbedded(options: { dataDir: string; out: string }): Promise<BackupResult> {
  const started = Date.now();
  const credentials = readCredentials(options.dataDir);
  if (!credentials) throw new BackupError(`nothing to back up: ${options.dataDir} holds no embedded database (no ${CREDENTIALS_FILE})`);
  const out = resolve(options.out);
  const db = await startEmbeddedPostgres({ dataDir: options.dataDir, database: 'records' });
  const client = new pg.Client({ connectionString: db.url });
  const partial = `${out}.partial-${process.pid}`;
  try {
    await client.connect();
    // A backup that waits on a lock or a slow disk must not be cancelled (the apps' limit is not set here, but a role default could be).
    await client.query('SET statement_timeout = 0');
    const [{ wal_level: walLevel }] = (await client.query('SHOW wal_level')).rows;
    if (walLevel === 'minimal') throw new BackupError('wal_level is minimal: an online backup needs replica (the default)');
    const tablespaces = await readdir(join(db.clusterDir, 'pg_tblspc'));
    if (tablespaces.length) throw new BackupError(`the cluster has tablespaces (${db.clusterDir}/pg_tblspc), which backup does not copy`);
    const manifest: Manifest = {
      format: FORMAT,
      createdAt: new Date().toISOString(),
      ...(await postgresVersion()),
      systemIdentifier: systemIdentifier(db.clusterDir) ?? '',
      password: credentials.password,
      vaultCheck: await vaultCheck(client),
    };
    // Holds every WAL segment from here on until this session ends: a checkpoint during the copy cannot recycle what the restore replays.
    await client.query('SELECT pg_create_physical_replication_slot($1, true, true)', [
      `wrs_backup_${process.pid}_${randomBytes(3).toString('hex')}`,
    ]);
    const { rows } = await client.query<{ lsn: string }>('SELECT pg_backup_start($1, true) AS lsn', [
      `workspace-records ${manifest.createdAt}`,
    ]);
    const startLsn = rows[0].lsn;

    const gzip = isGzipName(out);
    const file = createWriteStream(partial, { mode: 0o600 });
    const compress = gzip ? createGzip({ level: zlib.Z_BEST_SPEED }) : undefined;
    const head = compress ?? file;
    const written = compress ? pipeline(compress, file) : once(file, 'close');
    const tar = new TarWriter(head);
    let files = 0;
    try {
      await tar.file(MANIFEST, Buffer.from(JSON.stringify(manifest)));
      files += await copyTree(tar, db.clusterDir, '');
      if ((await tar.fileFrom(`pg/${CONTROL_FILE}`, join(db.clusterDir, CONTROL_FILE))) === undefined) throw new Error('no control file');
      const stop = (
        await client.query<{ lsn: string; labelfile: string; spcmapfile: string }>(
          'SELECT lsn, labelfile, spcmapfile FROM pg_backup_stop(wait_for_archive => false)',
        )
      ).rows[0];
      await tar.file('pg/backup_label', Buffer.from(stop.labelfile));
      const walFrom = /START WAL LOCATION: .* \(file ([0-9A-F]{24})\)/.exec(stop.labelfile)?.[1];
      const [{ name: walTo }] = (await client.query<{ name: string }>('SELECT pg_walfile_name($1) AS name', [stop.lsn])).rows;
      if (!walFrom) throw new Error('backup_label names no start WAL file');
      const segments = await walSegments(client, join(db.clusterDir, 'pg_wal'), walFrom, walTo);
      for (const name of segments) {
        if ((await tar.fileFrom(`pg/pg_wal/${name}`, join(db.clusterDir, 'pg_wal', name))) === undefined) {
          throw new Error(`WAL file ${name} went missing during the backup`);
        }
      }
      await tar.end();
      await written;
      await rename(partial, out);
      return {
        file: out,
        bytes: (await stat(out)).size,
        files: files + 2 + segments.length,
        gzip,
        startLsn,
        stopLsn: stop.lsn,
        walSegments: segments.filter((s) => !s.endsWith('.history')).length,
        seconds: (Date.now() - started) / 1000,
      };
    } catch (err) {
      head.destroy();
      await written.catch(() => undefined);
      throw err;
    }
  } finally {
    await rm(partial, { force: true });
    // Ends the backup if it is still running, and drops the temporary slot.
    await client.end().catch(() => undefined);
    if (db.owned) await db.stop();
  }
}

async function postgresVersion(): Promise<{ postgresVersion: string; postgresMajor: number }> {
  const { version, major } = await embeddedBinaries();
  return { postgresVersion: version, postgresMajor: major };
}

async function vaultCheck(client: pg.Client): Promise<string | undefined> {
  const found = await client.query(`SELECT to_regclass('vault_key_check') IS NOT NULL AS present`);
  if (!found.rows[0].present) return undefined;
  const { rows } = await client.query<{ check_value: string }>('SELECT check_value FROM vault_key_check WHERE id = 1');
  return rows[0]?.check_value;
}

/** The cluster's files under `pg/` (see SKIP_CONTENTS); returns how many files were written. */
async function copyTree(tar: TarWriter, clusterDir: string, relative: string): Promise<number> {
  const dir = join(clusterDir, relative);
  await tar.directory(relative ? `pg/${relative}` : 'pg');
  let entries: string[];
  try {
    entries = (await readdir(dir)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0; // removed by the server meanwhile
    throw err;
  }
  let files = 0;
  for (const name of entries) {
    const path = relative ? `${relative}/${name}` : name;
    if ((!relative && SKIP_AT_TOP.has(name)) || path === CONTROL_FILE || skipFile(name)) continue;
    let info;
    try {
      info = await lstat(join(clusterDir, path));
    } catch {
      continue; // gone meanwhile
    }
    if (info.isDirectory()) {
      if (name.startsWith('pgsql_tmp')) continue;
      if (!relative && SKIP_CONTENTS.has(name)) {
        await tar.directory(`pg/${path}`);
        // pg_wal's own subdirectories (archive_status, summaries) must exist, empty.
        if (name === 'pg_wal') for (const sub of await subdirectories(join(clusterDir, path))) await tar.directory(`pg/${path}/${sub}`);
        continue;
      }
      files += await copyTree(tar, clusterDir, path);
    } else if (info.isFile()) {
      if ((await tar.fileFrom(`pg/${path}`, join(clusterDir, path))) !== undefined) files++;
    } else {
      throw new BackupError(`${join(clusterDir, path)} is neither a file nor a directory; backup copies only those`);
    }
  }
  return files;
}

async function subdirectories(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
}

/**
 * The WAL segment files from `from` to `to` (24 hex digits: timeline, then the segment
 * number in two halves), each of which must be in `pg_wal`, and the timeline history files.
 */
async function walSegments(client: pg.Client, walDir: string, from: string, to: string): Promise<string[]> {
  const [{ setting }] = (await client.query<{ setting: string }>(`SELECT setting FROM pg_settings WHERE name = 'wal_segment_size'`)).rows;
  const perId = 0x1_0000_0000 / Number(setting);
  const number = (name: string) => Number.parseInt(name.slice(8, 16), 16) * perId + Number.parseInt(name.slice(16, 24), 16);
  const timeline = from.slice(0, 8);
  const names: string[] = [];
  for (let n = number(from); n <= number(to); n++) {
    const id = Math.floor(n / perId);
    const seg = n % perId;
    names.push(timeline + id.toString(16).toUpperCase().padStart(8, '0') + seg.toString(16).toUpperCase().padStart(8, '0'));
  }
  const present = new Set(await readdir(walDir));
  const missing = names.filter((n) => !present.has(n));
  if (missing.length) throw new Error(`WAL needed by the backup is gone from ${walDir}: ${missing.join(', ')}`);
  return [...[...present].filter((n) => n.endsWith('.history')).sort(), ...names];
}

/**
 * The vault key a restored service will run with: VAULT_MASTER_KEY, else the key file already
 * in DATA_DIR (put there by the operator). Never generated here: a new key could not open the data.
 */
function restoreKey(dataDir: string): { key: Buffer; source: string } {
  const raw = process.env.VAULT_MASTER_KEY;
  if (raw) return { key: parseMasterKey(raw), source: 'VAULT_MASTER_KEY' };
  const file = join(dataDir, MASTER_KEY_FILE);
  if (existsSync(file)) return { key: parseMasterKey(readFileSync(file, 'utf8'), file), source: file };
  throw new BackupError(
    `no vault key to run with (the backup holds none, by design): set VAULT_MASTER_KEY to the key of the service that made the backup, or put its key file at ${file} (mode 600)`,
  );
}

const wrongKey = (source: string) =>
  new BackupError(`${source} does not open this backup's data: it is not the vault key of the service that made it; give that key`);

/**
 * Restores a backup made by backupEmbedded into `dataDir`, which must hold no database, then
 * starts the restored cluster once (PostgreSQL replays the backup's WAL), checks that the vault
 * key opens its data and stops it. Anything that fails leaves `dataDir` as it was.
 */
export async function restoreEmbedded(options: { dataDir: string; from: string; log?: (message: string) => void }): Promise<RestoreResult> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const dataDir = resolve(options.dataDir);
  const from = resolve(options.from);
  const root = process.getuid?.() === 0;
  const ids = root ? postgresIds() : undefined;
  await mkdir(dataDir, { recursive: true });
  // As root the server runs as user postgres, which must be able to enter DATA_DIR (as at start).
  if (root) await chmod(dataDir, 0o755);
  const clusterDir = clusterDirFor(dataDir, ids);
  const relocated = resolve(dirname(clusterDir)) !== dataDir;
  if (existsSync(join(dataDir, CREDENTIALS_FILE)) || (!relocated && existsSync(clusterDir))) {
    throw new BackupError(
      `${dataDir} already holds a database (${CREDENTIALS_FILE} or pg/): restore only into an empty DATA_DIR; move that one aside first`,
    );
  }
  const { key, source } = restoreKey(dataDir);
  const binaries = await embeddedBinaries();
  if (!existsSync(from)) throw new BackupError(`${from} does not exist`);

  const building = `${clusterDir}.restore-${process.pid}`;
  let db: EmbeddedDatabase | undefined;
  let placed = false;
  try {
    await rm(building, { recursive: true, force: true });
    await mkdir(dirname(building), { recursive: true });
    const own = async (path: string) => ids && (await chown(path, ids.uid, ids.gid));
    let manifest: Manifest | undefined;
    for await (const { entry, content } of readTar(await archiveStream(from))) {
      if (!manifest) {
        if (entry.name !== MANIFEST) throw new BackupError(`${from} is not a backup made by npm run cli -- backup (no ${MANIFEST} first)`);
        manifest = JSON.parse((await collect(content)).toString('utf8')) as Manifest;
        if (manifest.format !== FORMAT)
          throw new BackupError(`${from} is a backup of format ${manifest.format}; this version reads ${FORMAT}`);
        if (manifest.postgresMajor !== binaries.major) {
          throw new BackupError(
            `${from} is a backup of PostgreSQL ${manifest.postgresMajor} and this checkout's embedded PostgreSQL is ${binaries.major}: restore it with the version of the service that made it`,
          );
        }
        // Before anything is written: the key must open the data it is about to run with.
        if (manifest.vaultCheck && !checkValueOpens(key, manifest.vaultCheck)) throw wrongKey(source);
        log(`Restoring the backup of ${manifest.createdAt} into ${clusterDir}`);
        continue;
      }
      const path = clusterPath(entry.name, building);
      if (entry.type === 'directory') {
        await mkdir(path, { recursive: true, mode: 0o700 });
        await own(path);
      } else {
        await writeFile(path, content);
        await own(path);
      }
    }
    if (!manifest) throw new BackupError(`${from} is empty`);
    if (!existsSync(join(building, 'PG_VERSION'))) throw new BackupError(`${from} holds no cluster`);
    await chmod(building, 0o700);
    await own(building);
    if (systemIdentifier(building) !== manifest.systemIdentifier)
      throw new BackupError(`${from} is damaged: its control file is not the backed-up cluster's`);
    // A cluster an earlier DATA_DIR at this path left under the root data home goes, as at start.
    if (relocated && existsSync(clusterDir)) {
      log(`Removing the cluster left at ${clusterDir} by an earlier DATA_DIR at this path`);
      await rm(clusterDir, { recursive: true, force: true });
    }
    await rename(building, clusterDir);
    placed = true;
    const credentials = { port: 0, password: manifest.password, systemIdentifier: manifest.systemIdentifier };
    const handle = await open(join(dataDir, CREDENTIALS_FILE), 'wx', 0o600);
    await handle.writeFile(JSON.stringify(credentials));
    await handle.close();

    // The first start replays the backup's WAL up to its end; then the data can be checked.
    db = await startEmbeddedPostgres({ dataDir, database: 'records', log });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const check = await vaultCheck(client);
      if (check && !checkValueOpens(key, check)) throw wrongKey(source);
      const workspaces = (await client.query(`SELECT to_regclass('workspaces') IS NOT NULL AS present`)).rows[0].present
        ? Number((await client.query('SELECT count(*) AS n FROM workspaces')).rows[0].n)
        : 0;
      return { from, dataDir, clusterDir, backupCreatedAt: manifest.createdAt, workspaces, seconds: (Date.now() - started) / 1000 };
    } finally {
      await client.end();
    }
  } catch (err) {
    await db?.stop().catch(() => undefined);
    db = undefined;
    if (placed) {
      await rm(clusterDir, { recursive: true, force: true });
      await rm(join(dataDir, CREDENTIALS_FILE), { force: true });
    }
    throw err;
  } finally {
    await db?.stop();
    await rm(building, { recursive: true, force: true });
    await rm(join(dataDir, 'pg.owner'), { force: true });
  }
}

/** The archive's bytes, through gunzip when it starts with gzip's magic number (RFC 1952). */
async function archiveStream(file: string): Promise<AsyncIterable<Buffer>> {
  const handle = await open(file, 'r');
  const magic = Buffer.alloc(2);
  await handle.read(magic, 0, 2, 0);
  await handle.close();
  const raw = createReadStream(file);
  if (magic[0] !== 0x1f || magic[1] !== 0x8b) return raw;
  const gunzip = createGunzip();
  raw.on('error', (err) => gunzip.destroy(err));
  return raw.pipe(gunzip);
}

/** Where an archive entry under `pg/` goes; anything else (absolute, `..`, outside `pg/`) is refused. */
function clusterPath(name: string, building: string): string {
  const parts = name.split('/');
  if (parts[0] !== 'pg' || parts.some((p) => p === '..' || p === '.' || p === '') || name.includes('\0')) {
    throw new BackupError(`the archive holds an entry outside the cluster: ${JSON.stringify(name)}`);
  }
  return join(building, ...parts.slice(1));
}

async function collect(content: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of content) {
    size += chunk.length;
    if (size > 1 << 20) throw new BackupError('the backup manifest is too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function writeFile(path: string, content: AsyncIterable<Buffer>): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  try {
    for await (const chunk of content) await handle.write(chunk);
  } finally {
    await handle.close();
  }
}
