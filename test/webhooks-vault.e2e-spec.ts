import { execFile } from 'node:child_process';
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createWorkspace } from '#identity/accounts.js';
import { dataSourceOptions, MIGRATIONS, runMigrations } from '#database/data-source.js';
import { masterKey } from '#database/master-key.js';
import { createWebhook, revealWebhookSecret } from '#webhooks/webhooks.js';
import { useEmptyDatabase } from './factories.js';
import { ROOT, tryStart } from './processes.js';
import { unique } from './public-origin.js';

/**
 * Webhook signing secrets are wrapped with VAULT_MASTER_KEY, which lives in the environment
 * and never in the database: a dump of the database alone does not open them (README
 * "Configuration", "Webhooks").
 */
const CLI = resolve(ROOT, 'dist/apps/cli/src/main.js');

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}
process.env.LOG_LEVEL ??= 'error';

/** Every row of every table of the database, as text (what COPY … TO STDOUT or a dump would show). */
async function dumpAll(ds: DataSource): Promise<string> {
  const tables: { schema: string; name: string }[] = await ds.query(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  const parts: string[] = [];
  for (const t of tables) {
    const [row] = await ds.query(`SELECT coalesce(string_agg(x::text, E'\\n'), '') AS text FROM "${t.schema}"."${t.name}" x`);
    parts.push(`-- ${t.schema}.${t.name}\n${row.text}`);
  }
  return parts.join('\n');
}

/** Every 32-byte value the dump holds, in hex (bytea) or base64, as candidate AES-256 keys. */
function candidateKeys(dump: string): Buffer[] {
  const keys: Buffer[] = [];
  for (const [hex] of dump.matchAll(/[0-9a-f]{64}/gi)) keys.push(Buffer.from(hex, 'hex'));
  for (const [b64] of dump.matchAll(/[A-Za-z0-9+/_-]{43}=?/g)) {
    const raw = Buffer.from(b64, 'base64');
    if (raw.length === 32) keys.push(raw);
  }
  return keys;
}

function opensWith(key: Buffer, sealed: string): boolean {
  const raw = Buffer.from(sealed.replace(/^v\d+\./, ''), 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
    return true;
  } catch {
    return false;
  }
}

describe('Webhook secrets at rest', () => {
  const own = useEmptyDatabase('webhooks_vault');
  let ds: DataSource;

  beforeAll(async () => {
    ds = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 2)).initialize();
  });

  afterAll(async () => {
    await ds?.destroy();
  });

  it('nothing in the database opens a stored secret: no key table, no key bytes, the secret’s bytes nowhere', async () => {
    const workspace = await createWorkspace(ds, unique('wh-vault'));
    const hook = await createWebhook(ds, workspace.id, { url: 'https://hooks.example.com/vault' }, { allowPrivate: false });
    const [{ secret_sealed: sealed }] = await ds.query('SELECT secret_sealed FROM webhooks WHERE workspace_id = $1 AND id = $2', [
      workspace.id,
      hook.id,
    ]);
    expect(await revealWebhookSecret(ds, workspace.id, hook.id)).toBe(hook.secret);

    expect((await ds.query(`SELECT to_regclass('webhook_secret_keys') AS t`))[0].t).toBeNull();
    const dump = await dumpAll(ds);
    expect(dump).toContain(sealed);
    const raw = Buffer.from(hook.secret.slice('whsec_'.length), 'base64');
    for (const form of [hook.secret, raw.toString('base64'), raw.toString('hex'), raw.toString('base64url')])
      expect(dump).not.toContain(form);
    const master = Buffer.from(process.env.VAULT_MASTER_KEY!, 'base64');
    expect(master).toHaveLength(32);
    for (const form of [master.toString('base64'), master.toString('hex'), master.toString('base64url')]) expect(dump).not.toContain(form);
    const candidates = candidateKeys(dump);
    expect(candidates.filter((key) => opensWith(key, sealed))).toEqual([]);
  });

  it('secrets sealed with the old key kept in the database are re-wrapped under VAULT_MASTER_KEY at start, and that key is dropped', async () => {
    const name = `wrs_vault_${process.pid}_${randomBytes(3).toString('hex')}`;
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    let old: DataSource | undefined;
    let current: DataSource | undefined;
    try {
      // The schema as it was before secrets were wrapped with the environment's key.
      const before = MIGRATIONS.filter((m) => Number(/\d{13}/.exec(m.name)![0]) <= 1764400000100);
      old = await new DataSource({ ...dataSourceOptions(url.toString(), 2), migrations: before }).initialize();
      await old.runMigrations({ transaction: 'each' });
      // Plain SQL: today's createWorkspace writes columns this old schema does not have yet.
      const [workspace] = (await old.query(`INSERT INTO workspaces (name) VALUES ('vault-migration') RETURNING id`)) as { id: string }[];
      const dbKey = randomBytes(32);
      await old.query('INSERT INTO webhook_secret_keys (id, key) VALUES (1, $1)', [dbKey]);
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', dbKey, iv);
      const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      const sealedV1 = `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
      const id = randomUUID();
      await old.query(
        `INSERT INTO webhooks (workspace_id, id, url, operations, secret_sealed) VALUES ($1, $2, 'https://hooks.example.com/old', '{*.*}', $3)`,
        [workspace.id, id, sealedV1],
      );
      await old.destroy();
      old = undefined;

      current = await new DataSource(dataSourceOptions(url.toString(), 2)).initialize();
      await runMigrations(current);
      expect(await revealWebhookSecret(current, workspace.id, id)).toBe(secret);
      const [row] = await current.query('SELECT secret_sealed FROM webhooks WHERE id = $1', [id]);
      expect(row.secret_sealed).not.toBe(sealedV1);
      expect(opensWith(dbKey, row.secret_sealed)).toBe(false);
      expect((await current.query(`SELECT to_regclass('webhook_secret_keys') AS t`))[0].t).toBeNull();
      expect(await dumpAll(current)).not.toContain(dbKey.toString('hex'));

      // Started again with another key, the database is refused at once rather than failing a delivery later.
      const saved = process.env.VAULT_MASTER_KEY;
      process.env.VAULT_MASTER_KEY = randomBytes(32).toString('base64');
      try {
        await expect(runMigrations(current)).rejects.toThrow(/VAULT_MASTER_KEY is not the key/);
      } finally {
        process.env.VAULT_MASTER_KEY = saved;
      }
      await runMigrations(current);
    } finally {
      await old?.destroy();
      await current?.destroy();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }, 60_000);

  it('with the embedded database and no VAULT_MASTER_KEY, a key is generated once into the data directory (mode 600) and the log says to set it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'wrs-vault-'));
    const saved = { ...process.env };
    Object.assign(process.env, { DATABASE_URL: '', VAULT_MASTER_KEY: '', DATA_DIR: dataDir });
    try {
      const logged: string[] = [];
      const key = masterKey((m) => logged.push(m));
      const file = join(dataDir, 'vault-master.key');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').equals(key)).toBe(true);
      expect(key).toHaveLength(32);
      expect(logged).toEqual([expect.stringMatching(/generated.*Set VAULT_MASTER_KEY in production/)]);
      // The next start (here: another key read) keeps it.
      process.env.VAULT_MASTER_KEY = randomBytes(32).toString('base64');
      masterKey(() => undefined);
      process.env.VAULT_MASTER_KEY = '';
      expect(masterKey(() => undefined).equals(key)).toBe(true);
    } finally {
      process.env = saved;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('the apps and the CLI refuse to start, with one line saying why, on a wrong, malformed or (with DATABASE_URL) missing VAULT_MASTER_KEY', async () => {
    const wrong = /VAULT_MASTER_KEY is not the key this database was set up with/;
    for (const app of ['records-api', 'auth-server'] as const) {
      // A database of its own, whose check value no other suite can change meanwhile.
      const { started, code, output } = await tryStart(app, {
        DATABASE_URL: own.url,
        VAULT_MASTER_KEY: randomBytes(32).toString('base64'),
      });
      expect({ app, started, failed: code !== 0 && code !== null }).toEqual({ app, started: false, failed: true });
      const lines = output
        .trim()
        .split('\n')
        .filter((line) => !line.includes('oidc-provider WARNING'));
      expect({ app, lines }).toEqual({ app, lines: [expect.stringMatching(wrong)] });
    }
    const cases: [string, RegExp][] = [
      [
        randomBytes(16).toString('base64'),
        /^error: VAULT_MASTER_KEY must be 32 bytes in base64 \(generate one with: openssl rand -base64 32\); got 16 bytes$/,
      ],
      ['not base64 at all!', /^error: VAULT_MASTER_KEY must be 32 bytes in base64/],
      ['', /^error: VAULT_MASTER_KEY is not set: with DATABASE_URL it is required/],
    ];
    const results = await Promise.all(cases.map(([key]) => cli(['webhook:list', '--workspace', 'anything'], { VAULT_MASTER_KEY: key })));
    for (const [i, [, message]] of cases.entries()) {
      expect({ i, code: results[i].code === 0 ? 'zero' : 'non-zero' }).toEqual({ i, code: 'non-zero' });
      expect(results[i].stderr.trim().split('\n')).toEqual([expect.stringMatching(message)]);
    }
  }, 180_000);
});
