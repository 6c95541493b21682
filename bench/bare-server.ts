import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import {
  searchQueries,
  searchStatement,
  typoCandidates,
  typoCandidatesStatement,
  typoProbe,
} from '../apps/records-api/src/records/search.service.js';
import { personObject } from '#records/objects/person.object.js';

/**
 * The floor of this stack: `node:http` + `pg`, no framework, no authentication, one SQL
 * statement per answer (plus a plain `count(*)` with the same WHERE when `withCount`).
 * It answers the bench's requests only, on the same paths, query strings, cursors and
 * bodies as the records API, with the same response shapes.
 *
 * Run as a child process: env DATABASE_URL and BENCH_WORKSPACE_ID; it listens on two
 * ports (with and without the count) and sends `{ withCount, noCount }` to its parent.
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

/** The records API's cursor format (base64url of `{o, v: [createdAt], i: id}`), so its URLs work here too. */
function decodeCursor(raw: string): [string, string] {
  const { v, i } = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  return [v[0], i];
}
function encodeCursor(row: Row, desc: boolean): string {
  const o = desc ? 'createdAt:DescNullsLast,id:DescNullsLast' : 'createdAt:AscNullsFirst,id:AscNullsLast';
  return Buffer.from(JSON.stringify({ o, v: [iso(row.created_at)], i: row.id })).toString('base64url');
}

interface Page {
  rows: Row[];
  totalCount: number | null;
  hasNextPage: boolean;
  endCursor: string | null;
}

export function createBareServer(pool: pg.Pool, workspaceId: string, withCount: boolean): http.Server {
  /** Keyset page over the (workspace_id, created_at DESC NULLS LAST, id DESC) indexes. */
  async function page(table: string, columns: string, where: string, whereParams: unknown[], url: URL): Promise<Page> {
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 60), 200);
    const desc = url.searchParams.get('order_by') === 'createdAt[DescNullsLast]';
    const after = url.searchParams.get('starting_after');
    const params = [workspaceId, ...whereParams];
    let keyset = '';
    if (after) {
      params.push(...decodeCursor(after));
      keyset = ` AND (created_at, id) ${desc ? '<' : '>'} ($${params.length - 1}::timestamptz, $${params.length}::uuid)`;
    }
    const order = desc ? 'created_at DESC NULLS LAST, id DESC' : 'created_at ASC NULLS FIRST, id ASC';
    const { rows } = await pool.query(
      `SELECT ${columns} FROM ${table} WHERE ${where}${keyset} ORDER BY ${order} LIMIT ${limit + 1}`,
      params,
    );
    let totalCount: number | null = null;
    if (withCount) {
      const counted = await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, [workspaceId, ...whereParams]);
      totalCount = counted.rows[0].n;
    }
    const hasNextPage = rows.length > limit;
    const shown = rows.slice(0, limit);
    return { rows: shown, totalCount, hasNextPage, endCursor: shown.length ? encodeCursor(shown[shown.length - 1], desc) : null };
  }

  async function route(req: http.IncomingMessage, body: string): Promise<[number, unknown]> {
    const url = new URL(req.url ?? '/', 'http://bare');
    const live = 'workspace_id = $1 AND deleted_at IS NULL';
    if (req.method === 'GET' && url.pathname === '/rest/companies') {
      const p = await page('companies', COMPANY_COLUMNS, live, [], url);
      return [
        200,
        {
          data: { companies: p.rows.map(company) },
          totalCount: p.totalCount,
          pageInfo: { hasNextPage: p.hasNextPage, endCursor: p.endCursor },
        },
      ];
    }
    if (req.method === 'GET' && url.pathname === '/rest/people') {
      const m = /^name\.lastName\[eq\]:"(.*)"$/.exec(url.searchParams.get('filter') ?? '');
      if (!m) return [400, { error: 'this server only knows filter=name.lastName[eq]:"…"' }];
      const p = await page('people', PERSON_COLUMNS, `${live} AND last_name = $2`, [m[1]], url);
      return [
        200,
        {
          data: { people: p.rows.map(person) },
          totalCount: p.totalCount,
          pageInfo: { hasNextPage: p.hasNextPage, endCursor: p.endCursor },
        },
      ];
    }
    if (req.method === 'GET' && url.pathname === '/rest/search') {
      // The records API's statements for a people search (records/search.service.ts), without its checks and caches.
      const limit = Number(url.searchParams.get('limit') ?? 20);
      const { rows: w } = await pool.query(
        `SELECT coalesce(tsvector_to_array(to_tsvector('simple', search_normalize($1))), '{}') AS words`,
        [url.searchParams.get('q') ?? ''],
      );
      const words: string[] = w[0].words;
      let queries = searchQueries(words);
      const run = (match: string, typo = false) =>
        pool
          .query(searchStatement([personObject], false, limit + 1, typo), [
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
        queries = searchQueries(words, typoCandidates(words, candidates));
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

if (process.send) {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
  const workspaceId = process.env.BENCH_WORKSPACE_ID!;
  const servers = [createBareServer(pool, workspaceId, true), createBareServer(pool, workspaceId, false)];
  const [withCount, noCount] = await Promise.all(servers.map(listen));
  process.send({ withCount, noCount });
  process.on('disconnect', () => {
    servers.forEach((s) => s.closeAllConnections());
    void pool.end().finally(() => process.exit(0));
  });
}
