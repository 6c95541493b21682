import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { client, expectError, expectListEnvelope, ids, ISO, UUID, type Client, type Http } from './rest-helpers.js';

/** The six REST calls for companies and people (docs/rest.md), their envelopes, depth and tenancy. */
describe('REST records', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  async function admin(label = 'rec'): Promise<{ ws: TestWorkspace; api: Client }> {
    const ws = await newWorkspace(ds, label);
    return { ws, api: client(http, ws.keys.Admin) };
  }

  async function liveCount(workspaceId: string, table: 'companies' | 'people'): Promise<number> {
    const [row] = await ds.query(`SELECT count(*)::int AS n FROM ${table} WHERE workspace_id = $1`, [workspaceId]);
    return row.n;
  }

  describe('companies', () => {
    it('creates (201) with the exact envelope and record shape, and reads it back', async () => {
      const { api } = await admin();
      const res = await api.post('/rest/companies', {
        name: 'Acme',
        domainName: { primaryLinkUrl: 'acme.com', primaryLinkLabel: 'Acme site', secondaryLinks: [{ url: 'https://acme.org/about' }] },
      });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['data']);
      expect(Object.keys(res.body.data)).toEqual(['createCompany']);
      const company = res.body.data.createCompany;
      expect(company).toEqual({
        id: expect.stringMatching(UUID),
        name: 'Acme',
        // A bare domain is accepted and kept as given (docs/rest.md).
        domainName: {
          primaryLinkUrl: 'acme.com',
          primaryLinkLabel: 'Acme site',
          secondaryLinks: [{ url: 'https://acme.org/about', label: null }],
        },
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
        deletedAt: null,
      });

      const got = await api.get(`/rest/companies/${company.id}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({ data: { company } });

      const list = await api.get('/rest/companies');
      const records = expectListEnvelope(list, 'companies');
      expect(records).toEqual([company]);
      expect(list.body.totalCount).toBe(1);
      expect(list.body.pageInfo).toEqual({
        hasNextPage: false,
        hasPreviousPage: false,
        startCursor: expect.any(String),
        endCursor: expect.any(String),
      });
      expect(list.body.pageInfo.startCursor).toBe(list.body.pageInfo.endCursor);
    });

    it('lists an empty workspace with null cursors and a zero count', async () => {
      const { api } = await admin();
      const res = await api.get('/rest/companies');
      expect(expectListEnvelope(res, 'companies')).toEqual([]);
      expect(res.body).toEqual({
        data: { companies: [] },
        totalCount: 0,
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      });
    });

    it('creates with a client-chosen id; the same id again is a 409 and writes nothing', async () => {
      const { ws, api } = await admin();
      const id = randomUUID();
      const first = await api.post('/rest/companies', { id, name: 'Chosen' });
      expect(first.status).toBe(201);
      expect(first.body.data.createCompany.id).toBe(id);

      const again = await api.post('/rest/companies', { id, name: 'Chosen again' });
      expectError(again, 409, 'CONFLICT');
      expect(await liveCount(ws.id, 'companies')).toBe(1);
      expect((await api.get(`/rest/companies/${id}`)).body.data.company.name).toBe('Chosen');
    });

    it('batch-creates up to 60 in order (201 {data:{createCompanies}})', async () => {
      const { ws, api } = await admin();
      const body = Array.from({ length: 60 }, (_, i) => ({ name: `batch-${String(i).padStart(2, '0')}` }));
      const res = await api.post('/rest/batch/companies', body);
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['data']);
      expect(Object.keys(res.body.data)).toEqual(['createCompanies']);
      expect(res.body.data.createCompanies).toHaveLength(60);
      expect(res.body.data.createCompanies.map((c: { name: string }) => c.name)).toEqual(body.map((b) => b.name));
      for (const c of res.body.data.createCompanies) {
        expect(c).toEqual({
          id: expect.stringMatching(UUID),
          name: expect.any(String),
          domainName: { primaryLinkUrl: null, primaryLinkLabel: null, secondaryLinks: [] },
          createdAt: expect.stringMatching(ISO),
          updatedAt: expect.stringMatching(ISO),
          deletedAt: null,
        });
      }
      expect(new Set(ids(res.body.data.createCompanies)).size).toBe(60);
      expect(await liveCount(ws.id, 'companies')).toBe(60);
      expect((await api.get('/rest/companies')).body.totalCount).toBe(60);
    });

    it('batch is all or none: one invalid record writes nothing; 61 records is a 400', async () => {
      const { ws, api } = await admin();
      const bad = await api.post('/rest/batch/companies', [{ name: 'ok-1' }, { name: 'ok-2' }, { name: '' }, { name: 'ok-4' }]);
      const message = expectError(bad, 400, 'VALIDATION_FAILED');
      expect(message).toMatch(/^\[2\]\.name /);
      expect(await liveCount(ws.id, 'companies')).toBe(0);

      const tooMany = await api.post(
        '/rest/batch/companies',
        Array.from({ length: 61 }, (_, i) => ({ name: `n${i}` })),
      );
      expect(expectError(tooMany, 400, 'VALIDATION_FAILED')).toMatch(/60/);
      expect(await liveCount(ws.id, 'companies')).toBe(0);

      // A batch whose last record collides with an existing id: nothing of it is written.
      const taken = randomUUID();
      expect((await api.post('/rest/companies', { id: taken, name: 'taken' })).status).toBe(201);
      const collide = await api.post('/rest/batch/companies', [{ name: 'fresh-1' }, { name: 'fresh-2' }, { id: taken, name: 'dup' }]);
      expectError(collide, 409, 'CONFLICT');
      expect(await liveCount(ws.id, 'companies')).toBe(1);

      // The same id twice inside one batch.
      const twice = randomUUID();
      expectError(
        await api.post('/rest/batch/companies', [
          { id: twice, name: 'a' },
          { id: twice, name: 'b' },
        ]),
        409,
        'CONFLICT',
      );
      expect(await liveCount(ws.id, 'companies')).toBe(1);

      // Not an array / empty.
      expectError(await api.post('/rest/batch/companies', { name: 'x' }), 400, 'VALIDATION_FAILED');
      expectError(await api.post('/rest/batch/companies', []), 400, 'VALIDATION_FAILED');
      expect(await liveCount(ws.id, 'companies')).toBe(1);
    });

    it('updates partially (200 {data:{updateCompany}}): untouched sub-fields keep their values', async () => {
      const { api } = await admin();
      const created = (
        await api.post('/rest/companies', { name: 'Before', domainName: { primaryLinkUrl: 'https://before.io', primaryLinkLabel: 'B' } })
      ).body.data.createCompany;
      await new Promise((r) => setTimeout(r, 5));

      const res = await api.patch(`/rest/companies/${created.id}`, { domainName: { primaryLinkLabel: 'New label' } });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['data']);
      expect(Object.keys(res.body.data)).toEqual(['updateCompany']);
      const updated = res.body.data.updateCompany;
      expect(updated).toEqual({
        ...created,
        domainName: { primaryLinkUrl: 'https://before.io', primaryLinkLabel: 'New label', secondaryLinks: [] },
        updatedAt: expect.stringMatching(ISO),
      });
      expect(Date.parse(updated.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));

      const renamed = await api.patch(`/rest/companies/${created.id}`, { name: 'After' });
      expect(renamed.body.data.updateCompany).toMatchObject({
        name: 'After',
        domainName: { primaryLinkUrl: 'https://before.io', primaryLinkLabel: 'New label' },
      });
      expect((await api.get(`/rest/companies/${created.id}`)).body.data.company.name).toBe('After');

      // An empty patch changes nothing and returns the record.
      const empty = await api.patch(`/rest/companies/${created.id}`, {});
      expect(empty.status).toBe(200);
      expect(empty.body.data.updateCompany.name).toBe('After');

      // name cannot be emptied.
      expect(expectError(await api.patch(`/rest/companies/${created.id}`, { name: '' }), 400, 'VALIDATION_FAILED')).toMatch(/name/);
    });

    it('soft-deletes (200 {data:{deleteCompany:{id}}}): gone from get/list, shown by deletedAt[is]:NOT_NULL', async () => {
      const { ws, api } = await admin();
      const keep = (await api.post('/rest/companies', { name: 'keep' })).body.data.createCompany;
      const gone = (await api.post('/rest/companies', { name: 'gone' })).body.data.createCompany;

      const res = await api.delete(`/rest/companies/${gone.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { deleteCompany: { id: gone.id } } });

      expectError(await api.get(`/rest/companies/${gone.id}`), 404, 'NOT_FOUND');
      const list = await api.get('/rest/companies');
      expect(ids(expectListEnvelope(list, 'companies'))).toEqual([keep.id]);
      expect(list.body.totalCount).toBe(1);

      const deleted = await api.get('/rest/companies', { filter: 'deletedAt[is]:NOT_NULL' });
      const rows = expectListEnvelope(deleted, 'companies');
      expect(ids(rows)).toEqual([gone.id]);
      expect(rows[0].deletedAt).toMatch(ISO);
      expect(deleted.body.totalCount).toBe(1);

      // Still in the table (soft), and a second delete / an update of it is a 404.
      const [row] = await ds.query('SELECT deleted_at FROM companies WHERE workspace_id = $1 AND id = $2', [ws.id, gone.id]);
      expect(row.deleted_at).toBeInstanceOf(Date);
      expectError(await api.delete(`/rest/companies/${gone.id}`), 404, 'NOT_FOUND');
      expectError(await api.patch(`/rest/companies/${gone.id}`, { name: 'zombie' }), 404, 'NOT_FOUND');
    });
  });

  describe('people', () => {
    it('creates, gets, lists with the people envelopes', async () => {
      const { api } = await admin();
      const company = (await api.post('/rest/companies', { name: 'Employer' })).body.data.createCompany;
      const res = await api.post('/rest/people', {
        name: { firstName: 'Ada', lastName: 'Lovelace' },
        emails: { primaryEmail: 'ada@example.com', additionalEmails: ['ada@work.example.com'] },
        companyId: company.id,
      });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body.data)).toEqual(['createPerson']);
      const person = res.body.data.createPerson;
      expect(person).toEqual({
        id: expect.stringMatching(UUID),
        name: { firstName: 'Ada', lastName: 'Lovelace' },
        emails: { primaryEmail: 'ada@example.com', additionalEmails: ['ada@work.example.com'] },
        companyId: company.id,
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
        deletedAt: null,
      });

      const got = await api.get(`/rest/people/${person.id}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({ data: { person } });

      const list = await api.get('/rest/people');
      expect(expectListEnvelope(list, 'people')).toEqual([person]);
      expect(list.body.totalCount).toBe(1);

      // A person without any field is allowed, all sub-fields null/empty.
      const bare = await api.post('/rest/people', {});
      expect(bare.status).toBe(201);
      expect(bare.body.data.createPerson).toMatchObject({
        name: { firstName: null, lastName: null },
        emails: { primaryEmail: null, additionalEmails: [] },
        companyId: null,
      });
    });

    it('creates with a client-chosen id; the same id again is a 409', async () => {
      const { ws, api } = await admin();
      const id = randomUUID();
      const res = await api.post('/rest/people', { id, name: { firstName: 'Chosen' } });
      expect(res.status).toBe(201);
      expect(res.body.data.createPerson.id).toBe(id);
      expectError(await api.post('/rest/people', { id, name: { firstName: 'Again' } }), 409, 'CONFLICT');
      expect(await liveCount(ws.id, 'people')).toBe(1);
    });

    it('batch-creates ({data:{createPeople}}), all or none, at most 60', async () => {
      const { ws, api } = await admin();
      const ok = await api.post('/rest/batch/people', [
        { name: { firstName: 'a' } },
        { name: { firstName: 'b' }, emails: { primaryEmail: 'b@b.co' } },
      ]);
      expect(ok.status).toBe(201);
      expect(Object.keys(ok.body)).toEqual(['data']);
      expect(Object.keys(ok.body.data)).toEqual(['createPeople']);
      expect(ok.body.data.createPeople.map((p: any) => p.name.firstName)).toEqual(['a', 'b']);
      expect(await liveCount(ws.id, 'people')).toBe(2);

      const bad = await api.post('/rest/batch/people', [{ name: { firstName: 'c' } }, { emails: { primaryEmail: 'not-an-email' } }]);
      expect(expectError(bad, 400, 'VALIDATION_FAILED')).toMatch(/\[1\]\.emails\.primaryEmail must be an email/);
      expect(await liveCount(ws.id, 'people')).toBe(2);

      expectError(
        await api.post(
          '/rest/batch/people',
          Array.from({ length: 61 }, () => ({})),
        ),
        400,
        'VALIDATION_FAILED',
      );
      expect(await liveCount(ws.id, 'people')).toBe(2);

      // A batch whose one record links a company that does not exist: nothing written.
      const missing = await api.post('/rest/batch/people', [{ name: { firstName: 'd' } }, { companyId: randomUUID() }]);
      expect(expectError(missing, 400, 'VALIDATION_FAILED')).toMatch(/companyId/);
      expect(await liveCount(ws.id, 'people')).toBe(2);

      const sixty = await api.post(
        '/rest/batch/people',
        Array.from({ length: 60 }, (_, i) => ({ name: { firstName: `p${i}` } })),
      );
      expect(sixty.status).toBe(201);
      expect(sixty.body.data.createPeople).toHaveLength(60);
      expect(await liveCount(ws.id, 'people')).toBe(62);
    });

    it('PATCH name.firstName leaves lastName (and the other fields) alone', async () => {
      const { api } = await admin();
      const company = (await api.post('/rest/companies', { name: 'Co' })).body.data.createCompany;
      const person = (
        await api.post('/rest/people', {
          name: { firstName: 'Grace', lastName: 'Hopper' },
          emails: { primaryEmail: 'grace@navy.mil', additionalEmails: ['g@h.io'] },
          companyId: company.id,
        })
      ).body.data.createPerson;

      const res = await api.patch(`/rest/people/${person.id}`, { name: { firstName: 'Amazing Grace' } });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.data)).toEqual(['updatePerson']);
      expect(res.body.data.updatePerson).toEqual({
        ...person,
        name: { firstName: 'Amazing Grace', lastName: 'Hopper' },
        updatedAt: expect.stringMatching(ISO),
      });

      const email = await api.patch(`/rest/people/${person.id}`, { emails: { primaryEmail: 'grace@example.org' } });
      expect(email.body.data.updatePerson.emails).toEqual({ primaryEmail: 'grace@example.org', additionalEmails: ['g@h.io'] });
      expect(email.body.data.updatePerson.name).toEqual({ firstName: 'Amazing Grace', lastName: 'Hopper' });

      // companyId: null unlinks.
      const unlinked = await api.patch(`/rest/people/${person.id}`, { companyId: null });
      expect(unlinked.body.data.updatePerson.companyId).toBeNull();
      expect((await api.get(`/rest/people/${person.id}`)).body.data.person).toEqual(unlinked.body.data.updatePerson);
    });

    it('soft-deletes ({data:{deletePerson:{id}}})', async () => {
      const { api } = await admin();
      const p = (await api.post('/rest/people', { name: { firstName: 'x' } })).body.data.createPerson;
      const other = (await api.post('/rest/people', { name: { firstName: 'y' } })).body.data.createPerson;
      const res = await api.delete(`/rest/people/${p.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { deletePerson: { id: p.id } } });
      expectError(await api.get(`/rest/people/${p.id}`), 404, 'NOT_FOUND');
      const list = await api.get('/rest/people');
      expect(ids(expectListEnvelope(list, 'people'))).toEqual([other.id]);
      expect(list.body.totalCount).toBe(1);
      const deleted = await api.get('/rest/people', { filter: 'deletedAt[is]:NOT_NULL' });
      expect(ids(expectListEnvelope(deleted, 'people'))).toEqual([p.id]);
      expect(deleted.body.data.people[0].deletedAt).toMatch(ISO);
    });

    it('refuses a companyId that is not a live company of the workspace', async () => {
      const { ws, api } = await admin();
      const dead = (await api.post('/rest/companies', { name: 'dead' })).body.data.createCompany;
      await api.delete(`/rest/companies/${dead.id}`);
      expect(expectError(await api.post('/rest/people', { companyId: dead.id }), 400, 'VALIDATION_FAILED')).toMatch(/companyId/);
      expect(expectError(await api.post('/rest/people', { companyId: randomUUID() }), 400, 'VALIDATION_FAILED')).toMatch(/companyId/);
      expect(expectError(await api.post('/rest/people', { companyId: 'nope' }), 400, 'VALIDATION_FAILED')).toMatch(/companyId/);
      expect(await liveCount(ws.id, 'people')).toBe(0);
    });
  });

  describe('depth', () => {
    it('depth=1 embeds company on a person and people on a company; depth=2 is a 400', async () => {
      const { api } = await admin();
      const acme = (await api.post('/rest/companies', { name: 'Acme' })).body.data.createCompany;
      const empty = (await api.post('/rest/companies', { name: 'Empty' })).body.data.createCompany;
      const alice = (await api.post('/rest/people', { name: { firstName: 'Alice' }, companyId: acme.id })).body.data.createPerson;
      const bob = (await api.post('/rest/people', { name: { firstName: 'Bob' }, companyId: acme.id })).body.data.createPerson;
      const loner = (await api.post('/rest/people', { name: { firstName: 'Loner' } })).body.data.createPerson;

      const person = await api.get(`/rest/people/${alice.id}`, { depth: 1 });
      expect(person.status).toBe(200);
      expect(person.body).toEqual({ data: { person: { ...alice, company: acme, pointOfContactForOpportunities: [] } } });

      const people = await api.get('/rest/people', { depth: 1, order_by: 'name.firstName' });
      expect(expectListEnvelope(people, 'people')).toEqual([
        { ...alice, company: acme, pointOfContactForOpportunities: [] },
        { ...bob, company: acme, pointOfContactForOpportunities: [] },
        { ...loner, company: null, pointOfContactForOpportunities: [] },
      ]);

      const company = await api.get(`/rest/companies/${acme.id}`, { depth: 1 });
      // Embedded people come oldest first; alice and bob may share a millisecond, so compare as sets.
      const byId = (list: { id: string }[]) => [...list].sort((x, y) => x.id.localeCompare(y.id));
      expect(Object.keys(company.body.data)).toEqual(['company']);
      expect({ ...company.body.data.company, people: byId(company.body.data.company.people) }).toEqual({
        ...acme,
        people: byId([alice, bob]),
        opportunities: [],
      });
      const companies = await api.get('/rest/companies', { depth: 1, order_by: 'name' });
      const embedded = expectListEnvelope(companies, 'companies');
      expect(embedded.map((c) => ({ ...c, people: byId(c.people) }))).toEqual([
        { ...acme, people: byId([alice, bob]), opportunities: [] },
        { ...empty, people: [], opportunities: [] },
      ]);

      // depth=0 (default) embeds nothing.
      expect((await api.get(`/rest/people/${alice.id}`, { depth: 0 })).body.data.person).toEqual(alice);
      expect((await api.get(`/rest/companies/${acme.id}`)).body.data.company).not.toHaveProperty('people');

      // A deleted person disappears from the embedded list.
      await api.delete(`/rest/people/${bob.id}`);
      expect((await api.get(`/rest/companies/${acme.id}`, { depth: 1 })).body.data.company.people).toEqual([alice]);

      for (const path of ['/rest/people', `/rest/people/${alice.id}`, '/rest/companies', `/rest/companies/${acme.id}`]) {
        for (const depth of ['2', '-1', 'x']) {
          expect(expectError(await api.get(path, { depth }), 400, 'INVALID_DEPTH')).toMatch(/depth/);
        }
      }
    });

    it('embeds at most 60 people per company', async () => {
      const { ws, api } = await admin();
      const big = (await api.post('/rest/companies', { name: 'Big' })).body.data.createCompany;
      await ds.query(
        `INSERT INTO people (workspace_id, first_name, company_id, created_at)
         SELECT $1, 'p' || g, $2, now() - (100 - g) * interval '1 second' FROM generate_series(1, 75) g`,
        [ws.id, big.id],
      );
      const res = await api.get(`/rest/companies/${big.id}`, { depth: 1 });
      expect(res.status).toBe(200);
      const embedded = res.body.data.company.people;
      expect(embedded).toHaveLength(60);
      expect(new Set(ids(embedded)).size).toBe(60);
      for (const p of embedded) expect(p.companyId).toBe(big.id);
      const list = await api.get('/rest/companies', { depth: 1 });
      expect(list.body.data.companies[0].people).toHaveLength(60);
    });
  });

  describe('tenant isolation', () => {
    it("another workspace's records are 404 on get/patch/delete and never listed or found by filter", async () => {
      const a = await admin('tenant-a');
      const b = await admin('tenant-b');
      const theirs = (await b.api.post('/rest/companies', { name: 'Secret Co' })).body.data.createCompany;
      const theirPerson = (await b.api.post('/rest/people', { name: { firstName: 'Secret' }, companyId: theirs.id })).body.data
        .createPerson;
      const mine = (await a.api.post('/rest/companies', { name: 'Mine' })).body.data.createCompany;

      for (const [plural, id] of [
        ['companies', theirs.id],
        ['people', theirPerson.id],
      ] as const) {
        expectError(await a.api.get(`/rest/${plural}/${id}`), 404, 'NOT_FOUND');
        expectError(
          await a.api.patch(`/rest/${plural}/${id}`, plural === 'companies' ? { name: 'pwned' } : { name: { firstName: 'pwned' } }),
          404,
          'NOT_FOUND',
        );
        expectError(await a.api.delete(`/rest/${plural}/${id}`), 404, 'NOT_FOUND');
        const byId = await a.api.get(`/rest/${plural}`, { filter: `id[eq]:"${id}"` });
        expect(expectListEnvelope(byId, plural)).toEqual([]);
        expect(byId.body.totalCount).toBe(0);
      }
      const byCompany = await a.api.get('/rest/people', { filter: `companyId[eq]:"${theirs.id}"` });
      expect(byCompany.body.data.people).toEqual([]);
      expect(byCompany.body.totalCount).toBe(0);

      // Untouched in B.
      expect((await b.api.get(`/rest/companies/${theirs.id}`)).body.data.company).toEqual(theirs);
      expect((await b.api.get(`/rest/people/${theirPerson.id}`)).body.data.person).toEqual(theirPerson);

      const listA = await a.api.get('/rest/companies');
      expect(ids(listA.body.data.companies)).toEqual([mine.id]);
      expect(listA.body.totalCount).toBe(1);
      expect((await a.api.get('/rest/people')).body).toMatchObject({ data: { people: [] }, totalCount: 0 });
      expect((await a.api.get('/rest/companies', { filter: 'deletedAt[is]:NOT_NULL' })).body.data.companies).toEqual([]);
    });

    it("refuses a person linked to another workspace's company (create, batch, update); nothing written", async () => {
      const a = await admin('link-a');
      const b = await admin('link-b');
      const theirs = (await b.api.post('/rest/companies', { name: 'Theirs' })).body.data.createCompany;
      expect(expectError(await a.api.post('/rest/people', { companyId: theirs.id }), 400, 'VALIDATION_FAILED')).toMatch(/companyId/);
      expectError(await a.api.post('/rest/batch/people', [{}, { companyId: theirs.id }]), 400, 'VALIDATION_FAILED');
      expect(await liveCount(a.ws.id, 'people')).toBe(0);

      const mine = (await a.api.post('/rest/people', { name: { firstName: 'Me' } })).body.data.createPerson;
      expectError(await a.api.patch(`/rest/people/${mine.id}`, { companyId: theirs.id }), 400, 'VALIDATION_FAILED');
      expect((await a.api.get(`/rest/people/${mine.id}`)).body.data.person.companyId).toBeNull();
    });

    it('the same client-chosen id may exist in two workspaces, each seeing only its own', async () => {
      const a = await admin('same-a');
      const b = await admin('same-b');
      const id = randomUUID();
      expect((await a.api.post('/rest/companies', { id, name: 'in A' })).status).toBe(201);
      const inB = await b.api.post('/rest/companies', { id, name: 'in B' });
      // Either outcome must not reveal A's record; a 409 here would leak that the id exists elsewhere.
      expect(inB.status).toBe(201);
      expect((await a.api.get(`/rest/companies/${id}`)).body.data.company.name).toBe('in A');
      expect((await b.api.get(`/rest/companies/${id}`)).body.data.company.name).toBe('in B');
      await b.api.delete(`/rest/companies/${id}`);
      expect((await a.api.get(`/rest/companies/${id}`)).status).toBe(200);
    });
  });
});
