import pg from 'pg';

/*
 * The data of the group-by and relation-filter scenarios (docs/benchmark.md): opportunities in
 * the main bench workspace, added once (idempotent, beside the seed of bench/seed.ts, whose
 * version it leaves alone), and the SQL the bare server answers those scenarios with.
 */

export const OPPORTUNITY_ROWS = 100_000;
/** A company name the relation filter looks for (the seed names companies "Company <n>"). */
export const RELATION_COMPANY = 'Company 4242';

export const GROUP_BY_PATH =
  '/rest/opportunities/groupBy?group_by=stage,closeDate:month&aggregate=count,sum:amount.amountMicros,min:closeDate,max:closeDate';

/** The bare server's equivalent of GROUP_BY_PATH: one GROUP BY, the same exact numeric sum. */
export const BARE_GROUP_BY_SQL = `
  SELECT stage, to_char(date_trunc('month', close_date AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS month, count(*)::bigint AS count,
         sum(amount_micros::numeric)::text AS sum, min(close_date) AS min, max(close_date) AS max
    FROM opportunities WHERE workspace_id = $1 AND deleted_at IS NULL
   GROUP BY 1, 2 ORDER BY 1 ASC NULLS LAST, 2 ASC NULLS LAST LIMIT 1001`;

/** The bare server's `EXISTS` for people whose company has this name (over `people` unaliased). */
export const BARE_RELATION_WHERE = `EXISTS (SELECT 1 FROM companies r WHERE r.workspace_id = people.workspace_id
  AND r.id = people.company_id AND r.deleted_at IS NULL AND r.name = $2)`;

/** Adds opportunities to the main workspace up to OPPORTUNITY_ROWS (5 stages, amounts, close dates over two years, 80% linked to a company). */
export async function ensureBenchOpportunities(url: string, workspaceId: string, log: (m: string) => void): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const [{ n }] = (await pool.query('SELECT count(*)::int AS n FROM opportunities WHERE workspace_id = $1', [workspaceId])).rows;
    if (n >= OPPORTUNITY_ROWS) return;
    const started = Date.now();
    await pool.query(
      `WITH c AS (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM companies WHERE workspace_id = $1),
            n AS (SELECT count(*) AS total FROM c)
       INSERT INTO opportunities (workspace_id, name, stage, amount_micros, amount_currency_code, close_date, company_id)
       SELECT $1, 'Deal ' || g, (ARRAY['NEW','SCREENING','MEETING','PROPOSAL','CUSTOMER'])[1 + g % 5],
              (1 + floor(random() * 1000000))::bigint * 1000000, 'USD',
              timestamptz '2025-01-01' + floor(random() * 730) * interval '1 day',
              CASE WHEN g % 5 <> 0 THEN c.id END
         FROM generate_series(1, $2::int) g CROSS JOIN n
         LEFT JOIN c ON c.rn = 1 + (g::bigint * 7919) % n.total`,
      [workspaceId, OPPORTUNITY_ROWS - n],
    );
    await pool.query('ANALYZE opportunities');
    log(`Added ${OPPORTUNITY_ROWS - n} opportunities to the main workspace in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await pool.end();
  }
}
