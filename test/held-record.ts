import type { DataSource } from 'typeorm';

/**
 * A company created through the records API at `url` with `key`, then held locked by a
 * transaction of the test's own until `release()`: an upsert import that matches it waits
 * there, after committing the batches before it, so a test can look at an import while it
 * runs without racing it.
 */
export async function heldCompany(ds: DataSource, url: string, key: string, name: string) {
  const res = await fetch(`${url}/rest/companies`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(201);
  const id = ((await res.json()) as { data: { createCompany: { id: string } } }).data.createCompany.id;
  const [{ workspace_id: workspaceId }] = await ds.query('SELECT workspace_id FROM companies WHERE id = $1', [id]);
  const runner = ds.createQueryRunner();
  await runner.connect();
  await runner.startTransaction();
  await runner.query('SELECT id FROM companies WHERE workspace_id = $1 AND id = $2 FOR UPDATE', [workspaceId, id]);
  return {
    id,
    async release() {
      if (runner.isReleased) return;
      await runner.rollbackTransaction();
      await runner.release();
    },
  };
}
