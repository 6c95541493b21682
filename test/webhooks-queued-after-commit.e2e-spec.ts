import { deliverOnce, requeueStranded } from '#webhooks/delivery.js';
import { FirstAttempts } from '#webhooks/first-attempts.js';
import { webhookSettings } from '#webhooks/settings.js';
import { createWebhook } from '#webhooks/webhooks.js';
import { WorkspaceShares } from '#webhooks/workspace-shares.js';
import { newWorkspace } from './factories.js';
import { client } from './rest-helpers.js';
import { useWorkerlessApi } from './webhook-jobs.js';
import { Receiver } from './webhook-receiver.js';

/**
 * A create in a watched workspace stores its events and deliveries in its one statement, and
 * their jobs are queued in a statement of their own once it has committed
 * (docs/decisions/0045-jobs-queued-after-the-create.md): graphile-worker's `add_job`
 * NOTIFYs, and Postgres commits the transactions that NOTIFY one at a time, so creates that
 * queued their own jobs could not commit together. The create is still answered with its
 * jobs queued; a delivery left without one is queued by the heartbeat's sweep.
 */
describe('The jobs of a watched create, queued after its commit', () => {
  const api = useWorkerlessApi('wh_after_commit');
  const settings = () => ({ ...webhookSettings(), allowPrivate: true });

  async function watched(label: string, webhooks = 1) {
    const ws = await newWorkspace(api.ds, label);
    const receiver = await new Receiver().start();
    for (let i = 0; i < webhooks; i++) {
      await createWebhook(api.ds, ws.id, { url: `${receiver.url}?hook=${i}`, operations: ['company.created'] }, { allowPrivate: true });
    }
    return { ws, receiver, admin: client(api.http, ws.keys.Admin) };
  }

  /** Each delivery of the workspace with the transaction that wrote its record, and its job's id and transaction. */
  async function deliveries(workspaceId: string) {
    return api.ds.query<{ id: string; job_id: string | null; record_xid: string; job_xid: string | null; name: string }[]>(
      `SELECT d.id, d.job_id::text, c.xmin::text AS record_xid, j.xmin::text AS job_xid, c.name
         FROM webhook_deliveries d
         JOIN webhook_events e ON e.workspace_id = d.workspace_id AND e.id = d.event_id
         JOIN companies c ON c.workspace_id = d.workspace_id AND c.id = (e.payload->'data'->'record'->>'id')::uuid
         LEFT JOIN graphile_worker._private_jobs j ON j.id = d.job_id
        WHERE d.workspace_id = $1 ORDER BY d.created_at, d.id`,
      [workspaceId],
    );
  }

  it('is answered with each delivery’s job queued, by a transaction other than the one that wrote the record', async () => {
    const { ws, receiver, admin } = await watched('wh-after-one', 2);
    try {
      expect((await admin.post('/rest/companies', { name: 'Queued after' })).status).toBe(201);
      const rows = await deliveries(ws.id);
      expect(rows).toHaveLength(2);
      const jobs = await api.jobsOf(ws.id);
      expect(jobs.map((j) => j.id).sort()).toEqual(rows.map((r) => r.job_id).sort());
      expect(jobs.map((j) => j.payload).sort((a, b) => a.deliveryId.localeCompare(b.deliveryId))).toEqual(
        rows.map((r) => ({ workspaceId: ws.id, deliveryId: r.id, attempt: 1 })).sort((a, b) => a.deliveryId.localeCompare(b.deliveryId)),
      );
      // The record's transaction queued no job: its commit did not NOTIFY.
      for (const r of rows) expect(r.job_xid).not.toBe(r.record_xid);

      await deliverOnce(api.pool, jobs[0].payload, { jobId: jobs[0].id, settings: settings(), shares: new WorkspaceShares(10) });
      expect(receiver.receipts.map((r) => r.json.data.record.name)).toEqual(['Queued after', 'Queued after']);
      // The one sent along had its job taken off the queue by the job id its delivery keeps.
      expect((await api.jobsOf(ws.id)).map((j) => j.id)).toEqual([jobs[0].id]);
    } finally {
      await api.ds.query('DELETE FROM webhooks WHERE workspace_id = $1', [ws.id]);
      await receiver.close();
    }
  });

  it('a batch create’s deliveries each get one job, in one statement after the records’ transaction', async () => {
    const { ws, receiver, admin } = await watched('wh-after-batch');
    try {
      const names = ['First', 'Second', 'Third', 'Fourth'];
      expect(
        (
          await admin.post(
            '/rest/batch/companies',
            names.map((name) => ({ name })),
          )
        ).status,
      ).toBe(201);
      const jobs = await api.jobsOf(ws.id);
      const rows = await deliveries(ws.id);
      const byDelivery = new Map(rows.map((d) => [d.id, d.name]));
      expect(jobs.map((j) => byDelivery.get(j.payload.deliveryId)).sort()).toEqual([...names].sort());
      expect(new Set(rows.map((r) => r.job_id))).toEqual(new Set(jobs.map((j) => j.id)));
      expect(new Set(rows.map((r) => r.record_xid)).size).toBe(1);
      expect(new Set(rows.map((r) => r.job_xid)).size).toBe(1);
      expect(rows[0].job_xid).not.toBe(rows[0].record_xid);
    } finally {
      await api.ds.query('DELETE FROM webhooks WHERE workspace_id = $1', [ws.id]);
      await receiver.close();
    }
  });

  it('creates at once, in two workspaces: one job per delivery, each delivery pointing at its own, none in another workspace', async () => {
    const one = await watched('wh-after-many-1');
    const two = await watched('wh-after-many-2');
    try {
      const sent = await Promise.all(
        Array.from({ length: 24 }, (_, i) => (i % 2 ? two : one).admin.post('/rest/companies', { name: `At once ${i}` })),
      );
      expect(sent.map((r) => r.status)).toEqual(sent.map(() => 201));
      for (const { ws } of [one, two]) {
        const rows = await deliveries(ws.id);
        expect(rows).toHaveLength(12);
        const jobs = await api.jobsOf(ws.id);
        expect(jobs).toHaveLength(12);
        expect(new Set(rows.map((r) => r.job_id))).toEqual(new Set(jobs.map((j) => j.id)));
        expect(new Set(jobs.map((j) => j.payload.deliveryId))).toEqual(new Set(rows.map((r) => r.id)));
      }
    } finally {
      for (const { ws, receiver } of [one, two]) {
        await api.ds.query('DELETE FROM webhooks WHERE workspace_id = $1', [ws.id]);
        await receiver.close();
      }
    }
  });

  it('skips a delivery another statement has locked (a job sending it already) instead of waiting: no deadlock', async () => {
    const { ws, receiver, admin } = await watched('wh-after-locked');
    const holder = await api.pool.connect();
    try {
      for (const name of ['Free', 'Being sent']) expect((await admin.post('/rest/companies', { name })).status).toBe(201);
      // As if both were stored by a create whose jobs are about to be queued.
      await api.ds.query('UPDATE webhook_deliveries SET job_id = NULL WHERE workspace_id = $1', [ws.id]);
      await api.ds.query(`DELETE FROM graphile_worker._private_jobs WHERE payload->>'workspaceId' = $1`, [ws.id]);
      const [free, busy] = await deliveries(ws.id);
      const failures: unknown[] = [];
      const queue = new FirstAttempts(
        (sql, params) => api.pool.query(sql, params),
        (err) => failures.push(err),
      );

      // A job that took "Being sent" along records its outcome: its statement holds that row…
      await holder.query('BEGIN');
      await holder.query(`UPDATE webhook_deliveries SET claimed_until = now() WHERE workspace_id = $1 AND id = $2`, [ws.id, busy.id]);
      let queued = false;
      const queueing = queue.queue(ws.id, [free.id, busy.id]).then(() => (queued = true));
      // …until the queueing statement is done, or waits for a row.
      while (!queued && !(await holder.query('SELECT 1 FROM pg_locks WHERE NOT granted')).rowCount)
        await new Promise((r) => setTimeout(r, 10));
      // …and then wants the other one too (waiting on each other was a deadlock: one of the two statements failed).
      await holder.query(`UPDATE webhook_deliveries SET claimed_until = now() WHERE workspace_id = $1 AND id = $2`, [ws.id, free.id]);
      await holder.query('COMMIT');
      await queueing;

      expect(failures).toEqual([]);
      const jobs = await api.jobsOf(ws.id);
      expect(jobs.map((j) => j.payload.deliveryId).sort()).toEqual([free.id, busy.id].sort());
      const after = await deliveries(ws.id);
      expect(after.map((d) => d.job_id)).toEqual([jobs.find((j) => j.payload.deliveryId === free.id)!.id, null]);
    } finally {
      holder.release();
      await api.ds.query('DELETE FROM webhooks WHERE workspace_id = $1', [ws.id]);
      await receiver.close();
    }
  });

  it('when the jobs cannot be queued the create still succeeds, and the sweep queues its delivery', async () => {
    const { ws, receiver, admin } = await watched('wh-after-refused');
    // The queue refuses new jobs (as a full disk or a lock timeout would make its statement fail).
    await api.ds.query(`ALTER TABLE graphile_worker._private_jobs ADD CONSTRAINT refuse_for_test CHECK (false) NOT VALID`);
    try {
      const created = await admin.post('/rest/companies', { name: 'Kept' });
      expect(created.status).toBe(201);
      await api.ds.query(`ALTER TABLE graphile_worker._private_jobs DROP CONSTRAINT refuse_for_test`);
      const [row] = await deliveries(ws.id);
      expect(row).toMatchObject({ job_id: null, name: 'Kept' });
      expect(await api.jobsOf(ws.id)).toHaveLength(0);

      expect(await requeueStranded(api.pool, 0)).toBe(1);
      const [job] = await api.jobsOf(ws.id);
      expect(job.payload).toEqual({ workspaceId: ws.id, deliveryId: row.id, attempt: 1 });
      await deliverOnce(api.pool, job.payload, { jobId: job.id, settings: settings(), shares: new WorkspaceShares(10) });
      expect(receiver.receipts.map((r) => r.json.data.record.id)).toEqual([created.body.data.createCompany.id]);
    } finally {
      await api.ds.query(`ALTER TABLE graphile_worker._private_jobs DROP CONSTRAINT IF EXISTS refuse_for_test`);
      await api.ds.query('DELETE FROM webhooks WHERE workspace_id = $1', [ws.id]);
      await receiver.close();
    }
  });
});
