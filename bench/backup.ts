import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { projectRoot } from '#config/config.js';
import { backupEmbedded, restoreEmbedded } from '#database/backup.js';
import { startEmbeddedPostgres } from '#database/embedded-postgres.js';
import { clusterDirFor, relocatedClusterDir } from '#database/postgres-as-root.js';
import { prepareBenchData } from './seed.js';

/**
 * How long `npm run cli -- backup` and `restore` take at bench sizes (docs/operations.md
 * "Backups"; not in CI): a cluster of its own under `.data/bench-backup` seeded as the bench
 * seeds (`--rows` companies and people in the main workspace, as many companies with custom
 * fields in another, 2,000 of each in three more), then a gzip and a plain backup while it
 * runs, and a restore of each into an empty DATA_DIR (WAL replay and the key check included).
 *
 *   npm run build && node dist/bench/backup.js --rows 1000000
 */
const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' }, keep: { type: 'boolean', default: false } } });
const rows = Number(values.rows);
const base = join(projectRoot(), '.data', 'bench-backup');
const source = join(base, `source-${rows}`);
const log = (m: string) => process.stderr.write(`${new Date().toISOString()} ${m}\n`);
// The key is the environment's: the restores below check it against the data.
process.env.VAULT_MASTER_KEY ||= randomBytes(32).toString('base64');

const du = (path: string) => Number(execFileSync('du', ['-sb', path]).toString().split('\t')[0]);
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

const db = await startEmbeddedPostgres({ dataDir: source, database: 'records', log });
try {
  await prepareBenchData(db.url, rows, log);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const { rows: counted } = await client.query(`SELECT (SELECT count(*) FROM companies) + (SELECT count(*) FROM people) AS n`);
  await client.query('CHECKPOINT');
  await client.end();
  const clusterBytes = du(clusterDirFor(source));
  log(`cluster: ${mb(clusterBytes)}, ${counted[0].n} companies and people`);
  for (const gzip of [true, false]) {
    const out = join(base, `backup-${rows}.tar${gzip ? '.gz' : ''}`);
    const backup = await backupEmbedded({ dataDir: source, out });
    const target = join(base, `restored-${rows}-${gzip ? 'gz' : 'tar'}`);
    rmSync(target, { recursive: true, force: true });
    rmSync(dirname(relocatedClusterDir(target)), { recursive: true, force: true });
    const restore = await restoreEmbedded({ dataDir: target, from: out, log });
    const line = {
      rows,
      records: Number(counted[0].n),
      gzip,
      clusterMB: Math.round(clusterBytes / 1e6),
      archiveMB: Math.round(statSync(out).size / 1e6),
      backupSeconds: backup.seconds,
      restoreSeconds: restore.seconds,
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
    if (!values.keep) {
      rmSync(out, { force: true });
      rmSync(target, { recursive: true, force: true });
      rmSync(dirname(relocatedClusterDir(target)), { recursive: true, force: true });
    }
  }
} finally {
  await db.stop();
}
