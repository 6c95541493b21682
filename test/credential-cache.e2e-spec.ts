import type { INestApplication } from '@nestjs/common';
import * as oidc from 'openid-client';
import pg from 'pg';
import { CredentialCache } from '#auth/credential-cache.js';
import { createApiKey, findRole, revokeApiKey } from '#identity/accounts.js';
import { removeMember } from '#identity/members.js';
import { createRole, updateRole, type RoleInput } from '#identity/roles.js';
import { createServerApp, deleteServerApp } from '#identity/server-apps.js';
import { createWebhook } from '#webhooks/webhooks.js';
import { createField } from '#identity/data-model.js';
import { createRecordsApi } from '../apps/records-api/src/bootstrap.js';
import { useEmptyDatabase } from './factories.js';
import { authorizationCode } from './oauth-flow.js';
import { freePort, startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';

/**
 * Issue 12: the records API keeps resolved credentials in memory, yet revocation, expiry
 * and role changes apply on the next request on every instance. Two records APIs (A, with
 * the auth server, and B) on a database of their own, so no other suite's writes announce
 * changes here; each request below says which instance it goes to.
 */
const REDIRECT = 'http://127.0.0.1:8766/callback';
const insecure = { execute: [oidc.allowInsecureRequests] };
const LISTENER = 'records-api credential listener';

describe('credential cache across two instances', () => {
  const db = useEmptyDatabase('credcache');
  let origin: PublicOrigin;
  let b: INestApplication;
  let urlB: string;
  let admin: pg.Client;

  beforeAll(async () => {
    origin = await startPublicOrigin({ DATABASE_URL: db.url });
    const saved = { ...process.env };
    const port = await freePort();
    Object.assign(process.env, { DATABASE_URL: db.url, PUBLIC_URL: origin.url, PORT: String(port) });
    try {
      b = await createRecordsApi();
      await b.listen(port, '127.0.0.1');
    } finally {
      process.env = saved;
    }
    urlB = `http://127.0.0.1:${port}`;
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  db.beforeDrop(async () => {
    await admin?.end();
    await b?.close();
    await origin?.close();
  });

  const cacheOf = (instance: 'A' | 'B') => (instance === 'A' ? origin.api : b).get(CredentialCache);
  const get = async (instance: 'A' | 'B', token: string, path = '/rest/companies') => {
    const res = await fetch(`${instance === 'A' ? origin.url : urlB}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, messages: res.status >= 400 ? ((await res.json()) as { messages: string[] }).messages : [] };
  };
  const statuses = async (token: string, path?: string) => [(await get('A', token, path)).status, (await get('B', token, path)).status];

  /** A change written with triggers off (session_replication_role = replica): nothing is announced. */
  const silently = async (sql: string, params: unknown[]) => {
    await admin.query('SET session_replication_role = replica');
    try {
      await admin.query(sql, params);
    } finally {
      await admin.query('SET session_replication_role = DEFAULT');
    }
  };

  async function adminKey(label: string, expiresAt = new Date(Date.now() + 86_400_000)) {
    const { workspace } = await workspaceWith(db.ds, [], label);
    const key = await createApiKey(db.ds, {
      workspaceId: workspace.id,
      role: await findRole(db.ds, workspace.id, 'Admin'),
      name: label,
      expiresAt,
    });
    return { workspaceId: workspace.id, ...key };
  }

  /** A workspace with an Admin server app, and an access token of that app (client credentials). */
  async function serverAppToken(label: string) {
    const { workspace } = await workspaceWith(db.ds, [], label);
    const app = await createServerApp(db.ds, {
      workspaceId: workspace.id,
      role: await findRole(db.ds, workspace.id, 'Admin'),
      name: 'sync job',
    });
    const res = await fetch(`${origin.url}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'api' }).toString(),
    });
    const { access_token: token } = (await res.json()) as { access_token: string };
    return { workspace, app, token };
  }

  it('serves a credential it has seen from memory, and drops it when a change moves the version', async () => {
    await waitFor(() => cacheOf('A').active && cacheOf('B').active);
    const key = await adminKey('served');
    expect((await get('A', key.secret)).status).toBe(200);
    await silently('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
    // A kept the principal; B never saw the key and reads the database.
    expect((await get('A', key.secret)).status).toBe(200);
    expect((await get('B', key.secret)).status).toBe(401);
    // What every change does in its transaction: the version moves. The very next request sees it.
    await admin.query('UPDATE credential_changes SET version = version + 1');
    expect((await get('A', key.secret)).status).toBe(401);
  });

  it('never lets a revoked key through on the request right after the revocation', async () => {
    // NOTIFY alone arrives a moment after COMMIT; the version read makes the next request exact.
    for (let i = 0; i < 25; i++) {
      const key = await adminKey(`race-${i}`);
      expect(await statuses(key.secret)).toEqual([200, 200]);
      await revokeApiKey(db.ds, key.id);
      expect(await statuses(key.secret)).toEqual([401, 401]);
    }
  });

  it('refuses a revoked API key on the next request on both instances', async () => {
    const key = await adminKey('revoked');
    expect(await statuses(key.secret)).toEqual([200, 200]);
    expect(await statuses(key.secret)).toEqual([200, 200]);
    await revokeApiKey(db.ds, key.id);
    expect(await statuses(key.secret)).toEqual([401, 401]);
    expect((await get('B', key.secret)).messages[0]).toMatch(/revoked/);
  });

  it('applies a role change on the next request on both instances', async () => {
    const { workspace } = await workspaceWith(db.ds, [], 'role-change');
    const input: RoleInput = {
      name: 'Readers',
      description: '',
      objectPermissions: { companies: { read: true, create: false, update: false, delete: false } } as RoleInput['objectPermissions'],
      settingsPermissions: [],
      assignableToUsers: true,
      assignableToApiKeys: true,
    };
    const role = await createRole(db.ds, workspace.id, input);
    const key = await createApiKey(db.ds, {
      workspaceId: workspace.id,
      role,
      name: 'reader',
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    expect(await statuses(key.secret)).toEqual([200, 200]);
    await updateRole(db.ds, workspace.id, role.id, {
      ...input,
      objectPermissions: { companies: { read: false, create: false, update: false, delete: false } } as RoleInput['objectPermissions'],
    });
    expect(await statuses(key.secret)).toEqual([403, 403]);
  });

  it('refuses an API key once it expires, without any announcement', async () => {
    const key = await adminKey('expiring', new Date(Date.now() + 1500));
    expect(await statuses(key.secret)).toEqual([200, 200]);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expect(await statuses(key.secret)).toEqual([401, 401]);
    expect((await get('A', key.secret)).messages[0]).toMatch(/expired/);
  });

  it("refuses a deleted server app's access token on both instances", async () => {
    const { workspace, app, token } = await serverAppToken('app');
    expect(await statuses(token)).toEqual([200, 200]);
    await deleteServerApp(db.ds, workspace.id, app.id);
    expect(await statuses(token)).toEqual([401, 401]);
  });

  it("refuses a person's access token on both instances once the grant is revoked, or the person removed", async () => {
    const { workspace, people } = await workspaceWith(db.ds, ['Admin', 'Member'], 'person');
    const config = await oidc.dynamicClientRegistration(
      new URL(origin.url),
      { redirect_uris: [REDIRECT], client_name: 'Cache test' },
      undefined,
      insecure,
    );
    const first = await authorizationCode(config, REDIRECT, people[1].email);
    const tokens = await oidc.authorizationCodeGrant(config, first.redirect, { pkceCodeVerifier: first.verifier });
    expect(await statuses(tokens.access_token)).toEqual([200, 200]);
    expect(await statuses(tokens.access_token, '/mcp')).not.toContain(401);
    await oidc.tokenRevocation(config, tokens.refresh_token!);
    expect(await statuses(tokens.access_token)).toEqual([401, 401]);

    const second = await authorizationCode(config, REDIRECT, people[1].email, first.browser);
    const more = await oidc.authorizationCodeGrant(config, second.redirect, { pkceCodeVerifier: second.verifier });
    expect(await statuses(more.access_token)).toEqual([200, 200]);
    await removeMember(db.ds, workspace.id, people[1].id);
    expect(await statuses(more.access_token)).toEqual([401, 401]);
    expect((await get('B', more.access_token)).messages[0]).toMatch(/no longer a member/);
  });

  describe('a create on a kept credential: the INSERT checks the version, no read before it', () => {
    const create = async (token: string, body: unknown) => {
      const res = await fetch(`${origin.url}/rest/companies`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { messages?: string[]; data?: { createCompany: { id: string } } } };
    };
    const named = async (workspaceId: string, name: string) =>
      (await admin.query('SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1 AND name = $2', [workspaceId, name])).rows[0]
        .n as number;
    /** The version reads A's cache sends on its own connection while `fn` runs. */
    const versionReads = async (fn: () => Promise<unknown>) => {
      const listener = (cacheOf('A') as unknown as { listener: pg.Client }).listener;
      const query = listener.query;
      let reads = 0;
      listener.query = ((...args: Parameters<pg.Client['query']>) => {
        if (/credential_changes/.test(String(args[0]))) reads++;
        return (query as (...a: unknown[]) => unknown).apply(listener, args);
      }) as pg.Client['query'];
      try {
        await fn();
      } finally {
        listener.query = query;
      }
      return reads;
    };
    /**
     * A key A keeps, with the version A last read current: making it moved the version, so
     * the second read reads the version (and with it the NOTIFY) first.
     */
    async function keptKey(label: string) {
      await waitFor(() => cacheOf('A').active);
      const key = await adminKey(label);
      expect(await statuses(key.secret)).toEqual([200, 200]);
      expect((await get('A', key.secret)).status).toBe(200);
      return key;
    }

    it('sends no version read before the INSERT', async () => {
      const key = await keptKey('no-read');
      let status = 0;
      expect(await versionReads(async () => (status = (await create(key.secret, { name: 'no-read 2' })).status))).toBe(0);
      expect(status).toBe(201);
      // Any other request still reads the version first.
      expect(await versionReads(() => get('A', key.secret))).toBe(1);
    });

    it('refuses a key revoked before the request (version moved, no announcement) with 401, and writes nothing', async () => {
      const key = await keptKey('revoked-create');
      await silently('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
      // Not yet a change anyone can see: the version did not move, so the key still holds, as for reads.
      expect((await create(key.secret, { name: 'before the version' })).status).toBe(201);
      await admin.query('UPDATE credential_changes SET version = version + 1');
      const refused = await create(key.secret, { name: 'after the version' });
      expect(refused.status).toBe(401);
      expect(refused.body.messages?.[0]).toMatch(/revoked/);
      expect(await named(key.workspaceId, 'after the version')).toBe(0);
    });

    it('answers a revoked key 401, not the error its body would get', async () => {
      const key = await keptKey('revoked-bad-body');
      const taken = (await create(key.secret, { name: 'taken' })).body.data!.createCompany.id;
      await silently('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
      await admin.query('UPDATE credential_changes SET version = version + 1');
      expect((await create(key.secret, { name: 42, nope: true })).status).toBe(401);
      // A 409 would name the record holding the id.
      expect((await create(key.secret, { id: taken, name: 'same id' })).status).toBe(401);
    });

    it('creates once, for the principal read anew, when an unrelated change moved the version', async () => {
      const key = await keptKey('moved');
      await admin.query('UPDATE credential_changes SET version = version + 1');
      const body = {
        name: 'once',
        domainName: { primaryLinkUrl: 'https://once.example.com', secondaryLinks: [{ url: 'https://b.example.com' }] },
      };
      const made = await create(key.secret, body);
      expect(made.status).toBe(201);
      // The second run wrote the body as sent (the first run changed nothing in it).
      expect(made.body.data?.createCompany).toMatchObject({
        name: 'once',
        domainName: { primaryLinkUrl: 'https://once.example.com', secondaryLinks: [{ url: 'https://b.example.com' }] },
      });
      expect(await named(key.workspaceId, 'once')).toBe(1);
    });

    it('applies a role change made before the request: 403, nothing written', async () => {
      const key = await keptKey('role-create');
      await silently(
        `UPDATE roles SET object_permissions = jsonb_set(object_permissions::jsonb, '{companies,create}', 'false')
          WHERE workspace_id = $1 AND name = 'Admin'`,
        [key.workspaceId],
      );
      await admin.query('UPDATE credential_changes SET version = version + 1');
      expect((await create(key.secret, { name: 'not allowed' })).status).toBe(403);
      expect(await named(key.workspaceId, 'not allowed')).toBe(0);
    });

    it('takes a custom field added before the request (the kept principal predates it): written once, with its value', async () => {
      const key = await keptKey('new-field');
      await db.ds.transaction(async (tx) => {
        await tx.query('SET LOCAL session_replication_role = replica'); // no NOTIFY: the entry stays
        await createField(
          tx,
          key.workspaceId,
          { userId: null, email: 'test@example.com' },
          { object: 'companies', name: 'tier', label: 'Tier', type: 'TEXT' },
        );
      });
      await admin.query('UPDATE credential_changes SET version = version + 1');
      const made = await create(key.secret, { name: 'with tier', tier: 'gold' });
      expect(made.status).toBe(201);
      expect((made.body.data?.createCompany as unknown as { tier: string }).tier).toBe('gold');
      expect(await named(key.workspaceId, 'with tier')).toBe(1);
    });

    it("refuses a server app's access token once the app is gone (no announcement): 401, nothing written", async () => {
      await waitFor(() => cacheOf('A').active);
      const { workspace, app, token } = await serverAppToken('app-create');
      expect(await statuses(token)).toEqual([200, 200]);
      expect((await get('A', token)).status).toBe(200);
      let status = 0;
      expect(await versionReads(async () => (status = (await create(token, { name: 'by the app' })).status))).toBe(0);
      expect(status).toBe(201);
      await silently('DELETE FROM server_apps WHERE workspace_id = $1 AND id = $2', [workspace.id, app.id]);
      await admin.query('UPDATE credential_changes SET version = version + 1');
      expect((await create(token, { name: 'after the app' })).status).toBe(401);
      expect(await named(workspace.id, 'after the app')).toBe(0);
    });

    it('under concurrent creates and a revocation: one record per 201, and every create sent after it is 401', async () => {
      const key = await keptKey('burst');
      const before = Array.from({ length: 20 }, () => create(key.secret, { name: 'burst' }).then((r) => r.status));
      await revokeApiKey(db.ds, key.id);
      const after = await Promise.all(Array.from({ length: 20 }, () => create(key.secret, { name: 'burst' }).then((r) => r.status)));
      const all = [...(await Promise.all(before)), ...after];
      expect(new Set(after)).toEqual(new Set([401]));
      expect(all.every((status) => status === 201 || status === 401)).toBe(true);
      expect(await named(key.workspaceId, 'burst')).toBe(all.filter((status) => status === 201).length);
    });

    it('with a webhook (the path with events checks no version): authenticates in full first, then writes once with its event', async () => {
      const key = await keptKey('watched-create');
      await createWebhook(
        db.ds,
        key.workspaceId,
        { url: 'http://127.0.0.1:9/hook', operations: ['company.created'] },
        { allowPrivate: true },
      );
      const made = await create(key.secret, { name: 'watched' });
      expect(made.status).toBe(201);
      expect(await named(key.workspaceId, 'watched')).toBe(1);
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE workspace_id = $1`, [key.workspaceId]);
      expect(rows[0].n).toBe(1);
      await silently('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
      await admin.query('UPDATE credential_changes SET version = version + 1');
      expect((await create(key.secret, { name: 'watched, revoked' })).status).toBe(401);
      expect(await named(key.workspaceId, 'watched, revoked')).toBe(0);
    });
  });

  it('does not hold requests behind a version read that hangs: it gives up, reads the credential, and reconnects', async () => {
    const key = await adminKey('stuck');
    expect((await get('A', key.secret)).status).toBe(200);
    // Nothing can read the version while this transaction holds the table.
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE credential_changes IN ACCESS EXCLUSIVE MODE');
      expect((await get('A', key.secret)).status).toBe(200);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    await waitFor(() => cacheOf('A').active && cacheOf('B').active);
    expect((await get('A', key.secret)).status).toBe(200);
  }, 30_000);

  it('reads every credential again while its LISTEN connection is down, and serves from memory once it is back', async () => {
    const key = await adminKey('listener');
    expect((await get('A', key.secret)).status).toBe(200);
    const before = cacheOf('A').ticket();
    const { rowCount } = await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
      [LISTENER],
    );
    expect(rowCount).toBe(2);
    // Whatever changes while nobody listens is seen: the cache was dropped with the connection.
    await silently('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
    await waitFor(() => cacheOf('A').ticket() !== before); // A has seen its connection go
    expect((await get('A', key.secret)).status).toBe(401);
    await waitFor(() => cacheOf('A').active && cacheOf('B').active);

    const next = await adminKey('listener-back');
    expect((await get('A', next.secret)).status).toBe(200);
    await silently('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [next.id]);
    expect((await get('A', next.secret)).status).toBe(200);
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
