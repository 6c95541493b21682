import { indexedValue } from '#records/objects/index.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BARE_GROUP_BY_SQL, BARE_RELATION_WHERE } from './aggregates.js';
import pg from 'pg';
import {
  searchQueries,
  searchStatement,
  typoCandidates,
  typoCandidatesStatement,
  typoProbe,
  WORDS_STATEMENT,
  expandable,
  expansionsOf,
  expansionsStatement,
} from '#records/service/search.service.js';
import { personObject } from '#records/objects/person.object.js';

/**
 * The floor of this stack: `node:http` + `pg`, no framework, no authentication, one SQL
 * statement per answer (plus a plain `count(*)` with the same WHERE when `withCount`).
 * It answers the bench's requests only, on the same paths, query strings, cursors and
 * bodies as the records API, with the same response shapes.
 *
 * Run as a child process: env DATABASE_URL and BENCH_WORKSPACE_ID; it listens on two
 * ports (with and without the count) and sends `{ withCount, noCount }` to its parent.
 *
 * Custom fields (docs/benchmark.md): with BENCH_CUSTOM_WORKSPACE_ID and BENCH_CUSTOM_SECRET,
 * a request bearing that secret is answered from that workspace, whose custom field names
 * (active ones, in the API's order) are read once at start, as a cache that never misses;
 * each company then carries them as top-level properties, as the records API returns them.
 * Its company list takes `filter=<select field>[eq]:"…"` and `order_by=<number field>[DescNullsLast]`,
 * read with the SQL the records API writes for custom leaves.
 */

const COMPANY_COLUMNS =
  'id, name, domain_primary_link_url, domain_primary_link_label, domain_secondary_links, created_at, updated_at, deleted_at';
const PERSON_COLUMNS = 'id, first_name, last_name, primary_email, additional_emails, company_id, created_at, updated_at, deleted_at';
type Row = Record<string, any>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const company = (r: Row) => ({
  id: r.id,
  name: r.name,
  domainName: {
    primaryLinkUrl: r.domain_primary_link_url,
    primaryLinkLabel: r.domain_primary_link_label,
    secondaryLinks: r.domain_secondary_links,
  },
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
  deletedAt: iso(r.deleted_at),
});
const person = (r: Row) => ({
  id: r.id,
  name: { firstName: r.first_name, lastName: r.last_name },
  emails: { primaryEmail: r.primary_email, additionalEmails: r.additional_emails },
  companyId: r.company_id,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
  deletedAt: iso(r.deleted_at),
});

/** A company of a workspace with custom fields: the built-in fields, then each custom one (null when unset). */
const companyWith = (names: readonly string[]) => (r: Row) => {
  const out: Record<string, unknown> = company(r);
  const custom = r.custom as Row;
  for (const name of names) out[name] = custom[name] ?? null;
  return out;
};

/** The records API's cursor format (base64url of `{o, v: [createdAt], i: id}`), so its URLs work here too. */
function decodeCursor(raw: string): [string, string] {
  const { v, i } = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  return [v[0], i];
}
const cursorOf = (o: string, value: unknown, id: string) =>
  Buffer.from(JSON.stringify({ o, v: [value == null ? null : String(value)], i: id })).toString('base64url');

/** How a page is ordered: by created_at (the default lists), or by a custom NUMBER field, descending. */
interface Order {
  sql: string;
  cursor: (row: Row) => string;
  /** created_at orders only: the keyset after a starting_after cursor. */
  desc?: boolean;
}
const createdAtOrder = (desc: boolean): Order => ({
  desc,
  sql: desc ? 'created_at DESC NULLS LAST, id DESC' : 'created_at ASC NULLS FIRST, id ASC',
  cursor: (row) =>
    cursorOf(desc ? 'createdAt:DescNullsLast,id:DescNullsLast' : 'createdAt:AscNullsFirst,id:AscNullsLast', iso(row.created_at), row.id),
});
/** `order_by=<field>[DescNullsLast]` on a custom NUMBER field: the expression the records API writes for it. */
const customNumberOrder = (field: string): Order => ({
  sql: `${indexedValue(field, 'number', '')} DESC NULLS LAST, id DESC`,
  cursor: (row) => cursorOf(`${field}:DescNullsLast,id:DescNullsLast`, row.custom[field], row.id),
});

/** A workspace the bare server answers for, and its custom field names (none for the main workspace). */
interface Workspace {
  id: string;
  fields: string[];
  types: Map<string, string>;
}

interface Page {
  rows: Row[];
  totalCount: number | null;
  hasNextPage: boolean;
  endCursor: string | null;
}
const pageInfo = (p: Page) => ({ hasNextPage: p.hasNextPage, endCursor: p.endCursor });

export function createBareServer(
  pool: pg.Pool,
  workspaceId: string,
  withCount: boolean,
  custom?: { secret: string; workspace: Workspace },
): http.Server {
  const main: Workspace = { id: workspaceId, fields: [], types: new Map() };
  const customCompany = custom && companyWith(custom.workspace.fields);

  /** Keyset page over the (workspace_id, created_at DESC NULLS LAST, id DESC) indexes, or a custom order's. */
  async function page(
    table: string,
    columns: string,
    where: string,
    whereParams: unknown[],
    url: URL,
    order: Order = createdAtOrder(url.searchParams.get('order_by') === 'createdAt[DescNullsLast]'),
    workspace = workspaceId,
  ): Promise<Page> {
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 60), 200);
    const after = url.searchParams.get('starting_after');
    const params = [workspace, ...whereParams];
    let keyset = '';
    if (after) {
      if (order.desc === undefined) throw new Error('this server only follows cursors of createdAt orders');
      params.push(...decodeCursor(after));
      keyset = ` AND (created_at, id) ${order.desc ? '<' : '>'} ($${params.length - 1}::timestamptz, $${params.length}::uuid)`;
    }
    const { rows } = await pool.query(
      `SELECT ${columns} FROM ${table} WHERE ${where}${keyset} ORDER BY ${order.sql} LIMIT ${limit + 1}`,
      params,
    );
    let totalCount: number | null = null;
    if (withCount) {
      const counted = await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, [workspace, ...whereParams]);
      totalCount = counted.rows[0].n;
    }
    const hasNextPage = rows.length > limit;
    const shown = rows.slice(0, limit);
    return { rows: shown, totalCount, hasNextPage, endCursor: shown.length ? order.cursor(shown[shown.length - 1]) : null };
  }

  /** The company list of the main workspace, or of the custom one (custom filter and order). */
  async function companies(url: URL, workspace: Workspace): Promise<[number, unknown]> {
    const live = 'workspace_id = $1 AND deleted_at IS NULL';
    if (!workspace.fields.length) {
      const p = await page('companies', COMPANY_COLUMNS, live, [], url);
      return [200, { data: { companies: p.rows.map(company) }, totalCount: p.totalCount, pageInfo: pageInfo(p) }];
    }
    let where = live;
    const whereParams: unknown[] = [];
    const filter = url.searchParams.get('filter');
    if (filter) {
      const m = /^([a-z][a-zA-Z0-9]*)\[eq\]:"(.*)"$/.exec(filter);
      if (!m || workspace.types.get(m[1]) !== 'SELECT') return [400, { error: 'this server only knows filter=<select field>[eq]:"…"' }];
      where += ` AND (custom->>'${m[1]}') = $2`;
      whereParams.push(m[2]);
    }
    let order: Order | undefined;
    const orderBy = /^([a-z][a-zA-Z0-9]*)\[DescNullsLast\]$/.exec(url.searchParams.get('order_by') ?? '');
    if (orderBy && orderBy[1] !== 'createdAt') {
      if (workspace.types.get(orderBy[1]) !== 'NUMBER') return [400, { error: 'this server only orders by createdAt or a number field' }];
      order = customNumberOrder(orderBy[1]);
    }
    const p = await page('companies', `${COMPANY_COLUMNS}, custom`, where, whereParams, url, order, workspace.id);
    return [200, { data: { companies: p.rows.map(customCompany!) }, totalCount: p.totalCount, pageInfo: pageInfo(p) }];
  }

  async function route(req: http.IncomingMessage, body: string): Promise<[number, unknown]> {
    const url = new URL(req.url ?? '/', 'http://bare');
    const live = 'workspace_id = $1 AND deleted_at IS NULL';
    if (req.method === 'GET' && url.pathname === '/rest/companies') {
      // No authentication: the bearer only tells which workspace's bench request this is.
      const workspace = custom && req.headers.authorization === `Bearer ${custom.secret}` ? custom.workspace : main;
      return companies(url, workspace);
    }
    if (req.method === 'GET' && url.pathname === '/rest/opportunities/groupBy') {
      const { rows } = await pool.query(BARE_GROUP_BY_SQL, [workspaceId]);
      const groups = rows.map((r) => ({
        by: { stage: r.stage, closeDate: r.month },
        count: Number(r.count),
        sum: { 'amount.amountMicros': r.sum },
        min: { closeDate: r.min },
        max: { closeDate: r.max },
      }));
      return [200, { data: { groups } }];
    }
    const byCompany = /^company\.name\[eq\]:"(.*)"$/.exec(url.searchParams.get('filter') ?? '');
    if (req.method === 'GET' && url.pathname === '/rest/people' && byCompany) {
      const p = await page('people', PERSON_COLUMNS, `${live} AND ${BARE_RELATION_WHERE}`, [byCompany[1]], url);
      return [
        200,
        {
          data: { people: p.rows.map(person) },
          totalCount: p.totalCount,
          pageInfo: { hasNextPage: p.hasNextPage, endCursor: p.endCursor },
        },
      ];
    }
    if (req.method === 'GET' && url.pathname === '/rest/people') {
      const m = /^name\.lastName\[eq\]:"(.*)"$/.exec(url.searchParams.get('filter') ?? '');
      if (!m) return [400, { error: 'this server only knows filter=name.lastName[eq]:"…"' }];
      const p = await page('people', PERSON_COLUMNS, `${live} AND last_name = $2`, [m[1]], url);
      return [200, { data: { people: p.rows.map(person) }, totalCount: p.totalCount, pageInfo: pageInfo(p) }];
    }
    if (req.method === 'GET' && url.pathname === '/rest/search') {
      // The records API's statements for a people search (libs/records/src/service/search.service.ts), without its checks and caches.
      const limit = Number(url.searchParams.get('limit') ?? 20);
      const { rows: w } = await pool.query(WORDS_STATEMENT, [url.searchParams.get('q') ?? '']);
      const words: string[] = w[0].words;
      const expand = async (prefixes: string[]) => {
        const asked = [...new Set(prefixes.filter(expandable))];
        return asked.length ? expansionsOf((await pool.query(expansionsStatement, [workspaceId, ['people'], asked])).rows) : new Map();
      };
      const expansions = await expand(words);
      let queries = searchQueries(words, undefined, expansions);
      const run = (match: string, typo = false) =>
        pool
          .query(searchStatement({ workspaceId }, [personObject], false, limit + 1, typo), [
            workspaceId,
            match,
            queries.exact,
            queries.prefix,
            queries.typoWhole ?? queries.exact,
          ])
          .then((r) => r.rows);
      let found = await run(queries.prefix);
      const probe = typoProbe(words);
      if (found.length <= limit && probe.spellings.length) {
        const { rows: candidates } = await pool.query(typoCandidatesStatement, [
          workspaceId,
          ['people'],
          probe.spellings,
          probe.wordIndexes,
        ]);
        const chosen = typoCandidates(words, candidates);
        queries = searchQueries(words, chosen, new Map([...expansions, ...(await expand(chosen.flat()))]));
        if (queries.typo) found = await run(queries.typo, true);
      }
      const page = found.slice(0, limit);
      const { rows } = await pool.query(`SELECT ${PERSON_COLUMNS} FROM people WHERE ${live} AND id = ANY($2::uuid[])`, [
        workspaceId,
        page.map((r) => r.id),
      ]);
      const byId = new Map(rows.map((r) => [r.id, person(r)]));
      return [
        200,
        {
          data: {
            search: page.map((r) => {
              const p = byId.get(r.id)!;
              return { object: 'people', id: r.id, label: `${p.name.firstName} ${p.name.lastName}`, score: Number(r.score), record: p };
            }),
          },
          pageInfo: { hasNextPage: found.length > limit },
        },
      ];
    }
    const byId = /^\/rest\/companies\/([0-9a-f-]{36})$/.exec(url.pathname);
    if (req.method === 'GET' && byId) {
      const { rows } = await pool.query(`SELECT ${COMPANY_COLUMNS} FROM companies WHERE ${live} AND id = $2`, [workspaceId, byId[1]]);
      return rows.length ? [200, { data: { company: company(rows[0]) } }] : [404, { error: 'not found' }];
    }
    if (req.method === 'POST' && url.pathname === '/rest/people') {
      const input = JSON.parse(body);
      const { rows } = await pool.query(
        `INSERT INTO people (workspace_id, first_name, last_name, primary_email, company_id)
         VALUES ($1, $2, $3, $4, $5) RETURNING ${PERSON_COLUMNS}`,
        [
          workspaceId,
          input.name?.firstName ?? null,
          input.name?.lastName ?? null,
          input.emails?.primaryEmail ?? null,
          input.companyId ?? null,
        ],
      );
      return [201, { data: { createPerson: person(rows[0]) } }];
    }
    if (req.method === 'POST' && url.pathname === '/rest/companies') {
      const input = JSON.parse(body);
      const { rows } = await pool.query(
        `INSERT INTO companies (workspace_id, name, domain_primary_link_url, domain_primary_link_label)
         VALUES ($1, $2, $3, $4) RETURNING ${COMPANY_COLUMNS}`,
        [workspaceId, input.name ?? null, input.domainName?.primaryLinkUrl ?? null, input.domainName?.primaryLinkLabel ?? null],
      );
      return [201, { data: { createCompany: company(rows[0]) } }];
    }
    if (req.method === 'POST' && url.pathname === '/graphql') {
      // Answers `{ companies(first:60){ totalCount edges { node { id name } } } }` whatever the body says.
      const p = await page('companies', 'id, name, created_at', live, [], new URL('http://bare/?limit=60'));
      const companies = { totalCount: p.totalCount ?? undefined, edges: p.rows.map((r) => ({ node: { id: r.id, name: r.name } })) };
      return [200, { data: { companies } }];
    }
    return [404, { error: 'not found' }];
  }

  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      route(req, Buffer.concat(chunks).toString('utf8'))
        .catch((err): [number, unknown] => [500, { error: String(err?.message ?? err) }])
        .then(([status, payload]) => {
          const json = JSON.stringify(payload);
          res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
          res.end(json);
        });
    });
  });
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** A workspace's active custom fields of companies, in the order the records API lists them (creation, then id). */
async function readWorkspace(pool: pg.Pool, id: string): Promise<Workspace> {
  const { rows } = await pool.query(
    `SELECT name, type FROM custom_fields WHERE workspace_id = $1 AND object = 'companies' AND is_active ORDER BY created_at, id`,
    [id],
  );
  return { id, fields: rows.map((r) => r.name), types: new Map(rows.map((r) => [r.name, r.type])) };
}

if (process.send) {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
  const workspaceId = process.env.BENCH_WORKSPACE_ID!;
  const customId = process.env.BENCH_CUSTOM_WORKSPACE_ID;
  const custom =
    customId && process.env.BENCH_CUSTOM_SECRET
      ? { secret: process.env.BENCH_CUSTOM_SECRET, workspace: await readWorkspace(pool, customId) }
      : undefined;
  const servers = [createBareServer(pool, workspaceId, true, custom), createBareServer(pool, workspaceId, false, custom)];
  const [withCount, noCount] = await Promise.all(servers.map(listen));
  process.send({ withCount, noCount });
  process.on('disconnect', () => {
    servers.forEach((s) => s.closeAllConnections());
    void pool.end().finally(() => process.exit(0));
  });
}
