import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { client, expectError, expectListEnvelope, ids, type Client, type Http } from './rest-helpers.js';

/** Keyset pagination with starting_after / ending_before (docs/rest.md). */
describe('REST pagination', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let ws: TestWorkspace;
  let api: Client;
  let all: Row[];

  interface Row {
    id: string;
    lastName: string | null;
    createdAt: string;
  }
  const TOTAL = 250;
  const LAST_NAMES = ['adams', 'baker', 'clark', 'davis', 'evans'];

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
    ws = await newWorkspace(ds, 'pages');
    api = client(http, ws.keys.Admin);
    // 250 people; creation times shared by groups of three; last names repeat, every ninth is NULL.
    await ds.query(
      `INSERT INTO people (workspace_id, first_name, last_name, created_at)
       SELECT $1, 'p' || lpad(g::text, 3, '0'),
              CASE WHEN g % 9 = 0 THEN NULL ELSE ($2::text[])[g % 5 + 1] END,
              timestamptz '2024-01-01T00:00:00Z' + (g / 3) * interval '1 second'
         FROM generate_series(1, ${TOTAL}) g ORDER BY random()`,
      [ws.id, LAST_NAMES],
    );
    const rows = await ds.query('SELECT id, last_name, created_at FROM people WHERE workspace_id = $1', [ws.id]);
    all = rows.map((r: any) => ({ id: r.id, lastName: r.last_name, createdAt: r.created_at.toISOString() }));
    expect(all).toHaveLength(TOTAL);
  });
  afterAll(() => app.close());

  interface Page {
    records: any[];
    totalCount: number;
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  }

  async function page(c: Client, query: Record<string, string | number>): Promise<Page> {
    const res = await c.get('/rest/people', query);
    const records = expectListEnvelope(res, 'people');
    const { pageInfo } = res.body;
    if (records.length) {
      expect(pageInfo.startCursor).toEqual(expect.any(String));
      expect(pageInfo.endCursor).toEqual(expect.any(String));
    } else {
      expect([pageInfo.startCursor, pageInfo.endCursor]).toEqual([null, null]);
    }
    return { records, totalCount: res.body.totalCount, pageInfo };
  }

  /** Forward walk; checks hasPreviousPage/hasNextPage on every page. Calls `between` after each page. */
  async function walkForward(
    c: Client,
    query: Record<string, string | number>,
    limit: number,
    between?: (p: Page, index: number) => Promise<void>,
  ): Promise<{ records: any[]; pages: Page[]; lastCursor: string }> {
    const pages: Page[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 1000; i++) {
      const p = await page(c, { ...query, limit, ...(cursor ? { starting_after: cursor } : {}) });
      pages.push(p);
      expect(p.pageInfo.hasPreviousPage).toBe(i > 0);
      if (!p.pageInfo.hasNextPage) break;
      expect(p.records).toHaveLength(limit);
      cursor = p.pageInfo.endCursor!;
      if (between) await between(p, i);
    }
    const lastPage = pages[pages.length - 1];
    expect(lastPage.pageInfo.hasNextPage).toBe(false);
    return { records: pages.flatMap((p) => p.records), pages, lastCursor: lastPage.pageInfo.endCursor! };
  }

  /** Backward walk from a cursor to the start; returns the records in list order. */
  async function walkBackward(
    c: Client,
    query: Record<string, string | number>,
    limit: number,
    from: string,
  ): Promise<{ records: any[]; pages: Page[] }> {
    const pages: Page[] = [];
    let cursor = from;
    for (let i = 0; i < 1000; i++) {
      const p = await page(c, { ...query, limit, ending_before: cursor });
      pages.unshift(p);
      // There is always the cursor row (at least) after a backward page.
      expect(p.pageInfo.hasNextPage).toBe(true);
      if (!p.pageInfo.hasPreviousPage) break;
      expect(p.records).toHaveLength(limit);
      cursor = p.pageInfo.startCursor!;
    }
    expect(pages[0].pageInfo.hasPreviousPage).toBe(false);
    return { records: pages.flatMap((p) => p.records), pages };
  }

  type Dir = 'AscNullsFirst' | 'AscNullsLast' | 'DescNullsFirst' | 'DescNullsLast';
  function cmp(a: string | null, b: string | null, dir: Dir): number {
    if (a === b) return 0;
    if (a === null) return dir.endsWith('NullsFirst') ? -1 : 1;
    if (b === null) return dir.endsWith('NullsFirst') ? 1 : -1;
    return (a < b ? -1 : 1) * (dir.startsWith('Asc') ? 1 : -1);
  }

  /** Sorted by the key (NULLs placed per dir), then by id in one consistent direction. */
  function expectOrdered(records: any[], key: (r: any) => string | null, dir: Dir): void {
    let idSign = 0;
    for (let i = 1; i < records.length; i++) {
      const c = cmp(key(records[i - 1]), key(records[i]), dir);
      expect({ at: i, ordered: c <= 0 }).toEqual({ at: i, ordered: true });
      if (c === 0) {
        const s = records[i - 1].id < records[i].id ? 1 : -1;
        if (!idSign) idSign = s;
        expect({ at: i, tieBrokenById: s }).toEqual({ at: i, tieBrokenById: idSign });
      }
    }
    expect(idSign).not.toBe(0); // the data does hold ties
  }

  function expectExactlyOnce(records: any[], expected: string[]): void {
    const seen = ids(records);
    expect(new Set(seen).size).toBe(seen.length); // no duplicate
    expect([...seen].sort()).toEqual([...expected].sort()); // no gap
  }

  const lastName = (r: any) => r.name?.lastName ?? null;
  const createdAt = (r: any) => r.createdAt as string;

  const ORDERS: [label: string, query: Record<string, string>, key: (r: any) => string | null, dir: Dir][] = [
    ['the default order', {}, createdAt, 'AscNullsFirst'],
    ['createdAt[DescNullsLast]', { order_by: 'createdAt[DescNullsLast]' }, createdAt, 'DescNullsLast'],
    ['name.lastName[AscNullsLast]', { order_by: 'name.lastName[AscNullsLast]' }, lastName, 'AscNullsLast'],
    ['name.lastName[DescNullsFirst]', { order_by: 'name.lastName[DescNullsFirst]' }, lastName, 'DescNullsFirst'],
    ['name.lastName[AscNullsFirst]', { order_by: 'name.lastName[AscNullsFirst]' }, lastName, 'AscNullsFirst'],
    ['name.lastName[DescNullsLast]', { order_by: 'name.lastName[DescNullsLast]' }, lastName, 'DescNullsLast'],
  ];

  it.each(ORDERS)('walks %s forward and backward with no duplicate and no gap', async (_label, query, key, dir) => {
    const forward = await walkForward(api, query, 30);
    expect(forward.pages).toHaveLength(9); // 8 × 30 + 10
    expect(forward.pages[8].records).toHaveLength(10);
    for (const p of forward.pages) expect(p.totalCount).toBe(TOTAL);
    expectExactlyOnce(forward.records, ids(all));
    expectOrdered(forward.records, key, dir);

    // The first 200 are what a single page of 200 shows.
    const big = await page(api, { ...query, limit: 200 });
    expect(ids(big.records)).toEqual(ids(forward.records.slice(0, 200)));

    // Backward from the very last record: everything before it, in the same order.
    const lastRecord = forward.records[forward.records.length - 1];
    const backward = await walkBackward(api, query, 30, forward.lastCursor);
    expect(backward.pages).toHaveLength(9); // 249 = 8 × 30 + 9
    expect(backward.pages[0].records).toHaveLength(9);
    expect(ids([...backward.records, lastRecord])).toEqual(ids(forward.records));

    // Pages are the same records whichever way they are reached.
    const second = forward.pages[1];
    const again = await page(api, { ...query, limit: 30, ending_before: forward.pages[2].pageInfo.startCursor! });
    expect(ids(again.records)).toEqual(ids(second.records));
    expect(again.pageInfo).toEqual({ ...second.pageInfo, hasNextPage: true, hasPreviousPage: true });
  });

  it('gets hasNextPage / hasPreviousPage right at both ends', async () => {
    const first = await page(api, { limit: 50 });
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });

    // 250 / 50: the fifth page is the last one, even though it is full.
    const walk = await walkForward(api, {}, 50);
    expect(walk.pages.map((p) => p.records.length)).toEqual([50, 50, 50, 50, 50]);

    // Nothing after the last record; nothing before the first.
    const afterLast = await page(api, { limit: 10, starting_after: walk.lastCursor });
    expect(afterLast.records).toEqual([]);
    expect(afterLast.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null });
    const beforeFirst = await page(api, { limit: 10, ending_before: first.pageInfo.startCursor! });
    expect(beforeFirst.records).toEqual([]);
    expect(beforeFirst.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false, startCursor: null, endCursor: null });

    // One short of the start: a backward page of exactly the one record before.
    const two = await page(api, { limit: 2 });
    const one = await page(api, { limit: 10, ending_before: two.pageInfo.endCursor! });
    expect(ids(one.records)).toEqual([first.records[0].id]);
    expect(one.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
  });

  it('gives exactly `limit` records and the right neighbours for every page size, forwards and backwards', async () => {
    // A statement reads limit + 1 rows rounded up to one of a few counts (issue 12); the extra rows never show.
    const walk = await walkForward(api, {}, 200);
    const everything = walk.records;
    expect(everything).toHaveLength(TOTAL);
    for (const limit of [
      0, 1, 9, 10, 11, 19, 20, 21, 39, 40, 41, 49, 50, 51, 59, 60, 61, 74, 75, 76, 99, 100, 101, 124, 125, 150, 175, 199, 200,
    ]) {
      const first = await page(api, { limit });
      expect([limit, ids(first.records)]).toEqual([limit, ids(everything.slice(0, limit))]);
      expect([limit, first.pageInfo.hasNextPage, first.pageInfo.hasPreviousPage]).toEqual([limit, limit < TOTAL, false]);
      const before = await page(api, { limit, ending_before: walk.lastCursor });
      expect([limit, ids(before.records)]).toEqual([limit, ids(everything.slice(Math.max(0, TOTAL - 1 - limit), TOTAL - 1))]);
      expect([limit, before.pageInfo.hasPreviousPage, before.pageInfo.hasNextPage]).toEqual([limit, limit < TOTAL - 1, true]);
    }
  });

  it('walks a filtered list with a constant filtered totalCount', async () => {
    const query = { filter: 'name.lastName[in]:["baker","clark"]', order_by: 'name.lastName[DescNullsLast]' };
    const expected = all.filter((r) => r.lastName === 'baker' || r.lastName === 'clark');
    expect(expected.length).toBeGreaterThan(60);
    const forward = await walkForward(api, query, 17);
    for (const p of forward.pages) expect(p.totalCount).toBe(expected.length);
    expectExactlyOnce(forward.records, ids(expected));
    expectOrdered(forward.records, lastName, 'DescNullsLast');
    const backward = await walkBackward(api, query, 17, forward.lastCursor);
    expect(ids([...backward.records, forward.records.at(-1)])).toEqual(ids(forward.records));
  });

  describe('under concurrent writes', () => {
    it.each<[string, Record<string, string>, (i: number) => object]>([
      ['default order (new records land at the end)', {}, (i) => ({ name: { firstName: `new-${i}`, lastName: 'zed' } })],
      [
        'createdAt[DescNullsLast] (new records land before the cursor)',
        { order_by: 'createdAt[DescNullsLast]' },
        (i) => ({ name: { firstName: `new-${i}` } }),
      ],
      [
        'name.lastName[AscNullsLast] (new records land in the middle)',
        { order_by: 'name.lastName[AscNullsLast]' },
        (i) => ({ name: { firstName: `new-${i}`, lastName: i % 2 ? 'baker' : 'clark' } }),
      ],
    ])('sees no record twice and skips no original one: %s', async (_label, query, make) => {
      const own = await newWorkspace(ds, 'pages-live');
      const c = client(http, own.keys.Admin);
      await ds.query(
        `INSERT INTO people (workspace_id, first_name, last_name, created_at)
         SELECT $1, 'p' || g, CASE WHEN g % 9 = 0 THEN NULL ELSE ($2::text[])[g % 5 + 1] END,
                timestamptz '2024-01-01T00:00:00Z' + (g / 3) * interval '1 second'
           FROM generate_series(1, ${TOTAL}) g`,
        [own.id, LAST_NAMES],
      );
      const originals: string[] = (await ds.query('SELECT id FROM people WHERE workspace_id = $1', [own.id])).map((r: any) => r.id);
      const inserted: string[] = [];
      let n = 0;
      const walk = await walkForward(c, query, 30, async () => {
        for (let k = 0; k < 3; k++) {
          const res = await c.post('/rest/people', make(n++));
          expect(res.status).toBe(201);
          inserted.push(res.body.data.createPerson.id);
        }
      });
      const seen = ids(walk.records);
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of originals) expect(seen).toContain(id);
      for (const id of seen) expect([...originals, ...inserted]).toContain(id);
      expect(inserted.length).toBeGreaterThanOrEqual(24);
    });

    it('continues from a cursor whose record was deleted meanwhile (keyset, not offset)', async () => {
      const own = await newWorkspace(ds, 'pages-del');
      const c = client(http, own.keys.Admin);
      const created = (
        await c.post(
          '/rest/batch/people',
          Array.from({ length: 40 }, (_, i) => ({ name: { firstName: `d${i}` } })),
        )
      ).body.data.createPeople;
      expect(created).toHaveLength(40);
      const first = await page(c, { limit: 10 });
      // Delete the cursor record itself and two records of the first page.
      for (const r of first.records.slice(7)) await c.delete(`/rest/people/${r.id}`);
      const next = await page(c, { limit: 10, starting_after: first.pageInfo.endCursor! });
      const direct = await page(c, { limit: 40 });
      // The page after the cursor is exactly the 10 records after the first page.
      expect(ids(next.records)).toEqual(ids(direct.records.slice(7, 17)));
      expect(next.pageInfo.hasPreviousPage).toBe(true);
    });
  });

  describe('bad cursors', () => {
    it('refuses a cursor issued for another order_by (400 INVALID_CURSOR)', async () => {
      const byName = await page(api, { order_by: 'name.lastName[AscNullsLast]', limit: 5 });
      const message = expectError(
        await api.get('/rest/people', { starting_after: byName.pageInfo.endCursor!, order_by: 'createdAt[DescNullsLast]' }),
        400,
        'INVALID_CURSOR',
      );
      expect(message).toMatch(/starting_after/);
      expect(message).toMatch(/order_by/);
      expectError(await api.get('/rest/people', { ending_before: byName.pageInfo.endCursor! }), 400, 'INVALID_CURSOR');
      // Same field, other direction.
      expectError(
        await api.get('/rest/people', { starting_after: byName.pageInfo.endCursor!, order_by: 'name.lastName[AscNullsFirst]' }),
        400,
        'INVALID_CURSOR',
      );
    });

    it('refuses garbage, forged and combined cursors (400 INVALID_CURSOR, never a 500)', async () => {
      const good = (await page(api, { limit: 1 })).pageInfo.endCursor!;
      const forge = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString('base64url');
      const { o } = JSON.parse(Buffer.from(good, 'base64url').toString());
      const cases: [string, string][] = [
        ['starting_after', 'not-a-cursor'],
        ['starting_after', 'garbage!!'],
        ['ending_before', 'eyJ4Ijox'],
        ['starting_after', forge([1, 2, 3])],
        ['starting_after', forge({ o, v: ['2024-01-01T00:00:00.000Z'], i: 'not-a-uuid' })],
        ['starting_after', forge({ o, v: ['not a timestamp'], i: all[0].id })],
        ['ending_before', forge({ o, v: [{ $gt: '' }], i: all[0].id })],
        ['starting_after', forge({ o, v: [], i: all[0].id })],
        ['starting_after', 'A'.repeat(10_000)],
      ];
      for (const [param, cursor] of cases) {
        const res = await api.get('/rest/people', { [param]: cursor });
        const message = expectError(res, 400, 'INVALID_CURSOR');
        expect({ cursor: cursor.slice(0, 40), message }).toEqual({ cursor: cursor.slice(0, 40), message: expect.stringContaining(param) });
      }
      expectError(await api.get('/rest/people', { starting_after: good, ending_before: good }), 400, 'INVALID_CURSOR');
      expectError(await api.get('/rest/people?starting_after=a&starting_after=b'), 400, 'VALIDATION_FAILED');
    });
  });
});
