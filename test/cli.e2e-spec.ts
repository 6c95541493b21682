import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { verifyCredentials } from '#identity/accounts.js';
import { DEMO_ADMIN_EMAIL, seedDemoIfEmpty } from '#identity/demo-seed.js';
import { useEmptyDatabase } from './factories.js';

// Runs the built CLI (`npm test` builds first) as an operator would, against the test database.
const CLI = resolve(process.cwd(), 'dist/apps/cli/src/main.js');
const DAY_MS = 86_400_000;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

/** The `--json` contract: stdout is exactly one JSON object and nothing else. */
function oneObject(stdout: string): any {
  const value = JSON.parse(stdout);
  expect(stdout.trim().split('\n')).toHaveLength(1);
  expect(value).toEqual(expect.any(Object));
  expect(Array.isArray(value)).toBe(false);
  return value;
}

async function ok(...args: string[]): Promise<any> {
  const result = await cli([...args, '--json']);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return oneObject(result.stdout);
}

async function fails(...args: string[]): Promise<{ code: string; message: string }> {
  const result = await cli([...args, '--json']);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toMatch(/^error: /);
  const body = oneObject(result.stdout);
  expect(body).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
  return body.error;
}

const unique = (label: string) => `cli-${label}-${Date.now()}-${randomBytes(3).toString('hex')}`;

function expectDaysFromNow(iso: string, days: number): void {
  expect(Math.abs(new Date(iso).getTime() - (Date.now() + days * DAY_MS))).toBeLessThan(120_000);
}

describe('operator CLI', () => {
  let db: pg.Client;
  beforeAll(async () => {
    db = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(() => db.end());

  it('workspace:create returns {id, name} and gives the workspace Admin, Member and Viewer', async () => {
    const name = unique('ws');
    const workspace = await ok('workspace:create', '--name', name);
    expect(workspace).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name });

    const byName = await ok('role:list', '--workspace', name);
    const byId = await ok('role:list', '--workspace', workspace.id);
    expect(byId).toEqual(byName);
    expect(byName.workspaceId).toBe(workspace.id);
    const roles = Object.fromEntries(byName.roles.map((r: any) => [r.name, r]));
    expect(Object.keys(roles).sort()).toEqual(['Admin', 'Member', 'Viewer']);
    for (const role of byName.roles) {
      expect(Object.keys(role).sort()).toEqual(
        [
          'assignableToApiKeys',
          'assignableToUsers',
          'description',
          'fieldPermissions',
          'id',
          'isEditable',
          'name',
          'objectPermissions',
          'settingsPermissions',
        ].sort(),
      );
    }
    expect(roles.Admin).toMatchObject({ assignableToUsers: true, assignableToApiKeys: true, isEditable: false });
    expect(roles.Admin.settingsPermissions.sort()).toEqual(['API_KEYS_AND_WEBHOOKS', 'DATA_MODEL', 'ROLES', 'VAULT', 'WORKSPACE_MEMBERS']);
    expect(roles.Member).toMatchObject({ assignableToUsers: true, assignableToApiKeys: false, settingsPermissions: [] });
    expect(roles.Member.objectPermissions.people).toEqual({ read: true, create: true, update: true, delete: true });
    expect(roles.Viewer).toMatchObject({ assignableToUsers: true, assignableToApiKeys: true, settingsPermissions: [] });
    expect(roles.Viewer.objectPermissions.companies).toEqual({ read: true, create: false, update: false, delete: false });
    expect(roles.Member.fieldPermissions).toEqual({});

    // A role's field restrictions are listed too, in JSON and in the text output.
    const restricted = { opportunities: { amount: { read: false, update: false }, stage: { read: true, update: false } } };
    await db.query(`UPDATE roles SET field_permissions = $2 WHERE workspace_id = $1 AND name = 'Member'`, [workspace.id, restricted]);
    const after = await ok('role:list', '--workspace', workspace.id);
    expect(after.roles.find((r: any) => r.name === 'Member').fieldPermissions).toEqual(restricted);
    const text = await cli(['role:list', '--workspace', workspace.id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('  opportunities fields: amount (hidden), stage (read only)');
  });

  it('refuses a duplicate workspace name (case-insensitive)', async () => {
    const name = unique('dup');
    await ok('workspace:create', '--name', name);
    expect(await fails('workspace:create', '--name', name.toUpperCase())).toMatchObject({ code: 'CONFLICT' });
  });

  it('refuses an unknown workspace', async () => {
    expect(await fails('role:list', '--workspace', unique('missing'))).toMatchObject({ code: 'NOT_FOUND' });
    expect(
      await fails('api-key:create', '--workspace', '00000000-0000-4000-8000-000000000000', '--role', 'Admin', '--name', 'k'),
    ).toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('user:create makes a member; member:add brings the same user into a second workspace', async () => {
    const [first, second] = await Promise.all([
      ok('workspace:create', '--name', unique('u1')),
      ok('workspace:create', '--name', unique('u2')),
    ]);
    const email = `${unique('user')}@example.com`;
    const password = 'correct horse battery';
    const result = await cli([
      'user:create',
      '--email',
      email,
      '--password',
      password,
      '--workspace',
      first.name,
      '--role',
      'member',
      '--json',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(password);
    const user = oneObject(result.stdout);
    expect(user).toEqual({ id: expect.any(String), email, workspaceId: first.id, role: 'Member' });

    const joined = await ok('member:add', '--email', email, '--workspace', second.id, '--role', 'Viewer');
    expect(joined).toEqual({ workspaceId: second.id, userId: user.id, email, role: 'Viewer' });
    const { rows } = await db.query(
      'SELECT m.workspace_id, r.name FROM workspace_members m JOIN roles r ON r.workspace_id = m.workspace_id AND r.id = m.role_id WHERE m.user_id = $1 ORDER BY r.name',
      [user.id],
    );
    expect(rows).toEqual([
      { workspace_id: first.id, name: 'Member' },
      { workspace_id: second.id, name: 'Viewer' },
    ]);
    const [{ password_hash }] = (await db.query('SELECT password_hash FROM users WHERE id = $1', [user.id])).rows;
    expect(password_hash).toMatch(/^\$argon2id\$/);

    expect(await fails('member:add', '--email', email, '--workspace', second.id, '--role', 'Viewer')).toMatchObject({ code: 'CONFLICT' });
  });

  it('user:create refuses a bad e-mail and creates nothing', async () => {
    const workspace = await ok('workspace:create', '--name', unique('bad-email'));
    const error = await fails(
      'user:create',
      '--email',
      'not-an-email',
      '--password',
      'long enough pw',
      '--workspace',
      workspace.id,
      '--role',
      'Admin',
    );
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toContain('email');
    const { rows } = await db.query('SELECT count(*)::int AS n FROM workspace_members WHERE workspace_id = $1', [workspace.id]);
    expect(rows[0].n).toBe(0);
  });

  it('api-key:create defaults to 90 days, honours --expires and stores only a sha256 of the secret', async () => {
    const workspace = await ok('workspace:create', '--name', unique('keys'));
    const keys = await Promise.all(
      [[], ['--expires', '15d'], ['--expires', '30d'], ['--expires', '1y']].map((extra) =>
        ok('api-key:create', '--workspace', workspace.name, '--role', 'Viewer', '--name', `key ${extra.join(' ') || 'default'}`, ...extra),
      ),
    );
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(['expiresAt', 'id', 'name', 'role', 'secret']);
      expect(key.role).toBe('Viewer');
    }
    [90, 15, 30, 365].forEach((days, i) => expectDaysFromNow(keys[i].expiresAt, days));

    const [key] = keys;
    const { rows } = await db.query('SELECT secret_hash FROM api_keys WHERE id = $1', [key.id]);
    expect(rows[0].secret_hash).not.toBe(key.secret);
    expect(rows[0].secret_hash).toBe(createHash('sha256').update(key.secret).digest('hex'));
    const { rows: plain } = await db.query('SELECT 1 FROM api_keys WHERE secret_hash = $1', [key.secret]);
    expect(plain).toHaveLength(0);

    expect(await fails('api-key:create', '--workspace', workspace.id, '--role', 'Admin', '--name', 'k', '--expires', '2y')).toMatchObject({
      code: 'VALIDATION_FAILED',
    });
  }, 60_000);

  it('api-key:create says the secret is shown only once', async () => {
    const workspace = await ok('workspace:create', '--name', unique('human'));
    const result = await cli(['api-key:create', '--workspace', workspace.id, '--role', 'Admin', '--name', 'ops']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/only once/);
    expect(result.stdout).toMatch(/secret manager/);
    expect(result.stdout).toMatch(/wrs_\S+/);
  });

  it('refuses a role that is not assignable to API keys', async () => {
    const workspace = await ok('workspace:create', '--name', unique('member-key'));
    const error = await fails('api-key:create', '--workspace', workspace.id, '--role', 'Member', '--name', 'nope');
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('Member') });
    const { rows } = await db.query('SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1', [workspace.id]);
    expect(rows[0].n).toBe(0);
  });

  it('api-key:revoke sets revoked_at', async () => {
    const workspace = await ok('workspace:create', '--name', unique('revoke'));
    const key = await ok('api-key:create', '--workspace', workspace.id, '--role', 'Admin', '--name', 'to revoke');
    const revoked = await ok('api-key:revoke', '--id', key.id);
    expect(revoked).toEqual({ id: key.id, revokedAt: expect.any(String) });
    const { rows } = await db.query('SELECT revoked_at FROM api_keys WHERE id = $1', [key.id]);
    expect(rows[0].revoked_at.toISOString()).toBe(revoked.revokedAt);

    expect(await fails('api-key:revoke', '--id', '00000000-0000-4000-8000-000000000000')).toMatchObject({ code: 'NOT_FOUND' });
    expect(await fails('api-key:revoke', '--id', 'nope')).toMatchObject({ code: 'INVALID_ID' });
  });

  describe('list commands', () => {
    it('workspace:list lists every workspace with its member and active key counts', async () => {
      const workspace = await ok('workspace:create', '--name', unique('list-ws'));
      await ok('api-key:create', '--workspace', workspace.id, '--role', 'Viewer', '--name', 'k');
      const listed = await ok('workspace:list');
      expect(Object.keys(listed)).toEqual(['workspaces']);
      expect(listed.workspaces.find((w: any) => w.id === workspace.id)).toEqual({
        id: workspace.id,
        name: workspace.name,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        members: 0,
        apiKeys: 1,
      });
      const text = await cli(['workspace:list']);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(new RegExp(`^${workspace.id}  ${workspace.name}  0 members, 1 API key, created `, 'm'));
    });

    it("member:list lists a workspace's members with their roles, never a password hash", async () => {
      const workspace = await ok('workspace:create', '--name', unique('list-members'));
      const email = `${unique('member')}@example.com`;
      const user = await ok(
        'user:create',
        '--email',
        email,
        '--password',
        'long enough pw',
        '--workspace',
        workspace.id,
        '--role',
        'Viewer',
      );
      const byName = await ok('member:list', '--workspace', workspace.name);
      expect(byName).toEqual({
        workspaceId: workspace.id,
        members: [{ userId: user.id, email, role: 'Viewer', joinedAt: expect.stringMatching(/^\d{4}-/) }],
      });
      const text = await cli(['member:list', '--workspace', workspace.id]);
      expect(text.stdout).toContain(`${user.id}  ${email}  Viewer  joined `);
      expect(text.stdout + JSON.stringify(byName)).not.toMatch(/argon2/);
      const empty = await cli(['member:list', '--workspace', (await ok('workspace:create', '--name', unique('no-members'))).id]);
      expect(empty.stdout.trim()).toBe('No members.');
      expect(await fails('member:list', '--workspace', unique('missing'))).toMatchObject({ code: 'NOT_FOUND' });
    });

    it('api-key:list leaves revoked keys out unless --all, and never shows a secret or its hash', async () => {
      const workspace = await ok('workspace:create', '--name', unique('list-keys'));
      const kept = await ok('api-key:create', '--workspace', workspace.id, '--role', 'Admin', '--name', 'kept');
      const revoked = await ok('api-key:create', '--workspace', workspace.id, '--role', 'Viewer', '--name', 'revoked');
      await ok('api-key:revoke', '--id', revoked.id);
      const expired = await ok('api-key:create', '--workspace', workspace.id, '--role', 'Viewer', '--name', 'expired');
      await db.query(`UPDATE api_keys SET expires_at = now() - interval '1 day' WHERE workspace_id = $1 AND id = $2`, [
        workspace.id,
        expired.id,
      ]);

      const listed = await ok('api-key:list', '--workspace', workspace.id);
      expect(listed.workspaceId).toBe(workspace.id);
      expect(listed.apiKeys.map((k: any) => [k.name, k.status])).toEqual([
        ['kept', 'active'],
        ['expired', 'expired'],
      ]);
      expect(listed.apiKeys[0]).toEqual({
        id: kept.id,
        name: 'kept',
        role: 'Admin',
        status: 'active',
        createdAt: expect.any(String),
        createdBy: null,
        expiresAt: kept.expiresAt,
        lastUsedAt: null,
        revokedAt: null,
      });
      const all = await ok('api-key:list', '--workspace', workspace.name, '--all');
      expect(all.apiKeys.map((k: any) => [k.name, k.status]).sort()).toEqual([
        ['expired', 'expired'],
        ['kept', 'active'],
        ['revoked', 'revoked'],
      ]);

      const text = await cli(['api-key:list', '--workspace', workspace.id, '--all']);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain(`${revoked.id}  revoked  Viewer  "revoked"`);
      const { rows } = await db.query('SELECT secret_hash FROM api_keys WHERE workspace_id = $1', [workspace.id]);
      const printed = JSON.stringify(all) + text.stdout;
      for (const secret of [kept.secret, revoked.secret, expired.secret, ...rows.map((r: any) => r.secret_hash)]) {
        expect(printed).not.toContain(secret);
      }
      expect(printed).not.toMatch(/wrs_/);
      expect(
        (await cli(['api-key:list', '--workspace', (await ok('workspace:create', '--name', unique('no-keys'))).id])).stdout.trim(),
      ).toBe('No API keys (revoked keys: --all).');
    });
  });

  describe('user:set-password', () => {
    /** accounts' own check, the one the sign-in pages use, over the test's connection. */
    const signsIn = (email: string, password: string) =>
      verifyCredentials(
        { query: (sql: string, params: unknown[]) => db.query(sql, params).then((r) => r.rows) } as unknown as DataSource,
        email,
        password,
      );

    async function newUser(): Promise<{ id: string; email: string }> {
      const workspace = await ok('workspace:create', '--name', unique('pw'));
      const email = `${unique('pw')}@example.com`;
      return ok('user:create', '--email', email, '--password', 'the first password', '--workspace', workspace.id, '--role', 'Member');
    }

    it('sets the given password (not printed); the old one stops working; sessions and the account throttle end', async () => {
      const user = await newUser();
      const accountKey = createHash('sha256').update(user.email.toLowerCase()).digest('hex');
      await db.query(`INSERT INTO web_sessions (id_hash, user_id, csrf_token, expires_at) VALUES ($1, $2, 'x', now() + interval '1 day')`, [
        randomBytes(32).toString('hex'),
        user.id,
      ]);
      await db.query(`INSERT INTO oidc_models (model, id, payload) VALUES ('Session', $1, $2)`, [
        randomBytes(32).toString('hex'),
        { accountId: user.id },
      ]);
      await db.query(`INSERT INTO auth_throttle (key, points, expire) VALUES ($1, 10, $2)`, [
        `signin-account:${accountKey}`,
        Date.now() + 600_000,
      ]);

      const password = 'a brand new password';
      const result = await cli(['user:set-password', '--email', user.email.toUpperCase(), '--password', password, '--json']);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(result.stdout).not.toContain(password);
      expect(oneObject(result.stdout)).toEqual({ id: user.id, email: user.email });

      expect(await signsIn(user.email, password)).toEqual({ id: user.id, email: user.email });
      expect(await signsIn(user.email, 'the first password')).toBeUndefined();
      const counts = await db.query(
        `SELECT (SELECT count(*)::int FROM web_sessions WHERE user_id = $1) AS web,
                (SELECT count(*)::int FROM oidc_models WHERE model = 'Session' AND payload->>'accountId' = $1::text) AS provider,
                (SELECT count(*)::int FROM auth_throttle WHERE key = $2) AS throttle`,
        [user.id, `signin-account:${accountKey}`],
      );
      expect(counts.rows[0]).toEqual({ web: 0, provider: 0, throttle: 0 });
    });

    it('without --password generates a strong one and prints it once', async () => {
      const user = await newUser();
      const generated = await ok('user:set-password', '--email', user.email);
      expect(generated).toEqual({ id: user.id, email: user.email, password: expect.stringMatching(/^[A-Za-z0-9_-]{24,}$/) });
      expect(await signsIn(user.email, generated.password)).toEqual({ id: user.id, email: user.email });

      const text = await cli(['user:set-password', '--email', user.email]);
      expect(text.code).toBe(0);
      const printed = /^ {2}(\S+)$/m.exec(text.stdout)![1];
      expect(text.stdout).toMatch(/shown only once/);
      expect(printed).not.toBe(generated.password);
      expect(await signsIn(user.email, printed)).toEqual({ id: user.id, email: user.email });
    });

    it('refuses an unknown e-mail and a password shorter than sign-up allows, changing nothing', async () => {
      const unknown = await fails('user:set-password', '--email', `${unique('nobody')}@example.com`, '--password', 'long enough pw');
      expect(unknown).toEqual({ code: 'NOT_FOUND', message: expect.stringMatching(/^No user with e-mail /) });

      const user = await newUser();
      const short = await fails('user:set-password', '--email', user.email, '--password', 'short');
      expect(short).toEqual({ code: 'VALIDATION_FAILED', message: 'password must be at least 8 characters' });
      expect(await signsIn(user.email, 'the first password')).toEqual({ id: user.id, email: user.email });
    });
  });

  it('reports a missing option as one error object with --json', async () => {
    const error = await fails('workspace:create');
    expect(error.message).toContain('--name');
  });

  it('has --help for the program and each command', async () => {
    const commands = [
      'workspace:create',
      'workspace:list',
      'member:list',
      'api-key:list',
      'user:create',
      'member:add',
      'api-key:create',
      'api-key:revoke',
      'role:list',
      'user:set-password',
    ];
    const main = await cli(['--help']);
    expect(main.code).toBe(0);
    for (const command of commands) expect(main.stdout).toContain(command);
    const helps = await Promise.all(commands.map((command) => cli([command, '--help'])));
    helps.forEach((help, i) => {
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`${commands[i]} [options]`);
      expect(help.stdout).toContain('--json');
    });
    expect(helps[commands.indexOf('api-key:create')].stdout).toMatch(/15d.*30d.*90d.*1y/s);
  });

  it('keeps --json output clean when it has to start the embedded Postgres itself', async () => {
    const root = mkdtempSync(join(tmpdir(), 'wrs-cli-'));
    chmodSync(root, 0o755); // as root the server runs as user postgres, which must enter it
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, WRS_ROOT: root, DATA_DIR: '' };
      delete env.DATABASE_URL;
      const result = await cli(['workspace:create', '--name', 'Embedded', '--json'], env);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(oneObject(result.stdout)).toEqual({ id: expect.any(String), name: 'Embedded' });
      expect(existsSync(join(root, '.data', 'pg', 'postmaster.pid'))).toBe(false); // stopped again
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('seedDemoIfEmpty', () => {
  const db = useEmptyDatabase('seed');

  it('fills an empty database once, then does nothing', async () => {
    const text = await seedDemoIfEmpty(db.ds, 'http://localhost:4321');
    expect(text).toContain('http://localhost:4321/login');
    expect(text).toContain(DEMO_ADMIN_EMAIL);

    const count = async (sql: string) => Number((await db.ds.query(sql))[0].n);
    expect(await count('SELECT count(*) AS n FROM workspaces')).toBe(1);
    expect(await count('SELECT count(*) AS n FROM companies')).toBeGreaterThanOrEqual(18);
    expect(await count('SELECT count(*) AS n FROM companies')).toBeLessThanOrEqual(22);
    expect(await count('SELECT count(*) AS n FROM people')).toBeGreaterThanOrEqual(45);
    expect(await count('SELECT count(*) AS n FROM people')).toBeLessThanOrEqual(55);
    expect(await count('SELECT count(*) AS n FROM people WHERE company_id IS NULL')).toBeGreaterThan(0);
    expect(await count('SELECT count(*) AS n FROM people WHERE company_id IS NOT NULL')).toBeGreaterThan(
      await count('SELECT count(*) AS n FROM people WHERE company_id IS NULL'),
    );
    // A linked person's e-mail is at their company's domain.
    expect(
      await count(
        `SELECT count(*) AS n FROM people p JOIN companies c ON c.workspace_id = p.workspace_id AND c.id = p.company_id
         WHERE p.primary_email NOT LIKE '%@' || regexp_replace(c.domain_primary_link_url, '^https?://', '')`,
      ),
    ).toBe(0);

    const members = await db.ds.query(
      `SELECT u.email, r.name AS role FROM workspace_members m JOIN users u ON u.id = m.user_id
       JOIN roles r ON r.workspace_id = m.workspace_id AND r.id = m.role_id`,
    );
    expect(members).toEqual([{ email: DEMO_ADMIN_EMAIL, role: 'Admin' }]);

    const keys = await db.ds.query(
      'SELECT k.secret_hash, k.expires_at, r.name AS role FROM api_keys k JOIN roles r ON r.workspace_id = k.workspace_id AND r.id = k.role_id',
    );
    expect(keys).toHaveLength(1);
    expect(keys[0].role).toBe('Admin');
    expectDaysFromNow(keys[0].expires_at.toISOString(), 90);
    const secret = text!.match(/wrs_[A-Za-z0-9_-]+/)![0];
    expect(keys[0].secret_hash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(text).toContain(`curl -H "Authorization: Bearer ${secret}" "http://localhost:4321/rest/companies?limit=5"`);

    expect(await seedDemoIfEmpty(db.ds, 'http://localhost:4321')).toBeUndefined();
    expect(await count('SELECT count(*) AS n FROM workspaces')).toBe(1);
    expect(await count('SELECT count(*) AS n FROM api_keys')).toBe(1);
  });
});
