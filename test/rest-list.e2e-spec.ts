import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { client, expectError, expectListEnvelope, ids, type Client, type Http } from './rest-helpers.js';

/** List parameters (docs/rest.md): limit, order_by, filter, totalCount. */
describe('REST list parameters', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  async function admin(label = 'list'): Promise<{ ws: TestWorkspace; api: Client }> {
    const ws = await newWorkspace(ds, label);
    return { ws, api: client(http, ws.keys.Admin) };
  }

  /** `count` companies named c0001…, created one second apart (oldest first), straight in SQL. */
  async function seedCompanies(workspaceId: string, count: number): Promise<void> {
    await ds.query(
      `INSERT INTO companies (workspace_id, name, created_at)
       SELECT $1, 'c' || lpad(g::text, 4, '0'), timestamptz '2024-01-01T00:00:00Z' + g * interval '1 second'
         FROM generate_series(1, $2::int) g ORDER BY random()`,
      [workspaceId, count],
    );
  }

  describe('limit', () => {
    let ws: TestWorkspace;
    let api: Client;
    beforeAll(async () => {
      ({ ws, api } = await admin('limit'));
      await seedCompanies(ws.id, 230);
    });

    const names = (res: any) => res.body.data.companies.map((c: { name: string }) => c.name);
    const expected = (from: number, n: number) => Array.from({ length: n }, (_, i) => `c${String(from + i).padStart(4, '0')}`);

    it('defaults to 60, in the default order createdAt[AscNullsFirst]', async () => {
      const res = await api.get('/rest/companies');
      expect(expectListEnvelope(res, 'companies')).toHaveLength(60);
      expect(names(res)).toEqual(expected(1, 60));
      expect(res.body.totalCount).toBe(230);
      expect(res.body.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    });

    it('cuts values above 200 to 200', async () => {
      for (const limit of ['201', '250', '100000']) {
        const res = await api.get('/rest/companies', { limit });
        expect(expectListEnvelope(res, 'companies')).toHaveLength(200);
        expect(names(res)).toEqual(expected(1, 200));
        expect(res.body).toMatchObject({ totalCount: 230, pageInfo: { hasNextPage: true, hasPreviousPage: false } });
      }
      const exact = await api.get('/rest/companies', { limit: 200 });
      expect(exact.body.data.companies).toHaveLength(200);
    });

    it('takes any limit from 0 to 200', async () => {
      const five = await api.get('/rest/companies', { limit: 5 });
      expect(names(five)).toEqual(expected(1, 5));
      expect(five.body.pageInfo.hasNextPage).toBe(true);

      const zero = await api.get('/rest/companies', { limit: 0 });
      expect(expectListEnvelope(zero, 'companies')).toEqual([]);
      expect(zero.body.totalCount).toBe(230);
      expect(zero.body.pageInfo).toMatchObject({ startCursor: null, endCursor: null, hasPreviousPage: false });
    });

    it('refuses a limit that is not a non-negative integer (400 INVALID_LIMIT naming limit)', async () => {
      for (const limit of ['1.5', '-1', 'abc', '1e2', '0x10', ' 5', 'NaN']) {
        const message = expectError(await api.get('/rest/companies', { limit }), 400, 'INVALID_LIMIT');
        expect(message).toMatch(/limit/);
        expect(message).toMatch(/non-negative integer/);
      }
      const twice = await api.get('/rest/companies?limit=1&limit=2');
      expectError(twice, 400, 'INVALID_LIMIT');
      expectError(await api.get('/rest/people', { limit: '-5' }), 400, 'INVALID_LIMIT');
    });
  });

  describe('order_by', () => {
    interface P {
      first: string | null;
      last: string | null;
      email: string | null;
    }
    const people: P[] = [
      { first: 'anna', last: 'smith', email: 'anna@x.co' },
      { first: 'bert', last: null, email: null },
      { first: 'carl', last: 'jones', email: 'carl@x.co' },
      { first: 'dora', last: 'smith', email: null },
      { first: 'emil', last: 'adams', email: 'emil@x.co' },
      { first: null, last: 'jones', email: 'nobody@x.co' },
      { first: 'fred', last: null, email: 'fred@x.co' },
      { first: 'gina', last: 'baker', email: 'gina@x.co' },
    ];
    let api: Client;
    beforeAll(async () => {
      const { ws, api: a } = await admin('order');
      api = a;
      const res = await api.post(
        '/rest/batch/people',
        people.map((p) => ({ name: { firstName: p.first, lastName: p.last }, emails: { primaryEmail: p.email } })),
      );
      expect(res.status).toBe(201);
      // Distinct creation times, in the listed order.
      await ds.query(
        `UPDATE people p SET created_at = timestamptz '2024-03-01T00:00:00Z' + (array_position($2::text[], coalesce(first_name, '-'))) * interval '1 minute'
          WHERE workspace_id = $1`,
        [ws.id, people.map((p) => p.first ?? '-')],
      );
    });

    type Dir = 'AscNullsFirst' | 'AscNullsLast' | 'DescNullsFirst' | 'DescNullsLast';
    function cmp(a: string | null, b: string | null, dir: Dir): number {
      if (a === b) return 0;
      if (a === null) return dir.endsWith('NullsFirst') ? -1 : 1;
      if (b === null) return dir.endsWith('NullsFirst') ? 1 : -1;
      const base = a < b ? -1 : 1; // lower-case ASCII only: the same in every collation
      return dir.startsWith('Asc') ? base : -base;
    }
    function sorted(keys: ((p: P) => string | null)[], dirs: Dir[]): (string | null)[][] {
      return [...people]
        .sort((x, y) => {
          for (let i = 0; i < keys.length; i++) {
            const c = cmp(keys[i](x), keys[i](y), dirs[i]);
            if (c) return c;
          }
          return 0;
        })
        .map((p) => keys.map((k) => k(p)));
    }
    const tuple = (res: any, keys: ((p: any) => string | null)[]) =>
      res.body.data.people.map((p: any) =>
        keys.map((k) => k({ first: p.name.firstName, last: p.name.lastName, email: p.emails.primaryEmail })),
      );

    const last = (p: P) => p.last;
    const first = (p: P) => p.first;
    const email = (p: P) => p.email;

    it.each<Dir>(['AscNullsFirst', 'AscNullsLast', 'DescNullsFirst', 'DescNullsLast'])(
      'sorts a dotted sub-field with NULLs placed right: name.lastName[%s]',
      async (dir) => {
        const res = await api.get('/rest/people', { order_by: `name.lastName[${dir}]` });
        expect(expectListEnvelope(res, 'people')).toHaveLength(people.length);
        const got = tuple(res, [last]);
        expect(got).toEqual(sorted([last], [dir]));
        const nulls = got.map((t: (string | null)[]) => t[0] === null);
        // NULLs at the requested end, nowhere else.
        expect(nulls).toEqual(dir.endsWith('NullsFirst') ? [true, true, ...Array(6).fill(false)] : [...Array(6).fill(false), true, true]);
      },
    );

    it('sorts on several fields and directions; a bare field is AscNullsFirst', async () => {
      const cases: [string, ((p: P) => string | null)[], Dir[]][] = [
        ['name.lastName[DescNullsLast],name.firstName[AscNullsLast]', [last, first], ['DescNullsLast', 'AscNullsLast']],
        ['name.lastName[AscNullsFirst],name.firstName[DescNullsFirst]', [last, first], ['AscNullsFirst', 'DescNullsFirst']],
        ['emails.primaryEmail[DescNullsFirst],name.lastName', [email, last], ['DescNullsFirst', 'AscNullsFirst']],
        ['name.firstName', [first], ['AscNullsFirst']],
        ['name.firstName[DescNullsLast]', [first], ['DescNullsLast']],
      ];
      for (const [orderBy, keys, dirs] of cases) {
        const res = await api.get('/rest/people', { order_by: orderBy });
        expect({ orderBy, got: tuple(res, keys) }).toEqual({ orderBy, got: sorted(keys, dirs) });
      }
    });

    it('sorts by createdAt both ways (default order is createdAt ascending)', async () => {
      const asc = await api.get('/rest/people');
      const desc = await api.get('/rest/people', { order_by: 'createdAt[DescNullsLast]' });
      expect(tuple(asc, [first])).toEqual(people.map((p) => [p.first]));
      expect(tuple(desc, [first])).toEqual([...people].reverse().map((p) => [p.first]));
      expect(ids(desc.body.data.people)).toEqual([...ids(asc.body.data.people)].reverse());
    });

    it('sorts companies by name and by a nullable dotted field', async () => {
      const { api: c } = await admin('order-co');
      const rows = [
        { name: 'delta', domainName: { primaryLinkUrl: 'https://b.example' } },
        { name: 'alpha' },
        { name: 'charlie', domainName: { primaryLinkUrl: 'https://a.example' } },
        { name: 'bravo' },
      ];
      expect((await c.post('/rest/batch/companies', rows)).status).toBe(201);
      const byName = await c.get('/rest/companies', { order_by: 'name[DescNullsLast]' });
      expect(byName.body.data.companies.map((x: any) => x.name)).toEqual(['delta', 'charlie', 'bravo', 'alpha']);
      const byUrl = await c.get('/rest/companies', { order_by: 'domainName.primaryLinkUrl[AscNullsLast],name[AscNullsFirst]' });
      expect(byUrl.body.data.companies.map((x: any) => x.name)).toEqual(['charlie', 'delta', 'alpha', 'bravo']);
      const byUrlNullsFirst = await c.get('/rest/companies', { order_by: 'domainName.primaryLinkUrl[DescNullsFirst],name[DescNullsLast]' });
      expect(byUrlNullsFirst.body.data.companies.map((x: any) => x.name)).toEqual(['bravo', 'alpha', 'delta', 'charlie']);
    });

    it('refuses a bad order_by (400 INVALID_ORDER_BY naming the term)', async () => {
      const cases: [string, string, RegExp][] = [
        ['/rest/people', 'name.lastName[Sideways]', /Sideways/],
        ['/rest/people', 'name.lastName[asc]', /asc/],
        ['/rest/people', 'shoeSize', /shoeSize/],
        ['/rest/people', 'shoeSize[AscNullsFirst]', /shoeSize/],
        ['/rest/people', 'emails.additionalEmails[AscNullsFirst]', /emails\.additionalEmails/],
        ['/rest/people', 'name.lastName[AscNullsFirst', /name\.lastName/],
        ['/rest/people', 'name.lastName,name.lastName[DescNullsLast]', /name\.lastName/],
        ['/rest/companies', 'people[AscNullsFirst]', /people/],
        ['/rest/companies', 'name;DROP TABLE companies', /name;DROP/],
      ];
      for (const [path, orderBy, named] of cases) {
        const message = expectError(await api.get(path, { order_by: orderBy }), 400, 'INVALID_ORDER_BY');
        expect({ orderBy, message }).toEqual({ orderBy, message: expect.stringMatching(named) });
        expect(message).toMatch(/order_by/);
      }
    });
  });

  describe('filter', () => {
    let co: Client;
    let companyIds: Record<string, string>;
    const companyRows = [
      { name: 'alpha', domainName: { primaryLinkUrl: 'https://alpha.io' } },
      { name: 'alphabet', domainName: { primaryLinkUrl: 'alphabet.com' } },
      { name: 'beta' },
      { name: 'gamma', domainName: { primaryLinkUrl: 'https://gamma.dev' } },
      { name: 'Delta Corp' },
      { name: '50% off' },
      { name: '50 cents' },
      { name: 'under_score' },
      { name: 'underXscore' },
    ];
    let personIds: Record<string, string>;

    beforeAll(async () => {
      const { ws, api } = await admin('filter');
      co = api;
      const created = (await api.post('/rest/batch/companies', companyRows)).body.data.createCompanies as { id: string; name: string }[];
      companyIds = Object.fromEntries(created.map((c) => [c.name, c.id]));
      await ds.query(
        `UPDATE companies SET created_at = timestamptz '2024-05-01T00:00:00Z' + (array_position($2::text[], name)) * interval '1 day'
          WHERE workspace_id = $1`,
        [ws.id, companyRows.map((r) => r.name)],
      );
      const peopleRows = [
        {
          name: { firstName: 'ann', lastName: 'lee' },
          emails: { primaryEmail: 'a@b.co', additionalEmails: ['x@y.co', 'z@y.co'] },
          companyId: companyIds.alpha,
        },
        {
          name: { firstName: 'bob', lastName: 'lee' },
          emails: { primaryEmail: 'bob@b.co', additionalEmails: ['q@q.co'] },
          companyId: companyIds.alpha,
        },
        { name: { firstName: 'cy' }, emails: { primaryEmail: 'cy@c.co' }, companyId: companyIds.beta },
        { name: { firstName: 'dee', lastName: 'moe' } },
      ];
      const people = (await api.post('/rest/batch/people', peopleRows)).body.data.createPeople as {
        id: string;
        name: { firstName: string };
      }[];
      personIds = Object.fromEntries(people.map((p) => [p.name.firstName, p.id]));
      await api.delete(`/rest/companies/${companyIds.underXscore}`);
    });

    async function names(filter: string, path = '/rest/companies'): Promise<string[]> {
      const res = await co.get(path, { filter, order_by: path.endsWith('companies') ? 'name' : 'name.firstName', limit: 200 });
      const rows = expectListEnvelope(res, path.endsWith('companies') ? 'companies' : 'people');
      expect(res.body.totalCount).toBe(rows.length);
      return rows.map((r: any) => (typeof r.name === 'string' ? r.name : r.name.firstName)).sort();
    }
    const sort = (a: string[]) => [...a].sort();
    const live = companyRows.map((r) => r.name).filter((n) => n !== 'underXscore');

    it('eq, neq, in, is', async () => {
      expect(await names('name[eq]:"beta"')).toEqual(['beta']);
      expect(await names('name[neq]:"beta"')).toEqual(sort(live.filter((n) => n !== 'beta')));
      expect(await names('name[in]:["alpha","gamma","nope"]')).toEqual(['alpha', 'gamma']);
      expect(await names('domainName.primaryLinkUrl[is]:NULL')).toEqual(sort(['beta', 'Delta Corp', '50% off', '50 cents', 'under_score']));
      expect(await names('domainName.primaryLinkUrl[is]:NOT_NULL')).toEqual(['alpha', 'alphabet', 'gamma']);
      expect(await names('domainName.primaryLinkUrl[eq]:"alphabet.com"')).toEqual(['alphabet']);
      expect(await names(`id[eq]:"${companyIds.gamma}"`)).toEqual(['gamma']);
      expect(await names(`id[in]:["${companyIds.gamma}","${companyIds.beta}"]`)).toEqual(['beta', 'gamma']);
      expect(await names(`id[neq]:"${companyIds.gamma}"`)).toEqual(sort(live.filter((n) => n !== 'gamma')));
    });

    it('gt, gte, lt, lte on text and on timestamps', async () => {
      const lower = 'name[in]:["alpha","alphabet","beta","gamma"]';
      expect(await names(`${lower},name[gt]:"alphabet"`)).toEqual(['beta', 'gamma']);
      expect(await names(`${lower},name[gte]:"alphabet"`)).toEqual(['alphabet', 'beta', 'gamma']);
      expect(await names(`${lower},name[lt]:"beta"`)).toEqual(['alpha', 'alphabet']);
      expect(await names(`${lower},name[lte]:"beta"`)).toEqual(['alpha', 'alphabet', 'beta']);
      // created 2024-05-02 (alpha) … one day apart in companyRows order.
      expect(await names('createdAt[gt]:"2024-05-04T00:00:00Z"')).toEqual(
        sort(['gamma', 'Delta Corp', '50% off', '50 cents', 'under_score']),
      );
      expect(await names('createdAt[gte]:"2024-05-06"')).toEqual(sort(['Delta Corp', '50% off', '50 cents', 'under_score']));
      expect(await names('createdAt[lt]:"2024-05-04"')).toEqual(['alpha', 'alphabet']);
      expect(await names('createdAt[lte]:"2024-05-04T00:00:00.000Z"')).toEqual(['alpha', 'alphabet', 'beta']);
      expect(await names('createdAt[eq]:"2024-05-03T00:00:00Z"')).toEqual(['alphabet']);
      expect(await names('createdAt[gte]:"2024-05-03T02:00:00+02:00",createdAt[lt]:"2024-05-04T00:00:00Z"')).toEqual(['alphabet']);
    });

    it('startsWith, endsWith (wildcards match themselves), like, ilike', async () => {
      expect(await names('name[startsWith]:"alpha"')).toEqual(['alpha', 'alphabet']);
      expect(await names('name[startsWith]:"50%"')).toEqual(['50% off']);
      expect(await names('name[startsWith]:"under_"')).toEqual(['under_score']);
      expect(await names('name[endsWith]:"Corp"')).toEqual(['Delta Corp']);
      expect(await names('name[endsWith]:"corp"')).toEqual([]);
      expect(await names('name[like]:"%pha%"')).toEqual(['alpha', 'alphabet']);
      expect(await names('name[like]:"50%"')).toEqual(['50 cents', '50% off']);
      expect(await names('name[like]:"delta%"')).toEqual([]);
      expect(await names('name[ilike]:"delta%"')).toEqual(['Delta Corp']);
      expect(await names('name[ilike]:"%A"')).toEqual(sort(['alpha', 'beta', 'gamma']));
    });

    it('on people: dotted sub-fields, containsAny, companyId, is on an array', async () => {
      const P = '/rest/people';
      expect(await names('emails.primaryEmail[eq]:"a@b.co"', P)).toEqual(['ann']);
      expect(await names('emails.additionalEmails[containsAny]:["z@y.co","q@q.co"]', P)).toEqual(['ann', 'bob']);
      expect(await names('emails.additionalEmails[containsAny]:["nobody@y.co"]', P)).toEqual([]);
      expect(await names('emails.additionalEmails[is]:NULL', P)).toEqual(['cy', 'dee']);
      expect(await names('emails.additionalEmails[is]:NOT_NULL', P)).toEqual(['ann', 'bob']);
      expect(await names(`companyId[eq]:"${companyIds.alpha}"`, P)).toEqual(['ann', 'bob']);
      expect(await names(`companyId[in]:["${companyIds.beta}","${companyIds.gamma}"]`, P)).toEqual(['cy']);
      expect(await names('companyId[is]:NULL', P)).toEqual(['dee']);
      expect(await names('name.lastName[eq]:"lee"', P)).toEqual(['ann', 'bob']);
      expect(await names('name.lastName[is]:NULL', P)).toEqual(['cy']);
      expect(await names('name.firstName[ilike]:"B%"', P)).toEqual(['bob']);
      expect(await names('emails.primaryEmail[endsWith]:"@b.co"', P)).toEqual(['ann', 'bob']);
      expect(await names(`id[eq]:"${personIds.dee}"`, P)).toEqual(['dee']);
    });

    it('and / or / not nest; a top-level comma list is an and', async () => {
      expect(await names('name[startsWith]:"alpha",domainName.primaryLinkUrl[startsWith]:"https"')).toEqual(['alpha']);
      expect(await names('and(name[startsWith]:"alpha",domainName.primaryLinkUrl[startsWith]:"https")')).toEqual(['alpha']);
      expect(await names('or(name[eq]:"beta",name[eq]:"gamma")')).toEqual(['beta', 'gamma']);
      expect(await names('not(name[startsWith]:"alpha")')).toEqual(sort(live.filter((n) => !n.startsWith('alpha'))));
      expect(await names('or(name[eq]:"alpha", and(name[startsWith]:"50", not(name[endsWith]:"off")))')).toEqual(['50 cents', 'alpha']);
      expect(
        await names('and(or(name[startsWith]:"a",name[startsWith]:"g"),not(or(name[eq]:"alphabet",domainName.primaryLinkUrl[is]:NULL)))'),
      ).toEqual(['alpha', 'gamma']);
      expect(await names('or(emails.primaryEmail[eq]:"a@b.co",and(companyId[is]:NULL,name.lastName[eq]:"moe"))', '/rest/people')).toEqual([
        'ann',
        'dee',
      ]);
    });

    it('totalCount counts every match, not just the page', async () => {
      const res = await co.get('/rest/companies', { filter: 'domainName.primaryLinkUrl[is]:NULL', limit: 2, order_by: 'name' });
      expect(expectListEnvelope(res, 'companies')).toHaveLength(2);
      expect(res.body.totalCount).toBe(5);
      expect(res.body.pageInfo.hasNextPage).toBe(true);
      const none = await co.get('/rest/companies', { filter: 'name[eq]:"nothing like this"' });
      expect(none.body).toEqual({
        data: { companies: [] },
        totalCount: 0,
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      });
      // Soft-deleted records are not counted unless the filter asks for them.
      expect((await co.get('/rest/companies', { filter: 'name[startsWith]:"under"' })).body.totalCount).toBe(1);
      const deleted = await co.get('/rest/companies', { filter: 'deletedAt[is]:NOT_NULL' });
      expect(deleted.body.totalCount).toBe(1);
      expect(deleted.body.data.companies.map((c: any) => c.name)).toEqual(['underXscore']);
    });

    it('refuses bad filters (400 INVALID_FILTER naming the field)', async () => {
      const cases: [string, string, RegExp][] = [
        ['/rest/companies', 'shoeSize[eq]:"x"', /shoeSize/],
        ['/rest/companies', 'name[between]:"a"', /between.*name|name.*between/],
        ['/rest/companies', 'name[containsAny]:["a"]', /containsAny.*name|name.*containsAny/],
        ['/rest/companies', 'name[in]:"a"', /name\[in\]/],
        ['/rest/companies', 'name[in]:[]', /name\[in\]/],
        ['/rest/companies', 'name[is]:MAYBE', /name\[is\]/],
        ['/rest/companies', 'name[eq]:"unterminated', /unterminated/],
        ['/rest/companies', 'or(name[eq]:"a"', /or\(/],
        ['/rest/companies', 'name[eq]:"a")', /\)/],
        ['/rest/companies', 'name:"a"', /name/],
        ['/rest/companies', 'name[eq]', /name\[eq\]/],
        ['/rest/companies', 'domainName[eq]:"x"', /domainName/],
        ['/rest/companies', 'createdAt[gt]:"yesterday"', /createdAt/],
        ['/rest/companies', 'createdAt[gt]:"2024-02-30"', /createdAt/],
        ['/rest/companies', 'xor(name[eq]:"a")', /xor/],
        ['/rest/companies', 'not(name[eq]:"a",name[eq]:"b")', /not/],
        ['/rest/people', 'companyId[eq]:"not-a-uuid"', /companyId/],
        ['/rest/people', 'companyId[startsWith]:"a"', /companyId/],
        ['/rest/people', 'emails.additionalEmails[eq]:"a@b.co"', /emails\.additionalEmails/],
        ['/rest/people', 'emails.nope[eq]:"a"', /emails\.nope/],
        ['/rest/people', 'id[eq]:"123"', /\bid\b/],
      ];
      for (const [path, filter, named] of cases) {
        const message = expectError(await co.get(path, { filter }), 400, 'INVALID_FILTER');
        expect({ filter, message }).toEqual({ filter, message: expect.stringMatching(named) });
      }
      expectError(await co.get('/rest/companies?filter=name[eq]:"a"&filter=name[eq]:"b"'), 400, 'INVALID_FILTER');
      expectError(await co.get('/rest/companies', { filter: `name[eq]:"${'x'.repeat(5000)}"` }), 400, 'INVALID_FILTER');
    });
  });

  describe('counts follow writes at once (no stale cached totalCount)', () => {
    it('companies: create, batch, update in/out of the filter, soft delete, raw SQL', async () => {
      const { ws, api } = await admin('count');
      const filter = 'name[startsWith]:"match"';
      const count = async () => {
        const res = await api.get('/rest/companies', { filter, limit: 1 });
        expect(res.status).toBe(200);
        return res.body.totalCount as number;
      };
      const total = async () => (await api.get('/rest/companies', { limit: 0 })).body.totalCount as number;
      await api.post('/rest/batch/companies', [{ name: 'match-1' }, { name: 'other-1' }]);
      expect(await count()).toBe(1);
      expect(await count()).toBe(1); // served twice (cached) without change

      const m2 = (await api.post('/rest/companies', { name: 'match-2' })).body.data.createCompany;
      expect(await count()).toBe(2);
      const o2 = (await api.post('/rest/companies', { name: 'other-2' })).body.data.createCompany;
      expect(await count()).toBe(2);
      expect(await total()).toBe(4);

      await api.delete(`/rest/companies/${m2.id}`);
      expect(await count()).toBe(1);
      expect(await total()).toBe(3);

      const m3 = (await api.post('/rest/companies', { name: 'match-3' })).body.data.createCompany;
      expect(await count()).toBe(2);
      await api.patch(`/rest/companies/${m3.id}`, { name: 'no longer' });
      expect(await count()).toBe(1);
      await api.patch(`/rest/companies/${o2.id}`, { name: 'match-now' });
      expect(await count()).toBe(2);

      await api.post('/rest/batch/companies', [{ name: 'match-a' }, { name: 'match-b' }, { name: 'zzz' }]);
      expect(await count()).toBe(4);
      expect(await total()).toBe(7);

      // A write that bypasses the API (another instance, an operator) is seen too.
      await ds.query(`UPDATE companies SET name = 'gone' WHERE workspace_id = $1 AND name = 'match-a'`, [ws.id]);
      expect(await count()).toBe(3);
      await ds.query(`DELETE FROM companies WHERE workspace_id = $1 AND name = 'match-b'`, [ws.id]);
      expect(await count()).toBe(2);
      expect(await total()).toBe(6);
    });

    it('people: the same filter in two workspaces is counted separately', async () => {
      const a = await admin('count-a');
      const b = await admin('count-b');
      const filter = 'name.lastName[eq]:"same"';
      const count = async (api: Client) => (await api.get('/rest/people', { filter })).body.totalCount as number;
      await a.api.post('/rest/people', { name: { lastName: 'same' } });
      expect(await count(a.api)).toBe(1);
      expect(await count(b.api)).toBe(0);
      const p = (await b.api.post('/rest/people', { name: { lastName: 'same' } })).body.data.createPerson;
      expect(await count(b.api)).toBe(1);
      expect(await count(a.api)).toBe(1);
      await b.api.patch(`/rest/people/${p.id}`, { name: { lastName: 'different' } });
      expect(await count(b.api)).toBe(0);
      await b.api.patch(`/rest/people/${p.id}`, { name: { firstName: 'x' } });
      expect(await count(b.api)).toBe(0);
      await b.api.patch(`/rest/people/${p.id}`, { name: { lastName: 'same' } });
      expect(await count(b.api)).toBe(1);
      await b.api.delete(`/rest/people/${p.id}`);
      expect(await count(b.api)).toBe(0);
      expect((await b.api.get('/rest/people', { filter: `${filter},deletedAt[is]:NOT_NULL` })).body.totalCount).toBe(1);
    });
  });
});
