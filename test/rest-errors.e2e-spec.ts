import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { CompaniesService } from '../apps/records-api/src/companies/companies.service.js';
import { PeopleService } from '../apps/records-api/src/people/people.service.js';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { client, expectError, UUID, type Client, type Http } from './rest-helpers.js';

/** Every REST error status of docs/rest.md in the one documented shape, with X-Request-Id. */
describe('REST errors', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let ws: TestWorkspace;
  let api: Client;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
    ws = await newWorkspace(ds, 'errors');
    api = client(http, ws.keys.Admin);
  });
  afterAll(() => app.close());

  const count = async (table: 'companies' | 'people') =>
    (await ds.query(`SELECT count(*)::int AS n FROM ${table} WHERE workspace_id = $1 AND deleted_at IS NULL`, [ws.id]))[0].n as number;

  describe('400 bad input', () => {
    it('names the field and the rule that failed', async () => {
      const cases: [string, unknown, string][] = [
        ['/rest/people', { emails: { primaryEmail: 'not-an-email' } }, 'emails.primaryEmail must be an email'],
        ['/rest/people', { emails: { additionalEmails: ['ok@x.co', 'nope'] } }, 'emails.additionalEmails'],
        ['/rest/people', { name: { firstName: 42 } }, 'name.firstName must be a string'],
        ['/rest/people', { companyId: 'abc' }, 'companyId must be a UUID'],
        ['/rest/people', { id: 'abc' }, 'id must be a UUID'],
        ['/rest/people', { emails: 'a@b.co' }, 'emails must be an object'],
        ['/rest/companies', {}, 'name'],
        ['/rest/companies', { name: '' }, 'name should not be empty'],
        ['/rest/companies', { name: 'x'.repeat(501) }, 'name must be shorter than or equal to 500 characters'],
        ['/rest/companies', { name: 'x', domainName: { primaryLinkUrl: 'not a url' } }, 'domainName.primaryLinkUrl must be a URL address'],
        [
          '/rest/companies',
          { name: 'x', domainName: { secondaryLinks: [{ url: 'ftp://x.com' }] } },
          'domainName.secondaryLinks.0.url must be a URL address',
        ],
        ['/rest/companies', { name: 'x', domainName: [] }, 'domainName must be an object'],
        // A link that is not an object (class-validator's nested validation walks an inner array and found nothing wrong).
        [
          '/rest/companies',
          { name: 'x', domainName: { secondaryLinks: [[]] } },
          'domainName.secondaryLinks must be a list of links, each an object',
        ],
        [
          '/rest/companies',
          { name: 'x', domainName: { secondaryLinks: [[{ url: 'a.com' }]] } },
          'domainName.secondaryLinks must be a list of links',
        ],
        ['/rest/companies', { name: 'x', domainName: { secondaryLinks: ['a.com'] } }, 'domainName.secondaryLinks must be a list of links'],
      ];
      for (const [path, body, expected] of cases) {
        const message = expectError(await api.post(path, body), 400, 'VALIDATION_FAILED');
        expect({ body, message }).toEqual({ body, message: expect.stringContaining(expected) });
      }
      expect(await count('people')).toBe(0);
      expect(await count('companies')).toBe(0);
    });

    it('says a missing company name is required, not that it is too long', async () => {
      for (const body of [{}, { domainName: { primaryLinkUrl: 'a.io' } }]) {
        const res = await api.post('/rest/companies', body);
        expectError(res, 400, 'VALIDATION_FAILED');
        expect(res.body.messages).toEqual(['name is required']);
      }
      expect(await count('companies')).toBe(0);
    });

    it('refuses unknown fields, naming them (never silently dropped)', async () => {
      const cases: [string, unknown, string][] = [
        ['/rest/companies', { name: 'x', industry: 'tech' }, 'industry is not a known field'],
        ['/rest/companies', { name: 'x', domainName: { primaryLinkUrl: 'a.io', favicon: 'x' } }, 'domainName.favicon is not a known field'],
        ['/rest/people', { name: { firstName: 'a', middleName: 'b' } }, 'name.middleName is not a known field'],
        ['/rest/people', { company: { name: 'x' } }, 'company is not a known field'],
        ['/rest/people', { createdAt: '2024-01-01T00:00:00Z' }, 'createdAt is not a known field'],
        ['/rest/companies', { name: 'x', constructor: 'y' }, 'constructor is not a known field'],
      ];
      for (const [path, body, expected] of cases) {
        const message = expectError(await api.post(path, body), 400, 'VALIDATION_FAILED');
        expect({ body, message }).toEqual({ body, message: expect.stringContaining(expected) });
      }
      const proto = await request(http)
        .post('/rest/companies')
        .set(bearer(ws.keys.Admin))
        .set('Content-Type', 'application/json')
        .send('{"name":"x","__proto__":{"admin":true}}');
      expect(expectError(proto, 400, 'VALIDATION_FAILED')).toContain('__proto__ is not a known field');

      const company = (await api.post('/rest/companies', { name: 'patch me' })).body.data.createCompany;
      expect(expectError(await api.patch(`/rest/companies/${company.id}`, { id: randomUUID() }), 400, 'VALIDATION_FAILED')).toContain(
        'id is not a known field',
      );
      expect(expectError(await api.patch(`/rest/companies/${company.id}`, { deletedAt: null }), 400, 'VALIDATION_FAILED')).toContain(
        'deletedAt is not a known field',
      );
      expect((await api.get(`/rest/companies/${company.id}`)).body.data.company.name).toBe('patch me');
      await api.delete(`/rest/companies/${company.id}`);
      expect(await count('people')).toBe(0);
    });

    it('refuses input Postgres cannot store (400, not 500): NUL characters, id null', async () => {
      expect(expectError(await api.post('/rest/companies', { name: 'a\u0000b' }), 400, 'VALIDATION_FAILED')).toMatch(/name .*NUL/);
      expect(expectError(await api.post('/rest/batch/people', [{}, { name: { lastName: '\u0000' } }]), 400, 'VALIDATION_FAILED')).toMatch(
        /\[1\]\.name\.lastName .*NUL/,
      );
      expect(expectError(await api.post('/rest/companies', { id: null, name: 'x' }), 400, 'VALIDATION_FAILED')).toMatch(
        /id must be a UUID/,
      );
      expect(expectError(await api.post('/rest/people', { id: null }), 400, 'VALIDATION_FAILED')).toMatch(/id must be a UUID/);
      const filter = await api.get('/rest/companies', { filter: 'name[eq]:"\\u0000"' });
      expect(expectError(filter, 400, 'INVALID_FILTER')).toMatch(/name\[eq\]/);
      expectError(await api.get('/rest/people', { filter: 'name.lastName[in]:["a","b\\u0000"]' }), 400, 'INVALID_FILTER');
      const nulCursor = Buffer.from(
        JSON.stringify({ o: 'name.lastName:AscNullsFirst,id:AscNullsLast', v: ['\u0000'], i: randomUUID() }),
      ).toString('base64url');
      expect(
        expectError(await api.get('/rest/people', { order_by: 'name.lastName', starting_after: nulCursor }), 400, 'INVALID_CURSOR'),
      ).toMatch(/starting_after/);
      expect(await count('companies')).toBe(0);
      expect(await count('people')).toBe(0);
    });

    it('refuses a body that is not one JSON object (or array for batch), and broken JSON', async () => {
      expect(expectError(await api.post('/rest/companies', [{ name: 'x' }]), 400, 'VALIDATION_FAILED')).toMatch(/JSON object/);
      expect(expectError(await api.post('/rest/batch/companies', { name: 'x' }), 400, 'VALIDATION_FAILED')).toMatch(/array/);
      const broken = await request(http)
        .post('/rest/companies')
        .set(bearer(ws.keys.Admin))
        .set('Content-Type', 'application/json')
        .send('{"name": "x",');
      expect(expectError(broken, 400, 'INVALID_JSON')).toMatch(/JSON/);
      const empty = await request(http).post('/rest/companies').set(bearer(ws.keys.Admin));
      expectError(empty, 400, 'VALIDATION_FAILED');
      expect(await count('companies')).toBe(0);
    });

    it('refuses a path id that is not a UUID (400 INVALID_ID), on every call with an id', async () => {
      for (const plural of ['companies', 'people']) {
        for (const res of [
          await api.get(`/rest/${plural}/123`),
          await api.patch(`/rest/${plural}/123`, {}),
          await api.delete(`/rest/${plural}/123`),
          await api.get(`/rest/${plural}/${randomUUID()}x`),
        ]) {
          expect(expectError(res, 400, 'INVALID_ID')).toMatch(/id must be a UUID/);
        }
      }
    });

    it('refuses unknown query parameters, naming them', async () => {
      expect(expectError(await api.get('/rest/companies', { sort: 'name' }), 400, 'VALIDATION_FAILED')).toMatch(/"sort"/);
      expect(expectError(await api.get('/rest/people', { page: 2 }), 400, 'VALIDATION_FAILED')).toMatch(/"page"/);
      // Creates too: a misspelt `upsert` must not create a second record silently.
      const before = await count('companies');
      expect(expectError(await api.post('/rest/companies?Upsert=true', { name: 'Typo' }), 400, 'VALIDATION_FAILED')).toMatch(/"Upsert"/);
      expect(expectError(await api.post('/rest/batch/companies?upsrt=true', [{ name: 'Typo' }]), 400, 'VALIDATION_FAILED')).toMatch(
        /"upsrt"/,
      );
      expect(await count('companies')).toBe(before);
      expect(expectError(await api.get(`/rest/companies/${randomUUID()}`, { expand: 'name' }), 400, 'VALIDATION_FAILED')).toMatch(
        /"expand"/,
      );
    });
  });

  it('401 no credentials, in the error shape with WWW-Authenticate', async () => {
    const res = await request(http).get('/rest/people');
    expect(expectError(res, 401, 'UNAUTHENTICATED')).toMatch(/Bearer/);
    expect(res.headers['www-authenticate']).toContain('resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource"');
  });

  it('403 the role does not allow it', async () => {
    expect(expectError(await client(http, ws.keys.Viewer).post('/rest/people', {}), 403, 'FORBIDDEN')).toMatch(/create/);
  });

  describe('404', () => {
    it('unknown (or deleted) record ids', async () => {
      for (const plural of ['companies', 'people']) {
        const id = randomUUID();
        for (const res of [
          await api.get(`/rest/${plural}/${id}`),
          await api.patch(`/rest/${plural}/${id}`, {}),
          await api.delete(`/rest/${plural}/${id}`),
        ]) {
          expect(expectError(res, 404, 'NOT_FOUND')).toContain(id);
        }
      }
      // PATCH with changes to a missing record is a 404 too (not a 400 or a silent 200).
      expectError(await api.patch(`/rest/people/${randomUUID()}`, { name: { firstName: 'x' } }), 404, 'NOT_FOUND');
    });

    it('unknown routes and methods, with or without credentials', async () => {
      expectError(await api.get('/rest/widgets'), 404, 'NOT_FOUND');
      expectError(await api.get('/rest/companies/x/y'), 404, 'NOT_FOUND');
      expectError(
        await request(http).put(`/rest/companies/${randomUUID()}`).set(bearer(ws.keys.Admin)).send({ name: 'x' }),
        404,
        'NOT_FOUND',
      );
      // DELETE /rest/companies is a change by filter now (docs/rest.md); PUT on the collection is still no route.
      expectError(await request(http).put('/rest/companies').set(bearer(ws.keys.Admin)).send({}), 404, 'NOT_FOUND');
      expectError(await request(http).get('/nowhere'), 404, 'NOT_FOUND');
    });
  });

  it('409 conflict on a taken id', async () => {
    const id = randomUUID();
    expect((await api.post('/rest/people', { id })).status).toBe(201);
    expect(expectError(await api.post('/rest/people', { id }), 409, 'CONFLICT')).toMatch(/already exists/);
    expectError(await api.post('/rest/batch/people', [{}, { id }]), 409, 'CONFLICT');
    await api.delete(`/rest/people/${id}`);
    // A soft-deleted record still holds its id.
    expectError(await api.post('/rest/people', { id }), 409, 'CONFLICT');
  });

  it('413 body larger than 1 MB', async () => {
    const big = await api.post('/rest/companies', { name: 'x', domainName: { primaryLinkLabel: 'y'.repeat(1_100_000) } });
    expect(expectError(big, 413, 'PAYLOAD_TOO_LARGE')).toMatch(/1 MB/);
    const bigBatch = await api.post(
      '/rest/batch/people',
      Array.from({ length: 60 }, () => ({ name: { firstName: 'z'.repeat(20_000) } })),
    );
    expectError(bigBatch, 413, 'PAYLOAD_TOO_LARGE');
    // Just under the limit is parsed (and then validated: the label is too long).
    const under = await api.post('/rest/companies', { name: 'x', domainName: { primaryLinkLabel: 'y'.repeat(900_000) } });
    expect(expectError(under, 400, 'VALIDATION_FAILED')).toMatch(/domainName\.primaryLinkLabel/);
    expect(await count('companies')).toBe(0);
  });

  it('415 a body that is not JSON', async () => {
    const cases: [string, string][] = [
      ['text/plain', '{"name":"x"}'],
      ['application/x-www-form-urlencoded', 'name=x'],
      ['application/xml', '<company><name>x</name></company>'],
      ['application/json; charset=latin1', '{"name":"x"}'],
    ];
    for (const [type, body] of cases) {
      const res = await request(http).post('/rest/companies').set(bearer(ws.keys.Admin)).set('Content-Type', type).send(body);
      expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    const patch = await request(http)
      .patch(`/rest/companies/${randomUUID()}`)
      .set(bearer(ws.keys.Admin))
      .set('Content-Type', 'text/plain')
      .send('x');
    expect(expectError(patch, 415, 'UNSUPPORTED_MEDIA_TYPE')).toMatch(/application\/json/);
    // application/*+json is JSON.
    const vendor = await request(http)
      .post('/rest/companies')
      .set(bearer(ws.keys.Admin))
      .set('Content-Type', 'application/vnd.api+json')
      .send('{"name":"vendor"}');
    expect(vendor.status).toBe(201);
    await api.delete(`/rest/companies/${vendor.body.data.createCompany.id}`);
  });

  describe('500', () => {
    it('never shows internals: message, SQL, detail, stack', async () => {
      const service = app.get(CompaniesService);
      const original = service.list;
      service.list = async () => {
        const err = new Error('relation "pg_shadow" permission denied: SELECT passwd FROM pg_shadow');
        Object.assign(err, { code: '42501', detail: 'password=hunter2', query: 'SELECT passwd FROM pg_shadow' });
        throw err;
      };
      try {
        const res = await api.get('/rest/companies');
        expectError(res, 500, 'INTERNAL_ERROR');
        expect(res.body.messages).toEqual(['Internal server error']);
        const text = res.text;
        for (const leak of ['pg_shadow', 'hunter2', 'passwd', '42501', 'stack', '.ts:', '.js:', 'node_modules'])
          expect(text).not.toContain(leak);
      } finally {
        service.list = original;
      }
      expect((await api.get('/rest/companies')).status).toBe(200);
    });

    it('a thrown non-Error is a plain 500 too', async () => {
      const service = app.get(PeopleService);
      const original = service.get;
      service.get = async () => {
        throw 'raw string with /work/main/secret/path';
      };
      try {
        const res = await api.get(`/rest/people/${randomUUID()}`);
        expectError(res, 500, 'INTERNAL_ERROR');
        expect(res.text).not.toContain('/work/main');
      } finally {
        service.get = original;
      }
    });
  });

  describe('X-Request-Id', () => {
    it('is on every response, success or error, and equals the body requestId on errors', async () => {
      const ok = await api.get('/rest/companies');
      expect(ok.status).toBe(200);
      expect(ok.headers['x-request-id']).toMatch(UUID);
      const a = await api.get(`/rest/companies/${randomUUID()}`);
      const b = await api.get(`/rest/companies/${randomUUID()}`);
      expectError(a, 404, 'NOT_FOUND');
      expectError(b, 404, 'NOT_FOUND');
      expect(a.body.requestId).not.toBe(b.body.requestId);
    });

    it("keeps a caller's sane X-Request-Id and replaces an unsafe one", async () => {
      const mine = await request(http)
        .get(`/rest/people/${randomUUID()}`)
        .set(bearer(ws.keys.Admin))
        .set('X-Request-Id', 'trace-abc.123:x');
      expectError(mine, 404, 'NOT_FOUND');
      expect(mine.headers['x-request-id']).toBe('trace-abc.123:x');
      const unsafe = await request(http).get('/rest/people/nope').set(bearer(ws.keys.Admin)).set('X-Request-Id', 'bad id <script>');
      expectError(unsafe, 400, 'INVALID_ID');
      expect(unsafe.headers['x-request-id']).toMatch(UUID);
      const long = await request(http).get('/rest/people').set('X-Request-Id', 'x'.repeat(200));
      expectError(long, 401, 'UNAUTHENTICATED');
      expect(long.headers['x-request-id']).toMatch(UUID);
    });
  });
});
