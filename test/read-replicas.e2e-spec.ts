import pg from 'pg';
import request from 'supertest';
import { ReadRouter } from '#database/read-routing.js';
import { startReplicaPair, type ReplicaPair } from '../bench/replica-pair.js';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';

/**
 * README.md, Operations "Read replicas"; docs/decisions/0037-read-replicas.md. A real
 * primary and streaming replica from the embedded binaries (bench/replica-pair.ts), the
 * replica held 2 s behind (`recovery_min_apply_delay`). Instances a and b read replicas up
 * to 60 s behind (so the replica is used while it lags), c only up to 500 ms.
 */
const DELAY_MS = 2000;

type Api = Awaited<ReturnType<typeof startApi>>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const router = (api: Api) => api.app.get(ReadRouter);

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

describe('read replicas', () => {
  let pair: ReplicaPair;
  let a: Api;
  let b: Api;
  let c: Api;
  let ws: TestWorkspace;
  const previous = { ...process.env };

  beforeAll(async () => {
    pair = await startReplicaPair({ applyDelayMs: DELAY_MS });
    process.env.DATABASE_URL = pair.primaryUrl;
    process.env.DATABASE_READ_URL = pair.replicaUrl;
    process.env.READ_REPLICA_MAX_LAG_MS = '60000';
    a = await startApi();
    b = await startApi();
    process.env.READ_REPLICA_MAX_LAG_MS = '500';
    c = await startApi();
    process.env = { ...previous };
    ws = await newWorkspace(a.ds, 'replica');
    // Each instance starts polling the replica with its first routed read.
    for (const api of [a, b, c]) expect((await request(api.http).get('/rest/companies').set(bearer(ws.keys.Viewer))).status).toBe(200);
    // The workspace and its keys reach the replica DELAY_MS later; until then it is "behind" too.
    await until('instance b uses the replica', () => router(b).status()[0].usable, 30_000);
    await sleep(DELAY_MS + 500);
  }, 60_000);

  afterAll(async () => {
    for (const api of [a, b, c]) await api?.app.close();
    await pair?.stop();
    process.env = previous;
  });

  const create = async (name: string) => {
    const res = await request(a.http).post('/rest/companies').set(bearer(ws.keys.Admin)).send({ name });
    expect(res.status).toBe(201);
    return res.body.data.createCompany as { id: string; name: string };
  };

  it('a credential reads its own write at once on another instance through the lagging replica; another credential reads the replica', async () => {
    const before = router(b).served.replica;
    const company = await create('Written on a');

    // The writer, on b at once: REST get and list, GraphQL, MCP.
    const got = await request(b.http).get(`/rest/companies/${company.id}`).set(bearer(ws.keys.Admin));
    expect(got.status).toBe(200);
    expect(got.body.data.company.name).toBe('Written on a');
    const listed = await request(b.http)
      .get('/rest/companies')
      .query({ filter: `id[eq]:${company.id}` })
      .set(bearer(ws.keys.Admin));
    expect(listed.status).toBe(200);
    expect(listed.body.data.companies.map((r: { id: string }) => r.id)).toEqual([company.id]);
    const gql = await request(b.http)
      .post('/graphql')
      .set(bearer(ws.keys.Admin))
      .send({ query: `{ company(filter: { id: { eq: "${company.id}" } }) { name } }` });
    expect(gql.body).toEqual({ data: { company: { name: 'Written on a' } } });
    const mcp = await request(b.http)
      .post('/mcp')
      .set(bearer(ws.keys.Admin))
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_company', arguments: { id: company.id } } });
    expect(mcp.body.result.isError).toBeFalsy();
    expect(mcp.body.result.structuredContent.company.name).toBe('Written on a');

    // Another credential of the workspace (it wrote nothing) reads the replica, 2 s behind: not there yet, on every surface.
    const stale = await request(b.http).get(`/rest/companies/${company.id}`).set(bearer(ws.keys.Viewer));
    expect(stale.status).toBe(404);
    const staleGql = await request(b.http)
      .post('/graphql')
      .set(bearer(ws.keys.Viewer))
      .send({ query: `{ company(filter: { id: { eq: "${company.id}" } }) { name } }` });
    expect(staleGql.body.data?.company ?? null).toBeNull();
    const staleList = await request(b.http)
      .get('/rest/companies')
      .query({ filter: `id[eq]:${company.id}` })
      .set(bearer(ws.keys.Viewer));
    expect(staleList.body.data.companies).toEqual([]);
    expect(router(b).served.replica).toBeGreaterThan(before);

    // Once the replica has replayed it, the other credential sees it too.
    await until('the replica has the record', async () => {
      const res = await request(b.http).get(`/rest/companies/${company.id}`).set(bearer(ws.keys.Viewer));
      return res.status === 200;
    });
  });

  it('many reads at once right after a write all see it; another workspace and no credential get nothing', async () => {
    const company = await create('Read by many');
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => request(b.http).get(`/rest/companies/${company.id}`).set(bearer(ws.keys.Admin))),
    );
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
    // Another workspace's credential, through the same routing: the id behaves as missing.
    const other = await newWorkspace(a.ds, 'replica-other');
    expect((await request(b.http).get(`/rest/companies/${company.id}`).set(bearer(other.keys.Admin))).status).toBe(404);
    const otherList = await request(b.http).get('/rest/companies').set(bearer(other.keys.Admin));
    expect(otherList.status).toBe(200);
    expect(otherList.body.data.companies).toEqual([]);
    expect((await request(b.http).get(`/rest/companies/${company.id}`)).status).toBe(401);
    // Its writes do not move this workspace's positions: one row per credential that wrote.
    const [{ n }] = await a.ds.query('SELECT count(*)::int AS n FROM read_your_writes WHERE workspace_id = $1', [other.id]);
    expect(n).toBe(0);
  });

  it('holds the answer to a write until its position is kept (the position row locked: no answer yet; released: answered, and read back)', async () => {
    const company = await create('Held');
    const lock = new pg.Client({ connectionString: pair.primaryUrl });
    await lock.connect();
    try {
      await lock.query('BEGIN');
      const locked = await lock.query('SELECT 1 FROM read_your_writes WHERE workspace_id = $1 FOR UPDATE', [ws.id]);
      expect(locked.rowCount).toBeGreaterThan(0);
      let answered = false;
      const patch = request(a.http)
        .patch(`/rest/companies/${company.id}`)
        .set(bearer(ws.keys.Admin))
        .send({ name: 'Held back' })
        .then((res) => {
          answered = true;
          return res;
        });
      await sleep(700);
      expect(answered).toBe(false);
      // The write itself has committed meanwhile: only its answer waits.
      const [row] = await a.ds.query('SELECT name FROM companies WHERE workspace_id = $1 AND id = $2', [ws.id, company.id]);
      expect(row.name).toBe('Held back');
      await lock.query('COMMIT');
      expect((await patch).status).toBe(200);
      const read = await request(b.http).get(`/rest/companies/${company.id}`).set(bearer(ws.keys.Admin));
      expect(read.body.data.company.name).toBe('Held back');
    } finally {
      await lock.end();
    }
  });

  it('an update and a delete on one instance are read back at once on the other', async () => {
    const company = await create('Before');
    const patched = await request(a.http).patch(`/rest/companies/${company.id}`).set(bearer(ws.keys.Admin)).send({ name: 'After' });
    expect(patched.status).toBe(200);
    const read = await request(b.http).get(`/rest/companies/${company.id}`).set(bearer(ws.keys.Admin));
    expect(read.body.data.company.name).toBe('After');
    expect((await request(a.http).delete(`/rest/companies/${company.id}`).set(bearer(ws.keys.Admin))).status).toBe(200);
    expect((await request(b.http).get(`/rest/companies/${company.id}`).set(bearer(ws.keys.Admin))).status).toBe(404);
    // A GraphQL mutation's own answer is read after its write, on the same instance.
    const made = await request(b.http)
      .post('/graphql')
      .set(bearer(ws.keys.Admin))
      .send({ query: 'mutation { createCompany(data: { name: "By GraphQL" }) { id name } }' });
    expect(made.body.data.createCompany.name).toBe('By GraphQL');
    const again = await request(a.http).get(`/rest/companies/${made.body.data.createCompany.id}`).set(bearer(ws.keys.Admin));
    expect(again.status).toBe(200);
  });

  it('skips a replica further behind than READ_REPLICA_MAX_LAG_MS', async () => {
    // Writes keep coming, so the replica is ~2 s behind the primary's latest position.
    let writing = true;
    const writer = (async () => {
      while (writing) {
        await create('Steady');
        await sleep(100);
      }
    })();
    try {
      await until('instance c sees the replica lag past 500 ms', () => !router(c).status()[0].usable && router(c).status()[0].up);
      expect(router(c).status()[0].lagMs).toBeGreaterThan(500);
      const company = await create('Fresh');
      const primaryBefore = router(c).served.primary;
      // The Viewer wrote nothing: on c (500 ms bound) its read goes to the primary and finds the record ...
      expect((await request(c.http).get(`/rest/companies/${company.id}`).set(bearer(ws.keys.Viewer))).status).toBe(200);
      expect(router(c).served.primary).toBeGreaterThan(primaryBefore);
      // ... while on b (60 s bound) the same read is served by the lagging replica.
      expect((await request(b.http).get(`/rest/companies/${company.id}`).set(bearer(ws.keys.Viewer))).status).toBe(404);
    } finally {
      writing = false;
      await writer;
    }
  });

  it('a replica that stops costs no errors (reads go to the primary), and is used again once it is back', async () => {
    const company = await create('Survivor');
    await until('the replica has the record', async () => {
      const res = await request(b.http).get(`/rest/companies/${company.id}`).set(bearer(ws.keys.Viewer));
      return res.status === 200;
    });
    // Reads in flight while the replica shuts down, and after: every one 200, with the record.
    const statuses: number[] = [];
    const reader = async (until: number) => {
      while (Date.now() < until) {
        const res = await request(b.http).get(`/rest/companies/${company.id}`).set(bearer(ws.keys.Viewer));
        statuses.push(res.status);
      }
    };
    const end = Date.now() + 1500;
    const readers = Promise.all([reader(end), reader(end), reader(end), reader(end)]);
    await sleep(200);
    await pair.stopReplica();
    await readers;
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(router(b).status()[0].up).toBe(false);
    // Down: every surface answers from the primary, fresh.
    const fresh = await create('While the replica is down');
    expect((await request(b.http).get(`/rest/companies/${fresh.id}`).set(bearer(ws.keys.Viewer))).status).toBe(200);
    const gql = await request(b.http)
      .post('/graphql')
      .set(bearer(ws.keys.Viewer))
      .send({ query: '{ companies(first: 1) { totalCount } }' });
    expect(gql.status).toBe(200);
    expect(gql.body.errors).toBeUndefined();

    await pair.startReplica();
    await until('instance b uses the replica again', () => router(b).status()[0].usable, 40_000);
    const replicaBefore = router(b).served.replica;
    const later = await create('After the restart');
    expect((await request(b.http).get(`/rest/companies/${later.id}`).set(bearer(ws.keys.Viewer))).status).toBe(404);
    expect(router(b).served.replica).toBeGreaterThan(replicaBefore);
    expect((await request(b.http).get(`/rest/companies/${later.id}`).set(bearer(ws.keys.Admin))).status).toBe(200);
  }, 60_000);
});
