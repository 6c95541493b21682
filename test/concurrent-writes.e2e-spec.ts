import type { INestApplication } from '@nestjs/common';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { newWorkspace, startApi, useEmptyDatabase } from './factories.js';
import { client, type Http } from './rest-helpers.js';
import { CountSlots1764800000000 } from '#database/migrations/1764800000000-count-slots.js';

/**
 * Writers of one workspace do not wait on each other for its counts, and the counts stay
 * exact (docs/decisions/0034-writes-that-scale.md): each write adds to a slot of the workspace's
 * counts that no other open transaction holds, and a list sums the slots.
 */
describe('concurrent writes in one workspace', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
  });
  afterAll(() => app.close());

  const connect = async () => {
    const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await c.connect();
    return c;
  };

  /**
   * `work` runs while `holder` (a transaction with a write of its own, not committed) stays
   * open: 'done' when it finished, 'blocked' as soon as any backend waits on the holder's
   * locks (which would then only end with the holder's COMMIT).
   */
  async function beside(holder: pg.Client, work: Promise<unknown>): Promise<'done' | 'blocked'> {
    const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')).rows;
    const monitor = await connect();
    let finished = false;
    try {
      const watch = (async () => {
        while (!finished) {
          const { rows } = await monitor.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [
            pid,
          ]);
          if (rows[0].n > 0) return 'blocked' as const;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return 'done' as const;
      })();
      return await Promise.race([work.then(() => 'done' as const), watch]);
    } finally {
      finished = true;
      await monitor.end();
    }
  }

  async function liveCount(table: string, workspaceId: string): Promise<number> {
    const [row] = await ds.query(`SELECT count(*)::int AS n FROM ${table} WHERE workspace_id = $1 AND deleted_at IS NULL`, [workspaceId]);
    return row.n;
  }

  it('a create, an update and a delete complete while another transaction of the workspace holds a create open', async () => {
    const ws = await newWorkspace(ds, 'beside');
    const api = client(http, ws.keys.Admin);
    const [a, b] = await Promise.all(
      ['a', 'b'].map(async (name) => (await api.post('/rest/companies', { name }).expect(201)).body.data.createCompany.id),
    );
    const holder = await connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, 'held open')`, [ws.id]);
      const writes = Promise.all([
        api.post('/rest/companies', { name: 'beside' }).expect(201),
        api.patch(`/rest/companies/${a}`, { name: 'renamed' }).expect(200),
        api.delete(`/rest/companies/${b}`).expect(200),
        api.post('/rest/people', { name: { firstName: 'Ada' } }).expect(201),
      ]);
      expect(await beside(holder, writes)).toBe('done');
      await writes;
      // The open create is not counted yet; the others are.
      const listed = await api.get('/rest/companies').expect(200);
      expect(listed.body.totalCount).toBe(2);
      expect(listed.body.totalCount).toBe(await liveCount('companies', ws.id));
      await holder.query('COMMIT');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    const after = await api.get('/rest/companies').expect(200);
    expect(after.body.totalCount).toBe(3);
    expect(after.body.totalCount).toBe(await liveCount('companies', ws.id));
  });

  it('two SQL transactions insert into one workspace at once, neither waiting for the other to commit', async () => {
    const ws = await newWorkspace(ds, 'two-tx');
    const [first, second] = [await connect(), await connect()];
    try {
      await first.query('BEGIN');
      await first.query(`INSERT INTO people (workspace_id, first_name) VALUES ($1, 'first')`, [ws.id]);
      await second.query('BEGIN');
      const insert = second.query(`INSERT INTO people (workspace_id, first_name) VALUES ($1, 'second')`, [ws.id]);
      expect(await beside(first, insert)).toBe('done');
      await second.query('COMMIT');
      await first.query('COMMIT');
    } finally {
      for (const c of [first, second]) {
        await c.query('ROLLBACK').catch(() => undefined);
        await c.end();
      }
    }
    const res = await client(http, ws.keys.Admin).get('/rest/people').expect(200);
    expect(res.body.totalCount).toBe(2);
  });

  it('keeps totalCount exact under concurrent creates, deletes and rolled-back writes from many connections', async () => {
    const ws = await newWorkspace(ds, 'exact');
    const api = client(http, ws.keys.Admin);
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 12 });
    try {
      // 80 creates through the API, 16 at a time, beside 12 SQL connections doing transactions of
      // their own: inserts of several rows, soft and hard deletes, and some rolled back.
      const created: string[] = [];
      const viaApi = (async () => {
        for (let round = 0; round < 5; round++) {
          const answers = await Promise.all(
            Array.from({ length: 16 }, (_, i) => api.post('/rest/companies', { name: `api ${round}-${i}` }).expect(201)),
          );
          created.push(...answers.map((r) => r.body.data.createCompany.id));
          // Delete a few of what this round made, through the API, concurrently with the next round.
          await Promise.all(created.splice(0, 4).map((id) => api.delete(`/rest/companies/${id}`).expect(200)));
        }
      })();
      const viaSql = Array.from({ length: 12 }, async (_, worker) => {
        const c = await pool.connect();
        try {
          for (let i = 0; i < 8; i++) {
            await c.query('BEGIN');
            await c.query(`INSERT INTO companies (workspace_id, name) SELECT $1, 'sql ' || g FROM generate_series(1, 3) g`, [ws.id]);
            await c.query(
              `UPDATE companies SET deleted_at = now() WHERE workspace_id = $1 AND id IN
                 (SELECT id FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL AND name LIKE 'sql %' LIMIT 1 FOR UPDATE SKIP LOCKED)`,
              [ws.id],
            );
            await c.query(
              `DELETE FROM companies WHERE workspace_id = $1 AND id IN
                 (SELECT id FROM companies WHERE workspace_id = $1 AND name LIKE 'sql %' ORDER BY deleted_at NULLS LAST LIMIT 1 FOR UPDATE SKIP LOCKED)`,
              [ws.id],
            );
            await c.query((worker + i) % 3 === 0 ? 'ROLLBACK' : 'COMMIT');
          }
        } finally {
          c.release();
        }
      });
      await Promise.all([viaApi, ...viaSql]);
    } finally {
      await pool.end();
    }
    const counted = await liveCount('companies', ws.id);
    expect(counted).toBeGreaterThan(60);
    const res = await api.get('/rest/companies', { limit: 1 }).expect(200);
    expect(res.body.totalCount).toBe(counted);
    // And the filtered count, computed now, agrees with SQL.
    const filtered = await api.get('/rest/companies', { filter: 'name[like]:"api %"', limit: 1 }).expect(200);
    const [row] = await ds.query(
      `SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL AND name LIKE 'api %'`,
      [ws.id],
    );
    expect(filtered.body.totalCount).toBe(row.n);
  });

  it('a filtered count cached by the API moves with a write made elsewhere (another instance, plain SQL)', async () => {
    const ws = await newWorkspace(ds, 'cache');
    const api = client(http, ws.keys.Admin);
    for (const name of ['Acme', 'Acme 2', 'Other']) await api.post('/rest/companies', { name }).expect(201);
    const count = async () => (await api.get('/rest/companies', { filter: 'name[like]:"Acme%"' }).expect(200)).body.totalCount;
    expect(await count()).toBe(2);
    expect(await count()).toBe(2); // now from the cache
    // A write holding one slot open does not hide the next one's version move.
    const holder = await connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, 'Acme held')`, [ws.id]);
      await ds.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, 'Acme 3')`, [ws.id]);
      expect(await count()).toBe(3);
      await holder.query('COMMIT');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    expect(await count()).toBe(4);
    await ds.query(`UPDATE companies SET name = 'Renamed' WHERE workspace_id = $1 AND name = 'Acme'`, [ws.id]);
    expect(await count()).toBe(3);
  });

  it('deletes a workspace with its records and its counts (the cascade reaches the counts before the records)', async () => {
    const ws = await newWorkspace(ds, 'deleted');
    const api = client(http, ws.keys.Admin);
    const company = (await api.post('/rest/companies', { name: 'c' }).expect(201)).body.data.createCompany;
    await api.post('/rest/people', { name: { firstName: 'p' }, companyId: company.id }).expect(201);
    await api.post('/rest/opportunities', { name: 'o', companyId: company.id }).expect(201);
    await ds.query('DELETE FROM workspaces WHERE id = $1', [ws.id]);
    const [row] = await ds.query(
      `SELECT (SELECT count(*) FROM record_counts WHERE workspace_id = $1)::int AS counts,
              (SELECT count(*) FROM companies WHERE workspace_id = $1)::int AS companies`,
      [ws.id],
    );
    expect(row).toEqual({ counts: 0, companies: 0 });
  });

  describe('the migration', () => {
    const db = useEmptyDatabase('count_slots');

    it('moves the counts into slots and back (down), exact both ways', async () => {
      const [ws] = await db.ds.query(`INSERT INTO workspaces (name) VALUES ('migrated') RETURNING id`);
      const insert = (n: number) =>
        db.ds.query(`INSERT INTO companies (workspace_id, name) SELECT $1, 'c' || g FROM generate_series(1, $2::int) g`, [ws.id, n]);
      const sums = async () =>
        (
          await db.ds.query(
            `SELECT count(*)::int AS slots, sum(live_count)::int AS live, sum(version)::int AS version
               FROM record_counts WHERE workspace_id = $1 AND object = 'companies'`,
            [ws.id],
          )
        )[0];
      // Two slots: one held open by a transaction while another write adds to the other.
      await insert(5);
      const holder = new pg.Client({ connectionString: db.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, 'held')`, [ws.id]);
        await insert(3);
        await holder.query('COMMIT');
      } finally {
        await holder.end();
      }
      expect(await sums()).toEqual({ slots: 2, live: 9, version: 3 });

      const runner = db.ds.createQueryRunner();
      try {
        await runner.startTransaction();
        await new CountSlots1764800000000().down(runner);
        await runner.commitTransaction();
        expect(await sums()).toEqual({ slots: 1, live: 9, version: 3 });
        await insert(1);
        expect(await sums()).toEqual({ slots: 1, live: 10, version: 4 });

        await runner.startTransaction();
        await new CountSlots1764800000000().up(runner);
        await runner.commitTransaction();
      } finally {
        await runner.release();
      }
      expect(await sums()).toEqual({ slots: 1, live: 10, version: 4 });
      await insert(2);
      expect(await sums()).toEqual({ slots: 1, live: 12, version: 5 });
    });
  });
});
