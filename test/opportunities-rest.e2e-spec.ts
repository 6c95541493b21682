import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { findRole } from '#identity/accounts.js';
import { RoleEntity } from '#database/entities/index.js';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { allPermissions, client, expectError, ids, ISO, keyWithRole, UUID, type Client, type Http } from './rest-helpers.js';

/** Opportunities over REST (docs/architecture.md): the six calls, validation, filters, order, keyset, depth, batches, roles, tenancy. */
describe('REST opportunities', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  async function admin(label = 'opp'): Promise<{ ws: TestWorkspace; api: Client }> {
    const ws = await newWorkspace(ds, label);
    return { ws, api: client(http, ws.keys.Admin) };
  }

  async function rowCount(workspaceId: string): Promise<number> {
    const [row] = await ds.query('SELECT count(*)::int AS n FROM opportunities WHERE workspace_id = $1', [workspaceId]);
    return row.n;
  }

  const list = async (api: Client, query: Record<string, string | number>) => {
    const res = await api.get('/rest/opportunities', query);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'pageInfo', 'totalCount']);
    return res.body as { data: { opportunities: any[] }; totalCount: number; pageInfo: any };
  };

  it('creates with the exact envelope and shape (stage defaults to NEW), reads, updates, deletes', async () => {
    const { api } = await admin();
    const company = (await api.post('/rest/companies', { name: 'Acme' })).body.data.createCompany;
    const person = (await api.post('/rest/people', { name: { firstName: 'Ada' }, companyId: company.id })).body.data.createPerson;
    const res = await api.post('/rest/opportunities', {
      name: 'Acme renewal',
      amount: { amountMicros: 12_500_000_000_000, currencyCode: 'EUR' },
      closeDate: '2026-12-31',
      companyId: company.id,
      pointOfContactId: person.id,
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body.data)).toEqual(['createOpportunity']);
    const opp = res.body.data.createOpportunity;
    expect(opp).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Acme renewal',
      // Beyond 2^31 and still a JSON number (docs/architecture.md).
      amount: { amountMicros: 12_500_000_000_000, currencyCode: 'EUR' },
      closeDate: '2026-12-31T00:00:00.000Z',
      stage: 'NEW',
      companyId: company.id,
      pointOfContactId: person.id,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      deletedAt: null,
    });
    expect((await api.get(`/rest/opportunities/${opp.id}`)).body).toEqual({ data: { opportunity: opp } });

    const deep = await api.get(`/rest/opportunities/${opp.id}`, { depth: 1 });
    expect(deep.body.data.opportunity).toEqual({ ...opp, company, pointOfContact: person });

    const patched = await api.patch(`/rest/opportunities/${opp.id}`, {
      stage: 'PROPOSAL',
      amount: { currencyCode: 'USD' },
      pointOfContactId: null,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.updateOpportunity).toMatchObject({
      stage: 'PROPOSAL',
      amount: { amountMicros: 12_500_000_000_000, currencyCode: 'USD' },
      pointOfContactId: null,
      companyId: company.id,
    });
    const cleared = await api.patch(`/rest/opportunities/${opp.id}`, { amount: null, closeDate: null });
    expect(cleared.body.data.updateOpportunity).toMatchObject({ amount: { amountMicros: null, currencyCode: null }, closeDate: null });

    const deleted = await api.delete(`/rest/opportunities/${opp.id}`);
    expect(deleted.body).toEqual({ data: { deleteOpportunity: { id: opp.id } } });
    expectError(await api.get(`/rest/opportunities/${opp.id}`), 404, 'NOT_FOUND');
    expect((await list(api, { filter: 'deletedAt[is]:NOT_NULL' })).data.opportunities.map((o) => o.id)).toEqual([opp.id]);
  });

  it('refuses each kind of bad input with 400 VALIDATION_FAILED naming the field, and writes nothing', async () => {
    const { ws, api } = await admin();
    const other = await admin('opp-other');
    const foreignCompany = (await other.api.post('/rest/companies', { name: 'Not yours' })).body.data.createCompany;
    const foreignPerson = (await other.api.post('/rest/people', { name: { firstName: 'Not yours' } })).body.data.createPerson;
    const cases: [unknown, RegExp][] = [
      [{}, /name/],
      [{ name: '' }, /name should not be empty/],
      [{ name: 'x'.repeat(501) }, /name must be shorter than or equal to 500 characters/],
      [{ name: 'A', stage: 'WON' }, /stage must be one of the following values: NEW, SCREENING, MEETING, PROPOSAL, CUSTOMER/],
      [{ name: 'A', stage: null }, /stage must be one of the following values/],
      [{ name: 'A', amount: { currencyCode: 'usd' } }, /amount\.currencyCode must be an ISO 4217 currency code/],
      [{ name: 'A', amount: { currencyCode: 'EURO' } }, /amount\.currencyCode must be an ISO 4217 currency code/],
      [{ name: 'A', amount: { amountMicros: 1.5 } }, /amount\.amountMicros must be an integer/],
      [{ name: 'A', amount: { amountMicros: '1000' } }, /amount\.amountMicros must be an integer/],
      [{ name: 'A', amount: { amountMicros: 2 ** 60 } }, /amount\.amountMicros must be at most 9007199254740991/],
      [{ name: 'A', amount: { amountMicros: -(2 ** 60) } }, /amount\.amountMicros must be at least -9007199254740991/],
      [{ name: 'A', amount: { amountMicros: 1, cents: 2 } }, /amount\.cents is not a known field/],
      [{ name: 'A', amount: 'lots' }, /amount must be an object/],
      [{ name: 'A', closeDate: 'next week' }, /closeDate must be an ISO 8601 date or date-time/],
      [{ name: 'A', closeDate: '2026-02-30' }, /closeDate must be an ISO 8601 date or date-time/],
      [{ name: 'A', companyId: 'acme' }, /companyId must be a UUID/],
      [{ name: 'A', companyId: foreignCompany.id }, new RegExp(`companyId: no company with id ${foreignCompany.id} in this workspace`)],
      [
        { name: 'A', pointOfContactId: foreignPerson.id },
        new RegExp(`pointOfContactId: no person with id ${foreignPerson.id} in this workspace`),
      ],
      [{ name: 'A', pointOfContactId: randomUUID() }, /pointOfContactId: no person with id/],
      [{ name: 'A', probability: 50 }, /probability is not a known field/],
      [{ name: 'A', id: null }, /id must be a UUID/],
    ];
    for (const [body, message] of cases) {
      const res = await api.post('/rest/opportunities', body);
      expect({ body, message: expectError(res, 400, 'VALIDATION_FAILED') }).toEqual({ body, message: expect.stringMatching(message) });
    }
    // A company deleted meanwhile is missing too.
    const gone = (await api.post('/rest/companies', { name: 'Gone' })).body.data.createCompany;
    await api.delete(`/rest/companies/${gone.id}`);
    expect(expectError(await api.post('/rest/opportunities', { name: 'A', companyId: gone.id }), 400, 'VALIDATION_FAILED')).toMatch(
      /companyId: no company/,
    );
    expect(await rowCount(ws.id)).toBe(0);

    const created = (await api.post('/rest/opportunities', { name: 'Fine' })).body.data.createOpportunity;
    for (const [body, message] of [
      [{ stage: 'won' }, /stage must be one of/],
      [{ name: null }, /name must be a string/],
      [{ amount: { amountMicros: 0.1 } }, /amountMicros must be an integer/],
      [{ companyId: foreignCompany.id }, /companyId: no company/],
    ] as const) {
      expect(expectError(await api.patch(`/rest/opportunities/${created.id}`, body), 400, 'VALIDATION_FAILED')).toMatch(message);
    }
    expect((await api.get(`/rest/opportunities/${created.id}`)).body.data.opportunity).toEqual(created);
  });

  it('batches 1 to 60 all or none; a bad record or a duplicate id writes nothing', async () => {
    const { ws, api } = await admin();
    const ok = await api.post('/rest/batch/opportunities', [{ name: 'One' }, { name: 'Two', stage: 'MEETING' }]);
    expect(ok.status).toBe(201);
    expect(ok.body.data.createOpportunities.map((o: { name: string; stage: string }) => [o.name, o.stage])).toEqual([
      ['One', 'NEW'],
      ['Two', 'MEETING'],
    ]);
    const bad = await api.post('/rest/batch/opportunities', [{ name: 'Three' }, { name: 'Four', amount: { currencyCode: 'xx' } }]);
    expect(expectError(bad, 400, 'VALIDATION_FAILED')).toMatch(/\[1\]\.amount\.currencyCode/);
    const id = randomUUID();
    expectError(
      await api.post('/rest/batch/opportunities', [
        { id, name: 'A' },
        { id, name: 'B' },
      ]),
      409,
      'CONFLICT',
    );
    expect(
      expectError(
        await api.post(
          '/rest/batch/opportunities',
          Array.from({ length: 61 }, () => ({ name: 'x' })),
        ),
        400,
        'VALIDATION_FAILED',
      ),
    ).toMatch(/1 to 60/);
    expect(await rowCount(ws.id)).toBe(2);
  });

  describe('lists', () => {
    let api: Client;
    let made: Record<string, any>;
    let companyId: string;

    beforeAll(async () => {
      ({ api } = await admin('opp-list'));
      companyId = (await api.post('/rest/companies', { name: 'Acme' })).body.data.createCompany.id;
      const rows = [
        { name: 'a', stage: 'NEW', amount: { amountMicros: 5_000_000, currencyCode: 'USD' }, closeDate: '2026-03-01', companyId },
        { name: 'b', stage: 'MEETING', amount: { amountMicros: 3_000_000_000_000, currencyCode: 'EUR' }, closeDate: '2027-01-15' },
        { name: 'c', stage: 'PROPOSAL', amount: { amountMicros: 999_999, currencyCode: 'USD' } },
        { name: 'd', stage: 'CUSTOMER', closeDate: '2026-12-31T23:00:00Z', companyId },
        { name: 'e', stage: 'MEETING', amount: { amountMicros: -2_000_000, currencyCode: 'GBP' }, closeDate: '2026-06-30' },
      ];
      made = {};
      for (const row of rows) made[row.name] = (await api.post('/rest/opportunities', row)).body.data.createOpportunity;
    });

    const names = (page: { data: { opportunities: { name: string }[] } }) => page.data.opportunities.map((o) => o.name);

    it('filters on every kind of field (docs/architecture.md examples), with an exact totalCount', async () => {
      const cases: [string, string[]][] = [
        ['stage[in]:["NEW","MEETING"]', ['a', 'b', 'e']],
        ['stage[eq]:CUSTOMER', ['d']],
        ['stage[neq]:"MEETING"', ['a', 'c', 'd']],
        ['amount.amountMicros[gte]:1000000', ['a', 'b']],
        ['amount.amountMicros[lt]:0', ['e']],
        ['amount.amountMicros[is]:NULL', ['d']],
        ['amount.amountMicros[in]:["999999","5000000"]', ['a', 'c']],
        ['amount.currencyCode[eq]:"USD"', ['a', 'c']],
        // A date is midnight UTC: d closes later that day.
        ['closeDate[lte]:"2026-12-31"', ['a', 'e']],
        ['closeDate[lte]:"2026-12-31T23:00:00Z"', ['a', 'd', 'e']],
        ['closeDate[gt]:"2026-12-31T23:00:00Z"', ['b']],
        ['closeDate[is]:NULL', ['c']],
        [`companyId[eq]:"${'$'}{companyId}"`, ['a', 'd']],
        ['or(stage[eq]:"PROPOSAL",and(amount.currencyCode[eq]:"EUR",closeDate[gte]:"2027-01-01"))', ['b', 'c']],
        ['not(pointOfContactId[is]:NULL)', []],
      ];
      for (const [filter, expected] of cases) {
        const page = await list(api, { filter: filter.replace('${companyId}', companyId) });
        expect({ filter, names: names(page), total: page.totalCount }).toEqual({ filter, names: expected, total: expected.length });
      }
    });

    it('refuses bad filter values with 400 INVALID_FILTER', async () => {
      for (const [filter, message] of [
        ['stage[eq]:"WON"', /stage\[eq\].* expects one of NEW, SCREENING, MEETING, PROPOSAL, CUSTOMER/],
        ['stage[like]:"N%"', /operator "like" is not allowed on enum field stage/],
        ['amount.amountMicros[gte]:1.5', /expects an integer/],
        ['amount.amountMicros[gte]:99999999999999999999', /expects an integer/],
        ['closeDate[lte]:"soon"', /expects an ISO 8601 date/],
        [
          'amount[eq]:"1"',
          /"amount" at character 1 is a composite field; filter on one of its sub-fields: amount\.amountMicros, amount\.currencyCode/,
        ],
        ['probability[eq]:"1"', /unknown field "probability"/],
      ] as const) {
        expect(expectError(await api.get('/rest/opportunities', { filter }), 400, 'INVALID_FILTER')).toMatch(message);
      }
    });

    it('orders by amount (a composite sorts by its micros), closeDate, stage, name; nulls where asked', async () => {
      expect(names(await list(api, { order_by: 'amount.amountMicros[DescNullsLast]' }))).toEqual(['b', 'a', 'c', 'e', 'd']);
      expect(names(await list(api, { order_by: 'amount[AscNullsFirst]' }))).toEqual(['d', 'e', 'c', 'a', 'b']);
      expect(names(await list(api, { order_by: 'closeDate[AscNullsLast]' }))).toEqual(['a', 'e', 'd', 'b', 'c']);
      expect(names(await list(api, { order_by: 'closeDate[DescNullsFirst]' }))).toEqual(['c', 'b', 'd', 'e', 'a']);
      expect(names(await list(api, { order_by: 'stage,name[DescNullsLast]' }))).toEqual(['d', 'e', 'b', 'a', 'c']);
      expect(names(await list(api, { order_by: 'amount.currencyCode[AscNullsLast],name' }))).toEqual(['b', 'e', 'a', 'c', 'd']);
      expect(expectError(await api.get('/rest/opportunities', { order_by: 'probability' }), 400, 'INVALID_ORDER_BY')).toMatch(
        /sortable fields: id, name, amount\.amountMicros, amount\.currencyCode, closeDate, stage, companyId, pointOfContactId, createdAt, updatedAt, deletedAt, amount/,
      );
    });

    it('pages by keyset in both directions in every order, with exact hasNext/hasPrevious', async () => {
      for (const order_by of ['amount.amountMicros[DescNullsLast]', 'closeDate[AscNullsLast]', 'stage[DescNullsFirst]', 'createdAt']) {
        const all = names(await list(api, { order_by }));
        const seen: string[] = [];
        let page = await list(api, { order_by, limit: 2 });
        expect(page.pageInfo.hasPreviousPage).toBe(false);
        seen.push(...names(page));
        while (page.pageInfo.hasNextPage) {
          page = await list(api, { order_by, limit: 2, starting_after: page.pageInfo.endCursor });
          expect(page.pageInfo.hasPreviousPage).toBe(true);
          expect(page.totalCount).toBe(5);
          seen.push(...names(page));
        }
        expect({ order_by, seen }).toEqual({ order_by, seen: all });
        const back = await list(api, { order_by, limit: 2, ending_before: page.pageInfo.startCursor });
        expect(names(back)).toEqual(all.slice(-(names(page).length + 2), -names(page).length));
      }
      const cursor = (await list(api, { order_by: 'amount.amountMicros[DescNullsLast]', limit: 1 })).pageInfo.endCursor;
      expectError(await api.get('/rest/opportunities', { order_by: 'closeDate', starting_after: cursor }), 400, 'INVALID_CURSOR');
    });

    it('embeds company and pointOfContact at depth=1, and depth=1 needs read on both', async () => {
      const page = await list(api, { depth: 1, filter: 'name[in]:["a","b"]', order_by: 'name' });
      expect(page.data.opportunities.map((o) => [o.name, o.company?.name ?? null, o.pointOfContact])).toEqual([
        ['a', 'Acme', null],
        ['b', null, null],
      ]);
      expect(ids(page.data.opportunities)).toEqual([made.a.id, made.b.id]);
    });
  });

  it('permissions: Viewer reads only; a custom role lacks opportunities until granted; depth=1 needs read on the embedded objects', async () => {
    const { ws, api } = await admin('opp-roles');
    const viewer = client(http, ws.keys.Viewer);
    const opp = (await api.post('/rest/opportunities', { name: 'Seen' })).body.data.createOpportunity;
    expect((await viewer.get(`/rest/opportunities/${opp.id}`)).status).toBe(200);
    expectError(await viewer.post('/rest/opportunities', { name: 'No' }), 403, 'FORBIDDEN');
    expectError(await viewer.patch(`/rest/opportunities/${opp.id}`, { name: 'No' }), 403, 'FORBIDDEN');
    expectError(await viewer.delete(`/rest/opportunities/${opp.id}`), 403, 'FORBIDDEN');

    const member = await findRole(ds, ws.id, 'Member');
    expect(member.objectPermissions.opportunities).toEqual({ read: true, create: true, update: true, delete: true });
    expect((await findRole(ds, ws.id, 'Viewer')).objectPermissions.opportunities).toEqual({
      read: true,
      create: false,
      update: false,
      delete: false,
    });

    // A custom role made with the companies and people permissions only.
    const legacy = await keyWithRole(ds, ws.id, 'Legacy', allPermissions());
    const legacyApi = client(http, legacy.secret);
    expect(expectError(await legacyApi.get('/rest/opportunities'), 403, 'FORBIDDEN')).toMatch(/does not allow read on opportunities/);
    expect((await legacyApi.get('/rest/companies')).status).toBe(200);

    const noPeople = await keyWithRole(ds, ws.id, 'Deals only', {
      companies: { read: true, create: false, update: false, delete: false },
      people: { read: false, create: false, update: false, delete: false },
      opportunities: { read: true, create: true, update: true, delete: true },
    });
    const deals = client(http, noPeople.secret);
    expect((await deals.get(`/rest/opportunities/${opp.id}`)).status).toBe(200);
    expect(expectError(await deals.get(`/rest/opportunities/${opp.id}`, { depth: 1 }), 403, 'FORBIDDEN')).toMatch(/read on people/);
    await ds
      .getRepository(RoleEntity)
      .delete({ workspaceId: ws.id, id: noPeople.roleId })
      .catch(() => undefined);
  });

  it("isolation: another workspace's opportunities behave as missing", async () => {
    const one = await admin('opp-iso-1');
    const two = await admin('opp-iso-2');
    const opp = (await one.api.post('/rest/opportunities', { name: 'Private' })).body.data.createOpportunity;
    expectError(await two.api.get(`/rest/opportunities/${opp.id}`), 404, 'NOT_FOUND');
    expectError(await two.api.patch(`/rest/opportunities/${opp.id}`, { name: 'Mine' }), 404, 'NOT_FOUND');
    expectError(await two.api.delete(`/rest/opportunities/${opp.id}`), 404, 'NOT_FOUND');
    const page = await list(two.api, {});
    expect(page.totalCount).toBe(0);
    expect(page.data.opportunities).toEqual([]);
    // The same id is free in the other workspace: ids are per workspace.
    expect((await two.api.post('/rest/opportunities', { id: opp.id, name: 'Twin' })).status).toBe(201);
    expect((await one.api.get(`/rest/opportunities/${opp.id}`)).body.data.opportunity.name).toBe('Private');
  });

  it('refuses unknown query parameters and a bad id like the other objects', async () => {
    const { api } = await admin();
    expect(expectError(await api.get('/rest/opportunities', { sort: 'name' }), 400, 'VALIDATION_FAILED')).toMatch(
      /unknown query parameter "sort"/,
    );
    expectError(await api.get('/rest/opportunities/not-a-uuid'), 400, 'INVALID_ID');
    expectError(await api.get('/rest/opportunities', { depth: 2 }), 400, 'INVALID_DEPTH');
  });
});
