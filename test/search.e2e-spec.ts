import type { INestApplication } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { OBJECTS } from '#records/objects/index.js';
import { oneEditVariants, PREFIX_EXPANSIONS, searchQueries, SearchService, TYPO_MAX_CANDIDATES } from '#records/service/search.service.js';
import { allPermissions, client, expectError, keyWithRole } from './rest-helpers.js';

/** Search across objects (docs/rest.md "Search", docs/graphql.md, docs/mcp.md; docs/decisions/0030-search.md). */

type Http = Parameters<typeof request>[0];
type Vars = Record<string, unknown>;

describe('search', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let ws: TestWorkspace;
  const made: Record<string, string> = {};

  const search = (secret: string, query: Record<string, string | number>) => client(http, secret).get('/rest/search', query);
  async function hits(query: Record<string, string | number>, secret = ws.keys.Admin) {
    const res = await search(secret, query);
    expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
    return res.body.data.search as { object: string; id: string; label: string; score: number; record: Record<string, unknown> }[];
  }
  const labels = async (q: string, extra: Record<string, string | number> = {}) => (await hits({ q, ...extra })).map((h) => h.label);

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
    ws = await newWorkspace(ds, 'search');
    const admin = client(http, ws.keys.Admin);
    const create = async (plural: string, body: Vars, key: string) => {
      const res = await admin.post(`/rest/${plural}`, body);
      expect(res.status).toBe(201);
      made[key] = (Object.values(res.body.data as Record<string, { id: string }>)[0] as { id: string }).id;
    };
    await create('companies', { name: 'Acme', domainName: { primaryLinkUrl: 'https://acme-corp.io' } }, 'acme');
    await create('companies', { name: 'Acmetronics' }, 'acmetronics');
    await create('companies', { name: 'Acne Studios' }, 'acneStudios');
    await create('companies', { name: 'Globex', domainName: { primaryLinkUrl: 'globex.com' } }, 'globex');
    await create('people', { name: { firstName: 'Zoë', lastName: 'Müller' }, emails: { primaryEmail: 'zoe.m@initech.org' } }, 'zoe');
    await create(
      'people',
      { name: { firstName: 'Ada', lastName: 'Lovelace' }, emails: { additionalEmails: ['ada@analytical.engine'] } },
      'ada',
    );
    await create('people', { name: { firstName: 'Bob', lastName: 'Ray' } }, 'bob');
    await create('opportunities', { name: 'Acme renewal' }, 'acmeRenewal');
  });
  afterAll(() => app.close());

  describe('REST', () => {
    it('answers {data: {search: [{object, id, label, score, record}]}, pageInfo}, best first: exact, then prefix, then typo', async () => {
      const res = await search(ws.keys.Admin, { q: 'acme', objects: 'companies', limit: 20 });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'pageInfo']);
      const found = res.body.data.search;
      expect(found.map((h: { label: string }) => h.label)).toEqual(['Acme', 'Acmetronics', 'Acne Studios']);
      expect(found[0]).toEqual({
        object: 'companies',
        id: made.acme,
        label: 'Acme',
        score: expect.any(Number),
        record: expect.objectContaining({
          id: made.acme,
          name: 'Acme',
          domainName: expect.objectContaining({ primaryLinkUrl: 'https://acme-corp.io' }),
        }),
      });
      const [exact, prefix, typo] = found.map((h: { score: number }) => h.score);
      expect(exact).toBeGreaterThanOrEqual(3);
      expect(prefix).toBeGreaterThanOrEqual(2);
      expect(prefix).toBeLessThan(3);
      expect(typo).toBeGreaterThanOrEqual(1);
      expect(typo).toBeLessThan(2);
      expect(res.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    });

    it('tolerates one typo in words of 4+ letters ("Acne" finds Acme), not in shorter words', async () => {
      expect(await labels('acne', { objects: 'companies' })).toEqual(['Acne Studios', 'Acme', 'Acmetronics']);
      expect(await labels('akme', { objects: 'companies' })).toEqual(expect.arrayContaining(['Acme', 'Acmetronics']));
      expect(await labels('lovelcae')).toEqual(['Ada Lovelace']); // a swap
      expect(await labels('lovlace')).toEqual(['Ada Lovelace']); // a letter left out
      expect(await labels('bop')).toEqual([]); // 3 letters: no typo allowed
      expect(await labels('bob')).toEqual(['Bob Ray']);
      expect(await labels('acmx corp')).toEqual(['Acme']); // a typo in one word, the domain's part for the other
      expect(await labels('acme zzzz')).toEqual([]); // every word must match
      expect(await labels('lovelxxe')).toEqual([]); // two typos
    });

    it('is case- and accent-insensitive both ways', async () => {
      expect(await labels('zoe')).toEqual(['Zoë Müller']);
      expect(await labels('ZOË')).toEqual(['Zoë Müller']);
      expect(await labels('muller')).toEqual(['Zoë Müller']);
      expect(await labels('Müll')).toEqual(['Zoë Müller']);
      expect(await labels('zoe mul')).toEqual(['Zoë Müller']);
    });

    it('matches e-mails, domains and the parts of each', async () => {
      expect(await labels('initech')).toEqual(['Zoë Müller']);
      expect(await labels('zoe.m@initech.org')).toEqual(['Zoë Müller']);
      expect(await labels('analytical')).toEqual(['Ada Lovelace']);
      expect(await labels('globex.com')).toEqual(['Globex']);
      expect(await labels('globx.com')).toEqual(['Globex']); // words split alike: a typo in one part of a host
      expect(await labels('acme-corp')).toEqual(['Acme']);
      // Names (weight A) rank above contacts (weight B) within a tier.
      const both = await hits({ q: 'acme', objects: 'companies,opportunities' });
      expect(both.map((h) => h.object)).toEqual(expect.arrayContaining(['companies', 'opportunities']));
    });

    it('searches custom TEXT, EMAILS, LINKS and PHONES fields, not SELECT options; keeps up with updates and deletes', async () => {
      const other = await newWorkspace(ds, 'search-custom');
      const admin = client(http, other.keys.Admin);
      const field = async (body: Vars) => {
        const res = await admin.post('/rest/metadata/fields', { object: 'people', ...body });
        expect(res.status).toBe(201);
        return res.body.data.createField.id as string;
      };
      const nickId = await field({ name: 'nickname', label: 'Nickname', type: 'TEXT' });
      await field({ name: 'workEmails', label: 'Work e-mails', type: 'EMAILS' });
      await field({ name: 'site', label: 'Site', type: 'LINKS' });
      await field({ name: 'mobile', label: 'Mobile', type: 'PHONES' });
      await field({ name: 'tier', label: 'Tier', type: 'SELECT', options: [{ value: 'PLATINUM', label: 'Platinum' }] });
      const res = await admin.post('/rest/people', {
        name: { firstName: 'Grace' },
        nickname: 'Quixotic',
        workEmails: { primaryEmail: 'grace@navy.mil', additionalEmails: ['hopper@cobol.dev'] },
        site: { primaryLinkUrl: 'https://hopper.example', secondaryLinks: [{ url: 'https://compilers.example', label: 'Compilers' }] },
        mobile: { primaryPhoneNumber: '06 12 34 56 78', primaryPhoneCountryCode: 'FR', primaryPhoneCallingCode: '+33' },
        tier: 'PLATINUM',
      });
      expect(res.status).toBe(201);
      const id = res.body.data.createPerson.id;
      const find = async (q: string) => (await hits({ q }, other.keys.Admin)).map((h) => h.id);
      for (const q of ['quixotic', 'navy', 'cobol', 'hopper.example', 'compilers', '0612345678', '33612345678', '06 12 34']) {
        expect({ q, found: await find(q) }).toEqual({ q, found: [id] });
      }
      expect(await find('platinum')).toEqual([]);
      // An update through the API changes what is found (the trigger, same transaction).
      expect((await admin.patch(`/rest/people/${id}`, { nickname: 'Admiral' })).status).toBe(200);
      expect(await find('quixotic')).toEqual([]);
      expect(await find('admiral')).toEqual([id]);
      // A deactivated field is no longer searched; active again, it is.
      expect((await admin.patch(`/rest/metadata/fields/${nickId}`, { isActive: false })).status).toBe(200);
      expect(await find('admiral')).toEqual([]);
      expect((await admin.patch(`/rest/metadata/fields/${nickId}`, { isActive: true })).status).toBe(200);
      expect(await find('admiral')).toEqual([id]);
      // A deleted record is not found.
      expect((await admin.delete(`/rest/people/${id}`)).status).toBe(200);
      expect(await find('admiral')).toEqual([]);
    });

    it('finds records written by a batch create', async () => {
      const res = await client(http, ws.keys.Admin).post('/rest/batch/people', [
        { name: { firstName: 'Batchy', lastName: 'One' } },
        { name: { firstName: 'Batchy', lastName: 'Two' } },
      ]);
      expect(res.status).toBe(201);
      expect((await labels('batchy')).sort()).toEqual(['Batchy One', 'Batchy Two']);
    });

    it('a typo search takes at most TYPO_MAX_CANDIDATES spellings per word from the lexicon, however many exist', async () => {
      // 3,000 people whose last names are every one-edit spelling of "smiht" (about 300 distinct words; none
      // starting with "smiht", which would be prefix matches):
      // the old expansion OR'd all of them into the ranked statement; the lexicon probe keeps a bounded few.
      const crowd = await newWorkspace(ds, 'search-crowd');
      const names = oneEditVariants('smiht').filter((v) => v.length >= 4 && !v.startsWith('smiht'));
      await ds.query(
        `INSERT INTO people (workspace_id, first_name, last_name)
         SELECT $1, 'Crowd', ($2::text[])[1 + g % array_length($2::text[], 1)] FROM generate_series(1, 3000) g`,
        [crowd.id, names],
      );
      const [lexicon] = await ds.query(`SELECT count(*)::int AS n FROM search_words WHERE workspace_id = $1 AND object = 'people'`, [
        crowd.id,
      ]);
      expect(lexicon.n).toBeGreaterThan(names.length); // every last name, and "crowd"
      const people = OBJECTS.filter((o) => o.plural === 'people');
      const [candidates] = await app.get(SearchService).typoCandidates(crowd.id, people, ['smiht']);
      expect(candidates).toHaveLength(TYPO_MAX_CANDIDATES);
      for (const c of candidates) expect(names).toContain(c); // whole words one edit away
      expect(searchQueries(['smiht'], [candidates]).typo!.split('|')).toHaveLength(TYPO_MAX_CANDIDATES + 1);
      // The search answers a full page of typo matches.
      const found = await hits({ q: 'smiht', objects: 'people', limit: 20 }, crowd.keys.Admin);
      expect(found).toHaveLength(20);
      for (const h of found) expect(h.score).toBe(1.5);
      // A word every one of the 3,000 holds: a full page of exact matches from a bounded candidate set.
      const common = await search(crowd.keys.Admin, { q: 'crowd', objects: 'people', limit: 100 });
      expect(common.status).toBe(200);
      expect(common.body.data.search).toHaveLength(100);
      for (const h of common.body.data.search) expect(h.score).toBeGreaterThanOrEqual(3);
      expect(common.body.pageInfo.hasNextPage).toBe(true);
      // A prefix becomes the lexicon words it starts, up to PREFIX_EXPANSIONS; past that it stays a prefix scan,
      // and either way every record is found.
      const expansions = await app.get(SearchService).expansions(crowd.id, people, ['smi', 'smith', 'smizzz']);
      expect(names.filter((n) => n.startsWith('smi')).length).toBeGreaterThan(PREFIX_EXPANSIONS);
      expect(expansions.has('smi')).toBe(false);
      expect(expansions.get('smith')).toEqual(names.filter((n) => n.startsWith('smith')).sort());
      expect(expansions.get('smizzz')).toEqual([]);
      const smi = await search(crowd.keys.Admin, { q: 'crowd smi', objects: 'people', limit: 100 });
      expect(smi.body.data.search).toHaveLength(100);
      const smith = await hits({ q: 'smith', objects: 'people', limit: 100 }, crowd.keys.Admin);
      const [{ n: smiths }] = await ds.query(`SELECT count(*)::int AS n FROM people WHERE workspace_id = $1 AND last_name = 'smith'`, [
        crowd.id,
      ]);
      expect(smith.filter((h) => h.score >= 3)).toHaveLength(smiths);
      // Words of another workspace or object are not candidates.
      expect(await app.get(SearchService).typoCandidates(ws.id, people, ['smiht'])).toEqual([[]]);
    });

    it("never returns another workspace's records", async () => {
      const other = await newWorkspace(ds, 'search-other');
      expect((await client(http, other.keys.Admin).post('/rest/companies', { name: 'Acme Elsewhere' })).status).toBe(201);
      const mine = await hits({ q: 'acme' });
      expect(mine.map((h) => h.label)).not.toContain('Acme Elsewhere');
      const theirs = await hits({ q: 'acme' }, other.keys.Admin);
      expect(theirs.map((h) => h.label)).toEqual(['Acme Elsewhere']);
    });

    it('pages with starting_after, without repeats or gaps', async () => {
      const all = (await hits({ q: 'acme', limit: 100 })).map((h) => h.id);
      expect(all.length).toBeGreaterThanOrEqual(4);
      const seen: string[] = [];
      let after: string | undefined;
      for (let i = 0; i < 10; i++) {
        const res = await search(ws.keys.Admin, { q: 'acme', limit: 1, ...(after ? { starting_after: after } : {}) });
        expect(res.status).toBe(200);
        seen.push(...res.body.data.search.map((h: { id: string }) => h.id));
        expect(res.body.pageInfo.hasPreviousPage).toBe(Boolean(after));
        if (!res.body.pageInfo.hasNextPage) break;
        after = res.body.pageInfo.endCursor;
      }
      expect(seen).toEqual(all);
      // A cursor of another search is refused.
      const first = await search(ws.keys.Admin, { q: 'acme', limit: 1 });
      expectError(await search(ws.keys.Admin, { q: 'zoe', starting_after: first.body.pageInfo.endCursor }), 400, 'INVALID_CURSOR');
      expectError(await search(ws.keys.Admin, { q: 'zoe', starting_after: 'nonsense' }), 400, 'INVALID_CURSOR');
    });

    it('honours read permissions: 403 for an object named and not readable; else only readable objects', async () => {
      const peopleOnly = await keyWithRole(ds, ws.id, 'people reader', {
        ...allPermissions(false),
        people: { read: true, create: false, update: false, delete: false },
      });
      expectError(await search(peopleOnly.secret, { q: 'acme', objects: 'companies' }), 403, 'FORBIDDEN');
      expectError(await search(peopleOnly.secret, { q: 'acme', objects: 'people,companies' }), 403, 'FORBIDDEN');
      const found = await hits({ q: 'a' }, peopleOnly.secret);
      expect(found.length).toBeGreaterThan(0);
      expect(new Set(found.map((h) => h.object))).toEqual(new Set(['people']));
      const nothing = await keyWithRole(ds, ws.id, 'reads nothing', allPermissions(false));
      expectError(await search(nothing.secret, { q: 'acme' }), 403, 'FORBIDDEN');
      // Viewer reads everything.
      expect((await hits({ q: 'acme' }, ws.keys.Viewer)).length).toBeGreaterThan(0);
    });

    it('refuses bad input with the documented error shape', async () => {
      const admin = ws.keys.Admin;
      expectError(await search(admin, {}), 400, 'VALIDATION_FAILED');
      expectError(await search(admin, { q: '' }), 400, 'VALIDATION_FAILED');
      expectError(await search(admin, { q: '   ' }), 400, 'VALIDATION_FAILED');
      expectError(await search(admin, { q: '!!!' }), 400, 'VALIDATION_FAILED');
      expect(expectError(await search(admin, { q: 'a'.repeat(1000) }), 400, 'VALIDATION_FAILED')).toContain('200 characters');
      expect((await search(admin, { q: 'a'.repeat(200) })).status).toBe(200);
      expectError(await search(admin, { q: 'a b c d e f g h i' }), 400, 'VALIDATION_FAILED');
      expect(expectError(await search(admin, { q: 'acme', objects: 'companies,widgets' }), 400, 'VALIDATION_FAILED')).toContain('widgets');
      expectError(await search(admin, { q: 'acme', limit: 0 }), 400, 'INVALID_LIMIT');
      expectError(await search(admin, { q: 'acme', limit: 101 }), 400, 'INVALID_LIMIT');
      expectError(await search(admin, { q: 'acme', sort: 'x' }), 400, 'VALIDATION_FAILED');
      expectError(await request(http).get('/rest/search?q=a&q=b').set(bearer(admin)), 400, 'VALIDATION_FAILED');
      expectError(await request(http).get('/rest/search?q=acme'), 401, 'UNAUTHENTICATED');
    });
  });

  describe('attacks on q', () => {
    it('takes tsquery and SQL syntax as plain text: operators, quotes, backslashes, colons and stars never reach the query as syntax', async () => {
      const admin = ws.keys.Admin;
      // Each character of the tsquery language and of SQL, alone and around a word.
      for (const chars of ['&', '|', '!', '<->', ':*', '*', '(', ')', '\\', "'", '"', ':', ';', '--', '/*', '%', '_']) {
        const alone = await search(admin, { q: chars });
        expect({ q: chars, status: alone.status }).toEqual({ q: chars, status: 400 }); // no letter or digit: no word
        const around = await search(admin, { q: `${chars}acme${chars}` });
        expect({ q: chars, status: around.status }).toEqual({ q: chars, status: 200 });
        expect(around.body.data.search.map((h: { label: string }) => h.label)).toContain('Acme');
      }
      const mixed = await search(admin, { q: 'acme & | ! : * ( ) \\ \' " ;DROP TABLE people;--' });
      expect(mixed.status).toBe(200);
      expect((await labels('acme:*'))[0]).toBe('Acme'); // ":*" is not a prefix operator here: "acme" still ranks exact first
      const [{ n }] = await ds.query('SELECT count(*)::int AS n FROM people');
      expect(n).toBeGreaterThan(0);
    });

    it('refuses NUL bytes, more than 8 words and over-long q with 400, never 500', async () => {
      const admin = ws.keys.Admin;
      expectError(await search(admin, { q: 'acme\u0000' }), 400, 'VALIDATION_FAILED');
      expectError(await search(admin, { q: '\u0000' }), 400, 'VALIDATION_FAILED');
      expectError(await request(http).get('/rest/search?q=ac%00me').set(bearer(admin)), 400, 'VALIDATION_FAILED');
      expect((await search(admin, { q: 'a b c d e f g h' })).status).toBe(200);
      expectError(await search(admin, { q: Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ') }), 400, 'VALIDATION_FAILED');
      expectError(await search(admin, { q: 'x'.repeat(1000) }), 400, 'VALIDATION_FAILED');
      // A URL far beyond what any q may hold is refused before it is read (Node's header limit), not a 500.
      const huge = await request(http)
        .get(`/rest/search?q=${'a'.repeat(20_000)}`)
        .set(bearer(admin));
      expect(huge.status).toBeGreaterThanOrEqual(400);
      expect(huge.status).toBeLessThan(500);
    });

    it('answers the costliest q allowed (8 long words, each with its one-edit spellings probed) while other requests keep being served', async () => {
      const admin = ws.keys.Admin;
      // 8 words of 24 letters: about 1,800 spellings each are probed in the lexicon, the most a q can ask.
      const costly = Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(97 + i)}${'qwertyuiopasdfghjklzxcv'}`).join(' ');
      expect([...costly].length).toBeLessThanOrEqual(200);
      const heavy = Array.from({ length: 4 }, () => search(admin, { q: costly }));
      const light = Array.from({ length: 4 }, () => search(admin, { q: 'zoe' }));
      const answers = await Promise.all([...heavy, ...light]);
      for (const res of answers) expect(res.status).toBe(200);
      for (const res of answers.slice(4)) expect(res.body.data.search.map((h: { label: string }) => h.label)).toEqual(['Zoë Müller']);
    });
  });

  describe('GraphQL', () => {
    const gql = (secret: string, query: string, variables?: Vars) =>
      request(http).post('/graphql').set(bearer(secret)).send({ query, variables });
    const SEARCH = `query($q: String!, $objects: [SearchableObject!], $first: Int, $after: String) {
      search(q: $q, objects: $objects, first: $first, after: $after) {
        edges { cursor node { object id label score record { __typename ... on Company { name } ... on Person { fullName: name { firstName lastName } } ... on Opportunity { name stage } } } }
        pageInfo { hasNextPage hasPreviousPage endCursor }
      }
    }`;

    it('returns a SearchResultConnection whose record is the union of the object types, ranked, paged with after', async () => {
      const res = await gql(ws.keys.Admin, SEARCH, { q: 'acme', first: 2 });
      expect(res.body.errors).toBeUndefined();
      const { edges, pageInfo } = res.body.data.search;
      expect(edges.map((e: { node: { label: string } }) => e.node.label)).toEqual(['Acme', 'Acme renewal']);
      expect(edges[0].node).toMatchObject({ object: 'companies', id: made.acme, record: { __typename: 'Company', name: 'Acme' } });
      expect(edges[1].node.record).toEqual({ __typename: 'Opportunity', name: 'Acme renewal', stage: 'NEW' });
      expect(pageInfo.hasNextPage).toBe(true);
      const next = await gql(ws.keys.Admin, SEARCH, { q: 'acme', first: 2, after: pageInfo.endCursor });
      expect(next.body.data.search.edges.map((e: { node: { label: string } }) => e.node.label)).toEqual(['Acmetronics', 'Acne Studios']);
      const person = await gql(ws.keys.Admin, SEARCH, { q: 'zoe', objects: ['people'] });
      expect(person.body.data.search.edges[0].node.record).toEqual({
        __typename: 'Person',
        fullName: { firstName: 'Zoë', lastName: 'Müller' },
      });
    });

    it('refuses bad input and unreadable objects with the GraphQL error codes', async () => {
      const peopleOnly = await keyWithRole(ds, ws.id, 'gql people reader', {
        ...allPermissions(false),
        people: { read: true, create: false, update: false, delete: false },
      });
      const forbidden = await gql(peopleOnly.secret, SEARCH, { q: 'acme', objects: ['companies'] });
      expect(forbidden.body.errors[0].extensions.code).toBe('FORBIDDEN');
      const empty = await gql(ws.keys.Admin, SEARCH, { q: '' });
      expect(empty.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
      const long = await gql(ws.keys.Admin, SEARCH, { q: 'x'.repeat(1000) });
      expect(long.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
      const unknown = await gql(ws.keys.Admin, SEARCH, { q: 'acme', objects: ['widgets'] });
      expect(unknown.body.errors).toHaveLength(1);
      expect(unknown.status).toBe(400);
    });
  });

  describe('MCP', () => {
    async function mcp(secret: string, method: string, params: Vars) {
      const res = await request(http)
        .post('/mcp')
        .set(bearer(secret))
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method, params });
      expect(res.status).toBe(200);
      return res.body.result;
    }
    const call = (secret: string, name: string, args: Vars) => mcp(secret, 'tools/call', { name, arguments: args });

    it('lists search_records as read-only, for a role that reads something', async () => {
      const tools = (await mcp(ws.keys.Viewer, 'tools/list', {})).tools as { name: string; annotations: Vars }[];
      const tool = tools.find((t) => t.name === 'search_records')!;
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      const peopleOnly = await keyWithRole(ds, ws.id, 'mcp lists', {
        ...allPermissions(false),
        people: { read: true, create: false, update: false, delete: false },
      });
      const names = (await mcp(peopleOnly.secret, 'tools/list', {})).tools.map((t: { name: string }) => t.name);
      expect(names).toEqual(expect.arrayContaining(['search_records', 'get_person']));
      expect(names).not.toContain('get_company');
    });

    it('an agent flow: search_records → get_person → update_person, then the new name is found', async () => {
      const found = await call(ws.keys.Admin, 'search_records', { q: 'lovelace', objects: ['people'] });
      expect(found.isError).toBeFalsy();
      expect(found.content[0].text).toContain('Ada Lovelace');
      const hit = found.structuredContent.search[0];
      expect(hit).toMatchObject({ object: 'people', id: made.ada, label: 'Ada Lovelace' });
      const got = await call(ws.keys.Admin, 'get_person', { id: hit.id });
      expect(got.structuredContent.person.name).toEqual({ firstName: 'Ada', lastName: 'Lovelace' });
      const updated = await call(ws.keys.Admin, 'update_person', { id: hit.id, name: { lastName: 'King' } });
      expect(updated.isError).toBeFalsy();
      const again = await call(ws.keys.Admin, 'search_records', { q: 'ada king' });
      expect(again.structuredContent.search.map((h: { id: string }) => h.id)).toEqual([made.ada]);
      expect((await call(ws.keys.Admin, 'search_records', { q: 'lovelace' })).structuredContent.search).toEqual([]);
    });

    it('an agent over the MCP SDK client: search_records, get_person with fields, update_person, list_people by company name', async () => {
      const admin = client(http, ws.keys.Admin);
      const company = await admin.post('/rest/companies', { name: 'Harvard Computation Lab' });
      const person = await admin.post('/rest/people', {
        name: { firstName: 'Grace', lastName: 'Hopper' },
        emails: { primaryEmail: 'grace@harvard.example' },
        companyId: company.body.data.createCompany.id,
      });
      expect(person.status).toBe(201);
      const id = person.body.data.createPerson.id as string;
      await new Promise<void>((resolve) => (http as Server).listen(0, '127.0.0.1', resolve));
      const { port } = (http as Server).address() as AddressInfo;
      const agent = new Client({ name: 'search-e2e', version: '1.0.0' });
      await agent.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${ws.keys.Admin}` } },
        }),
      );
      try {
        const structured = (r: unknown) => (r as CallToolResult).structuredContent as Record<string, any>;
        const found = await agent.callTool({ name: 'search_records', arguments: { q: 'hoper', objects: ['people'] } }); // one typo
        expect(found.isError).toBeFalsy();
        expect(structured(found).search.map((h: { id: string }) => h.id)).toEqual([id]);
        const got = await agent.callTool({ name: 'get_person', arguments: { id, fields: 'name' } });
        expect(got.isError).toBeFalsy();
        expect(structured(got).person).toEqual({ id, name: { firstName: 'Grace', lastName: 'Hopper' } });
        const updated = await agent.callTool({ name: 'update_person', arguments: { id, name: { lastName: 'Murray Hopper' } } });
        expect(updated.isError).toBeFalsy();
        const again = await agent.callTool({ name: 'search_records', arguments: { q: 'grace murray' } });
        expect(structured(again).search.map((h: { id: string }) => h.id)).toEqual([id]);
        // list_people takes fields and a relation filter, as REST does.
        const listed = await agent.callTool({
          name: 'list_people',
          arguments: { filter: 'company.name[eq]:"Harvard Computation Lab"', fields: 'name,companyId' },
        });
        expect(listed.isError).toBeFalsy();
        expect(structured(listed).people).toEqual([
          { id, name: { firstName: 'Grace', lastName: 'Murray Hopper' }, companyId: company.body.data.createCompany.id },
        ]);
        const unknown = await agent.callTool({ name: 'list_people', arguments: { fields: 'name,shoeSize' } });
        expect(unknown.isError).toBe(true);
        expect(JSON.stringify(unknown.content)).toContain('INVALID_FIELDS');
        // Both descriptions tell an agent about relation filters and fields.
        const { tools } = await agent.listTools();
        const list = tools.find((t) => t.name === 'list_people')!;
        expect(JSON.stringify(list.inputSchema.properties?.filter)).toContain('company.<field of companies>');
        expect(Object.keys(list.inputSchema.properties ?? {})).toContain('fields');
        expect(Object.keys(tools.find((t) => t.name === 'get_person')!.inputSchema.properties ?? {})).toContain('fields');
      } finally {
        await agent.close();
      }
    });

    it('answers tool errors for bad input and unreadable objects', async () => {
      const empty = await call(ws.keys.Admin, 'search_records', { q: '' });
      expect(empty.isError).toBe(true);
      expect(empty.content[0].text).toContain('VALIDATION_FAILED');
      const peopleOnly = await keyWithRole(ds, ws.id, 'mcp people reader', {
        ...allPermissions(false),
        people: { read: true, create: false, update: false, delete: false },
      });
      const forbidden = await call(peopleOnly.secret, 'search_records', { q: 'acme', objects: ['companies'] });
      expect(forbidden.isError).toBe(true);
      expect(forbidden.content[0].text).toContain('FORBIDDEN');
    });
  });
});
