import pg from 'pg';
import { DataSource } from 'typeorm';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { createField } from '#identity/data-model.js';
import { fieldIndexesSettled } from '#identity/field-indexes.js';
import { indexedValue } from '#records/objects/index.js';
import { dataSourceOptions, runMigrations } from '#database/data-source.js';

/**
 * The bench data: its own database (`records_bench`, beside the dev database on the same
 * server) so the dev data never holds 200k rows. Seeded once with INSERT … SELECT
 * generate_series and reused while the row counts are as expected.
 *
 * `--rows N` seeds a main workspace of N companies + N people in a database of its own
 * (`records_bench_N`; the default size keeps `records_bench`), so switching sizes never
 * reseeds the other one. The three other workspaces are the same at every size.
 *
 * Custom fields (docs/benchmark.md, "Custom fields"): a second workspace of the same size,
 * `Bench Custom`, holds a copy of the main workspace's companies (same names, domains and
 * timestamps; no people) with 20 custom fields defined and a value of each on every
 * company. The main workspace keeps no custom field, so its scenarios measure what they
 * always did, and its first page is the same page without custom fields.
 */

export const MAIN_WORKSPACE = 'Bench Main';
export const DEFAULT_ROWS = 100_000;
export const OTHER_WORKSPACES = ['Bench Other 1', 'Bench Other 2', 'Bench Other 3'];
export const OTHER_ROWS = 2_000;
/** The workspace whose companies carry custom fields: as many companies as the main one, no people. */
export const CUSTOM_WORKSPACE = 'Bench Custom';
/**
 * Bump when the generated data changes: a records_bench seeded by another version is seeded
 * again. 3: indexes built after the rows (same rows, denser indexes), at every size alike.
 * 4: the Bench Custom workspace (companies with 20 custom fields).
 */
const SEED_VERSION = 4;
/** People made by the create-person run carry this last name and are removed on the next run. */
export const CREATED_MARK = 'Bench-Created';

export const FIRST_NAMES = [
  'Emma',
  'Liam',
  'Olivia',
  'Noah',
  'Ava',
  'Lucas',
  'Mia',
  'Ethan',
  'Sofia',
  'Mateo',
  'Chloe',
  'Hugo',
  'Zoe',
  'Arjun',
  'Lea',
  'Kenji',
  'Nora',
  'Omar',
  'Ines',
  'Felix',
  'Priya',
  'Diego',
  'Hannah',
  'Yusuf',
  'Clara',
  'Jonas',
  'Maya',
  'Theo',
  'Aisha',
  'Leon',
  'Elena',
  'Samir',
  'Julia',
  'Marco',
  'Sara',
  'Ivan',
  'Lina',
  'Paul',
];
/** 64 names drawn uniformly: each last name matches about 1.6% of people. */
export const LAST_NAMES = [
  'Smith',
  'Martin',
  'Garcia',
  'Müller',
  'Rossi',
  'Tanaka',
  'Dubois',
  'Kowalski',
  'Silva',
  'Nguyen',
  'Johnson',
  'Laurent',
  'Patel',
  'Schmidt',
  'Bernard',
  'Kim',
  'Lopez',
  'Novak',
  'Okafor',
  'Jensen',
  'Haddad',
  'Moreau',
  'Costa',
  'Fischer',
  'Walsh',
  'Brown',
  'Jones',
  'Miller',
  'Davis',
  'Wilson',
  'Anderson',
  'Taylor',
  'Thomas',
  'Moore',
  'Jackson',
  'White',
  'Harris',
  'Clark',
  'Lewis',
  'Young',
  'Walker',
  'Hall',
  'Allen',
  'King',
  'Wright',
  'Scott',
  'Green',
  'Baker',
  'Adams',
  'Nelson',
  'Hill',
  'Campbell',
  'Mitchell',
  'Roberts',
  'Carter',
  'Phillips',
  'Evans',
  'Turner',
  'Torres',
  'Parker',
  'Collins',
  'Edwards',
  'Stewart',
  'Morris',
];
export const FILTER_LAST_NAME = 'Smith';

/**
 * created_at: random minutes over two years (about 9% of rows share their minute with
 * another), and every 100th row in one bulk-import instant (1% of rows on one timestamp).
 * Rows are inserted in created_at order, so the heap is in time order as in a table
 * filled over time (which decides how far a sequential scan must read to meet a row).
 */
const CREATED_AT = `CASE WHEN g % 100 = 0 THEN timestamptz '2024-06-01 12:00:00+00'
  ELSE date_trunc('minute', timestamptz '2023-01-01 00:00:00+00' + random() * interval '730 days') END`;

/** The custom SELECT field and option the bench filters on (GOLD: 25% of the companies). */
export const CUSTOM_FILTER = { field: 'tier', value: 'GOLD' } as const;
/** The custom NUMBER field the bench orders by. */
export const CUSTOM_ORDER = 'score';

/** Picks one of `values` uniformly, as SQL (a value may be listed several times to weigh it). */
const pick = (values: readonly string[]) =>
  `(ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')}])[1 + floor(random() * ${values.length})::int]`;
const date = (from: string, days: number) => `to_char(date '${from}' + floor(random() * ${days})::int, 'YYYY-MM-DD')`;

interface BenchField {
  name: string;
  type: 'SELECT' | 'NUMBER' | 'TEXT' | 'BOOLEAN' | 'DATE';
  label: string;
  options?: { value: string; label: string }[];
  /** The value of one company, as SQL (jsonb_build_object turns it into JSON). */
  value: string;
}

/**
 * The 20 custom fields of the Bench Custom companies, in creation order (the order the API
 * lists them in a record): `tier` (GOLD on 25% of companies) and `score` (random doubles),
 * then 18 of TEXT, NUMBER, BOOLEAN and DATE. Every company has a value for each.
 */
export const BENCH_FIELDS: readonly BenchField[] = [
  {
    name: 'tier',
    type: 'SELECT',
    label: 'Tier',
    options: [
      { value: 'GOLD', label: 'Gold' },
      { value: 'SILVER', label: 'Silver' },
      { value: 'BRONZE', label: 'Bronze' },
      { value: 'NONE', label: 'None' },
    ],
    // Out of 20: 5 GOLD (25%), 6 SILVER, 6 BRONZE, 3 NONE.
    value: pick([...Array(5).fill('GOLD'), ...Array(6).fill('SILVER'), ...Array(6).fill('BRONZE'), ...Array(3).fill('NONE')]),
  },
  { name: 'score', type: 'NUMBER', label: 'Score', value: 'random() * 100' },
  {
    name: 'industry',
    type: 'TEXT',
    label: 'Industry',
    value: pick(['Software', 'Retail', 'Banking', 'Insurance', 'Logistics', 'Energy', 'Health', 'Media', 'Telecom', 'Manufacturing']),
  },
  { name: 'region', type: 'TEXT', label: 'Region', value: pick(['EMEA', 'North America', 'LATAM', 'APAC']) },
  { name: 'accountOwner', type: 'TEXT', label: 'Account owner', value: `${pick(FIRST_NAMES)} || ' ' || ${pick(LAST_NAMES)}` },
  { name: 'leadSource', type: 'TEXT', label: 'Lead source', value: pick(['Website', 'Referral', 'Event', 'Partner', 'Outbound']) },
  { name: 'notes', type: 'TEXT', label: 'Notes', value: `'Renewal call, ref ' || left(md5(random()::text), 16)` },
  { name: 'employees', type: 'NUMBER', label: 'Employees', value: '1 + floor(random() * 5000)::int' },
  { name: 'annualRevenue', type: 'NUMBER', label: 'Annual revenue', value: 'round((random() * 1e8)::numeric, 2)' },
  { name: 'nps', type: 'NUMBER', label: 'NPS', value: 'floor(random() * 21)::int - 10' },
  { name: 'churnRisk', type: 'NUMBER', label: 'Churn risk', value: 'random()' },
  { name: 'isCustomer', type: 'BOOLEAN', label: 'Customer', value: 'random() < 0.4' },
  { name: 'hasSla', type: 'BOOLEAN', label: 'SLA', value: 'random() < 0.2' },
  { name: 'newsletter', type: 'BOOLEAN', label: 'Newsletter', value: 'random() < 0.6' },
  { name: 'gdprConsent', type: 'BOOLEAN', label: 'GDPR consent', value: 'random() < 0.9' },
  { name: 'partner', type: 'BOOLEAN', label: 'Partner', value: 'random() < 0.05' },
  { name: 'contractStart', type: 'DATE', label: 'Contract start', value: date('2020-01-01', 1800) },
  { name: 'renewalDate', type: 'DATE', label: 'Renewal date', value: date('2025-01-01', 730) },
  { name: 'lastContacted', type: 'DATE', label: 'Last contacted', value: date('2024-01-01', 700) },
  { name: 'foundedOn', type: 'DATE', label: 'Founded on', value: date('1950-01-01', 27000) },
];

/**
 * An expression index for a filter on one custom field ordered by another (docs/benchmark.md,
 * "Custom fields"): the expressions the records API writes for `tier[eq]` and
 * `score[DescNullsLast]`, after the workspace, then the tie-breaker id. `--no-custom-index`
 * drops it, to measure the same requests without it.
 */
export const CUSTOM_INDEX = 'bench_companies_tier_score_v2';
const CUSTOM_INDEX_DDL = `CREATE INDEX IF NOT EXISTS ${CUSTOM_INDEX} ON companies
  (workspace_id, ${indexedValue('tier', 'text', '')}, ${indexedValue('score', 'number', '')} DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL`;

/** The bench database of a size: `records_bench` for the default 100k, `records_bench_<rows>` otherwise. */
export function benchDatabaseName(rows: number): string {
  return rows === DEFAULT_ROWS ? 'records_bench' : `records_bench_${rows}`;
}

/** The URL of database `name` on the server of `url` (the dev database's URL). */
export function benchDatabaseUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function ensureBenchDatabase(benchUrl: string): Promise<void> {
  const name = new URL(benchUrl).pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unexpected bench database name "${name}"`);
  const admin = new URL(benchUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!found.rowCount) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

async function seedCompanies(db: pg.ClientBase, workspaceId: string, rows: number): Promise<void> {
  await db.query(
    `INSERT INTO companies (workspace_id, name, domain_primary_link_url, domain_primary_link_label, created_at, updated_at)
     SELECT $1, 'Company ' || g, 'https://company-' || g || '.example.com', 'company-' || g || '.example.com',
            ts, ts + (g % 30) * interval '1 day'
       FROM (SELECT g, ${CREATED_AT} AS ts FROM generate_series(1, $2::int) g) s
      ORDER BY ts`,
    [workspaceId, rows],
  );
}

/** A copy of `fromWorkspaceId`'s companies (same names, domains, timestamps, heap order) with a value of every BENCH_FIELDS field. */
async function seedCustomCompanies(db: pg.ClientBase, workspaceId: string, fromWorkspaceId: string): Promise<void> {
  const custom = `jsonb_build_object(${BENCH_FIELDS.map((f) => `'${f.name}', ${f.value}`).join(', ')})`;
  await db.query(
    `INSERT INTO companies (workspace_id, name, domain_primary_link_url, domain_primary_link_label, created_at, updated_at, custom)
     SELECT $1, name, domain_primary_link_url, domain_primary_link_label, created_at, updated_at, ${custom}
       FROM companies WHERE workspace_id = $2
      ORDER BY created_at, id`,
    [workspaceId, fromWorkspaceId],
  );
}

/** About 80% of people point at a random company of their workspace. */
async function seedPeople(db: pg.ClientBase, workspaceId: string, rows: number): Promise<void> {
  await db.query(
    `WITH c AS (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM companies WHERE workspace_id = $1),
          p AS (SELECT g, ${CREATED_AT} AS ts,
                       ($3::text[])[1 + floor(random() * cardinality($3::text[]))::int] AS first_name,
                       ($4::text[])[1 + floor(random() * cardinality($4::text[]))::int] AS last_name,
                       random() < 0.8 AS linked,
                       1 + floor(random() * (SELECT count(*) FROM c))::int AS company_rn
                  FROM generate_series(1, $2::int) g)
     INSERT INTO people (workspace_id, first_name, last_name, primary_email, company_id, created_at, updated_at)
     SELECT $1, p.first_name, p.last_name, lower(p.first_name || '.' || p.last_name || p.g) || '@example.com',
            CASE WHEN p.linked THEN c.id END, p.ts, p.ts
       FROM p LEFT JOIN c ON c.rn = p.company_rn
      ORDER BY p.ts`,
    [workspaceId, rows, FIRST_NAMES, LAST_NAMES],
  );
}

async function liveCounts(db: pg.Pool): Promise<Map<string, { companies: number; people: number }>> {
  const { rows } = await db.query(
    `SELECT w.name,
            coalesce(sum(rc.live_count) FILTER (WHERE rc.object = 'companies'), 0)::int AS companies,
            coalesce(sum(rc.live_count) FILTER (WHERE rc.object = 'people'), 0)::int AS people
       FROM workspaces w LEFT JOIN record_counts rc ON rc.workspace_id = w.id
      GROUP BY w.name`,
  );
  return new Map(rows.map((r) => [r.name, { companies: r.companies, people: r.people }]));
}

export interface BenchData {
  workspaceId: string;
  /** Bearer secret of a fresh Admin API key of the main workspace. */
  secret: string;
  /** The Bench Custom workspace (companies with custom fields) and an Admin API key of it. */
  custom: { workspaceId: string; secret: string; fields: number; index: boolean };
  /** Sample of live company ids of the main workspace (get-by-id and create-person bodies). */
  companyIds: string[];
  /** Sample of seeded people ids of the main workspace (get-by-id in the mixed run). */
  personIds: string[];
  filterLastName: string;
  seeded: boolean;
  seedSeconds: number;
}

/** Makes an Admin API key of a workspace named `bench` (any earlier one removed), valid a day. */
async function benchKey(ds: DataSource, pool: pg.Pool, workspaceId: string): Promise<string> {
  await pool.query(`DELETE FROM api_keys WHERE workspace_id = $1 AND name = 'bench'`, [workspaceId]);
  const { secret } = await createApiKey(ds, {
    workspaceId,
    role: await findRole(ds, workspaceId, 'Admin'),
    name: 'bench',
    expiresAt: new Date(Date.now() + 86_400_000),
  });
  return secret;
}

/**
 * Migrates the bench database, seeds it (`mainRows` companies + people in the main workspace,
 * as many companies with custom fields in Bench Custom) unless the counts are already there,
 * makes API keys, and creates the custom-field index (`customIndex`) or drops it.
 */
export async function prepareBenchData(
  benchUrl: string,
  mainRows: number,
  log: (m: string) => void,
  { customIndex = true }: { customIndex?: boolean } = {},
): Promise<BenchData> {
  const database = new URL(benchUrl).pathname.slice(1);
  const ds = new DataSource(dataSourceOptions(benchUrl, 4));
  await ds.initialize();
  await runMigrations(ds);
  const pool = new pg.Pool({ connectionString: benchUrl, max: 2 });
  try {
    const removed = await pool.query('DELETE FROM people WHERE last_name = $1', [CREATED_MARK]);
    if (removed.rowCount) {
      log(`Removed ${removed.rowCount} people left by an earlier create-person run`);
      await pool.query('VACUUM (ANALYZE) people');
    }

    // Before the seed, which drops and builds again the indexes it finds: a dropped index stays dropped.
    if (customIndex) await pool.query(CUSTOM_INDEX_DDL);
    else await pool.query(`DROP INDEX IF EXISTS ${CUSTOM_INDEX}`);

    const counts = await liveCounts(pool);
    const expected = [
      { name: MAIN_WORKSPACE, companies: mainRows, people: mainRows },
      { name: CUSTOM_WORKSPACE, companies: mainRows, people: 0 },
      ...OTHER_WORKSPACES.map((name) => ({ name, companies: OTHER_ROWS, people: OTHER_ROWS })),
    ];
    await pool.query('CREATE TABLE IF NOT EXISTS bench_seed (version int NOT NULL)');
    const { rows: seededBy } = await pool.query('SELECT version FROM bench_seed');
    const { rows: fieldCount } = await pool.query(
      `SELECT count(*)::int AS n FROM custom_fields f JOIN workspaces w ON w.id = f.workspace_id WHERE w.name = $1`,
      [CUSTOM_WORKSPACE],
    );
    const ready =
      seededBy[0]?.version === SEED_VERSION &&
      fieldCount[0].n === BENCH_FIELDS.length &&
      counts.size === expected.length &&
      expected.every((w) => counts.get(w.name)?.companies === w.companies && counts.get(w.name)?.people === w.people);

    let seedSeconds = 0;
    if (!ready) {
      const started = Date.now();
      log(
        `Seeding ${database}: ${mainRows} companies + ${mainRows} people, ${mainRows} companies with ${BENCH_FIELDS.length} custom fields ` +
          `(${CUSTOM_WORKSPACE}), and ${OTHER_WORKSPACES.length} workspaces of ${OTHER_ROWS} + ${OTHER_ROWS}`,
      );
      await pool.query('TRUNCATE workspaces, users CASCADE');
      const ids = new Map<string, string>();
      for (const w of expected) ids.set(w.name, (await createWorkspace(ds, w.name)).id);
      // The definitions as the metadata API makes them (checked, audited, data_model_version moved),
      // before the rows: the seed's transaction below holds the workspace row, which createField locks.
      for (const { name, type, label, options } of BENCH_FIELDS) {
        await createField(
          ds,
          ids.get(CUSTOM_WORKSPACE)!,
          { userId: null, email: 'bench@example.com' },
          { object: 'companies', name, type, label, options },
        );
      }
      // The per-field indexes a new field gets (decision 28) are built in the background: let them
      // finish before the transaction below drops and rebuilds the secondary indexes.
      await fieldIndexesSettled();
      const client = await pool.connect();
      let inserted = 0;
      try {
        // One transaction: the secondary indexes are dropped, the rows inserted, and the same
        // indexes (pg_get_indexdef) built again by sorting, instead of ~16 indexes updated row
        // by row (at 1M rows that thrashed shared_buffers: 181 s against ~1 min). Any failure
        // rolls the drops back with the rows.
        await client.query('BEGIN');
        await client.query(`SET LOCAL maintenance_work_mem = '256MB'`);
        const { rows: indexes } = await client.query<{ name: string; def: string }>(
          `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
             FROM pg_index i
            WHERE i.indrelid IN ('companies'::regclass, 'people'::regclass)
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
        );
        for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
        await client.query('SELECT setseed(0.42)'); // same data on every seed
        for (const w of expected) {
          if (w.name === CUSTOM_WORKSPACE) {
            await seedCustomCompanies(client, ids.get(w.name)!, ids.get(MAIN_WORKSPACE)!);
            continue;
          }
          await seedCompanies(client, ids.get(w.name)!, w.companies);
          await seedPeople(client, ids.get(w.name)!, w.people);
        }
        inserted = (Date.now() - started) / 1000;
        for (const index of indexes) await client.query(index.def);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
      const indexed = (Date.now() - started) / 1000;
      await pool.query('DELETE FROM bench_seed');
      await pool.query('INSERT INTO bench_seed (version) VALUES ($1)', [SEED_VERSION]);
      await pool.query('VACUUM (ANALYZE) companies, people, record_counts');
      seedSeconds = (Date.now() - started) / 1000;
      log(
        `Seeded in ${seedSeconds.toFixed(1)} s (rows ${inserted.toFixed(1)} s, indexes ${(indexed - inserted).toFixed(1)} s, ` +
          `VACUUM ANALYZE ${(seedSeconds - indexed).toFixed(1)} s)`,
      );
    } else {
      await pool.query('ANALYZE companies, people');
    }

    const idOf = async (name: string) => (await pool.query('SELECT id FROM workspaces WHERE name = $1', [name])).rows[0].id as string;
    const workspaceId = await idOf(MAIN_WORKSPACE);
    const secret = await benchKey(ds, pool, workspaceId);
    const customWorkspaceId = await idOf(CUSTOM_WORKSPACE);
    const custom = {
      workspaceId: customWorkspaceId,
      secret: await benchKey(ds, pool, customWorkspaceId),
      fields: BENCH_FIELDS.length,
      index: customIndex,
    };
    const companyIds = (
      await pool.query(`SELECT id FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY md5(id::text) LIMIT 1000`, [
        workspaceId,
      ])
    ).rows.map((r) => r.id as string);
    const personIds = (
      await pool.query(
        `SELECT id FROM people WHERE workspace_id = $1 AND deleted_at IS NULL AND last_name <> $2 ORDER BY md5(id::text) LIMIT 1000`,
        [workspaceId, CREATED_MARK],
      )
    ).rows.map((r) => r.id as string);
    return { workspaceId, secret, custom, companyIds, personIds, filterLastName: FILTER_LAST_NAME, seeded: !ready, seedSeconds };
  } finally {
    await pool.end();
    await ds.destroy();
  }
}
