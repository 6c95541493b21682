import { DataSource } from 'typeorm';
import { dataSourceOptions } from '#database/index.js';
import { createWorkspace } from '#identity/accounts.js';

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
    const [row] = await ds.query(`SELECT live_count, version FROM record_counts WHERE workspace_id = $1 AND object = 'companies'`, [ws.id]);
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
});
