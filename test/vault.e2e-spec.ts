import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { createApiKey, findRole } from '#identity/accounts.js';
import { createRole } from '#identity/roles.js';
import { createServerApp } from '#identity/server-apps.js';
import { revealSecret } from '#identity/vault.js';
import { FormBrowser } from '../bench/form-browser.js';
import { settingsJson, signInAt } from './settings-client.js';
import { PASSWORD, startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';
import { EchoReceiver, TEST_WORKER_ENV, sleep } from './webhook-receiver.js';

/**
 * The workspace vault (docs/vault.md) over real HTTP on both apps: `/rest/vault/secrets` for
 * keys and tokens (write-only values, reveal always 403 on REST, GraphQL and MCP), the
 * settings JSON API with the password check for reveals, webhook headers naming secrets and
 * filled in at delivery, and the value found nowhere it must not be: responses, errors,
 * audit details, delivery logs, any table of the database.
 */
const DAY = 86_400_000;
const OPERATOR = { userId: null, email: 'test' };
const REVEAL_MESSAGE = /signed-in member reveals a value in the app/;

/** Every table of the database as COPY … TO STDOUT writes it (what a dump holds), by table. */
async function copyEveryTable(url: string): Promise<Map<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ schemaname: string; tablename: string }>(
      `SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`,
    );
    const out = new Map<string, string>();
    for (const t of rows) {
      const stream = client.query(copyTo(`COPY "${t.schemaname}"."${t.tablename}" TO STDOUT`));
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      out.set(`${t.schemaname}.${t.tablename}`, Buffer.concat(chunks).toString('utf8'));
    }
    return out;
  } finally {
    await client.end();
  }
}

describe('The workspace vault', () => {
  let origin: PublicOrigin;
  let url: string;
  let echo: EchoReceiver;
  /** Every value the suite stored: none may show up where values must not. */
  const values: string[] = [];
  const newValue = (label: string) => {
    const v = `${label}-${randomBytes(18).toString('base64url')}`;
    values.push(v);
    return v;
  };

  beforeAll(async () => {
    echo = await new EchoReceiver().start();
    origin = await startPublicOrigin({ ...TEST_WORKER_ENV });
    url = origin.url;
  }, 60_000);
  afterAll(async () => {
    await origin?.close();
    await echo?.close();
  });

  const rest = (secret: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, {
      method,
      headers: {
        ...(secret ? { authorization: `Bearer ${secret}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })
      .then(async (res) => ({ status: res.status, text: await res.text() }))
      .then((r) => ({
        ...r,
        body: (() => {
          try {
            return JSON.parse(r.text);
          } catch {
            return r.text;
          }
        })(),
      }));

  async function keysOf(workspaceId: string) {
    const key = async (role: string) =>
      (
        await createApiKey(origin.ds, {
          workspaceId,
          role: await findRole(origin.ds, workspaceId, role),
          name: `${role} key`,
          expiresAt: new Date(Date.now() + DAY),
        })
      ).secret;
    const app = await createServerApp(origin.ds, { workspaceId, role: await findRole(origin.ds, workspaceId, 'Admin'), name: 'vault app' });
    const token = (await (
      await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials&scope=api',
      })
    ).json()) as { access_token: string };
    return { admin: await key('Admin'), viewer: await key('Viewer'), token: token.access_token };
  }

  const signIn = (email: string) => signInAt(url, email);
  const csrf = (b: FormBrowser) => ({ 'x-csrf-token': b.cookie('wrs_csrf')! });
  const json = (b: FormBrowser | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    settingsJson(url, b, method, path, body, headers);

  it('the built-in Admin role holds VAULT, roles made by users do not unless given it, and the page is listed only for it', async () => {
    const { workspace, people } = await workspaceWith(origin.ds, ['Admin', 'Member'], 'vault-roles');
    const [admin] = await origin.ds.query(`SELECT settings_permissions FROM roles WHERE workspace_id = $1 AND name = 'Admin'`, [
      workspace.id,
    ]);
    expect(admin.settings_permissions).toContain('VAULT');
    const member = await signIn(people[1].email);
    expect((await json(member, 'GET', '/settings/api/vault/secrets')).status).toBe(403);
    await member.go(`${url}/settings/vault`);
    expect(member.lastStatus).toBe(403);
    const a = await signIn(people[0].email);
    await a.go(`${url}/settings`);
    expect(a.lastBody).toContain('href="/settings/vault"');
    const role = await createRole(origin.ds, workspace.id, {
      name: 'Vault keeper',
      description: '',
      objectPermissions: {},
      settingsPermissions: ['VAULT'],
      assignableToUsers: true,
      assignableToApiKeys: true,
    });
    expect(role.settingsPermissions).toEqual(['VAULT']);
  });

  it('REST: keys and tokens holding VAULT create, list, rotate and delete; values never come back', async () => {
    const { workspace } = await workspaceWith(origin.ds, [], 'vault-rest');
    const k = await keysOf(workspace.id);
    const v1 = newValue('crm');
    const created = await rest(k.admin, 'POST', '/rest/vault/secrets', { name: 'CRM_TOKEN', value: v1, description: 'CRM receiver' });
    expect(created.status).toBe(201);
    expect(created.body.data.createVaultSecret).toEqual({
      name: 'CRM_TOKEN',
      description: 'CRM receiver',
      createdAt: expect.any(String),
      rotatedAt: null,
      lastUsedAt: null,
    });
    const again = await rest(k.token, 'POST', '/rest/vault/secrets', { name: 'CRM_TOKEN', value: newValue('dup') });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('CONFLICT');
    // A create that is safe to retry: the same Idempotency-Key and body replay the first answer (kept without the value).
    const erp = { name: 'ERP_KEY', value: newValue('erp') };
    const idem = { 'idempotency-key': `vault-${randomBytes(8).toString('hex')}` };
    const viaToken = await rest(k.token, 'POST', '/rest/vault/secrets', erp, idem);
    expect(viaToken.status).toBe(201);
    const replayed = await rest(k.token, 'POST', '/rest/vault/secrets', erp, idem);
    expect(replayed.status).toBe(201);
    expect(replayed.body).toEqual(viaToken.body);
    expect((await rest(k.token, 'POST', '/rest/vault/secrets', { ...erp, value: newValue('erp2') }, idem)).status).toBe(422);
    // What is kept of it is keyed: a plain hash of the body would let a copy of the database confirm a guessed value.
    const [kept] = await origin.ds.query('SELECT fingerprint, body FROM idempotency_keys WHERE workspace_id = $1 AND key = $2', [
      workspace.id,
      idem['idempotency-key'],
    ]);
    const plain = createHash('sha256')
      .update(`POST /rest/vault/secrets\n${JSON.stringify(erp)}`)
      .digest('base64url');
    expect(kept.fingerprint).not.toBe(plain);
    expect(kept.body).not.toContain(erp.value);

    const list = await rest(k.admin, 'GET', '/rest/vault/secrets');
    expect(list.status).toBe(200);
    expect(list.body.data.vaultSecrets.map((s: { name: string }) => s.name)).toEqual(['CRM_TOKEN', 'ERP_KEY']);
    for (const s of list.body.data.vaultSecrets)
      expect(Object.keys(s).sort()).toEqual(['createdAt', 'description', 'lastUsedAt', 'name', 'rotatedAt']);

    const v2 = newValue('crm2');
    const rotated = await rest(k.admin, 'PATCH', '/rest/vault/secrets/CRM_TOKEN', { value: v2 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.updateVaultSecret.rotatedAt).toEqual(expect.any(String));
    const described = await rest(k.token, 'PATCH', '/rest/vault/secrets/ERP_KEY', { description: 'ERP' });
    expect(described.body.data.updateVaultSecret).toMatchObject({ description: 'ERP', rotatedAt: null });
    expect((await rest(k.admin, 'GET', '/rest/vault/secrets/ERP_KEY')).body.data.vaultSecret.description).toBe('ERP');
    const deleted = await rest(k.admin, 'DELETE', '/rest/vault/secrets/ERP_KEY');
    expect(deleted.body).toEqual({ data: { deleteVaultSecret: { name: 'ERP_KEY' } } });
    expect((await rest(k.admin, 'GET', '/rest/vault/secrets/ERP_KEY')).status).toBe(404);

    for (const r of [created, rotated, list, described]) for (const v of values) expect(r.text).not.toContain(v);
    const audit = await origin.ds.query(
      `SELECT action, actor_email, target_label, details::text FROM audit_log WHERE workspace_id = $1 ORDER BY created_at, action`,
      [workspace.id],
    );
    expect(audit.map((a: { action: string; target_label: string }) => `${a.action} ${a.target_label}`)).toEqual([
      'vault.create CRM_TOKEN',
      'vault.create ERP_KEY',
      'vault.rotate CRM_TOKEN',
      'vault.update ERP_KEY',
      'vault.delete ERP_KEY',
    ]);
    expect(audit[0].actor_email).toBe('API key "Admin key"');
    expect(audit[1].actor_email).toBe('server app "vault app"');
    for (const v of values) expect(JSON.stringify(audit)).not.toContain(v);
  });

  it('REST: bad names, a 9 KB value, unknown fields and bodies that are not JSON are 4xx in the error shape, and never echo the value', async () => {
    const { workspace } = await workspaceWith(origin.ds, [], 'vault-bad');
    const { admin } = await keysOf(workspace.id);
    const secret = newValue('bad');
    for (const name of ['crm_token', '1TOKEN', '_TOKEN', 'CRM-TOKEN', 'CRM TOKEN', '', `A${'B'.repeat(64)}`, 'ÄPFEL', 42, null]) {
      const res = await rest(admin, 'POST', '/rest/vault/secrets', { name, value: secret });
      expect({ name, status: res.status, code: res.body.code }).toEqual({ name, status: 400, code: 'VALIDATION_FAILED' });
      expect(res.body.messages.join(' ')).toMatch(/name must be 1 to 64 capital letters/);
      expect(res.text).not.toContain(secret);
    }
    expect((await rest(admin, 'POST', '/rest/vault/secrets', { name: `A${'B'.repeat(63)}`, value: 'x' })).status).toBe(201);

    const nineKb = `${secret}${'x'.repeat(9 * 1024)}`;
    const big = await rest(admin, 'POST', '/rest/vault/secrets', { name: 'BIG', value: nineKb });
    expect(big.status).toBe(400);
    expect(big.body.messages).toEqual([`value must be at most 8192 bytes (UTF-8); got ${Buffer.byteLength(nineKb)}`]);
    expect(big.text).not.toContain(secret);
    // 8192 bytes exactly, in two-byte characters, fits; one more byte does not.
    expect((await rest(admin, 'POST', '/rest/vault/secrets', { name: 'EXACT', value: 'é'.repeat(4096) })).status).toBe(201);
    expect((await rest(admin, 'PATCH', '/rest/vault/secrets/EXACT', { value: `${'é'.repeat(4096)}x` })).status).toBe(400);
    expect((await rest(admin, 'POST', '/rest/vault/secrets', { name: 'EMPTY', value: '' })).body.messages).toEqual([
      'value must not be empty',
    ]);
    expect((await rest(admin, 'POST', '/rest/vault/secrets', { name: 'OBJ', value: { a: secret } })).status).toBe(400);
    const unknown = await rest(admin, 'POST', '/rest/vault/secrets', { name: 'X', value: secret, owner: 'me' });
    expect(unknown.body).toMatchObject({
      statusCode: 400,
      code: 'VALIDATION_FAILED',
      messages: [expect.stringMatching(/unknown field owner/)],
    });
    expect(
      (await rest(admin, 'POST', '/rest/vault/secrets', `name=X&value=${secret}`, { 'content-type': 'application/x-www-form-urlencoded' }))
        .status,
    ).toBe(415);
    expect((await rest(admin, 'POST', '/rest/vault/secrets', '{"name":"X","value":', {})).status).toBe(400);
    expect((await rest(admin, 'PATCH', '/rest/vault/secrets/EXACT', {})).status).toBe(400);
    expect((await rest(admin, 'GET', '/rest/vault/secrets?limit=5')).status).toBe(400);
    // Nothing of the refused writes was kept.
    const names = (await rest(admin, 'GET', '/rest/vault/secrets')).body.data.vaultSecrets.map((s: { name: string }) => s.name);
    expect(names).toEqual([`A${'B'.repeat(63)}`, 'EXACT']);
  });

  it('concurrent first secrets share one data key; the same name at once is created once; a body over 1 MB is 413', async () => {
    const { workspace } = await workspaceWith(origin.ds, [], 'vault-race');
    const { admin } = await keysOf(workspace.id);
    const many = Array.from({ length: 8 }, (_, i) => ({ name: `RACE_${i}`, value: newValue(`race${i}`) }));
    const made = await Promise.all(many.map((m) => rest(admin, 'POST', '/rest/vault/secrets', m)));
    expect(made.map((r) => r.status)).toEqual(many.map(() => 201));
    const [{ keys }] = await origin.ds.query('SELECT count(*)::int AS keys FROM vault_keys WHERE workspace_id = $1', [workspace.id]);
    expect(keys).toBe(1);
    for (const m of many) expect((await revealSecret(origin.ds, workspace.id, OPERATOR, m.name)).value).toBe(m.value);
    const same = await Promise.all(
      Array.from({ length: 5 }, () => rest(admin, 'POST', '/rest/vault/secrets', { name: 'ONCE', value: newValue('once') })),
    );
    expect(same.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const huge = await rest(admin, 'POST', '/rest/vault/secrets', { name: 'HUGE', value: 'x'.repeat(2 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('revealing is never available to a key or a token: REST, GraphQL and MCP answer 403 FORBIDDEN saying to reveal it in the app', async () => {
    const { workspace } = await workspaceWith(origin.ds, [], 'vault-reveal');
    const k = await keysOf(workspace.id);
    const secret = newValue('reveal');
    expect((await rest(k.admin, 'POST', '/rest/vault/secrets', { name: 'CRM_TOKEN', value: secret })).status).toBe(201);
    const attempts: [string, string][] = [
      ['GET', '/rest/vault/secrets/CRM_TOKEN/value'],
      ['POST', '/rest/vault/secrets/CRM_TOKEN/value'],
      ['POST', '/rest/vault/secrets/CRM_TOKEN/reveal'],
      ['GET', '/rest/vault/secrets/CRM_TOKEN/reveal'],
      ['GET', '/rest/vault/secrets/CRM_TOKEN?reveal'],
      ['GET', '/rest/vault/secrets/CRM_TOKEN?reveal=true'],
      ['GET', '/rest/vault/secrets?reveal=1'],
      ['GET', '/rest/vault/secrets/MISSING/value'],
    ];
    for (const credential of [k.admin, k.token, k.viewer]) {
      for (const [method, path] of attempts) {
        const res = await rest(credential, method, path);
        expect({ method, path, status: res.status, code: res.body.code }).toEqual({ method, path, status: 403, code: 'FORBIDDEN' });
        expect(res.body.messages).toEqual([expect.stringMatching(REVEAL_MESSAGE)]);
        expect(res.text).not.toContain(secret);
      }
      const gql = await rest(credential, 'POST', '/graphql', { query: '{ vaultSecretValue(name: "CRM_TOKEN") }' });
      expect(gql.body.data?.vaultSecretValue ?? null).toBeNull();
      expect(gql.body.errors).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(REVEAL_MESSAGE),
          extensions: expect.objectContaining({ code: 'FORBIDDEN' }),
        }),
      ]);
      expect(gql.text).not.toContain(secret);
      const mcp = await rest(
        credential,
        'POST',
        '/mcp',
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'reveal_vault_secret', arguments: { name: 'CRM_TOKEN' } } },
        { accept: 'application/json, text/event-stream' },
      );
      expect(mcp.status).toBe(200);
      expect(mcp.body.result.isError).toBe(true);
      expect(mcp.body.result.content[0].text).toMatch(/^FORBIDDEN: .*signed-in member reveals a value in the app/);
      expect(mcp.text).not.toContain(secret);
    }
    const tools = await rest(
      k.admin,
      'POST',
      '/mcp',
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
      { accept: 'application/json, text/event-stream' },
    );
    expect(tools.body.result.tools.map((t: { name: string }) => t.name)).not.toContain('reveal_vault_secret');
  });

  it('without credentials every vault route is 401; without VAULT it is 403; another workspace’s secret behaves as missing', async () => {
    const a = await workspaceWith(origin.ds, [], 'vault-a');
    const b = await workspaceWith(origin.ds, ['Admin'], 'vault-b');
    const ka = await keysOf(a.workspace.id);
    const kb = await keysOf(b.workspace.id);
    const secret = newValue('tenant');
    expect((await rest(ka.admin, 'POST', '/rest/vault/secrets', { name: 'ONLY_A', value: secret })).status).toBe(201);
    for (const [method, path] of [
      ['GET', '/rest/vault/secrets'],
      ['POST', '/rest/vault/secrets'],
      ['GET', '/rest/vault/secrets/ONLY_A'],
      ['PATCH', '/rest/vault/secrets/ONLY_A'],
      ['DELETE', '/rest/vault/secrets/ONLY_A'],
      ['GET', '/rest/vault/secrets/ONLY_A/value'],
    ]) {
      expect({ method, path, status: (await rest(undefined, method, path)).status }).toEqual({ method, path, status: 401 });
      expect({ method, path, status: (await rest('wrs_not-a-key', method, path)).status }).toEqual({ method, path, status: 401 });
    }
    const viewer = await rest(ka.viewer, 'GET', '/rest/vault/secrets');
    expect(viewer.body).toMatchObject({ statusCode: 403, code: 'FORBIDDEN', messages: [expect.stringMatching(/VAULT permission/)] });
    expect((await rest(ka.viewer, 'POST', '/rest/vault/secrets', { name: 'SNEAK', value: 'x' })).status).toBe(403);
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { value: 'overwritten' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await rest(kb.admin, method, '/rest/vault/secrets/ONLY_A', body);
      expect({ method, status: res.status, code: res.body.code }).toEqual({ method, status: 404, code: 'NOT_FOUND' });
    }
    expect((await rest(kb.admin, 'GET', '/rest/vault/secrets')).body.data.vaultSecrets).toEqual([]);
    // B may have its own ONLY_A; A's is untouched.
    expect((await rest(kb.admin, 'POST', '/rest/vault/secrets', { name: 'ONLY_A', value: newValue('b') })).status).toBe(201);
    expect((await rest(ka.admin, 'GET', '/rest/vault/secrets/ONLY_A')).body.data.vaultSecret.rotatedAt).toBeNull();
    // A webhook of B naming A's secret (now deleted from B again) is refused as missing.
    expect((await rest(kb.admin, 'DELETE', '/rest/vault/secrets/ONLY_A')).status).toBe(200);
    const m = await signIn(b.people[0].email);
    const hook = await json(
      m,
      'POST',
      '/settings/api/webhooks',
      // Headers naming the vault need the password typed lately (docs/vault.md, "Used by webhooks").
      { url: echo.url, headers: [{ name: 'Authorization', value: 'Bearer {{vault.ONLY_A}}' }], password: PASSWORD },
      csrf(m),
    );
    expect(hook.status).toBe(400);
    expect(hook.body.messages).toEqual([expect.stringMatching(/\{\{vault\.ONLY_A\}\} names no secret of this workspace's vault/)]);
    // A value sealed for A, copied into B's row, does not open there (bound to its workspace and name).
    const [row] = await origin.ds.query(`SELECT value_sealed FROM vault_secrets WHERE workspace_id = $1 AND name = 'ONLY_A'`, [
      a.workspace.id,
    ]);
    expect((await json(m, 'POST', '/settings/api/vault/secrets', { name: 'ONLY_A', value: 'b-value' }, csrf(m))).status).toBe(201);
    await origin.ds.query(`UPDATE vault_secrets SET value_sealed = $2 WHERE workspace_id = $1 AND name = 'ONLY_A'`, [
      b.workspace.id,
      row.value_sealed,
    ]);
    const stolen = await json(m, 'POST', '/settings/api/vault/secrets/ONLY_A/reveal', { password: PASSWORD }, csrf(m));
    expect(stolen.status).toBe(503);
    expect(JSON.stringify(stolen.body)).not.toContain(secret);
  });

  it('the settings API reveals a value only with the password typed within 5 minutes, and audits who, when and which', async () => {
    const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'vault-settings');
    // Without a session: 401 on the API (a bearer token is no session), the page sends to sign-in.
    const { admin } = await keysOf(workspace.id);
    expect((await json(undefined, 'GET', '/settings/api/vault/secrets')).status).toBe(401);
    expect((await json(undefined, 'GET', '/settings/api/vault/secrets', undefined, { authorization: `Bearer ${admin}` })).status).toBe(401);
    const anonymous = new FormBrowser();
    await anonymous.go(`${url}/settings/vault`);
    expect(anonymous.lastUrl).toMatch(/\/login\?return=%2Fsettings%2Fvault$/);
    const b = await signIn(people[0].email);
    const secret = newValue('settings');
    const created = await json(
      b,
      'POST',
      '/settings/api/vault/secrets',
      { name: 'CRM_TOKEN', value: secret, description: 'for the CRM' },
      csrf(b),
    );
    expect(created.status).toBe(201);
    expect(JSON.stringify(created.body)).not.toContain(secret);
    // CSRF and bearer rules of the settings API hold here too.
    expect((await json(b, 'POST', '/settings/api/vault/secrets/CRM_TOKEN/reveal', { password: PASSWORD })).status).toBe(403);
    const reveal = (body: unknown) => json(b, 'POST', '/settings/api/vault/secrets/CRM_TOKEN/reveal', body, csrf(b));

    const none = await reveal({});
    expect(none.status).toBe(403);
    expect(none.body.messages).toEqual([expect.stringMatching(/Type your password to reveal a value/)]);
    const wrong = await reveal({ password: 'not the password' });
    expect(wrong.status).toBe(403);
    expect(wrong.body.messages).toEqual(['Wrong password: nothing was revealed']);
    expect((await reveal({ password: 42 })).status).toBe(400);
    const right = await reveal({ password: PASSWORD });
    expect(right.status).toBe(200);
    expect(right.body.data.vaultSecretValue).toEqual({ name: 'CRM_TOKEN', value: secret, hideAfterSeconds: 30 });
    // Within 5 minutes the password is not asked again; a wrong one is still refused.
    expect((await reveal({})).body.data.vaultSecretValue.value).toBe(secret);
    expect((await reveal({ password: 'wrong again' })).status).toBe(403);
    // 6 minutes later (the session's check moved back in the database) it is asked again.
    await origin.ds.query(`UPDATE web_sessions SET password_confirmed_at = now() - interval '6 minutes' WHERE user_id = $1`, [
      people[0].id,
    ]);
    expect((await reveal({})).status).toBe(403);
    // Another browser of the same member has not typed it.
    const other = await signIn(people[0].email);
    expect((await json(other, 'POST', '/settings/api/vault/secrets/CRM_TOKEN/reveal', {}, csrf(other))).status).toBe(403);
    expect((await json(b, 'POST', '/settings/api/vault/secrets/NOPE/reveal', { password: PASSWORD }, csrf(b))).status).toBe(404);

    const audit = await origin.ds.query(
      `SELECT action, actor_user_id, actor_email, target_label, details::text, created_at FROM audit_log WHERE workspace_id = $1 AND action = 'vault.reveal'`,
      [workspace.id],
    );
    expect(audit).toHaveLength(2);
    expect(audit[0]).toMatchObject({ actor_user_id: people[0].id, actor_email: people[0].email, target_label: 'CRM_TOKEN', details: '{}' });
    const page = await json(b, 'GET', '/settings/audit');
    expect(String(page.body)).not.toContain(secret);
  });

  it('webhook headers: {{vault.NAME}} is filled in at delivery only, the delivery log never holds it, lastUsedAt moves; bad headers are refused', async () => {
    const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'vault-hooks');
    const b = await signIn(people[0].email);
    const { admin } = await keysOf(workspace.id);
    const secret = newValue('token');
    expect((await rest(admin, 'POST', '/rest/vault/secrets', { name: 'CRM_TOKEN', value: secret })).status).toBe(201);

    const bad: [unknown, RegExp][] = [
      [[{ name: 'Authorization', value: 'Bearer {{vault.MISSING}}' }], /\{\{vault\.MISSING\}\} names no secret/],
      [[{ name: 'Host', value: 'evil.example' }], /Host is set by the connection or by the service/],
      [[{ name: 'Content-Length', value: '1' }], /Content-Length is set by/],
      [[{ name: 'Transfer-Encoding', value: 'chunked' }], /Transfer-Encoding is set by/],
      [[{ name: 'Connection', value: 'close' }], /Connection is set by/],
      [[{ name: 'Webhook-Signature', value: 'v1,forged' }], /Webhook-Signature is set by/],
      [[{ name: 'X Bad', value: 'x' }], /must be a header name/],
      [[{ name: 'X-Split', value: 'a\r\nX-Injected: 1' }], /no line breaks/],
      [[{ name: 'X-Other', value: '{{env.HOME}}' }], /placeholder other than \{\{vault\.NAME\}\}/],
      [[{ name: 'X-Long', value: 'x'.repeat(1025) }], /at most 1024 characters/],
      [
        [
          { name: 'X-A', value: '1' },
          { name: 'x-a', value: '2' },
        ],
        /given twice/,
      ],
      [Array.from({ length: 11 }, (_, i) => ({ name: `X-H${i}`, value: 'v' })), /at most 10/],
      ['Authorization: Bearer x', /headers must be a list/],
    ];
    for (const [headers, message] of bad) {
      // Headers naming the vault need the password typed lately; typed here, it holds for the page's forms below.
      const res = await json(b, 'POST', '/settings/api/webhooks', { url: echo.url, headers, password: PASSWORD }, csrf(b));
      expect({ headers, status: res.status, code: res.body.code }).toEqual({ headers, status: 400, code: 'VALIDATION_FAILED' });
      expect(res.body.messages.join(' ')).toMatch(message);
    }
    // The page's form: one `Name: value` per line; a missing secret is explained on the page.
    const form = (headers: string) =>
      b.go(`${url}/settings/webhooks`, {
        method: 'POST',
        form: { _csrf: b.cookie('wrs_csrf')!, url: echo.url, operations: 'company.created', headers },
      });
    await form('Authorization: Bearer {{vault.MISSING}}');
    expect(b.lastStatus).toBe(400);
    expect(b.lastBody).toContain('{{vault.MISSING}} names no secret of this workspace&#39;s vault');
    const [{ n }] = await origin.ds.query('SELECT count(*)::int AS n FROM webhooks WHERE workspace_id = $1', [workspace.id]);
    expect(n).toBe(0);
    await form('X-Tenant: acme\nAuthorization: Bearer {{vault.CRM_TOKEN}}');
    expect(b.lastUrl).toMatch(/\/settings\/webhooks\/created\//);
    const [made] = await origin.ds.query('SELECT id, headers FROM webhooks WHERE workspace_id = $1', [workspace.id]);
    expect(made.headers).toEqual([
      { name: 'X-Tenant', value: 'acme' },
      { name: 'Authorization', value: 'Bearer {{vault.CRM_TOKEN}}' },
    ]);
    await b.go(`${url}/settings/webhooks/${made.id}`);
    expect(b.lastBody).toContain('X-Tenant: acme\nAuthorization: Bearer {{vault.CRM_TOKEN}}</textarea>');
    expect(b.lastBody).not.toContain(secret);
    expect((await json(b, 'DELETE', `/settings/api/webhooks/${made.id}`, undefined, csrf(b))).status).toBe(200);

    const hook = await json(
      b,
      'POST',
      '/settings/api/webhooks',
      { url: echo.url, operations: ['company.created'], headers: [{ name: 'Authorization', value: 'Bearer {{vault.CRM_TOKEN}}' }] },
      csrf(b),
    );
    expect(hook.status).toBe(201);
    expect(hook.body.data.createWebhook.headers).toEqual([{ name: 'Authorization', value: 'Bearer {{vault.CRM_TOKEN}}' }]);
    const id = hook.body.data.createWebhook.id;

    const deliveries = async (count: number) => {
      for (let i = 0; i < 300 && echo.auth.length < count; i++) await sleep(100);
      expect(echo.auth.length).toBeGreaterThanOrEqual(count);
    };
    const before = echo.auth.length;
    expect((await rest(admin, 'POST', '/rest/companies', { name: 'Vaulted' })).status).toBe(201);
    await deliveries(before + 1);
    expect(echo.auth[before]).toBe(`Bearer ${secret}`);
    // The answer echoed the value back: the delivery log keeps nothing of an answer to an attempt that sent vault values.
    for (let i = 0; i < 50; i++) {
      const rows = await origin.ds.query('SELECT 1 FROM webhook_attempts WHERE workspace_id = $1 AND webhook_id = $2', [workspace.id, id]);
      if (rows.length) break;
      await sleep(100);
    }
    const attempts = await json(b, 'GET', `/settings/api/webhooks/${id}/attempts`);
    expect(attempts.body.data.attempts[0]).toMatchObject({ statusCode: 200, responseExcerpt: '', responseWithheld: true });
    const used = (await rest(admin, 'GET', '/rest/vault/secrets/CRM_TOKEN')).body.data.vaultSecret;
    expect(used.lastUsedAt).toEqual(expect.any(String));

    // In use: the secret cannot be deleted; rotated, the next delivery sends the new value.
    const del = await rest(admin, 'DELETE', '/rest/vault/secrets/CRM_TOKEN');
    expect(del.status).toBe(409);
    expect(del.body.messages).toEqual([expect.stringMatching(/CRM_TOKEN is used by the webhook/)]);
    const rotated = newValue('rotated');
    expect((await rest(admin, 'PATCH', '/rest/vault/secrets/CRM_TOKEN', { value: rotated })).status).toBe(200);
    expect((await rest(admin, 'POST', '/rest/companies', { name: 'Rotated' })).status).toBe(201);
    await deliveries(before + 2);
    expect(echo.auth[before + 1]).toBe(`Bearer ${rotated}`);

    // A value a header cannot carry fails the attempt, naming the header, never the value.
    const multiline = `${newValue('pem')}\nsecond line`;
    values.push(multiline.split('\n')[0]);
    expect((await rest(admin, 'POST', '/rest/vault/secrets', { name: 'PEM', value: multiline })).status).toBe(201);
    expect(
      (await json(b, 'PATCH', `/settings/api/webhooks/${id}`, { headers: [{ name: 'X-Key', value: '{{vault.PEM}}' }] }, csrf(b))).status,
    ).toBe(200);
    expect((await rest(admin, 'POST', '/rest/companies', { name: 'Broken header' })).status).toBe(201);
    let failed: { error: string | null } | undefined;
    for (let i = 0; i < 100 && !failed; i++) {
      failed = (await json(b, 'GET', `/settings/api/webhooks/${id}/attempts`)).body.data.attempts.find(
        (a: { error: string | null }) => a.error,
      );
      if (!failed) await sleep(100);
    }
    expect(failed!.error).toMatch(/header X-Key: a vault value it names holds line breaks/);
    // Deleted: the header no longer names it.
    expect((await rest(admin, 'DELETE', '/rest/vault/secrets/CRM_TOKEN')).status).toBe(200);
    const auditDetails = await origin.ds.query(`SELECT details::text FROM audit_log WHERE workspace_id = $1`, [workspace.id]);
    for (const v of values) expect(JSON.stringify(auditDetails)).not.toContain(v);
  }, 60_000);

  it('no table of the database holds a value: COPY of every table, grepped for each value stored (and rotated away)', async () => {
    expect(values.length).toBeGreaterThan(8);
    const tables = await copyEveryTable(process.env.DATABASE_URL!);
    expect(tables.has('public.vault_secrets')).toBe(true);
    expect(tables.has('public.webhook_attempts')).toBe(true);
    const found = [...tables].flatMap(([table, text]) =>
      values.filter((v) => text.includes(v)).map((v) => `${v.split('-')[0]} in ${table}`),
    );
    expect(found).toEqual([]);
    // The sealed values are there, and open with nothing the database holds (see test/webhooks-vault.e2e-spec.ts for key material).
    expect(tables.get('public.vault_secrets')).toMatch(/CRM_TOKEN\tv2\./);
    const master = Buffer.from(process.env.VAULT_MASTER_KEY!, 'base64');
    const all = [...tables.values()].join('\n');
    for (const form of [master.toString('base64'), master.toString('hex')]) expect(all).not.toContain(form);
  }, 60_000);
});
