import { deliverOnce } from '#webhooks/delivery.js';
import { webhookSettings } from '#webhooks/settings.js';
import { createWebhook } from '#webhooks/webhooks.js';
import { WorkspaceShares } from '#webhooks/workspace-shares.js';
import { newWorkspace } from './factories.js';
import { client } from './rest-helpers.js';
import { useWorkerlessApi } from './webhook-jobs.js';
import { Receiver } from './webhook-receiver.js';

/**
 * A delivery job sends the other first attempts of its workspace that wait with its own
 * (docs/webhooks.md, "How delivery works"): one claim and one outcome statement for the lot, and their
 * jobs taken off the queue, instead of four statements per event. Each event is still sent
 * once, a job is still one slot of its workspace's share, and never sends another workspace's.
 */
describe('Webhook deliveries sent together', () => {
  const api = useWorkerlessApi('wh_batch');
  const settings = () => ({ ...webhookSettings(), allowPrivate: true });

  async function deliveriesOf(
    workspaceId: string,
  ): Promise<{ status: string; attempts: number; claim_job: string | null; logged: number }[]> {
    return api.ds.query(
      `SELECT d.status, d.attempts, d.claim_job, (SELECT count(*)::int FROM webhook_attempts a WHERE a.workspace_id = d.workspace_id AND a.delivery_id = d.id) AS logged
         FROM webhook_deliveries d WHERE d.workspace_id = $1 ORDER BY d.created_at, d.id`,
      [workspaceId],
    );
  }

  /** The first run of `mine` claimed both attempts, took the other's job off the queue, and died with the POSTs out. */
  async function diedWithBothClaimed(workspaceId: string, mine: { id: string }, along: { id: string }) {
    await api.ds.query(
      `UPDATE webhook_deliveries SET claim_job = $2, claimed_until = now() + interval '40 seconds' WHERE workspace_id = $1`,
      [workspaceId, mine.id],
    );
    await api.ds.query('SELECT graphile_worker.complete_jobs(ARRAY[$1::bigint])', [along.id]);
  }

  async function withHook(label: string, names: string[]) {
    const ws = await newWorkspace(api.ds, label);
    const receiver = await new Receiver().start();
    await createWebhook(api.ds, ws.id, { url: receiver.url, operations: ['company.created'] }, { allowPrivate: true });
    const admin = client(api.http, ws.keys.Admin);
    for (const name of names) expect((await admin.post('/rest/companies', { name })).status).toBe(201);
    return { ws, receiver };
  }

  async function cleanUp(workspaceId: string, receiver: Receiver) {
    await api.ds.query('DELETE FROM webhooks WHERE workspace_id = $1', [workspaceId]);
    await receiver.close();
  }

  it("one job sends the workspace's waiting first attempts with its own, each once, and takes their jobs off the queue", async () => {
    const names = ['One', 'Two', 'Three', 'Four', 'Five'];
    const { ws, receiver } = await withHook('wh-batch', names);
    const other = await withHook('wh-batch-other', ['Elsewhere']);
    try {
      const jobs = await api.jobsOf(ws.id);
      expect(jobs).toHaveLength(5);
      await deliverOnce(api.pool, jobs[0].payload, { jobId: jobs[0].id, settings: settings(), shares: new WorkspaceShares(10) });

      expect(receiver.receipts.map((r) => r.json.data.record.name).sort()).toEqual([...names].sort());
      expect(new Set(receiver.receipts.map((r) => r.headers['webhook-id'])).size).toBe(5);
      expect(await deliveriesOf(ws.id)).toEqual(names.map(() => ({ status: 'delivered', attempts: 1, claim_job: null, logged: 1 })));
      // Only the job that ran is left (graphile-worker completes it when it returns).
      expect((await api.jobsOf(ws.id)).map((j) => j.id)).toEqual([jobs[0].id]);
      // Another workspace's waiting attempt is neither sent nor taken off the queue.
      expect(other.receiver.receipts).toHaveLength(0);
      expect(await api.jobsOf(other.ws.id)).toHaveLength(1);
      expect(await deliveriesOf(other.ws.id)).toEqual([{ status: 'pending', attempts: 0, claim_job: null, logged: 0 }]);
    } finally {
      await cleanUp(ws.id, receiver);
      await cleanUp(other.ws.id, other.receiver);
    }
  });

  it('jobs running at once each take different attempts along: every event is sent once', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `Race ${i + 1}`);
    const { ws, receiver } = await withHook('wh-batch-race', names);
    try {
      const jobs = await api.jobsOf(ws.id);
      const shares = new WorkspaceShares(10);
      // Four workers fetched a job each before any of them claimed.
      await Promise.all(jobs.slice(0, 4).map((j) => deliverOnce(api.pool, j.payload, { jobId: j.id, settings: settings(), shares })));
      // What is left on the queue runs after them, as the workers would take it.
      for (const j of await api.jobsOf(ws.id)) {
        if (jobs.slice(0, 4).some((first) => first.id === j.id)) continue;
        await deliverOnce(api.pool, j.payload, { jobId: j.id, settings: settings(), shares });
      }
      const sent = receiver.receipts.map((r) => r.json.data.record.name);
      expect(sent.sort()).toEqual([...names].sort());
      expect(await deliveriesOf(ws.id)).toEqual(names.map(() => ({ status: 'delivered', attempts: 1, claim_job: null, logged: 1 })));
    } finally {
      await cleanUp(ws.id, receiver);
    }
  });

  it('sends at most 16 together, in one slot; the rest keep their jobs', async () => {
    const names = Array.from({ length: 18 }, (_, i) => `Company ${i + 1}`);
    const { ws, receiver } = await withHook('wh-batch-most', names);
    try {
      const jobs = await api.jobsOf(ws.id);
      expect(jobs).toHaveLength(18);
      const shares = new WorkspaceShares(2);
      await deliverOnce(api.pool, jobs[0].payload, { jobId: jobs[0].id, settings: settings(), shares });
      expect(receiver.receipts).toHaveLength(16);
      // The oldest go first.
      expect(receiver.receipts.map((r) => r.json.data.record.name).sort()).toEqual(names.slice(0, 16).sort());
      expect((await deliveriesOf(ws.id)).map((d) => d.status)).toEqual([
        ...names.slice(0, 16).map(() => 'delivered'),
        'pending',
        'pending',
      ]);
      expect((await api.jobsOf(ws.id)).map((j) => j.id)).toEqual([jobs[0].id, jobs[16].id, jobs[17].id]);
      // Its one slot was given back.
      expect(shares.take(ws.id)).not.toBeNull();
    } finally {
      await cleanUp(ws.id, receiver);
    }
  });

  it('takes along no more than 1 MiB of bodies', async () => {
    const { ws, receiver } = await withHook('wh-batch-bytes', ['Big 1', 'Big 2', 'Big 3', 'Big 4', 'Big 5']);
    try {
      // Each event ~400 KB (a record with a large text field): the job's own, then two more fit.
      await api.ds.query(
        `UPDATE webhook_events SET payload = json_build_object('id', id, 'type', type, 'workspaceId', workspace_id, 'occurredAt', payload->'occurredAt',
                'data', json_build_object('record', (payload->'data'->'record')::jsonb || jsonb_build_object('notes', repeat('x', 400000))))
          WHERE workspace_id = $1`,
        [ws.id],
      );
      const jobs = await api.jobsOf(ws.id);
      await deliverOnce(api.pool, jobs[0].payload, { jobId: jobs[0].id, settings: settings(), shares: new WorkspaceShares(10) });
      expect(receiver.receipts.map((r) => r.json.data.record.name)).toEqual(expect.arrayContaining(['Big 1', 'Big 2', 'Big 3']));
      expect(receiver.receipts).toHaveLength(3);
      expect(receiver.receipts.every((r) => r.json.data.record.notes.length === 400000)).toBe(true);
      expect((await api.jobsOf(ws.id)).map((j) => j.id)).toEqual([jobs[0].id, jobs[3].id, jobs[4].id]);
    } finally {
      await cleanUp(ws.id, receiver);
    }
  });

  it('a failure among them gets its own retry; the successes are recorded', async () => {
    const { ws, receiver } = await withHook('wh-batch-fail', ['Ok', 'Broken']);
    try {
      receiver.answers = [200, 500];
      const jobs = await api.jobsOf(ws.id);
      await deliverOnce(api.pool, jobs[0].payload, { jobId: jobs[0].id, settings: settings(), shares: new WorkspaceShares(10) });
      expect(receiver.receipts).toHaveLength(2);
      const rows = await deliveriesOf(ws.id);
      expect(rows.map((r) => r.status).sort()).toEqual(['delivered', 'pending']);
      expect(rows.every((r) => r.attempts === 1 && r.logged === 1 && r.claim_job === null)).toBe(true);
      const failed = (await api.ds.query(`SELECT id FROM webhook_deliveries WHERE workspace_id = $1 AND status = 'pending'`, [ws.id]))[0];
      const left = await api.jobsOf(ws.id);
      expect(left.filter((j) => j.id !== jobs[0].id).map((j) => j.payload)).toEqual([
        { workspaceId: ws.id, deliveryId: failed.id, attempt: 2 },
      ]);
    } finally {
      await cleanUp(ws.id, receiver);
    }
  });

  it('a job run again after its process died sends what it had claimed with its own, once', async () => {
    const { ws, receiver } = await withHook('wh-batch-rerun', ['Mine', 'Taken along']);
    try {
      const [mine, along] = await api.jobsOf(ws.id);
      await diedWithBothClaimed(ws.id, mine, along);
      await deliverOnce(api.pool, mine.payload, { jobId: mine.id, settings: settings(), shares: new WorkspaceShares(10) });
      expect(receiver.receipts.map((r) => r.json.data.record.name).sort()).toEqual(['Mine', 'Taken along']);
      expect((await deliveriesOf(ws.id)).map((d) => d.status)).toEqual(['delivered', 'delivered']);
    } finally {
      await cleanUp(ws.id, receiver);
    }
  });

  it('put back over its share, a rerun job gives back every attempt it had claimed, each with a job', async () => {
    const { ws, receiver } = await withHook('wh-batch-putback', ['Mine', 'Taken along']);
    try {
      const [mine, along] = await api.jobsOf(ws.id);
      await diedWithBothClaimed(ws.id, mine, along);
      const busy = new WorkspaceShares(2);
      busy.take(ws.id);
      await deliverOnce(api.pool, mine.payload, { jobId: mine.id, settings: settings(), shares: busy });
      await api.ds.query('SELECT graphile_worker.complete_jobs(ARRAY[$1::bigint])', [mine.id]);
      expect(receiver.receipts).toHaveLength(0);
      expect((await deliveriesOf(ws.id)).map((d) => d.claim_job)).toEqual([null, null]);
      const back = await api.jobsOf(ws.id);
      expect(back).toHaveLength(2);
      for (const job of back)
        await deliverOnce(api.pool, job.payload, { jobId: job.id, settings: settings(), shares: new WorkspaceShares(10) });
      expect(receiver.receipts.map((r) => r.json.data.record.name).sort()).toEqual(['Mine', 'Taken along']);
    } finally {
      await cleanUp(ws.id, receiver);
    }
  });

  it('a job whose attempt another job sent is not put back when the share is full', async () => {
    const { ws, receiver } = await withHook('wh-batch-sent', ['First', 'Second']);
    try {
      const [first, second] = await api.jobsOf(ws.id);
      // The second job was fetched before the first took its delivery along: it still runs.
      await api.ds.query(`UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = 'elsewhere' WHERE id = $1`, [second.id]);
      await deliverOnce(api.pool, first.payload, { jobId: first.id, settings: settings(), shares: new WorkspaceShares(10) });
      expect(receiver.receipts).toHaveLength(2);
      const busy = new WorkspaceShares(2);
      busy.take(ws.id);
      await deliverOnce(api.pool, second.payload, { jobId: second.id, settings: settings(), shares: busy });
      expect((await api.jobsOf(ws.id)).map((j) => j.id).sort()).toEqual([first.id, second.id].sort());
      expect(receiver.receipts).toHaveLength(2);
    } finally {
      await api.ds.query('DELETE FROM graphile_worker._private_jobs WHERE payload->>$1 = $2', ['workspaceId', ws.id]);
      await cleanUp(ws.id, receiver);
    }
  });
});
