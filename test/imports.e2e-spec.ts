import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createWebhook } from '#webhooks/webhooks.js';
import { bearer, newWorkspace, type TestWorkspace } from './factories.js';
import { cli, companyNames, importErrors, importingApi, upload, uploadInPieces, waitForImport } from './import-helpers.js';
import { client, expectError, UUID, type Http } from './rest-helpers.js';

/** Imports over REST (docs/rest.md "Imports"): CSV and NDJSON, per-row errors, limits, tenants, cancel, events. */
describe('imports', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await importingApi());
  });
  afterAll(() => app.close());

  const names = (ws: TestWorkspace) => companyNames(ds, ws.id);
  const count = async (ws: TestWorkspace, table = 'companies') =>
    Number((await ds.query(`SELECT count(*) AS n FROM ${table} WHERE workspace_id = $1`, [ws.id]))[0].n);

  async function started(ws: TestWorkspace, query: string, body: string | Buffer, type = 'text/csv'): Promise<string> {
    const res = await upload(http, ws.keys.Admin, query, body, type);
    expect(res.status).toBe(202);
    return res.body.data.import.id;
  }

  it('imports a CSV with built-in fields, composite sub-fields and custom fields, as REST creates would', async () => {
    const ws = await newWorkspace(ds, 'imp-csv');
    const api = client(http, ws.keys.Admin);
    for (const field of [
      {
        object: 'companies',
        name: 'tier',
        type: 'SELECT',
        options: [
          { value: 'GOLD', label: 'Gold' },
          { value: 'SILVER', label: 'Silver' },
        ],
      },
      { object: 'companies', name: 'arr', type: 'NUMBER' },
      { object: 'companies', name: 'budget', type: 'CURRENCY' },
      { object: 'companies', name: 'active', type: 'BOOLEAN' },
      {
        object: 'companies',
        name: 'tags',
        type: 'MULTI_SELECT',
        options: [
          { value: 'A', label: 'A' },
          { value: 'B', label: 'B' },
        ],
      },
    ])
      expect((await api.post('/rest/metadata/fields', field)).status).toBe(201);
    const csv = [
      'name,domainName.primaryLinkUrl,domainName.secondaryLinks,tier,arr,budget.amountMicros,budget.currencyCode,active,tags',
      'Acme,acme.com,"[{""url"":""acme.org""}]",GOLD,1200.5,5000000,USD,true,"[""A"",""B""]"',
      '"Beta, Inc.",beta.io,,SILVER,,,,false,',
      'Gamma,,,,,,,,',
    ].join('\n');
    const res = await upload(http, ws.keys.Admin, '?object=companies&mode=create', csv);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ data: { import: expect.objectContaining({ id: expect.stringMatching(UUID), status: 'queued' }) } });
    const done = await waitForImport(http, ws.keys.Admin, res.body.data.import.id);
    expect(done).toMatchObject({
      status: 'completed',
      rowsRead: 3,
      created: 3,
      updated: 0,
      failed: 0,
      progress: 1,
      object: 'companies',
      mode: 'create',
    });
    expect(done.startedAt).toEqual(expect.any(String));
    expect(done.finishedAt).toEqual(expect.any(String));

    const list = await api.get('/rest/companies', { order_by: 'name' });
    const byName = Object.fromEntries(list.body.data.companies.map((c: Record<string, unknown>) => [c.name, c]));
    expect(byName.Acme).toMatchObject({
      domainName: { primaryLinkUrl: 'acme.com', primaryLinkLabel: null, secondaryLinks: [{ url: 'acme.org', label: null }] },
      tier: 'GOLD',
      arr: 1200.5,
      budget: { amountMicros: 5000000, currencyCode: 'USD' },
      active: true,
      tags: ['A', 'B'],
    });
    expect(byName['Beta, Inc.']).toMatchObject({ domainName: { primaryLinkUrl: 'beta.io' }, tier: 'SILVER', active: false, arr: null });
    expect(byName.Gamma).toMatchObject({ domainName: { primaryLinkUrl: null, secondaryLinks: [] }, tier: null });
    // Counts stay exact (statement-level triggers see multi-row INSERTs).
    expect(list.body.totalCount).toBe(3);
    expect(await importErrors(http, ws.keys.Admin, done.id as string)).toEqual([]);
  });

  it('refuses bad rows one by one (a wrong type in row 5000, a broken quote, a short row) and imports every other row; BOM and CRLF are read', async () => {
    const ws = await newWorkspace(ds, 'imp-bad-rows');
    expect(
      (await client(http, ws.keys.Admin).post('/rest/metadata/fields', { object: 'companies', name: 'arr', type: 'NUMBER' })).status,
    ).toBe(201);
    const lines = ['name,arr'];
    for (let i = 1; i <= 6000; i++) {
      if (i === 5000) lines.push('Row 5000,not a number');
      else if (i === 5500) lines.push('Row 5500,1,2');
      else lines.push(`Row ${i},${i}`);
    }
    const csv = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(lines.join('\r\n') + '\r\n')]);
    const id = await started(ws, '?object=companies', csv);
    const done = await waitForImport(http, ws.keys.Admin, id);
    expect(done).toMatchObject({ status: 'completed', rowsRead: 6000, created: 5998, failed: 2, progress: 1 });
    const errors = await importErrors(http, ws.keys.Admin, id);
    expect(errors).toEqual([
      { row: 5000, line: 5001, messages: [expect.stringMatching(/^arr must be a number/)] },
      { row: 5500, line: 5501, messages: [expect.stringMatching(/not a CSV record: .*Invalid Record Length/)] },
    ]);
    expect(await count(ws)).toBe(5998);
    const [row1] = await ds.query("SELECT custom FROM companies WHERE workspace_id = $1 AND name = 'Row 1'", [ws.id]);
    expect(row1.custom).toEqual({ arr: 1 });
    expect((await names(ws)).filter((n: string) => n.includes('5000') || n.includes('5500'))).toEqual([]);

    // A broken quote: the record is refused, the next ones are read.
    const broken = ['name,domainName.primaryLinkUrl', 'Good 1,a.com', 'Bro"ken,b.com', 'Good 2,c.com'].join('\n');
    const id2 = await started(ws, '?object=companies', broken);
    expect(await waitForImport(http, ws.keys.Admin, id2)).toMatchObject({ status: 'completed', created: 2, failed: 1 });
    expect(await importErrors(http, ws.keys.Admin, id2)).toEqual([
      { row: 2, line: 3, messages: [expect.stringMatching(/not a CSV record: .*[Qq]uote/)] },
    ]);
    expect((await names(ws)).filter((n: string) => n.startsWith('Good') || n.startsWith('Bro'))).toEqual(['Good 1', 'Good 2']);
  });

  it('imports NDJSON (REST create bodies, one a line); a line that is not a JSON object is refused, blank lines are skipped', async () => {
    const ws = await newWorkspace(ds, 'imp-ndjson');
    const body = [
      JSON.stringify({ name: 'One', domainName: { primaryLinkUrl: 'one.com' } }),
      '[1,2,3]',
      '',
      '{"name": "Two"',
      JSON.stringify({ name: 'Three', bogus: 1 }),
      '"just a string"',
      JSON.stringify({ name: 'Four' }),
    ].join('\r\n');
    const id = await started(ws, '?object=companies', body, 'application/x-ndjson');
    const done = await waitForImport(http, ws.keys.Admin, id);
    expect(done).toMatchObject({ status: 'completed', created: 2, failed: 4, format: 'ndjson' });
    expect(await importErrors(http, ws.keys.Admin, id)).toEqual([
      { row: 2, line: 2, messages: [expect.stringMatching(/must be a JSON object/)] },
      { row: 4, line: 4, messages: [expect.stringMatching(/not valid JSON/)] },
      { row: 5, line: 5, messages: ['bogus is not a known field'] },
      { row: 6, line: 6, messages: [expect.stringMatching(/must be a JSON object/)] },
    ]);
    expect(await names(ws)).toEqual(['Four', 'One']);
  });

  it('isolates rows the database refuses (an id twice, a link to another workspace) without losing the rest of the batch', async () => {
    const ws = await newWorkspace(ds, 'imp-db-rows');
    const other = await newWorkspace(ds, 'imp-db-other');
    const foreign = (await client(http, other.keys.Admin).post('/rest/companies', { name: 'Theirs' })).body.data.createCompany.id;
    const mine = (await client(http, ws.keys.Admin).post('/rest/companies', { name: 'Mine' })).body.data.createCompany.id;
    const id = randomUUID();
    const companies = ['id,name', `${id},First`, `${id},Again`, ',Third'].join('\n');
    const first = await started(ws, '?object=companies', companies);
    expect(await waitForImport(http, ws.keys.Admin, first)).toMatchObject({ created: 2, failed: 1 });
    expect(await importErrors(http, ws.keys.Admin, first)).toEqual([
      { row: 2, line: 3, messages: ['a company with this id already exists'] },
    ]);

    const people = [
      JSON.stringify({ name: { firstName: 'Ada' }, companyId: mine }),
      JSON.stringify({ name: { firstName: 'Eve' }, companyId: foreign }),
      JSON.stringify({ name: { firstName: 'Bob' } }),
    ].join('\n');
    const second = await started(ws, '?object=people', people, 'application/x-ndjson');
    expect(await waitForImport(http, ws.keys.Admin, second)).toMatchObject({ created: 2, failed: 1 });
    expect(await importErrors(http, ws.keys.Admin, second)).toEqual([
      { row: 2, line: 2, messages: [`companyId: no company with id ${foreign} in this workspace`] },
    ]);
    expect(await count(ws, 'people')).toBe(2);
  });

  it('refuses a bad upload before queuing anything: header, columns, empty file, object, mode, parameters', async () => {
    const ws = await newWorkspace(ds, 'imp-400');
    const key = ws.keys.Admin;
    const cases: [string, string | Buffer, RegExp][] = [
      ['?object=companies', 'name,revenue\nAcme,1\n', /unknown column "revenue": not a field of companies/],
      ['?object=companies', '\nname\nAcme\n', /first line must be the header row/],
      ['?object=companies', '\r\nname\r\nAcme\r\n', /first line must be the header row/],
      ['?object=companies', 'Acme,acme.com\nBeta,beta.io\n', /unknown column "Acme"/],
      ['?object=companies', 'name,name\nAcme,Acme\n', /column "name" appears twice/],
      ['?object=companies', '', /the file is empty/],
      ['?object=widgets', 'name\nAcme\n', /object must be one of companies, people, opportunities; got "widgets"/],
      ['', 'name\nAcme\n', /object is required/],
      ['?object=companies&mode=replace', 'name\nAcme\n', /mode must be create or upsert/],
      ['?object=companies&limit=5', 'name\nAcme\n', /unknown query parameter "limit"/],
      ['?object=companies&events=all', 'name\nAcme\n', /events must be "records"/],
      ['?object=companies&match=name', 'name\nAcme\n', /match is for mode=upsert only/],
    ];
    for (const [query, body, message] of cases) {
      const res = await upload(http, key, query, body);
      expect(expectError(res, 400, 'VALIDATION_FAILED')).toMatch(message);
    }
    expect(await ds.query('SELECT id FROM imports WHERE workspace_id = $1', [ws.id])).toEqual([]);
    expect(await count(ws)).toBe(0);
  });

  it('answers 415 for another content type, 401 without a credential, 403 without create permission, 413 over the size limit', async () => {
    const ws = await newWorkspace(ds, 'imp-4xx');
    expectError(await upload(http, ws.keys.Admin, '?object=companies', '{"name":"A"}', 'application/json'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await upload(http, ws.keys.Admin, '?object=companies', 'name\nA\n', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await upload(http, undefined, '?object=companies', 'name\nA\n'), 401, 'UNAUTHENTICATED');
    expect(expectError(await upload(http, ws.keys.Viewer, '?object=companies', 'name\nA\n'), 403, 'FORBIDDEN')).toMatch(
      /create on companies/,
    );

    const saved = process.env.IMPORT_MAX_BYTES;
    process.env.IMPORT_MAX_BYTES = '100000';
    try {
      const big = 'name\n' + 'A company name\n'.repeat(10_000);
      // Declared length over the limit: refused before the body is read.
      expect(expectError(await upload(http, ws.keys.Admin, '?object=companies', big), 413, 'PAYLOAD_TOO_LARGE')).toMatch(
        /100000-byte import limit/,
      );
      // Chunked (no length): refused once the count passes the limit; what was stored goes.
      const chunked = await uploadInPieces(http, ws.keys.Admin, ['name\n', ...Array(30).fill('A company name\n'.repeat(300))]);
      expectError(chunked, 413, 'PAYLOAD_TOO_LARGE');
    } finally {
      if (saved === undefined) delete process.env.IMPORT_MAX_BYTES;
      else process.env.IMPORT_MAX_BYTES = saved;
    }
    expect(await ds.query('SELECT id FROM imports WHERE workspace_id = $1', [ws.id])).toEqual([]);
    expect(await ds.query('SELECT 1 FROM import_chunks WHERE workspace_id = $1', [ws.id])).toEqual([]);
  });

  it("another workspace's import is missing (404) on every route; a bad id is 400", async () => {
    const ws = await newWorkspace(ds, 'imp-tenant');
    const other = await newWorkspace(ds, 'imp-tenant-other');
    const id = await started(ws, '?object=companies', 'name\nA\n');
    await waitForImport(http, ws.keys.Admin, id);
    const them = client(http, other.keys.Admin);
    expectError(await them.get(`/rest/imports/${id}`), 404, 'NOT_FOUND');
    expectError(await them.get(`/rest/imports/${id}/errors`), 404, 'NOT_FOUND');
    expectError(await them.delete(`/rest/imports/${id}`), 404, 'NOT_FOUND');
    expectError(await them.get('/rest/imports/not-a-uuid'), 400, 'INVALID_ID');
    expectError(await client(http).get(`/rest/imports/${id}`), 401, 'UNAUTHENTICATED');
    expectError(await client(http, ws.keys.Viewer).get(`/rest/imports/${id}`), 403, 'FORBIDDEN');
  });

  it('runs one import per workspace at a time; a queued import can be cancelled and never runs; an ended one cannot', async () => {
    const ws = await newWorkspace(ds, 'imp-cancel');
    const rows = ['name', ...Array.from({ length: 20_000 }, (_, i) => `Big ${i}`)].join('\n');
    const big = await started(ws, '?object=companies', rows);
    const small = await started(ws, '?object=companies', 'name\nSmall 1\nSmall 2\n');
    const cancelled = await client(http, ws.keys.Admin).delete(`/rest/imports/${small}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.import).toMatchObject({ id: small, status: 'cancelled', created: 0 });
    expect(await waitForImport(http, ws.keys.Admin, big)).toMatchObject({ status: 'completed', created: 20_000 });
    expect(await waitForImport(http, ws.keys.Admin, small)).toMatchObject({ status: 'cancelled', created: 0 });
    expect((await names(ws)).filter((n: string) => n.startsWith('Small'))).toEqual([]);
    expect(await ds.query('SELECT 1 FROM import_chunks WHERE workspace_id = $1', [ws.id])).toEqual([]);
    expectError(await client(http, ws.keys.Admin).delete(`/rest/imports/${big}`), 409, 'CONFLICT');
  });

  it('sends one import.completed event per import, and per-record events only with events=records', async () => {
    const ws = await newWorkspace(ds, 'imp-events');
    await createWebhook(ds, ws.id, { url: 'https://hooks.example.com/in', operations: ['*.*'] }, { allowPrivate: false });
    const quiet = await started(ws, '?object=companies', 'name\nQ1\nQ2\nQ3\n');
    await waitForImport(http, ws.keys.Admin, quiet);
    const types = async () =>
      (await ds.query('SELECT type, payload FROM webhook_events WHERE workspace_id = $1 ORDER BY created_at, type', [ws.id])) as {
        type: string;
        payload: { data: Record<string, Record<string, unknown>> };
      }[];
    const first = await types();
    expect(first.map((e) => e.type)).toEqual(['import.completed']);
    expect(first[0].payload.data.import).toMatchObject({ id: quiet, status: 'completed', created: 3, failed: 0 });

    const loud = await started(ws, '?object=companies&events=records', 'name\nL1\nL2\n');
    await waitForImport(http, ws.keys.Admin, loud);
    const all = (await types()).map((e) => e.type);
    expect(all.filter((t) => t === 'company.created')).toHaveLength(2);
    expect(all.filter((t) => t === 'import.completed')).toHaveLength(2);
  });

  it('CLI: `import` uploads a file, shows a progress bar with rows/s, prints the summary and the refused rows; bad input exits 1', async () => {
    const ws = await newWorkspace(ds, 'imp-cli');
    const file = join(tmpdir(), `imp-cli-${process.pid}.csv`);
    writeFileSync(
      file,
      [
        'name,domainName.primaryLinkUrl',
        ...Array.from({ length: 3000 }, (_, i) => (i === 1499 ? 'Cli 1500,not a domain' : `Cli ${i + 1},cli${i + 1}.com`)),
      ].join('\n'),
    );
    const run = await cli(['import', '--workspace', ws.name, '--object', 'companies', '--file', file]);
    expect(run).toMatchObject({ code: 0 });
    expect(run.stdout).toMatch(
      /^Import [0-9a-f-]{36}: completed, 3000 rows read, 2999 created, 0 updated, 1 refused \(3001 lines of the file\)\.\n {2}row 1500 \(line 1501\): domainName\.primaryLinkUrl/,
    );
    expect(run.stderr).toMatch(/\[#+\] 100% {2}3,000 rows {2}[\d,]+ rows\/s {2}completed/);
    expect(await count(ws)).toBe(2999);

    // The same file again in upsert mode: every company matches by its domain and already holds its values.
    const json = await cli(['import', '--workspace', ws.id, '--object', 'companies', '--file', file, '--mode', 'upsert', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      status: 'completed',
      mode: 'upsert',
      created: 0,
      updated: 0,
      unchanged: 2999,
      failed: 1,
      linesRead: 3001,
      errors: [{ row: 1500, line: 1501 }],
    });
    expect(json.stderr).toBe('');

    writeFileSync(file, 'name,revenue\nAcme,1\n');
    const bad = await cli(['import', '--workspace', ws.id, '--object', 'companies', '--file', file]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: unknown column "revenue"/);
    const missing = await cli(['import', '--workspace', ws.id, '--object', 'widgets', '--file', file]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/object must be one of companies, people, opportunities/);
  }, 180_000);

  it('upserts: matches on the unique domain (or match=id), updates only the columns given and only when they differ; the same file again changes nothing', async () => {
    const ws = await newWorkspace(ds, 'imp-upsert');
    const api = client(http, ws.keys.Admin);
    await createWebhook(ds, ws.id, { url: 'https://hooks.example.com/in', operations: ['company.*'] }, { allowPrivate: false });
    expect((await api.post('/rest/metadata/fields', { object: 'companies', name: 'budget', type: 'CURRENCY' })).status).toBe(201);
    const first = await started(
      ws,
      '?object=companies&events=records',
      [
        'name,domainName.primaryLinkUrl,budget.amountMicros,budget.currencyCode',
        'Acme,acme.com,100,USD',
        'Beta,beta.io,200,EUR',
        'Gamma,gamma.net,,',
      ].join('\n'),
    );
    expect(await waitForImport(http, ws.keys.Admin, first)).toMatchObject({ created: 3 });
    const before = new Map<string, { id: string; updated_at: string }>(
      (
        await ds.query('SELECT id, name, domain_primary_link_url AS d, updated_at::text FROM companies WHERE workspace_id = $1', [ws.id])
      ).map((r: { d: string; id: string; updated_at: string }) => [r.d, r]),
    );
    // https://www.ACME.com/ is acme.com once normalised; only amountMicros is given for Beta, its currency stays.
    const file = [
      'name,domainName.primaryLinkUrl,budget.amountMicros',
      'Acme Corp,https://www.ACME.com/,',
      'Beta,beta.io,250',
      'Gamma,gamma.net,',
      'Delta,delta.org,7',
    ].join('\n');
    const upsert = await started(ws, '?object=companies&mode=upsert&events=records', file);
    expect(await waitForImport(http, ws.keys.Admin, upsert)).toMatchObject({
      status: 'completed',
      mode: 'upsert',
      rowsRead: 4,
      created: 1,
      updated: 2,
      unchanged: 1,
      failed: 0,
    });
    const rows = async () =>
      new Map<string, Record<string, unknown>>(
        (
          await ds.query(
            'SELECT id, name, domain_primary_link_url AS d, custom, updated_at::text FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL',
            [ws.id],
          )
        ).map((r: Record<string, unknown>) => [r.d as string, r]),
      );
    const after = await rows();
    expect(after.size).toBe(4);
    // Matched through the normalised key; the value sent is stored as sent, as REST upsert does.
    expect(after.get('https://www.ACME.com/')).toMatchObject({
      id: before.get('acme.com')!.id,
      name: 'Acme Corp',
      custom: { budget: { amountMicros: 100, currencyCode: 'USD' } },
    });
    expect(after.get('beta.io')).toMatchObject({
      id: before.get('beta.io')!.id,
      custom: { budget: { amountMicros: 250, currencyCode: 'EUR' } },
    });
    expect(after.get('gamma.net')!.updated_at).toBe(before.get('gamma.net')!.updated_at);
    const events = async () => Number((await ds.query('SELECT count(*) AS n FROM webhook_events WHERE workspace_id = $1', [ws.id]))[0].n);
    // 3 created + import.completed filtered out (company.* only): then 1 created + 2 updated.
    expect(await events()).toBe(6);

    // The same file again: nothing is written, no event.
    const again = await started(ws, '?object=companies&mode=upsert&events=records', file);
    expect(await waitForImport(http, ws.keys.Admin, again)).toMatchObject({ created: 0, updated: 0, unchanged: 4, failed: 0 });
    const unchanged = await rows();
    for (const [domain, row] of after) expect(unchanged.get(domain)).toEqual(row);
    expect(await events()).toBe(6);

    // match=id: rows carry ids; an unknown id is created with it.
    const acme = before.get('acme.com')!.id;
    const fresh = randomUUID();
    const byId = await started(
      ws,
      '?object=companies&mode=upsert&match=id',
      ['id,name', `${acme},Acme Again`, `${fresh},Epsilon`].join('\n'),
    );
    expect(await waitForImport(http, ws.keys.Admin, byId)).toMatchObject({ created: 1, updated: 1 });
    expect((await api.get(`/rest/companies/${acme}`)).body.data.company.name).toBe('Acme Again');
    expect((await api.get(`/rest/companies/${fresh}`)).body.data.company.name).toBe('Epsilon');

    // match on a field that is not unique: 400 before anything is queued; upsert needs update permission too.
    const notUnique = await upload(http, ws.keys.Admin, '?object=companies&mode=upsert&match=name', 'name\nX\n');
    expect(expectError(notUnique, 400, 'VALIDATION_FAILED')).toMatch(
      /match: name is not a unique field of companies; unique fields: id, domainName\.primaryLinkUrl/,
    );
    expectError(await upload(http, ws.keys.Viewer, '?object=companies&mode=upsert', 'name\nX\n'), 403, 'FORBIDDEN');
    expect(Number((await ds.query('SELECT count(*) AS n FROM imports WHERE workspace_id = $1', [ws.id]))[0].n)).toBe(4);
  });

  it('create mode refuses a row whose unique value another record holds, naming that record', async () => {
    const ws = await newWorkspace(ds, 'imp-unique');
    const acme = (await client(http, ws.keys.Admin).post('/rest/companies', { name: 'Acme', domainName: { primaryLinkUrl: 'acme.com' } }))
      .body.data.createCompany.id;
    const id = await started(
      ws,
      '?object=companies',
      ['name,domainName.primaryLinkUrl', 'Acme 2,www.acme.com', 'Other,other.com'].join('\n'),
    );
    expect(await waitForImport(http, ws.keys.Admin, id)).toMatchObject({ created: 1, failed: 1 });
    const [error] = await importErrors(http, ws.keys.Admin, id);
    expect(error.row).toBe(1);
    expect(error.messages.join(' ')).toContain(acme);
  });

  it('takes at most IMPORT_UPLOADS_PER_INSTANCE uploads streaming in at once (slow clients hold no more): the next is 503 with Retry-After, the slow ones then finish', async () => {
    const saved = { ...process.env };
    // Four slots, two a workspace (test/imports-fairness.e2e-spec.ts checks the share per workspace), no minimum pace.
    Object.assign(process.env, { IMPORT_UPLOADS_PER_INSTANCE: '4', IMPORT_UPLOADS_PER_WORKSPACE: '2', IMPORT_UPLOAD_MIN_BYTES: '0' });
    try {
      const workspaces = [await newWorkspace(ds, 'imp-slow-1'), await newWorkspace(ds, 'imp-slow-2')];
      const slow = Array.from({ length: 4 }, (_, i) => {
        const req = request(http)
          .post('/rest/imports?object=companies')
          .set(bearer(workspaces[i % 2].keys.Admin))
          .set('Content-Type', 'text/csv')
          .ok(() => true);
        // Over 1 MB (blank lines, which are no rows): the first chunk is stored, so each has its row in `imports` while its body stays open.
        req.write(`name\nSlow ${i}\n${'\n'.repeat(1_100_000)}`);
        return req;
      });
      const uploadingIn = async (ws: TestWorkspace) =>
        Number((await ds.query(`SELECT count(*) AS n FROM imports WHERE workspace_id = $1 AND status = 'uploading'`, [ws.id]))[0].n);
      const uploading = async () => (await uploadingIn(workspaces[0])) + (await uploadingIn(workspaces[1]));
      for (let i = 0; (await uploading()) < 4; i++) {
        if (i > 300) throw new Error('the slow uploads did not start');
        await new Promise((r) => setTimeout(r, 50));
      }
      const other = await newWorkspace(ds, 'imp-slow-other');
      const refused = await upload(http, other.keys.Admin, '?object=companies', 'name\nFast\n');
      expect(expectError(refused, 503, 'SERVICE_UNAVAILABLE')).toMatch(/uploads are already streaming/);
      expect(refused.headers['retry-after']).toBeDefined();
      const answers = await Promise.all(
        slow.map((req) => new Promise<request.Response>((done, fail) => req.end((err, res) => (err ? fail(err) : done(res))))),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(4).fill(202));
      for (const [i, a] of answers.entries()) await waitForImport(http, workspaces[i % 2].keys.Admin, a.body.data.import.id);
      expect((await count(workspaces[0])) + (await count(workspaces[1]))).toBe(4);
    } finally {
      process.env = saved;
    }
  });

  it('imports at most IMPORT_MAX_ROWS rows: the rest are not imported and the import ends failed, saying why', async () => {
    const ws = await newWorkspace(ds, 'imp-max-rows');
    const saved = process.env.IMPORT_MAX_ROWS;
    process.env.IMPORT_MAX_ROWS = '1500';
    try {
      const id = await started(ws, '?object=companies', ['name', ...Array.from({ length: 2000 }, (_, i) => `Row ${i}`)].join('\n'));
      expect(await waitForImport(http, ws.keys.Admin, id)).toMatchObject({
        status: 'failed',
        rowsRead: 1500,
        created: 1500,
        error: 'the file holds more than 1500 rows; the first 1500 were imported',
      });
    } finally {
      if (saved === undefined) delete process.env.IMPORT_MAX_ROWS;
      else process.env.IMPORT_MAX_ROWS = saved;
    }
    expect(await count(ws)).toBe(1500);
  });

  it('cancelling a running import keeps the rows it committed, and no more', async () => {
    const ws = await newWorkspace(ds, 'imp-cancel-running');
    const id = await started(ws, '?object=companies', ['name', ...Array.from({ length: 40_000 }, (_, i) => `Run ${i}`)].join('\n'));
    const done = async () =>
      Number((await ds.query('SELECT rows_done AS n FROM imports WHERE workspace_id = $1 AND id = $2', [ws.id, id]))[0].n);
    for (let i = 0; (await done()) === 0; i++) {
      if (i > 1000) throw new Error('the import did not start');
      await new Promise((r) => setTimeout(r, 20));
    }
    const cancelled = await client(http, ws.keys.Admin).delete(`/rest/imports/${id}`);
    expect(cancelled.status).toBe(200);
    const state = await waitForImport(http, ws.keys.Admin, id);
    await new Promise((r) => setTimeout(r, 1000)); // a batch in flight when it was cancelled has ended by now
    expect(state.status).toBe('cancelled');
    const kept = await count(ws);
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(40_000);
    expect(kept).toBe(await done());
    expect((await client(http, ws.keys.Admin).get(`/rest/imports/${id}`)).body.data.import).toMatchObject({
      status: 'cancelled',
      created: kept,
    });
  });
});
