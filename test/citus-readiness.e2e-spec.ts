import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '#database/data-source.js';
import { REFERENCE_TABLES_WITH_WORKSPACE } from '#database/tenant-scope.js';

/**
 * docs/scaling.md "Distributed Postgres (Citus)" against the migrated schema: its script distributes
 * exactly the tenant tables (a workspace_id column, not a reference table) in an order
 * where parents come first, makes every other table a reference table or leaves it local,
 * and the keys are what Citus needs. (The statements are checked by the suite's teardown.)
 */
const LOCAL = ['migrations', 'rate_limits', 'auth_throttle', 'export_waits'];

function script(): { reference: string[]; distributed: string[] } {
  const doc = readFileSync(new URL('../docs/scaling.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Distributed Postgres (Citus)'));
  const sql = /```sql\n([\s\S]*?)```/.exec(section)![1];
  const names = (text: string) => [...text.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]);
  const [reference, distributed] = sql.split('-- tenant tables');
  // In the order the script distributes them (companies first, then the co-located ones).
  return { reference: names(reference), distributed: [...new Set(names(distributed))].filter((n) => n !== 'workspace_id') };
}

describe('Citus readiness of the schema', () => {
  let ds: DataSource;
  beforeAll(async () => {
    ds = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 1)).initialize();
  });
  afterAll(() => ds?.destroy());

  const tables = async () =>
    (
      (await ds.query(
        `SELECT t.table_name AS name, EXISTS (SELECT 1 FROM information_schema.columns c
                 WHERE c.table_schema = 'public' AND c.table_name = t.table_name AND c.column_name = 'workspace_id') AS tenant
           FROM information_schema.tables t WHERE t.table_schema = 'public' AND t.table_type = 'BASE TABLE'`,
      )) as { name: string; tenant: boolean }[]
    ).filter((t) => !t.name.startsWith('schema_drift_'));

  it('the script of docs/scaling.md distributes every tenant table and makes every other one a reference table or keeps it local', async () => {
    const all = await tables();
    const { reference, distributed } = script();
    const tenant = all
      .filter((t) => t.tenant && t.name !== 'workspaces' && !(t.name in REFERENCE_TABLES_WITH_WORKSPACE))
      .map((t) => t.name);
    expect([...distributed].sort()).toEqual([...tenant].sort());
    expect([...reference, ...distributed, ...LOCAL].sort()).toEqual(all.map((t) => t.name).sort());
    expect(new Set([...reference, ...distributed]).size).toBe(reference.length + distributed.length);
    // The reference tables that have a workspace_id are exactly the ones the check exempts.
    expect(reference.filter((r) => all.find((t) => t.name === r)?.tenant && r !== 'workspaces').sort()).toEqual(
      Object.keys(REFERENCE_TABLES_WITH_WORKSPACE).sort(),
    );
  });

  it('every primary key and unique index of a distributed table includes workspace_id', async () => {
    const { distributed } = script();
    const keys = (await ds.query(
      `SELECT i.indrelid::regclass::text AS tab, pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
        WHERE c.relnamespace = 'public'::regnamespace AND i.indisunique AND i.indrelid::regclass::text = ANY($1)`,
      [distributed],
    )) as { tab: string; def: string }[];
    expect(keys.length).toBeGreaterThan(distributed.length - 1);
    expect(keys.filter((k) => !/\(.*\bworkspace_id\b/.test(k.def))).toEqual([]);
  });

  it('foreign keys: between distributed tables through workspace_id, parents distributed first; none from a reference table to a distributed one', async () => {
    const { reference, distributed } = script();
    const fks = (await ds.query(
      `SELECT conrelid::regclass::text AS child, confrelid::regclass::text AS parent,
              (SELECT array_agg(attname::text) FROM pg_attribute WHERE attrelid = conrelid AND attnum = ANY(conkey)) AS cols
         FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace`,
    )) as { child: string; parent: string; cols: string[] }[];
    const bad = fks.filter((fk) => {
      const childDistributed = distributed.includes(fk.child);
      const parentDistributed = distributed.includes(fk.parent);
      if (reference.includes(fk.child) && parentDistributed) return true;
      if (childDistributed && parentDistributed) {
        return !fk.cols.includes('workspace_id') || distributed.indexOf(fk.parent) > distributed.indexOf(fk.child);
      }
      return false;
    });
    expect(bad).toEqual([]);
    expect(fks.some((fk) => fk.child === 'people' && fk.parent === 'companies')).toBe(true);
  });
});
