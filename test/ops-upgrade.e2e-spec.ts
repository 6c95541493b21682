import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, MIGRATIONS } from '#database/data-source.js';
import { hashSecret, newApiKeySecret } from '#identity/secrets.js';
import { spawnApp, tryStart } from './processes.js';

/**
 * docs/operations.md "Upgrades": a database made by an older version (its migrations only,
 * with data written as that version wrote it) is upgraded by a start of the current code,
 * which logs each migration it applies with its duration and serves the old data; every start
 * check (the vault key above all) comes before the first migration, so a refused start changes
 * nothing; a database a newer version migrated is refused.
 */
const OLDER = MIGRATIONS.findIndex((m) => m.name === 'VaultMasterKey1764500000000') + 1;

describe('an upgrade from an older version', () => {
  const name = `wrs_upgrade_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  let url: string;
  let db: pg.Client;
  const key = newApiKeySecret();
  let workspaceId: string;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(process.env.DATABASE_URL!);
    u.pathname = `/${name}`;
    url = u.toString();
    const old = await new DataSource({ ...dataSourceOptions(url, 2), migrations: MIGRATIONS.slice(0, OLDER) }).initialize();
    try {
      await old.runMigrations({ transaction: 'each' });
      // That version's SQL: today's code writes columns its schema does not have yet.
      [{ id: workspaceId }] = await old.query(`INSERT INTO workspaces (name) VALUES ('Before the upgrade') RETURNING id`);
      const [role] = await old.query(
        `INSERT INTO roles (workspace_id, name, object_permissions, is_editable)
         VALUES ($1, 'Admin', $2, false) RETURNING id`,
        [
          workspaceId,
          JSON.stringify(
            Object.fromEntries(
              ['companies', 'people', 'opportunities'].map((o) => [o, { read: true, create: true, update: true, delete: true }]),
            ),
          ),
        ],
      );
      await old.query(
        `INSERT INTO api_keys (workspace_id, name, role_id, secret_hash, expires_at) VALUES ($1, 'old key', $2, $3, now() + interval '1 day')`,
        [workspaceId, role.id, hashSecret(key)],
      );
      const [acme] = await old.query(
        `INSERT INTO companies (workspace_id, name, domain_primary_link_url) VALUES ($1, 'Acme', 'https://acme.example') RETURNING id`,
        [workspaceId],
      );
      await old.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, 'Globex'), ($1, 'Initech')`, [workspaceId]);
      await old.query(
        `INSERT INTO people (workspace_id, first_name, last_name, primary_email, company_id) VALUES ($1, 'Ada', 'Lovelace', 'ada@acme.example', $2)`,
        [workspaceId, acme.id],
      );
    } finally {
      await old.destroy();
    }
    db = new pg.Client({ connectionString: url });
    await db.connect();
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  const applied = async () => (await db.query<{ name: string }>('SELECT name FROM migrations ORDER BY id')).rows.map((r) => r.name);
  const errorLines = (output: string) =>
    output
      .trim()
      .split('\n')
      .filter((line) => !/\bWARN(ING)?\b/.test(line));

  it('without the vault key, or with a wrong one, the start is refused before the first migration: one line, nothing applied', async () => {
    const before = await applied();
    expect(before).toEqual(MIGRATIONS.slice(0, OLDER).map((m) => m.name));
    const cases: [string, RegExp][] = [
      ['', /VAULT_MASTER_KEY is not set: with DATABASE_URL it is required/],
      [randomBytes(32).toString('base64'), /VAULT_MASTER_KEY is not the key this database was set up with/],
    ];
    for (const [vaultKey, message] of cases) {
      const { started, code, output } = await tryStart('records-api', { DATABASE_URL: url, VAULT_MASTER_KEY: vaultKey, LOG_LEVEL: 'log' });
      expect({ started, code }).toEqual({ started: false, code: 1 });
      expect(errorLines(output)).toEqual([expect.stringMatching(message)]);
      expect(await applied()).toEqual(before);
    }
  }, 90_000);

  it("the current code applies the rest, logging each migration's name and duration, and serves the data written before", async () => {
    const pending = MIGRATIONS.slice(OLDER).map((m) => m.name);
    const app = await spawnApp('records-api', { DATABASE_URL: url, LOG_LEVEL: 'log', WEBHOOKS_WORKER: 'off' });
    try {
      const out = app.output();
      expect(out).toContain(`${pending.length} migration(s) to apply: ${pending.join(', ')}`);
      const logged = [...out.matchAll(/Migration (\w+) applied in (\d+) ms/g)].map((m) => m[1]);
      expect(logged).toEqual(pending);
      expect(out).toMatch(new RegExp(`${pending.length} migration\\(s\\) applied in \\d+ ms`));
      expect(await applied()).toEqual(MIGRATIONS.map((m) => m.name));

      const get = async (path: string) => {
        const res = await fetch(`${app.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
        expect(res.status).toBe(200);
        return (await res.json()) as any;
      };
      const companies = await get('/rest/companies?order_by=name');
      expect(companies.totalCount).toBe(3);
      expect(companies.data.companies.map((c: any) => c.name)).toEqual(['Acme', 'Globex', 'Initech']);
      expect(companies.data.companies[0].domainName.primaryLinkUrl).toBe('https://acme.example');
      const people = await get('/rest/people');
      expect(people.data.people).toEqual([
        expect.objectContaining({ name: { firstName: 'Ada', lastName: 'Lovelace' }, companyId: companies.data.companies[0].id }),
      ]);
      // Today's writes work on the upgraded schema too.
      const made = await fetch(`${app.url}/rest/companies`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'After the upgrade' }),
      });
      expect(made.status).toBe(201);
    } finally {
      app.child.kill('SIGTERM');
      await app.exited;
    }
    // Started again: nothing left to apply, nothing logged about migrations.
    const again = await spawnApp('records-api', { DATABASE_URL: url, LOG_LEVEL: 'log', WEBHOOKS_WORKER: 'off' });
    again.child.kill('SIGTERM');
    await again.exited;
    expect(again.output()).not.toMatch(/migration/i);
  }, 120_000);

  it('a database a newer version has migrated is refused: exit 78, one line naming what it does not know', async () => {
    await db.query(`INSERT INTO migrations (timestamp, name) VALUES (1999999999999, 'FromTheFuture1999999999999')`);
    try {
      const { started, code, output } = await tryStart('records-api', { DATABASE_URL: url, LOG_LEVEL: 'log' });
      expect({ started, code }).toEqual({ started: false, code: 78 });
      expect(errorLines(output)).toEqual([
        expect.stringMatching(
          /the database has migrations this version of the service does not know \(FromTheFuture1999999999999\): it was upgraded by a newer version; .*restore the backup taken before the upgrade/,
        ),
      ]);
    } finally {
      await db.query(`DELETE FROM migrations WHERE name = 'FromTheFuture1999999999999'`);
    }
  }, 60_000);
});
