import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createRecordsApi } from '../apps/records-api/src/bootstrap.js';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { createWebhook } from '#webhooks/webhooks.js';
import { unique } from './public-origin.js';
import { Receiver, TEST_WORKER_ENV, sleep } from './webhook-receiver.js';

/**
 * One workspace's slow targets must not hold up another's events: an attempt holds no
 * database transaction or row lock while its POST is out, and a workspace gets at most its
 * share of a worker's delivery slots (README "Webhooks").
 */
describe('Webhook delivery across workspaces', () => {
  let app: INestApplication;
  let ds: DataSource;
  let base: string;

  beforeAll(async () => {
    const saved = { ...process.env };
    Object.assign(process.env, TEST_WORKER_ENV);
    try {
      app = await createRecordsApi();
      await app.listen(0, '127.0.0.1');
    } finally {
      process.env = saved;
    }
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    ds = app.get(DataSource);
  });

  afterAll(async () => {
    await app?.close();
  });

  async function workspaceWithKey(label: string) {
    const workspace = await createWorkspace(ds, unique(label));
    const role = await findRole(ds, workspace.id, 'Admin');
    const key = await createApiKey(ds, { workspaceId: workspace.id, role, name: 'k', expiresAt: new Date(Date.now() + 86_400_000) });
    return { workspaceId: workspace.id, key: key.secret };
  }

  const create = (key: string, name: string) =>
    fetch(`${base}/rest/companies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    }).then((r) => r.status);

  it('a workspace with 20 webhooks to a target that never answers does not delay another workspace’s event', async () => {
    const slow = await workspaceWithKey('wh-slow');
    const other = await workspaceWithKey('wh-prompt');
    const blackHole = await new Receiver().start();
    blackHole.hang = true;
    const receiver = await new Receiver().start();
    try {
      for (let i = 0; i < 20; i++)
        await createWebhook(ds, slow.workspaceId, { url: `${blackHole.url}/${i}`, operations: ['*.*'] }, { allowPrivate: true });
      const hook = await createWebhook(ds, other.workspaceId, { url: receiver.url, operations: ['*.*'] }, { allowPrivate: true });
      expect(await create(slow.key, 'Slow 1')).toBe(201);
      expect(await create(slow.key, 'Slow 2')).toBe(201);
      const deadline = Date.now() + 10_000;
      while (blackHole.hung < 3 && Date.now() < deadline) await sleep(50);
      expect(blackHole.hung).toBeGreaterThanOrEqual(3);

      // While those POSTs hang, no delivery row of the slow workspace is locked by an attempt.
      // A worker claiming or putting back one of the other deliveries locks its row for a
      // moment, so the check is repeated: a lock held for a hanging POST would fail every try.
      const tryLock = () =>
        ds.transaction(async (tx) => {
          try {
            await tx.query('SELECT id FROM webhook_deliveries WHERE workspace_id = $1 FOR UPDATE NOWAIT', [slow.workspaceId]);
            return null;
          } catch (err) {
            return (err as { code?: string }).code ?? String(err);
          }
        });
      let locked = await tryLock();
      for (let i = 0; locked !== null && i < 20; i++) {
        await sleep(100);
        locked = await tryLock();
      }
      expect(locked).toBeNull();

      expect(await create(other.key, 'Prompt')).toBe(201);
      const committed = Date.now();
      await receiver.waitFor(1, 15_000);
      // From the answer to the create (its commit) to the receipt; 10 s and more before the fix.
      expect(receiver.receipts[0].at - committed).toBeLessThan(3000);
      expect(receiver.verified(hook.secret).map((e) => e.type)).toEqual(['company.created']);
    } finally {
      // Deleting the webhooks drops their deliveries: no worker keeps retrying the black hole.
      await ds.query('DELETE FROM webhooks WHERE workspace_id = $1', [slow.workspaceId]);
      await blackHole.close();
      await receiver.close();
    }
  }, 60_000);
});
