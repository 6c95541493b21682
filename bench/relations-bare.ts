import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

/**
 * The floor of the relations bench (bench/relations.ts): `node:http` + `pg`, no framework, no
 * authentication, the SQL a custom relation needs and nothing else, answering the two
 * requests of the bench with the records API's shapes. Run as a child process: env
 * DATABASE_URL, BENCH_WORKSPACE_ID, BENCH_OBJECT_ID (deals), BENCH_FIELD_ID (deals.company);
 * it sends its port to its parent.
 */

type Row = Record<string, any>;
const { DATABASE_URL, BENCH_WORKSPACE_ID: ws, BENCH_OBJECT_ID: objectId, BENCH_FIELD_ID: fieldId } = process.env;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 16 });
const iso = (d: Date | null) => (d ? d.toISOString() : null);
const deal = (r: Row) => ({
  id: r.id,
  ...r.custom,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
  deletedAt: iso(r.deleted_at),
});
const COLUMNS = 't.id, t.created_at, t.updated_at, t.deleted_at, t.custom';
const LIVE_DEALS = 't.workspace_id = $1 AND t.object_id = $2 AND t.deleted_at IS NULL';

/** `company.name[eq]:"…"`: a live company of the workspace linked through the relation's links. */
const BY_COMPANY_NAME = `SELECT ${COLUMNS} FROM custom_records t WHERE ${LIVE_DEALS}
  AND EXISTS (SELECT 1 FROM record_links l JOIN companies r ON r.workspace_id = l.workspace_id AND r.id = l.target_id
               WHERE l.workspace_id = t.workspace_id AND l.field_id = $3 AND l.source_id = t.id AND r.deleted_at IS NULL AND r.name = $4)
  ORDER BY t.created_at ASC NULLS FIRST, t.id ASC LIMIT $5`;
const PAGE = `SELECT ${COLUMNS} FROM custom_records t WHERE ${LIVE_DEALS} ORDER BY t.created_at ASC NULLS FIRST, t.id ASC LIMIT $3`;
const COMPANIES = `SELECT id, name, domain_primary_link_url, domain_primary_link_label, domain_secondary_links, created_at, updated_at, deleted_at
  FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL AND id = ANY($2::uuid[])`;

function answer(res: http.ServerResponse, deals: Row[], limit: number): void {
  const page = deals.slice(0, limit);
  const body = JSON.stringify({
    data: { deals: page },
    pageInfo: { hasNextPage: deals.length > limit, startCursor: page[0]?.id ?? null, endCursor: page.at(-1)?.id ?? null },
  });
  res.writeHead(200, { 'content-type': 'application/json' }).end(body);
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url!, 'http://bare');
    const limit = Number(url.searchParams.get('limit') ?? 60);
    const filter = /^company\.name\[eq\]:"(.*)"$/.exec(url.searchParams.get('filter') ?? '');
    if (filter) {
      const { rows } = await pool.query({
        name: 'by-company',
        text: BY_COMPANY_NAME,
        values: [ws, objectId, fieldId, filter[1], limit + 1],
      });
      return answer(res, rows.map(deal), limit);
    }
    const { rows } = await pool.query({ name: 'page', text: PAGE, values: [ws, objectId, limit + 1] });
    const deals = rows.map(deal);
    if (url.searchParams.get('depth') === '1') {
      const ids = [...new Set(deals.map((d) => d.companyId).filter(Boolean))];
      const companies = new Map((await pool.query({ name: 'companies', text: COMPANIES, values: [ws, ids] })).rows.map((c) => [c.id, c]));
      for (const d of deals) {
        const c = companies.get(d.companyId);
        d.company = c
          ? {
              id: c.id,
              name: c.name,
              domainName: {
                primaryLinkUrl: c.domain_primary_link_url,
                primaryLinkLabel: c.domain_primary_link_label,
                secondaryLinks: c.domain_secondary_links,
              },
              createdAt: iso(c.created_at),
              updatedAt: iso(c.updated_at),
              deletedAt: iso(c.deleted_at),
            }
          : null;
      }
    }
    return answer(res, deals, limit);
  } catch (err) {
    res.writeHead(500).end(String(err));
  }
});

server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('disconnect', () => {
  server.close();
  void pool.end();
});
