import type { INestApplication } from '@nestjs/common';
import { parse as parseCsv } from 'csv-parse/sync';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { runMigrations } from '#database/data-source.js';
import { FIELD_TYPES, fieldType, searchFunctions } from '#records/field-types/index.js';
import { CUSTOM_FIELD_TYPES } from '#records/objects/index.js';
import { bearer, newWorkspace, useEmptyDatabase, type TestWorkspace } from './factories.js';
import { importErrors, importingApi, upload, waitForImport } from './import-helpers.js';
import { startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';
import { asText, client, expectError, type Client, type Http } from './rest-helpers.js';
import { signInAt } from './settings-client.js';

/**
 * The field types FULL_NAME, ADDRESS, RICH_TEXT and UUID (docs/data-model.md "Types"), each
 * defined once in the field-type registry (docs/decisions/0056-field-type-registry.md), on
 * every surface: REST (values checked, filters, order), GraphQL (typed, in introspection),
 * OpenAPI, MCP, exports, imports and search — in their workspace only.
 */
describe('field types FULL_NAME, ADDRESS, RICH_TEXT and UUID on every surface', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let ws: TestWorkspace;
  let other: TestWorkspace;
  let rest: Client;

  const FIELDS = [
    { object: 'companies', name: 'ceo', label: 'CEO', type: 'FULL_NAME' },
    { object: 'companies', name: 'office', label: 'Office', type: 'ADDRESS' },
    { object: 'companies', name: 'notes', label: 'Notes', type: 'RICH_TEXT', description: 'Markdown notes' },
    { object: 'companies', name: 'externalId', label: 'External id', type: 'UUID', isUnique: true },
  ];
  const EXTERNAL = 'A0B1C2D3-E4F5-4A6B-8C7D-9E0F1A2B3C4D';
  const ADA = {
    name: 'Analytical Engines',
    ceo: { firstName: 'Ada', lastName: 'Lovelace' },
    office: {
      addressStreet1: '12 St James Square',
      addressStreet2: null,
      addressCity: 'London',
      addressPostcode: 'SW1Y 4JH',
      addressState: null,
      addressCountry: 'United Kingdom',
      addressLat: 51.5074,
      addressLng: -0.1346,
    },
    notes: '# Plan\n\nShip the **Zanzibar** engine.',
    externalId: EXTERNAL,
  };
  const EMPTY_OFFICE = {
    addressStreet1: null,
    addressStreet2: null,
    addressCity: null,
    addressPostcode: null,
    addressState: null,
    addressCountry: null,
    addressLat: null,
    addressLng: null,
  };

  const gql = (secret: string, query: string) => request(http).post('/graphql').set(bearer(secret)).send({ query });
  const mcp = (secret: string, method: string, params: Record<string, unknown>) =>
    request(http)
      .post('/mcp')
      .set(bearer(secret))
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method, params });
  const count = async (workspace: TestWorkspace) =>
    Number((await ds.query('SELECT count(*) AS n FROM companies WHERE workspace_id = $1', [workspace.id]))[0].n);
  const names = (res: { body: { data: { companies: { name: string }[] } } }) => res.body.data.companies.map((c) => c.name);

  beforeAll(async () => {
    ({ app, ds, http } = await importingApi());
    ws = await newWorkspace(ds, 'ft');
    other = await newWorkspace(ds, 'ft-other');
    rest = client(http, ws.keys.Admin);
    for (const field of FIELDS) {
      const res = await rest.post('/rest/metadata/fields', field);
      expect({ field: field.name, status: res.status, body: res.status === 201 ? 'ok' : res.body }).toEqual({
        field: field.name,
        status: 201,
        body: 'ok',
      });
    }
    const made = await rest.post('/rest/batch/companies', [
      ADA,
      {
        name: 'Babbage & Co',
        ceo: { firstName: 'Charles', lastName: 'Babbage' },
        office: { addressCity: 'Paris', addressPostcode: '75001', addressCountry: 'France', addressLat: 48.8566, addressLng: 2.3522 },
        notes: 'Difference engine',
        externalId: '0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10',
      },
      { name: 'Bare' },
    ]);
    expect(made.status).toBe(201);
  });
  afterAll(() => app?.close());

  it('the database accepts every type of the registry, and the docs describe each', async () => {
    const [check] = await ds.query(
      `SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
        WHERE c.conrelid = 'custom_fields'::regclass AND c.contype = 'c' AND pg_get_constraintdef(c.oid) LIKE '%type%'`,
    );
    for (const type of CUSTOM_FIELD_TYPES) expect({ type, accepted: check.def.includes(`'${type}'`) }).toEqual({ type, accepted: true });
    const docs = readFileSync(new URL('../docs/data-model.md', import.meta.url), 'utf8');
    for (const type of CUSTOM_FIELD_TYPES)
      expect({ type, documented: docs.includes(`| \`${type}\` |`) }).toEqual({ type, documented: true });
  });

  it('REST: values as given (a UUID lower-cased), every sub-field present, absent values empty', async () => {
    const list = await rest.get('/rest/companies', { order_by: 'name' });
    expect(list.status).toBe(200);
    const [ada, babbage, bare] = list.body.data.companies;
    expect(ada).toMatchObject({ ...ADA, externalId: EXTERNAL.toLowerCase() });
    expect(babbage.office).toEqual({
      ...EMPTY_OFFICE,
      addressCity: 'Paris',
      addressPostcode: '75001',
      addressCountry: 'France',
      addressLat: 48.8566,
      addressLng: 2.3522,
    });
    expect(bare).toMatchObject({ ceo: { firstName: null, lastName: null }, office: EMPTY_OFFICE, notes: null, externalId: null });
  });

  it('REST: a bad value of each type is a 400 naming the field, on create and update, and nothing is written', async () => {
    const before = await count(ws);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ceo: 'Ada Lovelace' }, /ceo must be an object \{firstName, lastName\}/],
      [{ ceo: { firstName: 5 } }, /ceo\.firstName must be a string/],
      [{ ceo: { middleName: 'Augusta' } }, /ceo\.middleName is not a known field/],
      [{ ceo: { lastName: 'x'.repeat(201) } }, /ceo\.lastName must be at most 200 characters/],
      [{ office: ['London'] }, /office must be an object \{addressStreet1, /],
      [{ office: { addressLat: 'north' } }, /office\.addressLat must be a number from -90 to 90/],
      [{ office: { addressLat: 90.5 } }, /office\.addressLat must be a number from -90 to 90/],
      [{ office: { addressLng: -181 } }, /office\.addressLng must be a number from -180 to 180/],
      [{ office: { addressCity: 'Par\u0000is' } }, /office\.addressCity must not contain the NUL character/],
      [{ notes: 42 }, /notes must be a string/],
      [{ notes: 'x'.repeat(102_401) }, /notes must be at most 102400 characters/],
      [{ externalId: 'not-a-uuid' }, /externalId must be a UUID such as /],
      [{ externalId: `${EXTERNAL}0` }, /externalId must be a UUID such as /],
      [{ externalId: 12 }, /externalId must be a UUID such as /],
    ];
    for (const [body, message] of cases) {
      expect(expectError(await rest.post('/rest/companies', { name: 'Refused', ...body }), 400, 'VALIDATION_FAILED')).toMatch(message);
    }
    const bare = (await rest.get('/rest/companies', { filter: 'name[eq]:"Bare"' })).body.data.companies[0];
    for (const [body, message] of cases) {
      expect(expectError(await rest.patch(`/rest/companies/${bare.id}`, body), 400, 'VALIDATION_FAILED')).toMatch(message);
    }
    expect(await count(ws)).toBe(before);
    expect((await rest.get(`/rest/companies/${bare.id}`)).body.data.company).toMatchObject({
      ceo: { firstName: null, lastName: null },
      office: EMPTY_OFFICE,
      notes: null,
      externalId: null,
    });
    // RICH_TEXT holds up to 100 KB; a composite update changes only the sub-fields it gives.
    const long = 'y'.repeat(102_400);
    expect((await rest.patch(`/rest/companies/${bare.id}`, { notes: long, office: { addressCity: 'Lyon' } })).status).toBe(200);
    expect(
      (await rest.patch(`/rest/companies/${bare.id}`, { office: { addressCountry: 'France' } })).body.data.updateCompany,
    ).toMatchObject({ notes: long, office: { ...EMPTY_OFFICE, addressCity: 'Lyon', addressCountry: 'France' } });
    expect((await rest.patch(`/rest/companies/${bare.id}`, { notes: null, office: null })).body.data.updateCompany).toMatchObject({
      notes: null,
      office: EMPTY_OFFICE,
    });
  });

  it('REST: a unique UUID compares lower-cased; another workspace knows none of the fields', async () => {
    const taken = await rest.post('/rest/companies', { name: 'Copy', externalId: EXTERNAL.toLowerCase() });
    expectError(taken, 409, 'CONFLICT');
    const theirs = await client(http, other.keys.Admin).post('/rest/companies', {
      name: 'X',
      ceo: { firstName: 'A' },
      externalId: EXTERNAL,
    });
    expect(expectError(theirs, 400, 'VALIDATION_FAILED')).toMatch(/ceo is not a known field/);
  });

  it('REST: filters with each type’s operators and orders by the sortable ones', async () => {
    const filtered = async (filter: string) => {
      const res = await rest.get('/rest/companies', { filter, order_by: 'name' });
      expect({ filter, status: res.status }).toEqual({ filter, status: 200 });
      return names(res);
    };
    expect(await filtered('ceo.lastName[eq]:"Lovelace"')).toEqual(['Analytical Engines']);
    expect(await filtered('ceo.firstName[ilike]:"ch%"')).toEqual(['Babbage & Co']);
    expect(await filtered('office.addressCity[in]:["Paris","London"]')).toEqual(['Analytical Engines', 'Babbage & Co']);
    expect(await filtered('office.addressLat[gt]:50')).toEqual(['Analytical Engines']);
    expect(await filtered('office.addressLng[lt]:0')).toEqual(['Analytical Engines']);
    expect(await filtered('office.addressCountry[is]:NULL')).toEqual(['Bare']);
    expect(await filtered('notes[ilike]:"%zanzibar%"')).toEqual(['Analytical Engines']);
    expect(await filtered('notes[startsWith]:"Difference"')).toEqual(['Babbage & Co']);
    expect(await filtered(`externalId[eq]:"${EXTERNAL}"`)).toEqual(['Analytical Engines']);
    expect(await filtered(`externalId[neq]:"${EXTERNAL.toLowerCase()}"`)).toEqual(['Babbage & Co', 'Bare']);
    expect(await filtered('externalId[is]:NULL')).toEqual(['Bare']);
    expect(expectError(await rest.get('/rest/companies', { filter: 'externalId[eq]:"nope"' }), 400, 'INVALID_FILTER')).toMatch(
      /expects a uuid/,
    );
    expectError(await rest.get('/rest/companies', { filter: 'externalId[like]:"a%"' }), 400, 'INVALID_FILTER');
    expectError(await rest.get('/rest/companies', { filter: 'office.addressLat[eq]:"north"' }), 400, 'INVALID_FILTER');

    const ordered = async (order_by: string) => {
      const res = await rest.get('/rest/companies', { order_by });
      expect({ order_by, status: res.status }).toEqual({ order_by, status: 200 });
      return names(res);
    };
    // A FULL_NAME sorts by first name, then last name, as the built-in people.name does.
    expect(await ordered('ceo[AscNullsLast]')).toEqual(['Analytical Engines', 'Babbage & Co', 'Bare']);
    expect(await ordered('ceo.lastName[AscNullsFirst]')).toEqual(['Bare', 'Babbage & Co', 'Analytical Engines']);
    expect(await ordered('office[AscNullsLast]')).toEqual(['Babbage & Co', 'Analytical Engines', 'Bare']);
    expect(await ordered('office.addressLat[DescNullsLast]')).toEqual(['Analytical Engines', 'Babbage & Co', 'Bare']);
    expect(await ordered('externalId[AscNullsFirst]')).toEqual(['Bare', 'Babbage & Co', 'Analytical Engines']);
    // Pages of a UUID order follow one another.
    const first = await rest.get('/rest/companies', { order_by: 'externalId[DescNullsLast]', limit: 1 });
    const next = await rest.get('/rest/companies', {
      order_by: 'externalId[DescNullsLast]',
      limit: 1,
      starting_after: first.body.pageInfo.endCursor,
    });
    expect([...names(first), ...names(next)]).toEqual(['Analytical Engines', 'Babbage & Co']);
    expect(expectError(await rest.get('/rest/companies', { order_by: 'notes' }), 400, 'INVALID_ORDER_BY')).toMatch(/cannot be sorted/);
  });

  it('GraphQL: typed in introspection (Address types in this workspace only), filtered, ordered, checked', async () => {
    const types = await gql(
      ws.keys.Admin,
      `{ company: __type(name: "Company") { fields { name type { name } } }
         filter: __type(name: "CompanyFilterInput") { inputFields { name type { name } } }
         order: __type(name: "CompanyOrderByInput") { inputFields { name type { name } } }
         address: __type(name: "Address") { fields { name type { name } } } }`,
    );
    expect(types.status).toBe(200);
    const byName = (list: { name: string; type: { name: string } }[]) => Object.fromEntries(list.map((f) => [f.name, f.type.name]));
    expect(byName(types.body.data.company.fields)).toMatchObject({
      ceo: 'FullName',
      office: 'Address',
      notes: 'String',
      externalId: 'UUID',
    });
    expect(byName(types.body.data.filter.inputFields)).toMatchObject({
      ceo: 'FullNameFilter',
      office: 'AddressFilter',
      notes: 'StringFilter',
      externalId: 'UUIDFilter',
    });
    const order = byName(types.body.data.order.inputFields);
    expect(order).toMatchObject({ ceo: 'FullNameOrderByInput', office: 'AddressOrderByInput', externalId: 'OrderByDirection' });
    expect(order.notes).toBeUndefined();
    expect(byName(types.body.data.address.fields)).toEqual({
      addressStreet1: 'String',
      addressStreet2: 'String',
      addressCity: 'String',
      addressPostcode: 'String',
      addressState: 'String',
      addressCountry: 'String',
      addressLat: 'Float',
      addressLng: 'Float',
    });
    expect((await gql(other.keys.Admin, '{ __type(name: "Address") { name } }')).body.data.__type).toBeNull();

    const found = await gql(
      ws.keys.Admin,
      `{ companies(filter: { office: { addressLat: { gt: 50 } }, externalId: { eq: "${EXTERNAL}" } }, orderBy: [{ ceo: { lastName: AscNullsLast } }]) {
           edges { node { name ceo { firstName lastName } office { addressCity addressLat } notes externalId } } } }`,
    );
    expect(found.body.errors).toBeUndefined();
    expect(found.body.data.companies.edges).toEqual([
      {
        node: {
          name: 'Analytical Engines',
          ceo: ADA.ceo,
          office: { addressCity: 'London', addressLat: 51.5074 },
          notes: ADA.notes,
          externalId: EXTERNAL.toLowerCase(),
        },
      },
    ]);
    const refused = await gql(ws.keys.Admin, 'mutation { createCompany(data: { name: "G", office: { addressLat: 100 } }) { id } }');
    expect(JSON.stringify(refused.body.errors)).toMatch(/office\.addressLat must be a number from -90 to 90/);
    const badUuid = await gql(ws.keys.Admin, 'mutation { createCompany(data: { name: "G", externalId: "nope" }) { id } }');
    expect(badUuid.body.errors).toBeDefined();
    expect(await count(ws)).toBe(3);
  });

  it('OpenAPI: the credential’s document describes each value; another workspace’s does not', async () => {
    const doc = (await request(http).get('/rest/open-api').set(bearer(ws.keys.Admin))).body;
    const model = doc.components.schemas.CompanyModel.properties;
    expect(model.ceo).toMatchObject({ type: 'object', properties: { firstName: { anyOf: [{ type: 'string' }, { type: 'null' }] } } });
    expect(model.office.properties.addressLat).toEqual({ anyOf: [{ type: 'number', minimum: -90, maximum: 90 }, { type: 'null' }] });
    expect(model.notes).toMatchObject({ anyOf: [{ type: 'string', maxLength: 102_400 }, { type: 'null' }], description: 'Markdown notes' });
    expect(model.externalId).toMatchObject({ anyOf: [{ type: 'string', format: 'uuid' }, { type: 'null' }] });
    const input = doc.components.schemas.CompanyCreateInput.properties;
    expect(input.office).toMatchObject({ anyOf: [{ type: 'object', additionalProperties: false }, { type: 'null' }] });
    const theirs = (await request(http).get('/rest/open-api').set(bearer(other.keys.Admin))).body;
    expect(theirs.components.schemas.CompanyModel.properties.office).toBeUndefined();
  });

  it('MCP: tool input schemas carry each type; a create with them works and a bad value is refused', async () => {
    const tools = (await mcp(ws.keys.Admin, 'tools/list', {})).body.result.tools as { name: string; inputSchema: any }[];
    const create = tools.find((t) => t.name === 'create_company')!.inputSchema.properties;
    expect(create.ceo.anyOf[0]).toMatchObject({ type: 'object', properties: { firstName: {}, lastName: {} } });
    expect(Object.keys(create.office.anyOf[0].properties)).toEqual(Object.keys(EMPTY_OFFICE));
    expect(create.office.anyOf[0].properties.addressLat).toEqual({ type: ['number', 'null'] });
    expect(JSON.stringify(create.notes)).toMatch(/"string"/);
    expect(JSON.stringify(create.externalId)).toMatch(/"string"/);
    expect(create.notes.description).toMatch(/notes \(RICH_TEXT\)/);
    const theirs = (await mcp(other.keys.Admin, 'tools/list', {})).body.result.tools as typeof tools;
    expect(theirs.find((t) => t.name === 'create_company')!.inputSchema.properties.office).toBeUndefined();

    const made = await mcp(ws.keys.Admin, 'tools/call', {
      name: 'create_company',
      arguments: {
        name: 'Via MCP',
        ceo: { lastName: 'Hopper' },
        office: { addressCity: 'Arlington' },
        notes: '*Cobol*',
        externalId: '11111111-2222-4333-8444-555555555555',
      },
    });
    expect(made.body.result.isError).toBeFalsy();
    expect(made.body.result.structuredContent.company).toMatchObject({
      ceo: { firstName: null, lastName: 'Hopper' },
      office: { ...EMPTY_OFFICE, addressCity: 'Arlington' },
      notes: '*Cobol*',
      externalId: '11111111-2222-4333-8444-555555555555',
    });
    const refused = await mcp(ws.keys.Admin, 'tools/call', { name: 'create_company', arguments: { name: 'No', externalId: 'zzz' } });
    expect(refused.body.result.isError).toBe(true);
    expect(JSON.stringify(refused.body.result.content)).toMatch(/externalId must be a UUID/);
    expect((await rest.delete(`/rest/companies/${made.body.result.structuredContent.company.id}`)).status).toBe(200);
  });

  const exportOf = (query: Record<string, string>) =>
    request(http).get('/rest/companies/export').query(query).set(bearer(ws.keys.Admin)).buffer(true).parse(asText);

  it('exports: a CSV column per sub-field (RICH_TEXT formulas neutralised), NDJSON records as REST shows them', async () => {
    const formula = await rest.post('/rest/companies', { name: 'Formula', notes: '=HYPERLINK("http://x","y")' });
    expect(formula.status).toBe(201);
    try {
      const csv = await exportOf({ format: 'csv', fields: 'name,ceo,office,notes,externalId' });
      expect(csv.status).toBe(200);
      const text = csv.body as string;
      expect(text.split('\n')[0]).toBe(
        'id,name,ceo.firstName,ceo.lastName,office.addressStreet1,office.addressStreet2,office.addressCity,office.addressPostcode,' +
          'office.addressState,office.addressCountry,office.addressLat,office.addressLng,notes,externalId',
      );
      const rows = parseCsv(text, { columns: true }) as Record<string, string>[];
      const ada = rows.find((r) => r.name === 'Analytical Engines')!;
      expect(ada).toMatchObject({
        'ceo.lastName': 'Lovelace',
        'office.addressLat': '51.5074',
        'office.addressState': '',
        notes: ADA.notes,
        externalId: EXTERNAL.toLowerCase(),
      });
      expect(rows.find((r) => r.name === 'Formula')!.notes).toBe(`'=HYPERLINK("http://x","y")`);

      const ndjson = await exportOf({ format: 'ndjson' });
      const records = (ndjson.body as string)
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
      const listed = (await rest.get('/rest/companies', { limit: 50 })).body.data.companies;
      for (const record of listed) expect(records.find((r) => r.id === record.id)).toEqual(record);
    } finally {
      await rest.delete(`/rest/companies/${formula.body.data.createCompany.id}`);
    }
  });

  it('imports: CSV sub-field columns and NDJSON values, checked as REST checks them', async () => {
    const target = await newWorkspace(ds, 'ft-import');
    const api = client(http, target.keys.Admin);
    for (const field of FIELDS) expect((await api.post('/rest/metadata/fields', field)).status).toBe(201);
    const csv = [
      'name,ceo.firstName,ceo.lastName,office.addressCity,office.addressLat,notes,externalId',
      `Imported,Grace,Hopper,Arlington,38.88,"'=1+1 is *bold*",${EXTERNAL}`,
      'Bad lat,,,,north,,',
      'Bad id,,,,,,not-a-uuid',
    ].join('\n');
    const started = await upload(http, target.keys.Admin, '?object=companies', csv);
    expect(started.status).toBe(202);
    const done = await waitForImport(http, target.keys.Admin, started.body.data.import.id);
    expect(done).toMatchObject({ status: 'completed', created: 1, failed: 2 });
    expect(await importErrors(http, target.keys.Admin, done.id as string)).toEqual([
      { row: 2, line: 3, messages: [expect.stringMatching(/^office\.addressLat must be a number/)] },
      { row: 3, line: 4, messages: [expect.stringMatching(/^externalId must be a UUID/)] },
    ]);
    const lines = [
      JSON.stringify({
        name: 'From NDJSON',
        ceo: { firstName: 'Alan' },
        office: { addressCountry: 'UK', addressLng: -2.2 },
        notes: '- a\n- b',
      }),
      JSON.stringify({ name: 'Bad NDJSON', notes: ['not', 'text'] }),
    ].join('\n');
    const second = await upload(http, target.keys.Admin, '?object=companies', lines, 'application/x-ndjson');
    expect(second.status).toBe(202);
    const ended = await waitForImport(http, target.keys.Admin, second.body.data.import.id);
    expect(ended).toMatchObject({ status: 'completed', created: 1, failed: 1 });
    const list = await api.get('/rest/companies', { order_by: 'name' });
    expect(list.body.data.companies).toEqual([
      expect.objectContaining({
        name: 'From NDJSON',
        ceo: { firstName: 'Alan', lastName: null },
        office: { ...EMPTY_OFFICE, addressCountry: 'UK', addressLng: -2.2 },
        notes: '- a\n- b',
        externalId: null,
      }),
      expect.objectContaining({
        name: 'Imported',
        ceo: { firstName: 'Grace', lastName: 'Hopper' },
        office: { ...EMPTY_OFFICE, addressCity: 'Arlington', addressLat: 38.88 },
        notes: '=1+1 is *bold*',
        externalId: EXTERNAL.toLowerCase(),
      }),
    ]);
  });

  it('search finds RICH_TEXT, FULL_NAME and ADDRESS text (not a UUID), in that workspace only', async () => {
    const find = async (secret: string, q: string) => {
      const res = await client(http, secret).get('/rest/search', { q, objects: 'companies' });
      expect({ q, status: res.status }).toEqual({ q, status: 200 });
      return (res.body.data.search as { label: string }[]).map((h) => h.label);
    };
    for (const q of ['zanzibar', 'lovelace', 'james square', 'SW1Y', 'united kingdom']) {
      expect({ q, found: await find(ws.keys.Admin, q) }).toEqual({ q, found: ['Analytical Engines'] });
    }
    expect(await find(ws.keys.Admin, 'a0b1c2d3')).toEqual([]);
    expect(await find(other.keys.Admin, 'zanzibar')).toEqual([]);
    // Deactivated, a field's words are no longer found; active again, they are.
    const fields = (await rest.get('/rest/metadata/fields', { object: 'companies' })).body.data.fields as { id: string; name: string }[];
    const notes = fields.find((f) => f.name === 'notes')!;
    expect((await rest.patch(`/rest/metadata/fields/${notes.id}`, { isActive: false })).status).toBe(200);
    expect(await find(ws.keys.Admin, 'zanzibar')).toEqual([]);
    expect((await rest.patch(`/rest/metadata/fields/${notes.id}`, { isActive: true })).status).toBe(200);
    expect(await find(ws.keys.Admin, 'zanzibar')).toEqual(['Analytical Engines']);
  });

  it('group-by takes the new types’ leaves', async () => {
    const res = await rest.get('/rest/companies/groupBy', { group_by: 'office.addressCountry', aggregate: 'count,max:office.addressLat' });
    expect(res.status).toBe(200);
    expect(res.body.data.groups).toEqual(
      expect.arrayContaining([{ by: { 'office.addressCountry': 'United Kingdom' }, count: 1, max: { 'office.addressLat': 51.5074 } }]),
    );
  });

  it('attack: another workspace’s field of the same name holding text never fails a UUID or number filter and order', async () => {
    const api = client(http, other.keys.Admin);
    for (const field of [
      { object: 'companies', name: 'externalId', type: 'TEXT' },
      { object: 'companies', name: 'office', type: 'LINKS' },
    ])
      expect((await api.post('/rest/metadata/fields', field)).status).toBe(201);
    const batch = Array.from({ length: 50 }, (_, i) => ({
      name: `T${i}`,
      externalId: `not a uuid ${i}`,
      office: { primaryLinkUrl: 'x.io' },
    }));
    expect((await api.post('/rest/batch/companies', batch)).status).toBe(201);
    // The leaves' SQL is total over any stored value: evaluated on the other workspace's rows (text where a uuid or number is read), no error.
    for (const field of FIELDS.filter((f) => f.type === 'UUID' || f.type === 'ADDRESS')) {
      for (const leaf of fieldType(field.type).leaves({ ...field, options: null, settings: null })) {
        const [row] = await ds.query(`SELECT count(*)::int AS n FROM companies t WHERE t.workspace_id = $1 AND ${leaf.sql} IS NULL`, [
          other.id,
        ]);
        expect({ leaf: leaf.path, n: row.n }).toEqual({ leaf: leaf.path, n: 50 });
      }
    }
    for (const query of [
      { filter: `externalId[eq]:"${EXTERNAL}"`, order_by: 'externalId' },
      { filter: `externalId[in]:["${EXTERNAL}","0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10"]`, order_by: 'externalId[DescNullsLast]' },
      { filter: 'office.addressLat[gte]:-90', order_by: 'office.addressLng' },
    ]) {
      const res = await rest.get('/rest/companies', query);
      expect({ query, status: res.status }).toEqual({ query, status: 200 });
    }
  });

  it('attack: a record whose custom text is megabytes of distinct words is written and searched (the index keeps its first 100,000 characters)', async () => {
    const target = await newWorkspace(ds, 'ft-huge');
    const api = client(http, target.keys.Admin);
    const names = Array.from({ length: 12 }, (_, i) => `essay${i}`);
    for (const name of names)
      expect((await api.post('/rest/metadata/fields', { object: 'people', name, type: 'RICH_TEXT' })).status).toBe(201);
    const made = await api.post('/rest/people', { name: { firstName: 'Verbose' }, essay0: 'Quixotic opening' });
    expect(made.status).toBe(201);
    const id = made.body.data.createPerson.id;
    // Distinct numbers: each a lexeme of its own, about 17,000 per field, 200,000 for the record.
    let n = 0;
    for (const name of names.slice(1)) {
      let text = '';
      while (text.length < 102_390) text += `${n++} `;
      const res = await api.patch(`/rest/people/${id}`, { [name]: text.slice(0, 102_400) });
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
    }
    const found = await api.get('/rest/search', { q: 'quixotic' });
    expect(found.status).toBe(200);
    expect(found.body.data.search.map((h: { id: string }) => h.id)).toEqual([id]);
  });
});

/**
 * The search functions that know the field types are made to match the registry at start,
 * under the migration lock (docs/decisions/0056-field-type-registry.md), and left alone by
 * code older than the database.
 */
describe('search functions generated from the field-type registry at start', () => {
  const db = useEmptyDatabase('search_functions');
  const bodies = async () =>
    Object.fromEntries(
      (
        await db.ds.query(`SELECT p.proname AS name, p.prosrc FROM pg_proc p WHERE p.oid = ANY($1::regprocedure[])`, [
          searchFunctions().map((f) => f.signature),
        ])
      ).map((r: { name: string; prosrc: string }) => [r.name, r.prosrc]),
    );
  const generated = () => Object.fromEntries(searchFunctions().map((f) => [f.signature.split('(')[0], f.body]));
  const stale = `CREATE OR REPLACE FUNCTION search_custom_value(type text, v jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
                   AS $$ SELECT CASE WHEN type = 'TEXT' THEN v #>> '{}' END $$`;

  it('a migrated database has them as the registry generates them; one changed by hand is replaced at the next start', async () => {
    expect(await bodies()).toEqual(generated());
    await db.ds.query(stale);
    expect((await bodies())['search_custom_value']).not.toEqual(generated()['search_custom_value']);
    await runMigrations(db.ds);
    expect(await bodies()).toEqual(generated());
  });

  it('code that does not know every applied migration (an older instance in a rolling deploy) leaves them alone', async () => {
    await db.ds.query(`INSERT INTO migrations (timestamp, name) VALUES (9999999999999, 'FromNewerCode9999999999999')`);
    try {
      await db.ds.query(stale);
      // It does not start on a newer database at all (docs/decisions/0053-backups-refused-starts-upgrades.md), and changes nothing on the way.
      await expect(runMigrations(db.ds)).rejects.toThrow(/migrations this version of the service does not know/);
      expect((await bodies())['search_custom_value']).toMatch(/WHEN type = 'TEXT' THEN v #>> '\{\}' END/);
    } finally {
      await db.ds.query(`DELETE FROM migrations WHERE name = 'FromNewerCode9999999999999'`);
    }
    await runMigrations(db.ds);
    expect(await bodies()).toEqual(generated());
  });
});

/** The settings page's type list is the registry's (docs/settings.md): every type, with what it holds; a new type added from the page. */
describe('/settings/data-model offers every field type', () => {
  let origin: PublicOrigin;
  beforeAll(async () => {
    origin = await startPublicOrigin();
  });
  afterAll(() => origin?.close());

  it('lists each type with its words and adds an ADDRESS field from the page', async () => {
    const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'ft-page');
    const b = await signInAt(origin.url, people[0].email);
    await b.go(`${origin.url}/settings/data-model`);
    expect(b.lastStatus).toBe(200);
    const offered = [...b.lastBody.matchAll(/<option value="([A-Z_]+)"[^>]*>([^<]+)<\/option>/g)].map((m) => [m[1], m[2].trim()]);
    expect(new Set(offered.map((o) => o.join(' | ')))).toEqual(new Set(FIELD_TYPES.map((t) => `${t.name} | ${t.name} — ${t.pageWord}`)));
    await b.go(`${origin.url}/settings/data-model`, {
      method: 'POST',
      form: { _csrf: b.cookie('wrs_csrf')!, object: 'companies', name: 'headquarters', type: 'ADDRESS', options: '', isNullable: 'on' },
    });
    const fields = await origin.ds.query('SELECT name, type FROM custom_fields WHERE workspace_id = $1', [workspace.id]);
    expect(fields).toEqual([{ name: 'headquarters', type: 'ADDRESS' }]);
  });
});
