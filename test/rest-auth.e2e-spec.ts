import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createApiKey, findRole, revokeApiKey } from '#identity/accounts.js';
import { bearer, newWorkspace, startApi } from './factories.js';
import { allPermissions, client, expectError, expectListEnvelope, keyWithRole, type Http } from './rest-helpers.js';

const PUBLIC_URL = 'http://localhost:3000';
const ROOT_METADATA = `resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource"`;

/** Authentication (Bearer only) and role permissions on REST (docs/rest.md; docs/authentication.md). */
describe('REST authentication and roles', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    delete process.env.PUBLIC_URL;
    delete process.env.PORT;
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  function expect401(res: request.Response): string {
    const message = expectError(res, 401, 'UNAUTHENTICATED');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    expect(res.headers['www-authenticate']).toContain(ROOT_METADATA);
    return message;
  }

  describe('credentials', () => {
    it('no Authorization header → 401 with WWW-Authenticate naming the resource metadata', async () => {
      for (const path of ['/rest/companies', '/rest/people', `/rest/companies/${randomUUID()}`]) {
        const res = await request(http).get(path);
        expect401(res);
        expect(res.headers['www-authenticate']).not.toContain('error=');
      }
      expect401(await request(http).post('/rest/companies').send({ name: 'x' }));
      expect401(await request(http).post('/rest/batch/people').send([{}]));
      expect401(await request(http).patch(`/rest/people/${randomUUID()}`).send({}));
      expect401(await request(http).delete(`/rest/people/${randomUUID()}`));
    });

    it('reads no other carrier: x-api-key, cookie, query string → 401', async () => {
      const ws = await newWorkspace(ds, 'carriers');
      const key = ws.keys.Admin;
      expect401(await request(http).get('/rest/companies').set('x-api-key', key));
      expect401(await request(http).get('/rest/companies').set('Cookie', `token=${key}; access_token=${key}`));
      expect401(await request(http).get('/rest/companies').query({ access_token: key }));
      expect401(await request(http).get('/rest/companies').set('Authorization', key)); // no scheme
      // …while the same key as a bearer works, case-insensitively on the scheme (RFC 6750).
      expect((await request(http).get('/rest/companies').set(bearer(key))).status).toBe(200);
      expect((await request(http).get('/rest/companies').set('Authorization', `bearer ${key}`)).status).toBe(200);
    });

    it('Basic, malformed and unknown bearer tokens → 401 (invalid_token)', async () => {
      const ws = await newWorkspace(ds, 'malformed');
      const basic = Buffer.from(`user:${ws.keys.Admin}`).toString('base64');
      expect401(await request(http).get('/rest/companies').set('Authorization', `Basic ${basic}`));
      expect401(await request(http).get('/rest/companies').set('Authorization', 'Bearer'));
      expect401(await request(http).get('/rest/companies').set('Authorization', 'Bearer two tokens'));
      const unknown = await request(http)
        .get('/rest/companies')
        .set(bearer(`wrs_${'A'.repeat(43)}`));
      expect401(unknown);
      expect(unknown.headers['www-authenticate']).toContain('error="invalid_token"');
      expect401(await request(http).get('/rest/companies').set(bearer('eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.')));
      // A key with one character changed.
      const flipped = ws.keys.Admin.slice(0, -1) + (ws.keys.Admin.endsWith('A') ? 'B' : 'A');
      expect401(await request(http).get('/rest/companies').set(bearer(flipped)));
    });

    it('a revoked key is refused on the very next request', async () => {
      const ws = await newWorkspace(ds, 'revoke');
      const role = await findRole(ds, ws.id, 'Admin');
      const key = await createApiKey(ds, { workspaceId: ws.id, role, name: 'to revoke', expiresAt: new Date(Date.now() + 86_400_000) });
      const api = client(http, key.secret);
      expect((await api.get('/rest/companies')).status).toBe(200);
      await revokeApiKey(ds, key.id);
      expect(expect401(await api.get('/rest/companies'))).toMatch(/revoked/);
      expect401(await api.post('/rest/companies', { name: 'after revoke' }));
      const [row] = await ds.query('SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1', [ws.id]);
      expect(row.n).toBe(0);
      // Other keys of the workspace are unaffected.
      expect((await client(http, ws.keys.Admin).get('/rest/companies')).status).toBe(200);
    });

    it('an expired key is refused', async () => {
      const ws = await newWorkspace(ds, 'expire');
      const role = await findRole(ds, ws.id, 'Viewer');
      const key = await createApiKey(ds, { workspaceId: ws.id, role, name: 'to expire', expiresAt: new Date(Date.now() + 86_400_000) });
      const api = client(http, key.secret);
      expect((await api.get('/rest/people')).status).toBe(200);
      await ds.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [key.id]);
      expect(expect401(await api.get('/rest/people'))).toMatch(/expired/);
    });
  });

  describe('roles', () => {
    it('Viewer: every read is allowed, every write is 403 FORBIDDEN and writes nothing', async () => {
      const ws = await newWorkspace(ds, 'viewer');
      const adminApi = client(http, ws.keys.Admin);
      const viewer = client(http, ws.keys.Viewer);
      const company = (await adminApi.post('/rest/companies', { name: 'Seen' })).body.data.createCompany;
      const person = (await adminApi.post('/rest/people', { name: { firstName: 'Seen' }, companyId: company.id })).body.data.createPerson;

      expect(expectListEnvelope(await viewer.get('/rest/companies'), 'companies')).toHaveLength(1);
      expect(expectListEnvelope(await viewer.get('/rest/people', { depth: 1 }), 'people')[0].company.id).toBe(company.id);
      expect((await viewer.get(`/rest/companies/${company.id}`, { depth: 1 })).body.data.company.people).toHaveLength(1);
      expect((await viewer.get(`/rest/people/${person.id}`)).body.data.person).toEqual(person);

      const writes = [
        viewer.post('/rest/companies', { name: 'nope' }),
        viewer.post('/rest/batch/companies', [{ name: 'nope' }]),
        viewer.patch(`/rest/companies/${company.id}`, { name: 'nope' }),
        viewer.delete(`/rest/companies/${company.id}`),
        viewer.post('/rest/people', { name: { firstName: 'nope' } }),
        viewer.post('/rest/batch/people', [{ name: { firstName: 'nope' } }]),
        viewer.patch(`/rest/people/${person.id}`, { name: { firstName: 'nope' } }),
        viewer.delete(`/rest/people/${person.id}`),
      ];
      for (const res of await Promise.all(writes)) {
        const message = expectError(res, 403, 'FORBIDDEN');
        expect(message).toMatch(/Viewer/);
      }
      expect((await adminApi.get(`/rest/companies/${company.id}`)).body.data.company).toEqual(company);
      expect((await adminApi.get(`/rest/people/${person.id}`)).body.data.person).toEqual(person);
      const counts = await ds.query(
        `SELECT (SELECT count(*) FROM companies WHERE workspace_id = $1)::int AS c, (SELECT count(*) FROM people WHERE workspace_id = $1)::int AS p`,
        [ws.id],
      );
      expect(counts[0]).toEqual({ c: 1, p: 1 });
    });

    it('a forbidden write is 403 even with an invalid body or an unknown id (permission first)', async () => {
      const ws = await newWorkspace(ds, 'viewer-order');
      const viewer = client(http, ws.keys.Viewer);
      expectError(await viewer.post('/rest/companies', { bogus: true }), 403, 'FORBIDDEN');
      expectError(await viewer.delete(`/rest/companies/${randomUUID()}`), 403, 'FORBIDDEN');
    });

    it('a custom role lacking people.create: 403 on POST /rest/people (and batch), allowed elsewhere', async () => {
      const ws = await newWorkspace(ds, 'custom');
      const permissions = allPermissions();
      permissions.people.create = false;
      const { secret } = await keyWithRole(ds, ws.id, 'No people creation', permissions);
      const api = client(http, secret);

      expect(expectError(await api.post('/rest/people', { name: { firstName: 'x' } }), 403, 'FORBIDDEN')).toMatch(/create/);
      expectError(await api.post('/rest/batch/people', [{ name: { firstName: 'x' } }]), 403, 'FORBIDDEN');

      const company = await api.post('/rest/companies', { name: 'allowed' });
      expect(company.status).toBe(201);
      expect((await api.post('/rest/batch/companies', [{ name: 'allowed too' }])).status).toBe(201);
      const existing = (await client(http, ws.keys.Admin).post('/rest/people', { name: { firstName: 'made by admin' } })).body.data
        .createPerson;
      expect((await api.get('/rest/people')).body.totalCount).toBe(1);
      const patched = await api.patch(`/rest/people/${existing.id}`, { name: { lastName: 'patched' } });
      expect(patched.status).toBe(200);
      expect(patched.body.data.updatePerson.name).toEqual({ firstName: 'made by admin', lastName: 'patched' });
      expect((await api.delete(`/rest/people/${existing.id}`)).status).toBe(200);
      expect((await api.delete(`/rest/companies/${company.body.data.createCompany.id}`)).status).toBe(200);
    });

    it('each object action is checked on its own, and a role change applies to the next request', async () => {
      const ws = await newWorkspace(ds, 'matrix');
      const admin = client(http, ws.keys.Admin);
      const company = (await admin.post('/rest/companies', { name: 'c' })).body.data.createCompany;
      const permissions = allPermissions(false);
      permissions.companies.read = true;
      const { secret, roleId } = await keyWithRole(ds, ws.id, 'Companies reader', permissions);
      const api = client(http, secret);

      expect((await api.get('/rest/companies')).status).toBe(200);
      expect((await api.get(`/rest/companies/${company.id}`)).status).toBe(200);
      expectError(await api.get('/rest/people'), 403, 'FORBIDDEN');
      expectError(await api.get(`/rest/people/${randomUUID()}`), 403, 'FORBIDDEN');
      expectError(await api.patch(`/rest/companies/${company.id}`, { name: 'x' }), 403, 'FORBIDDEN');
      expectError(await api.delete(`/rest/companies/${company.id}`), 403, 'FORBIDDEN');

      const next = allPermissions(false);
      next.companies.update = true;
      await ds.query('UPDATE roles SET object_permissions = $3 WHERE workspace_id = $1 AND id = $2', [ws.id, roleId, JSON.stringify(next)]);
      expectError(await api.get('/rest/companies'), 403, 'FORBIDDEN');
      expect((await api.patch(`/rest/companies/${company.id}`, { name: 'renamed' })).status).toBe(200);
    });
  });

  describe('discovery documents (public)', () => {
    it('serves /.well-known/oauth-protected-resource without credentials', async () => {
      const res = await request(http).get('/.well-known/oauth-protected-resource');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toMatchObject({
        resource: PUBLIC_URL,
        authorization_servers: [PUBLIC_URL],
        bearer_methods_supported: ['header'],
      });
      expect(res.body.scopes_supported).toEqual(expect.arrayContaining(['api', 'profile']));
    });

    it('serves the /mcp variant with resource PUBLIC_URL/mcp', async () => {
      const res = await request(http).get('/.well-known/oauth-protected-resource/mcp');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        resource: `${PUBLIC_URL}/mcp`,
        authorization_servers: [PUBLIC_URL],
        bearer_methods_supported: ['header'],
      });
      expect(res.body.scopes_supported).toEqual(expect.arrayContaining(['api', 'profile']));
    });

    it('stays public even with a bad token', async () => {
      const res = await request(http).get('/.well-known/oauth-protected-resource').set(bearer('wrs_nonsense'));
      expect(res.status).toBe(200);
      expect(res.body.resource).toBe(PUBLIC_URL);
    });
  });
});
