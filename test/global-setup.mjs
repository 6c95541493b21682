// Once per run: a real Postgres (the embedded one unless DATABASE_URL is set), a fresh
// `records_test_<pid>` database, and the checked-in migrations applied to it. Plain ESM over the
// build output because Jest loads global setup outside its module mapper (`npm test` builds first).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import typeorm from 'typeorm';
import { dataSourceOptions, loadConfig, runMigrations, startEmbeddedPostgres } from '../dist/libs/database/src/index.js';

/**
 * A throwaway self-signed certificate for https servers the tests run on 127.0.0.1 (client
 * metadata documents), trusted by the test workers through NODE_EXTRA_CA_CERTS, which Node
 * reads only at start: the workers start after this.
 */
function testCertificate() {
  const dir = mkdtempSync(join(tmpdir(), 'wrs-test-tls-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  process.env.NODE_EXTRA_CA_CERTS = cert;
  process.env.WRS_TEST_TLS_KEY = key;
  process.env.WRS_TEST_TLS_CERT = cert;
}

export default async function globalSetup() {
  // Once per run, whichever Jest config or project calls it first (jest.pgbouncer.config.js too).
  if (globalThis.__testSetupDone) return;
  globalThis.__testSetupDone = true;
  testCertificate();
  // Every statement text the suites' processes send is recorded, and checked at the end for a
  // workspace_id equality on every tenant table (global-teardown.mjs; docs/scaling.md "Distributed
  // Postgres (Citus)"). This process imported the database code before this line: the
  // migrations below are not recorded.
  if (!process.env.SQL_RECORD_FILE) {
    process.env.SQL_RECORD_FILE = join(mkdtempSync(join(tmpdir(), 'wrs-sql-')), 'statements.jsonl');
    globalThis.__sqlRecording = process.env.SQL_RECORD_FILE;
  }
  // Rate limits are counted across instances, in the database (README.md, Operations), and requests
  // without credentials and failed authentications per client address. Here every test
  // file is one address (127.0.0.1) on one database, so the suite's many deliberate 401s
  // and anonymous calls would add up to the production defaults (120 and 600 a minute)
  // and throttle unrelated files. The limiters still run, with budgets the suite cannot
  // reach; files that test a limit set their own (each limit size counts apart). The
  // workers inherit this environment.
  process.env.AUTH_FAILURES_PER_MINUTE ??= '100000';
  process.env.RATE_LIMIT_PER_MINUTE ??= '100000';
  process.env.RATE_LIMIT_PER_WORKSPACE_PER_MINUTE ??= '100000';
  const config = loadConfig();
  let url = config.databaseUrl;
  if (!url) {
    const db = await startEmbeddedPostgres({ dataDir: config.dataDir, database: 'postgres' });
    globalThis.__embeddedPg = db;
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    // One database per run, so parallel runs on one machine never share state.
    const name = `records_test_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    globalThis.__testDatabase = { adminUrl: db.url, name };
    url = db.url.replace(/\/postgres$/, `/${name}`);
  }
  process.env.DATABASE_URL = url;
  // Every suite shares this database and so graphile-worker's queue: only the webhook suites
  // run delivery workers (all with the same settings, TEST_WORKER_ENV in test/webhook-receiver.ts),
  // so no other suite's records API takes their jobs with other settings.
  process.env.WEBHOOKS_WORKER = 'off';
  // The same for imports: only the import suites run import workers, so they know which
  // process runs an import (the crash test kills it).
  process.env.IMPORTS_WORKER = 'off';
  // Every process the suite starts talks to DATABASE_URL, so each needs the master key that
  // wraps webhook secrets (README "Configuration"). A fixed test-only key: a database kept
  // between runs (a developer's DATABASE_URL) must be opened with the key it was set up with.
  process.env.VAULT_MASTER_KEY ||= 'dGVzdC1vbmx5IHZhdWx0IG1hc3RlciBrZXkgMzJieXQ=';
  const ds = new typeorm.DataSource(dataSourceOptions(url, 2));
  await ds.initialize();
  // Quiet: a fresh test database applies every migration, one log line each.
  await runMigrations(ds, () => undefined);
  await ds.destroy();
}
