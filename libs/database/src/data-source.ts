import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { DataSource, MigrationExecutor, type DataSourceOptions, type MigrationInterface, type QueryRunner } from 'typeorm';
import pg from 'pg';
import { ConfigError, loadConfig } from '#config/config.js';
import { EXIT_CONFIG } from '#ops/ports.js';
import { poolOptions, sessionOptions, sessionUrlFor } from './connections.js';
import { migrateJobQueue } from './job-queue.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './embedded-postgres.js';
import { ENTITIES } from './entities/index.js';
import { recordSql } from './sql-record.js';
import { InitialSchema1763800000000 } from './migrations/1763800000000-initial-schema.js';
import { OAuth1763900000000 } from './migrations/1763900000000-oauth.js';
import { FilterOrderIndexes1764100000000 } from './migrations/1764100000000-filter-order-indexes.js';
import { Settings1764000000000 } from './migrations/1764000000000-settings.js';
import { Operations1764000000100 } from './migrations/1764000000100-operations.js';
import { Security1764200000000 } from './migrations/1764200000000-security.js';
import { Opportunities1764000000300 } from './migrations/1764000000300-opportunities.js';
import { Webhooks1764300000000 } from './migrations/1764300000000-webhooks.js';
import { CredentialChanges1764400000000 } from './migrations/1764400000000-credential-changes.js';
import { CredentialVersion1764400000100 } from './migrations/1764400000100-credential-version.js';
import { VaultMasterKey1764500000000 } from './migrations/1764500000000-vault-master-key.js';
import { WebhookFairDelivery1764500000100 } from './migrations/1764500000100-webhook-fair-delivery.js';
import { assertCheckValue, masterKey } from './master-key.js';
import { AccountNotices1764500000200 } from './migrations/1764500000200-account-notices.js';
import { IdempotencyPerCredential1764500000300 } from './migrations/1764500000300-idempotency-per-credential.js';
import { CustomFields1764600000000 } from './migrations/1764600000000-custom-fields.js';
import { UniqueFields1764650000000 } from './migrations/1764650000000-unique-fields.js';
import { DestroyPermission1764660000000 } from './migrations/1764660000000-destroy-permission.js';
import { Search1764700000000 } from './migrations/1764700000000-search.js';
import { CountSlots1764800000000 } from './migrations/1764800000000-count-slots.js';
import { UnwatchedWrites1764800000100 } from './migrations/1764800000100-unwatched-writes.js';
import { Imports1764900000000 } from './migrations/1764900000000-imports.js';
import { ReadYourWrites1765000000000 } from './migrations/1765000000000-read-your-writes.js';
import { Vault1765100000000 } from './migrations/1765100000000-vault.js';
import { CitusKeys1765200000000 } from './migrations/1765200000000-citus-keys.js';
import { FieldPermissions1765300000000 } from './migrations/1765300000000-field-permissions.js';
import { RelationGuard1765400000000 } from './migrations/1765400000000-relation-guard.js';
import { PendingDeliveries1765500000000 } from './migrations/1765500000000-pending-deliveries.js';
import { PendingByWorkspace1765600000000 } from './migrations/1765600000000-pending-by-workspace.js';
import { CredentialGuard1765700000000 } from './migrations/1765700000000-credential-guard.js';
import { ImportLines1765800000047 } from './migrations/1765800000047-import-lines.js';
import { ExportWaits1765800000050 } from './migrations/1765800000050-export-waits.js';
import { WebhookRoles1765849000000 } from './migrations/1765849000000-webhook-roles.js';
import { ImportRuns1765851000000 } from './migrations/1765851000000-import-runs.js';
import { CustomObjects1765900000000 } from './migrations/1765900000000-custom-objects.js';
import { FieldTypes1765900000100 } from './migrations/1765900000100-field-types.js';
import { syncSearchFunctions } from './search-functions.js';
import { CustomObjectsSearch1765912000000 } from './migrations/1765912000000-custom-objects-search.js';
import { McpTasks1766000000000 } from './migrations/1766000000000-mcp-tasks.js';
import { Relations1766000000100 } from './migrations/1766000000100-relations.js';
import { ImportMaxRows1766000000200 } from './migrations/1766000000200-import-max-rows.js';

// SQL_RECORD_FILE (tests only): every statement text this process sends is recorded (sql-record.ts).
recordSql();

export const MIGRATIONS = [
  InitialSchema1763800000000,
  OAuth1763900000000,
  Settings1764000000000,
  Operations1764000000100,
  Opportunities1764000000300,
  FilterOrderIndexes1764100000000,
  Security1764200000000,
  Webhooks1764300000000,
  CredentialChanges1764400000000,
  CredentialVersion1764400000100,
  VaultMasterKey1764500000000,
  WebhookFairDelivery1764500000100,
  AccountNotices1764500000200,
  IdempotencyPerCredential1764500000300,
  CustomFields1764600000000,
  UniqueFields1764650000000,
  DestroyPermission1764660000000,
  Search1764700000000,
  CountSlots1764800000000,
  UnwatchedWrites1764800000100,
  Imports1764900000000,
  ReadYourWrites1765000000000,
  Vault1765100000000,
  CitusKeys1765200000000,
  FieldPermissions1765300000000,
  RelationGuard1765400000000,
  PendingDeliveries1765500000000,
  PendingByWorkspace1765600000000,
  CredentialGuard1765700000000,
  ImportLines1765800000047,
  ExportWaits1765800000050,
  WebhookRoles1765849000000,
  ImportRuns1765851000000,
  CustomObjects1765900000000,
  FieldTypes1765900000100,
  CustomObjectsSearch1765912000000,
  McpTasks1766000000000,
  Relations1766000000100,
  ImportMaxRows1766000000200,
];

export { sessionOptions } from './connections.js';

export function dataSourceOptions(url: string, poolSize = 20): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTransactionMode: 'each',
    // Schema changes only through the checked-in migrations.
    synchronize: false,
    migrationsRun: false,
    logging: false,
    // A connect that hangs (a database host gone quiet) fails after 5 s, as a 503, instead of holding the request.
    extra: { max: poolSize, ...poolOptions(url), connectionTimeoutMillis: 5000 },
  };
}

let embedded: Promise<EmbeddedDatabase> | undefined;

/**
 * The database URL to use: `DATABASE_URL` when set, else the embedded Postgres (started
 * here, or the one another process of this checkout already runs).
 */
export async function resolveDatabaseUrl(log?: (message: string) => void): Promise<{ url: string; embedded?: EmbeddedDatabase }> {
  const config = loadConfig();
  if (config.databaseUrl) return { url: config.databaseUrl };
  embedded ??= startEmbedded(log);
  const db = await embedded;
  // The processes this one starts get DATABASE_URL, and with it they need the key in the
  // environment: the embedded database's key file is read here, once (master-key.ts).
  process.env.VAULT_MASTER_KEY ||= masterKey(log).toString('base64');
  return { url: db.url, embedded: db };
}

/** The embedded Postgres of this checkout, started (again) or found running. */
export function startEmbedded(log?: (message: string) => void): Promise<EmbeddedDatabase> {
  return startEmbeddedPostgres({ dataDir: loadConfig().dataDir, database: 'records', log });
}

/**
 * The database was migrated by a newer version of the service: this one would run on a schema
 * it does not know. Exit 78: restarting cannot help (docs/operations.md "Rollback").
 */
export class NewerDatabaseError extends ConfigError {
  constructor(unknown: string[]) {
    super(
      `the database has migrations this version of the service does not know (${unknown.join(', ')}): it was upgraded by a newer version; run that version, or restore the backup taken before the upgrade (docs/operations.md "Rollback")`,
      EXIT_CONFIG,
    );
  }
}

const migrationLogger = new Logger('Migrations');

/**
 * What must hold before the first migration runs, so that a start that will be refused changes
 * nothing: the master key is set and well formed, it opens the database's check value (once the
 * database has one), and the database holds no migration this code does not know.
 */
async function checkBeforeMigrating(runner: QueryRunner): Promise<void> {
  masterKey();
  const [{ check, migrations }] = (await runner.query(
    `SELECT to_regclass('vault_key_check') IS NOT NULL AS check, to_regclass('migrations') IS NOT NULL AS migrations`,
  )) as { check: boolean; migrations: boolean }[];
  if (check) {
    const [row] = (await runner.query('SELECT check_value FROM vault_key_check WHERE id = 1')) as { check_value: string }[];
    if (row) assertCheckValue(row.check_value);
  }
  if (migrations) {
    const known = new Set(MIGRATIONS.map((m) => m.name));
    const applied = (await runner.query('SELECT name FROM migrations ORDER BY id')) as { name: string }[];
    const unknown = applied.map((m) => m.name).filter((name) => !known.has(name));
    if (unknown.length) throw new NewerDatabaseError(unknown);
  }
}

/**
 * Each pending migration's name and duration, logged as it finishes: its `up` is timed up to
 * the start of the next one (or the end of the run), so the time includes its commit.
 */
async function executeLogged(executor: MigrationExecutor, log: (message: string) => void): Promise<void> {
  const pending = await executor.getPendingMigrations();
  if (!pending.length) return;
  log(`${pending.length} migration(s) to apply: ${pending.map((m) => m.name).join(', ')}`);
  let running: { name: string; started: number } | undefined;
  const finish = () => {
    if (running) log(`Migration ${running.name} applied in ${Date.now() - running.started} ms`);
    running = undefined;
  };
  const originals = new Map<MigrationInterface, MigrationInterface['up']>();
  for (const migration of pending) {
    const instance = migration.instance!;
    const up = instance.up;
    originals.set(instance, up);
    instance.up = (q: QueryRunner) => {
      finish();
      running = { name: migration.name, started: Date.now() };
      return up.call(instance, q);
    };
  }
  const started = Date.now();
  try {
    await executor.executePendingMigrations();
    finish();
  } catch (err) {
    if (running) log(`Migration ${running.name} failed after ${Date.now() - running.started} ms: ${(err as Error)?.message}`);
    throw err;
  } finally {
    for (const [instance, up] of originals) instance.up = up;
  }
  log(`${pending.length} migration(s) applied in ${Date.now() - started} ms`);
}

/**
 * Apply pending migrations; an advisory lock keeps concurrent starters from racing. They run
 * on one session without DATABASE_STATEMENT_TIMEOUT_MS: a migration of a big table, or the
 * wait for another starter's lock, may rightly take longer than any request should. Every
 * start check comes first (checkBeforeMigrating): a missing, malformed or wrong
 * VAULT_MASTER_KEY stops the start with a one-line MasterKeyError before anything changes,
 * and the check value is tested again after them (a new database gets it from a migration).
 * `log` gets one line per migration applied (name and duration). The search functions
 * generated from the field types follow (search-functions.ts). For DATABASE_URL behind a
 * transaction pooler, all of it runs on DATABASE_SESSION_URL.
 */
export async function runMigrations(dataSource: DataSource, log: (message: string) => void = (m) => migrationLogger.log(m)): Promise<void> {
  // Behind a transaction pooler the lock and the SET below need a session: DATABASE_SESSION_URL.
  const url = (dataSource.options as { url: string }).url;
  if (sessionUrlFor(url) !== url) {
    const session = await new DataSource(dataSourceOptions(sessionUrlFor(url), 1)).initialize();
    try {
      return await runMigrations(session, log);
    } finally {
      await session.destroy();
    }
  }
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SET statement_timeout = 0');
    await runner.query('SELECT pg_advisory_lock(727274)');
    await checkBeforeMigrating(runner);
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'each';
    await executeLogged(executor, log);
    const known = new Set(dataSource.migrations.map((m) => m.name));
    const unknown = (await executor.getExecutedMigrations()).some((m) => !known.has(m.name));
    await syncSearchFunctions(runner, unknown);
    const unbounded = new pg.Pool({ connectionString: url, max: 1, options: sessionOptions(0) });
    // An idle connection ended by the server (a restart, DROP DATABASE … WITH (FORCE)) is reported
    // on the pool; without a listener that report would end the process. The next query fails instead.
    unbounded.on('error', () => undefined);
    try {
      await migrateJobQueue(unbounded);
    } finally {
      await unbounded.end();
    }
    const [check] = (await runner.query('SELECT check_value FROM vault_key_check WHERE id = 1')) as { check_value: string }[];
    assertCheckValue(check.check_value);
  } finally {
    await runner.query('SELECT pg_advisory_unlock(727274)').catch(() => undefined);
    await runner.query('RESET statement_timeout').catch(() => undefined);
    await runner.release();
  }
}
