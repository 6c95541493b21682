import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { fieldIndexesSettled } from '#identity/field-indexes.js';
import { indexedValue } from '#records/objects/index.js';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { client, expectError, ids, UUID, type Client, type Http } from './rest-helpers.js';

/** Custom fields over REST (docs/data-model.md): the metadata API and records that carry, check, filter and order by them. */
describe('custom fields over REST', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  async function admin(label = 'cf'): Promise<{ ws: TestWorkspace; api: Client }> {
    const ws = await newWorkspace(ds, label);
    return { ws, api: client(http, ws.keys.Admin) };
  }

  const addField = async (api: Client, body: Record<string, unknown>) => {
    const res = await api.post('/rest/metadata/fields', body);
    expect(res.status).toBe(201);
    return res.body.data.createField;
  };

  const TIER = {
    object: 'companies',
    name: 'tier',
    label: 'Tier',
    type: 'SELECT',
    options: [
      { value: 'GOLD', label: 'Gold', color: 'yellow' },
      { value: 'SILVER', label: 'Silver' },
      { value: 'BRONZE', label: 'Bronze' },
    ],
  };

  it('adds a field that records carry at once: create, read, update, filter, order, batch', async () => {
    const { api } = await admin();
    const tier = await addField(api, TIER);
    expect(tier).toMatchObject({
      id: expect.stringMatching(UUID),
      object: 'companies',
      name: 'tier',
      type: 'SELECT',
      isActive: true,
      isNullable: true,
    });
    await addField(api, { object: 'companies', name: 'arr', type: 'NUMBER', label: 'ARR' });
    await addField(api, { object: 'companies', name: 'renewal', type: 'DATE' });
    await addField(api, { object: 'companies', name: 'budget', type: 'CURRENCY' });
    await addField(api, { object: 'companies', name: 'active', type: 'BOOLEAN', defaultValue: true });

    const created = await api.post('/rest/companies', {
      name: 'Acme',
      tier: 'GOLD',
      arr: 1200.5,
      renewal: '2027-01-31',
      budget: { amountMicros: 5_000_000, currencyCode: 'USD' },
    });
    expect(created.status).toBe(201);
    const acme = created.body.data.createCompany;
    expect(acme).toMatchObject({
      name: 'Acme',
      tier: 'GOLD',
      arr: 1200.5,
      renewal: '2027-01-31',
      active: true,
      budget: { amountMicros: 5_000_000, currencyCode: 'USD' },
    });

    const batch = await api.post('/rest/batch/companies', [
      { name: 'Beta', tier: 'SILVER', arr: 50 },
      { name: 'Gamma', tier: 'GOLD', arr: 9000 },
      { name: 'Delta' },
    ]);
    expect(batch.status).toBe(201);
    expect(batch.body.data.createCompanies.map((c: { tier: string | null }) => c.tier)).toEqual(['SILVER', 'GOLD', null]);

    const gold = await api.get('/rest/companies', { filter: 'tier[eq]:"GOLD"', order_by: 'arr[DescNullsLast]' });
    expect(gold.status).toBe(200);
    expect(gold.body.data.companies.map((c: { name: string }) => c.name)).toEqual(['Gamma', 'Acme']);
    expect(gold.body.totalCount).toBe(2);

    const big = await api.get('/rest/companies', { filter: 'arr[gte]:1000,budget.amountMicros[is]:NOT_NULL' });
    expect(big.body.data.companies.map((c: { name: string }) => c.name)).toEqual(['Acme']);

    // Keyset pages over a custom order.
    const first = await api.get('/rest/companies', { order_by: 'arr[AscNullsLast]', limit: 2 });
    expect(first.body.data.companies.map((c: { name: string }) => c.name)).toEqual(['Beta', 'Acme']);
    const second = await api.get('/rest/companies', {
      order_by: 'arr[AscNullsLast]',
      limit: 2,
      starting_after: first.body.pageInfo.endCursor,
    });
    expect(second.body.data.companies.map((c: { name: string }) => c.name)).toEqual(['Gamma', 'Delta']);

    // Partial update of a composite keeps the other sub-field.
    const updated = await api.patch(`/rest/companies/${acme.id}`, { tier: 'BRONZE', budget: { amountMicros: 7_000_000 } });
    expect(updated.status).toBe(200);
    expect(updated.body.data.updateCompany).toMatchObject({
      tier: 'BRONZE',
      arr: 1200.5,
      budget: { amountMicros: 7_000_000, currencyCode: 'USD' },
    });
    const read = await api.get(`/rest/companies/${acme.id}`);
    expect(read.body.data.company.tier).toBe('BRONZE');
  });

  it('keeps each workspace to its own fields, in data, errors and filters', async () => {
    const a = await admin('cf-a');
    const b = await admin('cf-b');
    await addField(a.api, TIER);
    const inB = await b.api.post('/rest/companies', { name: 'B', tier: 'GOLD' });
    expectError(inB, 400, 'VALIDATION_FAILED');
    expect(inB.body.messages).toEqual(['tier is not a known field']);
    const filterInB = await b.api.get('/rest/companies', { filter: 'tier[eq]:"GOLD"' });
    expectError(filterInB, 400, 'INVALID_FILTER');
    expect(filterInB.text).not.toContain('GOLD"]'); // no hint of A's options
    const companyInB = (await b.api.post('/rest/companies', { name: 'B' })).body.data.createCompany;
    expect(companyInB).not.toHaveProperty('tier');
    // Another workspace's field id behaves as missing.
    const [field] = (await a.api.get('/rest/metadata/fields')).body.data.fields;
    expectError(await b.api.get(`/rest/metadata/fields/${field.id}`), 404, 'NOT_FOUND');
    expectError(await b.api.patch(`/rest/metadata/fields/${field.id}`, { label: 'x' }), 404, 'NOT_FOUND');
    expectError(await b.api.delete(`/rest/metadata/fields/${field.id}`), 404, 'NOT_FOUND');
  });

  it('refuses bad definitions with 400 and writes nothing', async () => {
    const { ws, api } = await admin();
    const bad = async (body: Record<string, unknown>, message: RegExp) => {
      const res = await api.post('/rest/metadata/fields', body);
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.messages.join(' ')).toMatch(message);
    };
    await bad({ object: 'companies', name: 'id', type: 'TEXT' }, /reserved or a built-in/);
    await bad({ object: 'companies', name: 'createdAt', type: 'TEXT' }, /reserved or a built-in/);
    await bad({ object: 'companies', name: 'name', type: 'TEXT' }, /reserved or a built-in/);
    await bad({ object: 'companies', name: 'people', type: 'TEXT' }, /reserved or a built-in/);
    await bad({ object: 'people', name: 'company', type: 'TEXT' }, /reserved or a built-in/);
    await bad({ object: 'companies', name: 'Tier', type: 'TEXT' }, /camelCase/);
    await bad({ object: 'companies', name: 'annual_revenue', type: 'TEXT' }, /camelCase/);
    await bad({ object: 'companies', name: 'x'.repeat(64), type: 'TEXT' }, /camelCase/);
    await bad({ object: 'companies', name: 'tier', type: 'SELECT', options: [{ value: 'gold' }] }, /options\[0\]\.value must match/);
    await bad({ object: 'companies', name: 'tier', type: 'SELECT', options: [] }, /options must be a non-empty array/);
    await bad({ object: 'companies', name: 'tier', type: 'SELECT', options: [{ value: 'A' }, { value: 'A' }] }, /appears twice/);
    await bad(
      { object: 'companies', name: 'tier', type: 'SELECT', options: Array.from({ length: 101 }, (_, i) => ({ value: `V${i}` })) },
      /at most 100/,
    );
    await bad({ object: 'companies', name: 'tier', type: 'TEXT', options: [{ value: 'A' }] }, /only SELECT and MULTI_SELECT/);
    await bad({ object: 'companies', name: 'tier', type: 'RELATION' }, /type must be one of/);
    await bad({ object: 'tasks', name: 'tier', type: 'TEXT' }, /object must be one of/);
    await bad({ object: 'companies', name: 'tier', type: 'NUMBER', defaultValue: 'ten' }, /defaultValue must be a number/);
    await bad({ object: 'companies', name: 'tier', type: 'TEXT', colour: 'red' }, /colour is not a known field/);
    const [{ n }] = await ds.query('SELECT count(*)::int AS n FROM custom_fields WHERE workspace_id = $1', [ws.id]);
    expect(n).toBe(0);

    await addField(api, { object: 'companies', name: 'tier', type: 'TEXT' });
    await bad({ object: 'companies', name: 'tier', type: 'TEXT' }, /already a custom field/);
    // The same name on another object is fine.
    await addField(api, { object: 'people', name: 'tier', type: 'TEXT' });
  });

  it('allows at most 100 custom fields per object', async () => {
    const { ws, api } = await admin();
    await ds.query(
      `INSERT INTO custom_fields (workspace_id, object, name, label, type) SELECT $1, 'companies', 'f' || i, 'F' || i, 'TEXT' FROM generate_series(1, 100) i`,
      [ws.id],
    );
    await ds.query('UPDATE workspaces SET data_model_version = data_model_version + 1 WHERE id = $1', [ws.id]);
    const res = await api.post('/rest/metadata/fields', { object: 'companies', name: 'oneMore', type: 'TEXT' });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(res.body.messages[0]).toMatch(/already has 100 custom fields/);
    await addField(api, { object: 'people', name: 'oneMore', type: 'TEXT' });
  });

  it('never changes name or type; relabels, edits options (a removed one nulls its values), deactivates, deletes', async () => {
    const { ws, api } = await admin();
    const tier = await addField(api, TIER);
    const acme = (await api.post('/rest/companies', { name: 'Acme', tier: 'SILVER' })).body.data.createCompany;
    for (const change of [{ name: 'level' }, { type: 'TEXT' }, { object: 'people' }]) {
      const res = await api.patch(`/rest/metadata/fields/${tier.id}`, change);
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.messages[0]).toMatch(/cannot change/);
    }
    const relabel = await api.patch(`/rest/metadata/fields/${tier.id}`, {
      label: 'Customer tier',
      options: [
        { value: 'GOLD', label: 'Gold' },
        { value: 'PLATINUM', label: 'Platinum' },
      ],
    });
    expect(relabel.status).toBe(200);
    expect(relabel.body.data.updateField.options.map((o: { value: string }) => o.value)).toEqual(['GOLD', 'PLATINUM']);
    expect((await api.get(`/rest/companies/${acme.id}`)).body.data.company.tier).toBeNull();
    expect((await api.patch(`/rest/companies/${acme.id}`, { tier: 'PLATINUM' })).status).toBe(200);

    // Active fields are not deleted by mistake.
    expectError(await api.delete(`/rest/metadata/fields/${tier.id}`), 409, 'CONFLICT');
    const off = await api.patch(`/rest/metadata/fields/${tier.id}`, { isActive: false });
    expect(off.body.data.updateField.isActive).toBe(false);
    // Hidden everywhere, data kept.
    expect((await api.get(`/rest/companies/${acme.id}`)).body.data.company).not.toHaveProperty('tier');
    expectError(await api.get('/rest/companies', { filter: 'tier[eq]:"GOLD"' }), 400, 'INVALID_FILTER');
    expectError(await api.post('/rest/companies', { name: 'X', tier: 'GOLD' }), 400, 'VALIDATION_FAILED');
    await api.patch(`/rest/metadata/fields/${tier.id}`, { isActive: true });
    expect((await api.get(`/rest/companies/${acme.id}`)).body.data.company.tier).toBe('PLATINUM');
    await api.patch(`/rest/metadata/fields/${tier.id}`, { isActive: false });
    const deleted = await api.delete(`/rest/metadata/fields/${tier.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.deleteField).toEqual({ id: tier.id });
    const [row] = await ds.query('SELECT custom FROM companies WHERE workspace_id = $1 AND id = $2', [ws.id, acme.id]);
    expect(row.custom).toEqual({});
    const audit = await ds.query(`SELECT action FROM audit_log WHERE workspace_id = $1 AND action LIKE 'field.%' ORDER BY created_at, id`, [
      ws.id,
    ]);
    expect(audit.map((a: { action: string }) => a.action)).toEqual(
      expect.arrayContaining(['field.create', 'field.update', 'field.delete']),
    );
  });

  it('checks values by type: wrong type, unknown option, missing non-nullable value; nothing is written', async () => {
    const { ws, api } = await admin();
    await addField(api, TIER);
    await addField(api, { object: 'companies', name: 'arr', type: 'NUMBER' });
    await addField(api, { object: 'companies', name: 'employees', type: 'NUMBER', isNullable: false, defaultValue: 1 });
    await addField(api, { object: 'companies', name: 'code', type: 'TEXT', isNullable: false });
    await addField(api, { object: 'companies', name: 'tags', type: 'MULTI_SELECT', options: [{ value: 'A' }, { value: 'B' }] });
    await addField(api, { object: 'companies', name: 'phone', type: 'PHONES' });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: 'X', code: 'c', arr: 'lots' }, /arr must be a number/],
      [{ name: 'X', code: 'c', tier: 'PLATINUM' }, /tier must be one of GOLD, SILVER, BRONZE/],
      [{ name: 'X' }, /code is required/],
      [{ name: 'X', code: null }, /code cannot be null/],
      [{ name: 'X', code: 'c', tags: ['A', 'Z'] }, /tags holds values that are not options/],
      [{ name: 'X', code: 'c', phone: { primaryPhoneNumber: 5 } }, /phone.primaryPhoneNumber must be a string/],
      [{ name: 'X', code: 'c', phone: { extension: '1' } }, /phone.extension is not a known field/],
      [{ code: 'c', arr: true }, /name is required.*arr must be a number|arr must be a number.*name is required/],
    ];
    for (const [body, message] of cases) {
      const res = await api.post('/rest/companies', body);
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.messages.join('; ')).toMatch(message);
      const batch = await api.post('/rest/batch/companies', [{ name: 'Fine', code: 'ok' }, body]);
      expectError(batch, 400, 'VALIDATION_FAILED');
    }
    const [{ n }] = await ds.query('SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1', [ws.id]);
    expect(n).toBe(0);
    const ok = await api.post('/rest/companies', { name: 'X', code: 'c', tags: ['B', 'A'], phone: { primaryPhoneNumber: '+33 1 23' } });
    expect(ok.body.data.createCompany).toMatchObject({
      employees: 1,
      tags: ['B', 'A'],
      phone: { primaryPhoneNumber: '+33 1 23', primaryPhoneCountryCode: null },
    });
    expectError(await api.patch(`/rest/companies/${ok.body.data.createCompany.id}`, { employees: null }), 400, 'VALIDATION_FAILED');
  });

  it('refuses operators a type does not have, and values of the wrong type in filters', async () => {
    const { api } = await admin();
    await addField(api, TIER);
    await addField(api, { object: 'companies', name: 'arr', type: 'NUMBER' });
    await addField(api, { object: 'companies', name: 'tags', type: 'MULTI_SELECT', options: [{ value: 'A' }] });
    for (const filter of [
      'tier[ilike]:"%G%"',
      'arr[startsWith]:"1"',
      'arr[eq]:"ten"',
      'tier[eq]:"PLATINUM"',
      'tags[eq]:"A"',
      'tags[containsAny]:["Z"]',
    ]) {
      expectError(await api.get('/rest/companies', { filter }), 400, 'INVALID_FILTER');
    }
    expectError(await api.get('/rest/companies', { order_by: 'tags[AscNullsFirst]' }), 400, 'INVALID_ORDER_BY');
    expect((await api.get('/rest/companies', { filter: 'tags[containsAny]:["A"]' })).status).toBe(200);
  });

  it('is open only to roles holding DATA_MODEL', async () => {
    const { ws } = await admin();
    const viewer = client(http, ws.keys.Viewer);
    for (const res of [
      await viewer.get('/rest/metadata/fields'),
      await viewer.post('/rest/metadata/fields', TIER),
      await viewer.patch(`/rest/metadata/fields/${randomUUID()}`, { label: 'x' }),
      await viewer.delete(`/rest/metadata/fields/${randomUUID()}`),
    ]) {
      expectError(res, 403, 'FORBIDDEN');
      expect(res.body.messages[0]).toMatch(/DATA_MODEL/);
    }
    expectError(await client(http).get('/rest/metadata/fields'), 401, 'UNAUTHENTICATED');
    const [{ n }] = await ds.query('SELECT count(*)::int AS n FROM custom_fields WHERE workspace_id = $1', [ws.id]);
    expect(n).toBe(0);
  });

  it('indexes a sortable field for every workspace using its name, and drops the index with the last such field', async () => {
    const a = await admin('cf-ix-a');
    const b = await admin('cf-ix-b');
    const name = `ix${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    const numberField = await addField(a.api, { object: 'companies', name, type: 'NUMBER' });
    // The same name as text in another workspace: its values never reach the number index's cast.
    const textField = await addField(b.api, { object: 'companies', name, type: 'TEXT' });
    await fieldIndexesSettled();
    const indexes = async () =>
      (await ds.query(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'companies' AND indexdef LIKE $1`, [`%${name}%`])) as {
        indexname: string;
        indexdef: string;
      }[];
    expect((await indexes()).map((i) => i.indexname).sort()).toEqual([
      expect.stringMatching(/^cf_companies_number_/),
      expect.stringMatching(/^cf_companies_text_/),
    ]);
    expect((await b.api.post('/rest/companies', { name: 'T', [name]: 'not a number' })).status).toBe(201);
    expect((await a.api.post('/rest/companies', { name: 'N', [name]: 42 })).status).toBe(201);
    // The list's ORDER BY is the index's expression: the planner can walk it instead of sorting.
    await ds.query('BEGIN');
    try {
      await ds.query('SET LOCAL enable_seqscan = off');
      await ds.query('SET LOCAL enable_sort = off');
      const plan = (await ds.query(
        `EXPLAIN SELECT id FROM companies t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL
          ORDER BY ${indexedValue(name, 'number', 't.')} DESC NULLS LAST, t.id DESC LIMIT 61`,
        [a.ws.id],
      )) as { 'QUERY PLAN': string }[];
      expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/Index Scan using cf_companies_number_/);
    } finally {
      await ds.query('ROLLBACK');
    }
    for (const [api, field] of [
      [a.api, numberField],
      [b.api, textField],
    ] as const) {
      await api.patch(`/rest/metadata/fields/${field.id}`, { isActive: false });
      expect((await api.delete(`/rest/metadata/fields/${field.id}`)).status).toBe(200);
    }
    await fieldIndexesSettled();
    expect(await indexes()).toEqual([]);
  });

  it('lists by object', async () => {
    const { api } = await admin();
    await addField(api, TIER);
    await addField(api, { object: 'people', name: 'nickname', type: 'TEXT' });
    const people = await api.get('/rest/metadata/fields', { object: 'people' });
    expect(people.body.data.fields.map((f: { name: string }) => f.name)).toEqual(['nickname']);
    expect(ids((await api.get('/rest/metadata/fields')).body.data.fields)).toHaveLength(2);
    expectError(await api.get('/rest/metadata/fields', { object: 'tasks' }), 400, 'VALIDATION_FAILED');
    expectError(await api.get('/rest/metadata/fields', { sort: 'name' }), 400, 'VALIDATION_FAILED');
  });
});
