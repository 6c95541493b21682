import type { Command } from 'commander';
import pg from 'pg';
import { loadConfig } from '#config/config.js';
import { backupEmbedded, BackupError, restoreEmbedded } from '#database/backup.js';
import { printResult, progressLog, type OutputOptions } from './run.js';

/**
 * `backup` and `restore` of the embedded PostgreSQL (docs/operations.md "Backups"). Neither
 * runs migrations: a backup taken before an upgrade must be of the database as it was.
 */
export function registerBackupCommands(command: (name: string, description: string) => Command): void {
  command('backup', 'Online backup of the embedded PostgreSQL into one archive (tar; gzip when FILE ends in .gz), while the service runs')
    .requiredOption('--out <file>', 'the archive to write (mode 600); the vault key is never in it')
    .action(async (opts: OutputOptions & { out: string }) => {
      await refuseDatabaseUrl();
      const result = await backupEmbedded({ dataDir: loadConfig().dataDir, out: opts.out });
      printResult(opts, result, (r) => [
        `Backed up the embedded PostgreSQL to ${r.file}: ${(r.bytes / 1e6).toFixed(1)} MB, ${r.files} files, WAL ${r.startLsn} to ${r.stopLsn}, in ${r.seconds.toFixed(1)} s.`,
        'The vault key is not in it: keep VAULT_MASTER_KEY (or DATA_DIR/vault-master.key) apart; restore needs it.',
      ]);
    });

  command('restore', 'Restore a backup into an empty DATA_DIR, checking that the vault key it will run with opens the data')
    .requiredOption('--from <file>', 'an archive written by backup')
    .action(async (opts: OutputOptions & { from: string }) => {
      if (loadConfig().databaseUrl) {
        throw new BackupError(
          'restore writes the embedded PostgreSQL of DATA_DIR; with DATABASE_URL restore that server with its own tools',
        );
      }
      const result = await restoreEmbedded({ dataDir: loadConfig().dataDir, from: opts.from, log: progressLog(opts) });
      printResult(opts, result, (r) => [
        `Restored ${r.from} (backup of ${r.backupCreatedAt}) into ${r.dataDir}: ${r.workspaces} workspace(s), in ${r.seconds.toFixed(1)} s.`,
        process.env.VAULT_MASTER_KEY
          ? 'Start it with the same VAULT_MASTER_KEY set (npm start).'
          : 'Start it with npm start (it uses the key file in DATA_DIR).',
      ]);
    });
}

/**
 * With DATABASE_URL the server is not the embedded one: its own tools back it up, of its own
 * major version (a pg_dump older than the server refuses it). Says which, and exits non-zero.
 */
async function refuseDatabaseUrl(): Promise<void> {
  const url = loadConfig().databaseUrl;
  if (!url) return;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  let major = 'the same major version as the server';
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version_num: string }>('SHOW server_version_num');
    major = `PostgreSQL ${Math.floor(Number(rows[0].server_version_num) / 10000)}, the server's major version`;
  } catch {
    // unreachable: the advice stands without the version
  } finally {
    await client.end().catch(() => undefined);
  }
  throw new BackupError(
    `backup copies the embedded PostgreSQL only; with DATABASE_URL back up that server with its own tools of ${major}: pg_basebackup (a physical copy, with WAL) or pg_dump --format=custom (a logical one), as in docs/operations.md`,
  );
}
