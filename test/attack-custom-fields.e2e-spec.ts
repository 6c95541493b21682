import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { client, expectError, type Client, type Http } from './rest-helpers.js';

/** The custom-field surfaces attacked as an outsider would (docs/data-model.md): races, sizes, injection, hidden fields, tenants. */
describe('custom fields under attack', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  async function admin(): Promise<{ ws: TestWorkspace; api: Client }> {
    const ws = await newWorkspace(ds, 'cf-attack');
    return { ws, api: client(http, ws.keys.Admin) };
  }
  const fieldCount = async (workspaceId: string) =>
    Number((await ds.query('SELECT count(*) AS n FROM custom_fields WHERE workspace_id = $1', [workspaceId]))[0].n);

  it('20 concurrent creates of one name make one field; the others get 400, none a 500', async () => {
    const { ws, api } = await admin();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => api.post('/rest/metadata/fields', { object: 'companies', name: 'tier', type: 'TEXT' })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    for (const res of answers.filter((r) => r.status !== 201)) {
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.messages[0]).toMatch(/already a custom field/);
    }
    expect(await fieldCount(ws.id)).toBe(1);
  });

  it('the 100-field cap holds under concurrency', async () => {
    const { ws, api } = await admin();
    await ds.query(
      `INSERT INTO custom_fields (workspace_id, object, name, label, type) SELECT $1, 'people', 'f' || i, 'F' || i, 'TEXT' FROM generate_series(1, 98) i`,
      [ws.id],
    );
    await ds.query('UPDATE workspaces SET data_model_version = data_model_version + 1 WHERE id = $1', [ws.id]);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => api.post('/rest/metadata/fields', { object: 'people', name: `extra${i}`, type: 'NUMBER' })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(2);
    expect(answers.filter((r) => r.status === 400)).toHaveLength(8);
    expect(await fieldCount(ws.id)).toBe(100);
  });

  it('refuses injection through names and options, and oversized definitions, writing nothing', async () => {
    const { ws, api } = await admin();
    for (const body of [
      { object: 'companies', name: "x'); DROP TABLE companies; --", type: 'TEXT' },
      { object: 'companies', name: 'a"b', type: 'TEXT' },
      { object: 'companies', name: '__proto__', type: 'TEXT' },
      { object: 'companies', name: 'constructor', type: 'TEXT', options: null, label: 'x'.repeat(101) },
      { object: 'companies', name: 'tier', type: 'SELECT', options: [{ value: "GOLD'--" }] },
      { object: 'companies', name: 'tier', type: 'SELECT', options: Array.from({ length: 5000 }, (_, i) => ({ value: `V${i}` })) },
      { object: 'companies', name: 'tier', type: 'TEXT', description: 'd'.repeat(501) },
      { object: 'companies', name: 'tier', type: 'TEXT', label: 'bad\u0000label' },
      { object: 'companies', name: 'tier', type: 'NUMBER', settings: { decimals: 99 } },
      [{ object: 'companies', name: 'tier', type: 'TEXT' }],
    ]) {
      const res = await api.post('/rest/metadata/fields', body);
      expect([400, 413]).toContain(res.status);
      expect(res.body.code).toMatch(/VALIDATION_FAILED|PAYLOAD_TOO_LARGE|INVALID_JSON/);
    }
    const scalar = await request(http)
      .post('/rest/metadata/fields')
      .set(bearer(ws.keys.Admin))
      .set('content-type', 'application/json')
      .send('"tier"');
    expect(scalar.status).toBe(400);
    expect(await fieldCount(ws.id)).toBe(0);
    // A body far past the limit is refused before anything is parsed.
    const huge = await request(http)
      .post('/rest/metadata/fields')
      .set(bearer(ws.keys.Admin))
      .set('content-type', 'application/json')
      .send(JSON.stringify({ object: 'companies', name: 'tier', type: 'TEXT', label: 'x'.repeat(3_000_000) }));
    expectError(huge, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('a record body cannot reach a prototype, a hidden field or another workspace through custom keys', async () => {
    const { ws, api } = await admin();
    const other = await admin();
    await api.post('/rest/metadata/fields', { object: 'companies', name: 'tier', type: 'TEXT' });
    const secret = (await api.post('/rest/metadata/fields', { object: 'companies', name: 'secret', type: 'TEXT' })).body.data.createField;
    const proto = await request(http)
      .post('/rest/companies')
      .set(bearer(ws.keys.Admin))
      .set('content-type', 'application/json')
      .send('{"name":"A","tier":"x","__proto__":{"isAdmin":true}}');
    expectError(proto, 400, 'VALIDATION_FAILED');
    expect(proto.body.messages).toEqual(['__proto__ is not a known field']);
    const acme = (await api.post('/rest/companies', { name: 'Acme', secret: 'kept' })).body.data.createCompany;
    await api.patch(`/rest/metadata/fields/${secret.id}`, { isActive: false });
    // A deactivated field can be neither written, filtered, ordered nor read.
    expectError(await api.patch(`/rest/companies/${acme.id}`, { secret: 'overwritten' }), 400, 'VALIDATION_FAILED');
    expectError(await api.get('/rest/companies', { filter: 'secret[eq]:"kept"' }), 400, 'INVALID_FILTER');
    expectError(await api.get('/rest/companies', { order_by: 'secret' }), 400, 'INVALID_ORDER_BY');
    expect((await api.get('/rest/companies')).body.data.companies[0]).not.toHaveProperty('secret');
    const [row] = await ds.query('SELECT custom FROM companies WHERE id = $1', [acme.id]);
    expect(row.custom.secret).toBe('kept');
    // Another workspace cannot write, filter or order by this workspace's fields, nor learn their names from errors.
    const refused = await other.api.get('/rest/companies', { filter: 'tier[eq]:"x"' });
    expectError(refused, 400, 'INVALID_FILTER');
    expect(refused.text).not.toMatch(/secret/);
    const gql = await request(http)
      .post('/graphql')
      .set(bearer(other.ws.keys.Admin))
      .send({ query: '{ __schema { types { name fields { name } } } }' });
    expect(JSON.stringify(gql.body)).not.toMatch(/"tier"/);
  });

  it('refuses every Object.prototype member as a field name', async () => {
    const { ws, api } = await admin();
    // Those the name rule lets through (__proto__ and the __define…__ ones it refuses already).
    const names = Object.getOwnPropertyNames(Object.prototype).filter((name) => /^[a-z][a-zA-Z0-9]{0,62}$/.test(name));
    expect(names).toEqual(expect.arrayContaining(['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf']));
    for (const name of names) {
      const res = await api.post('/rest/metadata/fields', { object: 'companies', name, type: 'TEXT' });
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.messages).toEqual([`name "${name}" is reserved or a built-in field of companies; choose another`]);
    }
    expect(await fieldCount(ws.id)).toBe(0);
  });

  it('a field named after an Object.prototype member (made before they were reserved) reads and writes as its own value', async () => {
    const { ws, api } = await admin();
    await ds.query(
      `INSERT INTO custom_fields (workspace_id, object, name, label, type) VALUES ($1, 'companies', 'constructor', 'C', 'TEXT'),
              ($1, 'companies', 'valueOf', 'V', 'NUMBER'), ($1, 'companies', 'toString', 'T', 'CURRENCY')`,
      [ws.id],
    );
    await ds.query('UPDATE workspaces SET data_model_version = data_model_version + 1 WHERE id = $1', [ws.id]);
    // Left out: every write works and the record holds nulls, never a function of Object.prototype.
    const created = await api.post('/rest/companies', { name: 'Plain' });
    expect(created.status).toBe(201);
    const plain = created.body.data.createCompany;
    expect(plain).toMatchObject({ constructor: null, valueOf: null, toString: { amountMicros: null, currencyCode: null } });
    expect((await api.patch(`/rest/companies/${plain.id}`, { name: 'Renamed' })).status).toBe(200);
    expect((await api.post('/rest/batch/companies', [{ name: 'B1' }, { name: 'B2' }])).status).toBe(201);
    const gql = await request(http)
      .post('/graphql')
      .set(bearer(ws.keys.Admin))
      .send({ query: 'mutation { createCompany(data: {name: "G"}) { id } }' });
    expect(gql.body.errors).toBeUndefined();
    // Given: kept as given, filtered and ordered by.
    const given = await api.post('/rest/companies', {
      name: 'Given',
      constructor: 'c',
      valueOf: 7,
      toString: { amountMicros: 5, currencyCode: 'EUR' },
    });
    expect(given.status).toBe(201);
    expect(given.body.data.createCompany).toMatchObject({
      constructor: 'c',
      valueOf: 7,
      toString: { amountMicros: 5, currencyCode: 'EUR' },
    });
    const listed = await api.get('/rest/companies', { filter: 'constructor[eq]:"c"', order_by: 'valueOf[DescNullsLast]' });
    expect(listed.status).toBe(200);
    expect(listed.body.data.companies.map((c: { name: string }) => c.name)).toEqual(['Given']);
    const page = await api.get('/rest/companies', { order_by: 'valueOf[AscNullsLast]', limit: 2 });
    expect(page.status).toBe(200);
    expect(page.body.data.companies.map((c: { valueOf: unknown }) => c.valueOf)).toEqual([7, null]);
    const next = await api.get('/rest/companies', {
      order_by: 'valueOf[AscNullsLast]',
      limit: 2,
      starting_after: page.body.pageInfo.endCursor,
    });
    expect(next.status).toBe(200);
    expect(next.body.data.companies).toHaveLength(2);
  });

  it('churning the data model builds a new schema per version and keeps answering', async () => {
    const { ws, api } = await admin();
    const field = (await api.post('/rest/metadata/fields', { object: 'companies', name: 'flip', type: 'TEXT' })).body.data.createField;
    for (let i = 0; i < 12; i++) {
      await api.patch(`/rest/metadata/fields/${field.id}`, { isActive: i % 2 === 1 });
      const res = await request(http)
        .post('/graphql')
        .set(bearer(ws.keys.Admin))
        .send({ query: '{ companies { edges { node { flip } } } }' });
      expect(res.status).toBe(i % 2 === 1 ? 200 : 400);
    }
  });
});
