import { DataSource } from 'typeorm';
import { dataSourceOptions } from '#database/index.js';
import { createWorkspace } from '#identity/accounts.js';
import { MAX_SHAPED_READS, MAX_SHAPED_WRITES, Sql } from '#database/sql.js';

describe('database', () => {
  let ds: DataSource;
  beforeAll(async () => {
    ds = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 2)).initialize();
  });
  afterAll(() => ds.destroy());

  it('counts live rows per workspace with the writes that change them', async () => {
    const ws = await createWorkspace(ds, `count-${Date.now()}`);
    await ds.query(`INSERT INTO companies (workspace_id, name) SELECT $1, 'c' || g FROM generate_series(1, 5) g`, [ws.id]);
    await ds.query(`UPDATE companies SET deleted_at = now() WHERE workspace_id = $1 AND name IN ('c1', 'c2')`, [ws.id]);
    await ds.query(`DELETE FROM companies WHERE workspace_id = $1 AND name = 'c3'`, [ws.id]);
    const [row] = await ds.query(
      `SELECT sum(live_count) AS live_count, sum(version) AS version FROM record_counts WHERE workspace_id = $1 AND object = 'companies'`,
      [ws.id],
    );
    expect(Number(row.live_count)).toBe(2);
    expect(Number(row.version)).toBe(3);
  });

  it('refuses a person linked to a company of another workspace', async () => {
    const a = await createWorkspace(ds, `fk-a-${Date.now()}`);
    const b = await createWorkspace(ds, `fk-b-${Date.now()}`);
    const [company] = await ds.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, 'A') RETURNING id`, [a.id]);
    await expect(
      ds.query(`INSERT INTO people (workspace_id, first_name, company_id) VALUES ($1, 'x', $2)`, [b.id, company.id]),
    ).rejects.toMatchObject({ code: '23503' });
  });

  it('prepares statements shaped by input (filters, write columns) only up to a bound each, so no connection collects them without end', async () => {
    // One connection, so pg_prepared_statements shows everything this Sql prepared.
    const one = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 1)).initialize();
    try {
      const sql = new Sql(one);
      const prepared = async () =>
        Number((await sql.rows<{ n: string }>(`SELECT count(*) AS n FROM pg_prepared_statements WHERE name LIKE 's\\_%'`))[0].n);
      const read = (i: number) => sql.rows<{ n: number }>(`SELECT $1::int + ${i} AS n`, [1], { prepared: 'bounded' });
      const write = (i: number) => sql.rows<{ n: number }>(`SELECT $1::int - ${i} AS n`, [1], { prepared: 'bounded-write' });
      for (let i = 0; i < MAX_SHAPED_READS + 20; i++) expect((await read(i))[0].n).toBe(1 + i);
      expect(await prepared()).toBe(MAX_SHAPED_READS);
      // Shapes seen first stay prepared; writes have a share of their own; fixed statements are prepared whatever the count.
      expect((await read(0))[0].n).toBe(1);
      for (let i = 0; i < MAX_SHAPED_WRITES + 20; i++) expect((await write(i))[0].n).toBe(1 - i);
      expect(await prepared()).toBe(MAX_SHAPED_READS + MAX_SHAPED_WRITES);
      await sql.rows('SELECT 1 AS fixed', [], { prepared: true });
      expect(await prepared()).toBe(MAX_SHAPED_READS + MAX_SHAPED_WRITES + 1);
    } finally {
      await one.destroy();
    }
  });
});
