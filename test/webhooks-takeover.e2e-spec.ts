import { deliverOnce, requeueStranded } from '#webhooks/delivery.js';
import { webhookSettings } from '#webhooks/settings.js';
import { createWebhook } from '#webhooks/webhooks.js';
import { WorkspaceShares } from '#webhooks/workspace-shares.js';
import { newWorkspace } from './factories.js';
import { client } from './rest-helpers.js';
import { useWorkerlessApi } from './webhook-jobs.js';
import { Receiver } from './webhook-receiver.js';

/**
 * A delivery whose attempt was claimed by a job of a process that died, and whose job then
 * runs again in a process where the workspace has its share of slots in flight: the job is
 * put back on the queue as a new job, and that new job must still be able to send it. It
 * could not (the claim named the old job, current for another 40 s, and no job was left to
 * try after that): the event was never delivered. Found by webhooks-process under a shared
 * database, where other workspaces' deliveries fill the slots.
 */
describe('A delivery claimed by a job that is then put back', () => {
  const api = useWorkerlessApi('wh_takeover');

  it('is sent by the job it was put back as, and the claim of the old job is let go', async () => {
    const ws = await newWorkspace(api.ds, 'wh-takeover');
    const receiver = await new Receiver().start();
    try {
      await createWebhook(api.ds, ws.id, { url: receiver.url, operations: ['company.created'] }, { allowPrivate: true });
      expect((await client(api.http, ws.keys.Admin).post('/rest/companies', { name: 'Claimed' })).status).toBe(201);
      const [first] = await api.jobsOf(ws.id);
      const deliveryId = first.payload.deliveryId;

      // The first run of the job claimed the attempt and its process died with the POST out.
      await api.ds.query(
        `UPDATE webhook_deliveries SET claim_job = $3, claimed_until = now() + interval '40 seconds' WHERE workspace_id = $1 AND id = $2`,
        [ws.id, deliveryId, first.id],
      );
      const settings = { ...webhookSettings(), allowPrivate: true };

      // Released, the job runs again where the workspace's share is in flight: it is put back.
      const busy = new WorkspaceShares(2);
      expect(busy.take(ws.id)).not.toBeNull();
      await deliverOnce(api.pool, first.payload, { jobId: first.id, settings, shares: busy });
      expect(receiver.receipts).toHaveLength(0);
      // graphile-worker completes the job that returned; the one it was put back as is left.
      await api.ds.query('SELECT graphile_worker.complete_jobs(ARRAY[$1::bigint])', [first.id]);
      const [again] = await api.jobsOf(ws.id);
      expect(again.id).not.toBe(first.id);
      expect(again.payload).toMatchObject({ deliveryId, attempt: 1, deferrals: 1 });

      await deliverOnce(api.pool, again.payload, { jobId: again.id, settings, shares: new WorkspaceShares(10) });
      expect(receiver.receipts).toHaveLength(1);
      expect(receiver.receipts[0].json.data.record.name).toBe('Claimed');
      const [row] = await api.ds.query('SELECT status, attempts, claim_job FROM webhook_deliveries WHERE workspace_id = $1 AND id = $2', [
        ws.id,
        deliveryId,
      ]);
      expect(row).toEqual({ status: 'delivered', attempts: 1, claim_job: null });
    } finally {
      await api.ds.query('DELETE FROM webhooks WHERE workspace_id = $1', [ws.id]);
      await receiver.close();
    }
  });

  it('the heartbeat sweep gives a pending delivery left without a job a new one, and leaves the others alone', async () => {
    const ws = await newWorkspace(api.ds, 'wh-stranded');
    const receiver = await new Receiver().start();
    try {
      await createWebhook(api.ds, ws.id, { url: receiver.url, operations: ['company.created'] }, { allowPrivate: true });
      const admin = client(api.http, ws.keys.Admin);
      for (const name of ['Lost', 'Queued', 'Claimed']) expect((await admin.post('/rest/companies', { name })).status).toBe(201);
      const jobs = await api.jobsOf(ws.id);
      expect(jobs).toHaveLength(3);
      const [lost, queued, claimed] = jobs;
      // All three are old enough; one lost its job (a defect, a restored backup), one is claimed now.
      await api.ds.query(`UPDATE webhook_deliveries SET created_at = now() - interval '2 minutes' WHERE workspace_id = $1`, [ws.id]);
      await api.ds.query('SELECT graphile_worker.complete_jobs(ARRAY[$1::bigint, $2::bigint])', [lost.id, claimed.id]);
      await api.ds.query(
        `UPDATE webhook_deliveries SET claim_job = $3, claimed_until = now() + interval '40 seconds' WHERE workspace_id = $1 AND id = $2`,
        [ws.id, claimed.payload.deliveryId, claimed.id],
      );

      expect(await requeueStranded(api.pool)).toBeGreaterThanOrEqual(1);
      const after = await api.jobsOf(ws.id);
      expect(after.map((j) => j.payload.deliveryId).sort()).toEqual([lost.payload.deliveryId, queued.payload.deliveryId].sort());
      const fresh = after.find((j) => j.payload.deliveryId === lost.payload.deliveryId)!;
      expect(fresh.payload).toMatchObject({ workspaceId: ws.id, attempt: 1 });
      // Again: nothing more for this workspace (the lost one has its job now).
      await requeueStranded(api.pool);
      expect(await api.jobsOf(ws.id)).toHaveLength(2);

      const settings = { ...webhookSettings(), allowPrivate: true };
      await deliverOnce(api.pool, fresh.payload, { jobId: fresh.id, settings, shares: new WorkspaceShares(10) });
      // The queued one waits and goes along (webhooks-batch); the one another job holds now does not.
      expect(receiver.receipts.map((r) => r.json.data.record.name).sort()).toEqual(['Lost', 'Queued']);
    } finally {
      await api.ds.query('DELETE FROM webhooks WHERE workspace_id = $1', [ws.id]);
      await receiver.close();
    }
  });

  it('a put-back job does not take a claim that another job holds now', async () => {
    const ws = await newWorkspace(api.ds, 'wh-takeover-held');
    const receiver = await new Receiver().start();
    try {
      await createWebhook(api.ds, ws.id, { url: receiver.url, operations: ['company.created'] }, { allowPrivate: true });
      expect((await client(api.http, ws.keys.Admin).post('/rest/companies', { name: 'Held' })).status).toBe(201);
      const [job] = await api.jobsOf(ws.id);
      // Another job (a duplicate of the delivery, e.g. a manual redelivery's) holds the attempt.
      await api.ds.query(
        `UPDATE webhook_deliveries SET claim_job = 999999999, claimed_until = now() + interval '40 seconds' WHERE workspace_id = $1 AND id = $2`,
        [ws.id, job.payload.deliveryId],
      );
      const busy = new WorkspaceShares(2);
      busy.take(ws.id);
      const settings = { ...webhookSettings(), allowPrivate: true };
      await deliverOnce(api.pool, job.payload, { jobId: job.id, settings, shares: busy });
      const [row] = await api.ds.query('SELECT claim_job FROM webhook_deliveries WHERE workspace_id = $1 AND id = $2', [
        ws.id,
        job.payload.deliveryId,
      ]);
      expect(row.claim_job).toBe('999999999');
      expect(receiver.receipts).toHaveLength(0);
    } finally {
      await api.ds.query('DELETE FROM webhooks WHERE workspace_id = $1', [ws.id]);
      await receiver.close();
    }
  });
});
