import type { INestApplication } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import pg from 'pg';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { fingerprint } from '../apps/records-api/src/http/idempotency.js';
import { hashSecret } from '#identity/secrets.js';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { allPermissions, expectError, keyWithRole, type Http } from './rest-helpers.js';

/** README.md, Operations Idempotency-Key (Stripe semantics) on /rest writes and GraphQL mutations. */
describe('Idempotency-Key', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let ws: TestWorkspace;
  let n = 0;
  const newKey = () => `key-${process.pid}-${Date.now()}-${n++}`;

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
    ws = await newWorkspace(ds, 'idem');
  });
  afterAll(() => app.close());

  const auth = () => ({ Authorization: `Bearer ${ws.keys.Admin}` });
  const post = (path: string, body: unknown, key?: string, secret = ws.keys.Admin) => {
    const r = request(http)
      .post(path)
      .set({ Authorization: `Bearer ${secret}` });
    return (key === undefined ? r : r.set('Idempotency-Key', key)).send(body as object);
  };
  const companiesNamed = async (name: string, workspaceId = ws.id) =>
    (await ds.query('SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1 AND name = $2', [workspaceId, name]))[0].n as number;

  it('replays the first response to a retry, with Idempotent-Replayed, and writes once', async () => {
    const key = newKey();
    const first = await post('/rest/companies', { name: 'Idem One' }, key);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post('/rest/companies', { name: 'Idem One' }, key);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(again.body).toEqual(first.body);
    expect(await companiesNamed('Idem One')).toBe(1);
  });

  it('20 concurrent retries of one create make one record (each gets the answer, a replay, or 409 in use)', async () => {
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('/rest/companies', { name: 'Idem Storm' }, key)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    for (const a of answers) {
      if (a.status === 409) expectError(a, 409, 'IDEMPOTENCY_KEY_IN_USE');
      else expect(a.status).toBe(201);
    }
    const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.body.data.createCompany.id));
    expect(ids.size).toBe(1);
    expect(await companiesNamed('Idem Storm')).toBe(1);
  });

  it('refuses the same key with another body, path or method: 422 IDEMPOTENCY_KEY_REUSED, nothing written', async () => {
    const key = newKey();
    expect((await post('/rest/companies', { name: 'Idem Two' }, key)).status).toBe(201);
    expect(expectError(await post('/rest/companies', { name: 'Idem Two b' }, key), 422, 'IDEMPOTENCY_KEY_REUSED')).toMatch(
      /another method, path or body/,
    );
    expectError(await post('/rest/people', { name: { firstName: 'x' } }, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await companiesNamed('Idem Two b')).toBe(0);
  });

  it('checks the key: 1–255 printable ASCII characters, else 400 INVALID_IDEMPOTENCY_KEY', async () => {
    for (const bad of ['x'.repeat(256), 'tab\there', '']) {
      const res = await post('/rest/companies', { name: 'Idem Bad' }, bad);
      expect(expectError(res, 400, 'INVALID_IDEMPOTENCY_KEY')).toMatch(/1 to 255 printable ASCII/);
    }
    expect((await post('/rest/companies', { name: 'Idem Ok' }, 'x'.repeat(255))).status).toBe(201);
    expect(await companiesNamed('Idem Bad')).toBe(0);
  });

  it('keeps keys per workspace, and keeps 4xx answers (a bad request stays bad on retry)', async () => {
    const key = newKey();
    const other = await newWorkspace(ds, 'idem-other');
    expect((await post('/rest/companies', { name: 'Idem Ws' }, key)).status).toBe(201);
    expect((await post('/rest/companies', { name: 'Idem Ws' }, key, other.keys.Admin)).status).toBe(201);
    expect(await companiesNamed('Idem Ws', other.id)).toBe(1);

    const badKey = newKey();
    const refused = await post('/rest/companies', { domainName: { primaryLinkUrl: 'x.com' } }, badKey);
    expectError(refused, 400, 'VALIDATION_FAILED');
    const replay = await post('/rest/companies', { domainName: { primaryLinkUrl: 'x.com' } }, badKey);
    expect(replay.status).toBe(400);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    // The first response, byte for byte: its requestId names the request that ran.
    expect(replay.body).toEqual(refused.body);
  });

  it("keeps keys per credential: a Viewer repeating an Admin's key neither gets the Admin's answer nor leaves it a 403", async () => {
    // Issue 18: keys were per workspace and replayed before the permission check.
    const key = newKey();
    const admin = await post('/rest/companies', { name: 'Idem Cred' }, key);
    expect(admin.status).toBe(201);
    const viewer = await post('/rest/companies', { name: 'Idem Cred' }, key, ws.keys.Viewer);
    expectError(viewer, 403, 'FORBIDDEN');
    expect(viewer.headers['idempotent-replayed']).toBeUndefined();
    expect(await companiesNamed('Idem Cred')).toBe(1);

    // The other way round: a Viewer's 403 is not kept, so the Admin's request with that key runs.
    const key2 = newKey();
    expectError(await post('/rest/companies', { name: 'Idem Cred 2' }, key2, ws.keys.Viewer), 403, 'FORBIDDEN');
    const retried = await post('/rest/companies', { name: 'Idem Cred 2' }, key2, ws.keys.Viewer);
    expectError(retried, 403, 'FORBIDDEN');
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    const afterViewer = await post('/rest/companies', { name: 'Idem Cred 2' }, key2);
    expect(afterViewer.status).toBe(201);
    expect(afterViewer.headers['idempotent-replayed']).toBeUndefined();
    expect(await companiesNamed('Idem Cred 2')).toBe(1);

    // Two credentials of one workspace sending one key each create their own record (ids are derived per credential too).
    const key3 = newKey();
    const second = await keyWithRole(ds, ws.id, `idem-second-${n}`, allPermissions());
    expect((await post('/rest/companies', { name: 'Idem Cred 3' }, key3)).status).toBe(201);
    expect((await post('/rest/companies', { name: 'Idem Cred 3' }, key3, second.secret)).status).toBe(201);
    expect(await companiesNamed('Idem Cred 3')).toBe(2);
    const rows = await ds.query('SELECT status FROM idempotency_keys WHERE workspace_id = $1 AND key = $2', [ws.id, key2]);
    expect(rows).toEqual([{ status: 201 }]);
  });

  it('answers 400 for a JSON body nested deeper than the limit, with or without a key (no 500)', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    for (const key of [newKey(), undefined]) {
      let r = request(http).post('/rest/companies').set(auth()).set('Content-Type', 'application/json');
      if (key) r = r.set('Idempotency-Key', key);
      const res = await r.send(deep);
      expectError(res, 400, 'INVALID_JSON');
      expect(res.body.messages[0]).toMatch(/nests deeper than 64 levels/);
    }
    const deepObject = `{"name":"x","domainName":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const res = await request(http)
      .post('/rest/companies')
      .set(auth())
      .set('Idempotency-Key', newKey())
      .set('Content-Type', 'application/json')
      .send(deepObject);
    expectError(res, 400, 'INVALID_JSON');
  });

  it('works for PATCH and DELETE, and for batch creates', async () => {
    const created = (await post('/rest/companies', { name: 'Idem Patch' })).body.data.createCompany;
    const key = newKey();
    const patch = () =>
      request(http).patch(`/rest/companies/${created.id}`).set(auth()).set('Idempotency-Key', key).send({ name: 'Idem Patched' });
    const p1 = await patch();
    const p2 = await patch();
    expect(p1.status).toBe(200);
    expect(p2.headers['idempotent-replayed']).toBe('true');
    expect(p2.body).toEqual(p1.body);

    const delKey = newKey();
    const del = () => request(http).delete(`/rest/companies/${created.id}`).set(auth()).set('Idempotency-Key', delKey);
    expect((await del()).status).toBe(200);
    const d2 = await del();
    expect(d2.status).toBe(200); // not 404: the first answer again
    expect(d2.headers['idempotent-replayed']).toBe('true');

    const batchKey = newKey();
    const batch = [{ name: 'Idem Batch' }, { name: 'Idem Batch' }];
    expect((await post('/rest/batch/companies', batch, batchKey)).status).toBe(201);
    expect((await post('/rest/batch/companies', batch, batchKey)).headers['idempotent-replayed']).toBe('true');
    expect(await companiesNamed('Idem Batch')).toBe(2);
  });

  it('answers 409 IDEMPOTENCY_KEY_IN_USE while the first request runs, then replays it', async () => {
    const server: Server = createServer(app.getHttpAdapter().getInstance());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const locker = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await locker.connect();
    try {
      const key = newKey();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE companies IN EXCLUSIVE MODE');
      const first = request(base)
        .post('/rest/companies')
        .set(auth())
        .set('Idempotency-Key', key)
        .send({ name: 'Idem Slow' })
        .then((r) => r);
      await new Promise((r) => setTimeout(r, 300));
      const busy = await request(base).post('/rest/companies').set(auth()).set('Idempotency-Key', key).send({ name: 'Idem Slow' });
      expectError(busy, 409, 'IDEMPOTENCY_KEY_IN_USE');
      await locker.query('COMMIT');
      expect((await first).status).toBe(201);
      const replay = await request(base).post('/rest/companies').set(auth()).set('Idempotency-Key', key).send({ name: 'Idem Slow' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(await companiesNamed('Idem Slow')).toBe(1);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
      await new Promise((r) => server.close(r));
    }
  });

  it('an upsert with a key updates the record its unique values match (the key gives no id to an upsert)', async () => {
    const email = `idem-upsert-${n++}@example.com`;
    const made = await post('/rest/people', { name: { firstName: 'Ada' }, emails: { primaryEmail: email } });
    expect(made.status).toBe(201);
    const id = made.body.data.createPerson.id;
    const key = newKey();
    const upserted = await post(
      '/rest/people?upsert=true',
      { name: { firstName: 'Ada', lastName: 'Lovelace' }, emails: { primaryEmail: email } },
      key,
    );
    expect(upserted.status).toBe(200);
    expect(upserted.body.data.createPerson).toMatchObject({ id, name: { firstName: 'Ada', lastName: 'Lovelace' } });
    expect(upserted.body.meta).toEqual({ created: [], updated: [id] });
    // A batch upsert with a key: one match updated, one new record made.
    const other = `idem-upsert-${n++}@example.com`;
    const batch = await post(
      '/rest/batch/people?upsert=true',
      [
        { name: { firstName: 'Ada', lastName: 'King' }, emails: { primaryEmail: email } },
        { name: { firstName: 'Grace' }, emails: { primaryEmail: other } },
      ],
      newKey(),
    );
    expect(batch.status).toBe(200);
    expect(batch.body.data.createPeople[0]).toMatchObject({ id, name: { lastName: 'King' } });
    expect(batch.body.meta.updated).toEqual([id]);
    expect(batch.body.meta.created).toEqual([batch.body.data.createPeople[1].id]);
    // The same upsert retried with its key is a replay.
    const replay = await post(
      '/rest/people?upsert=true',
      { name: { firstName: 'Ada', lastName: 'Lovelace' }, emails: { primaryEmail: email } },
      key,
    );
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(upserted.body);

    // An upsert that created (nothing to match: a company without a domain) and whose instance
    // died before keeping the answer: the retry taking the key over finds that record by the
    // derived id and updates it; no second company.
    const diedKey = newKey();
    const created = await post('/rest/companies?upsert=true', { name: 'Idem Upsert Orphan' }, diedKey);
    expect(created.status).toBe(201);
    await ds.query(
      `UPDATE idempotency_keys SET status = NULL, body = NULL, locked_until = now() - interval '1 second' WHERE workspace_id = $1 AND key = $2`,
      [ws.id, diedKey],
    );
    const retried = await post('/rest/companies?upsert=true', { name: 'Idem Upsert Orphan' }, diedKey);
    expect(retried.status).toBe(200);
    expect(retried.body.data.createCompany.id).toBe(created.body.data.createCompany.id);
    expect(retried.body.meta).toEqual({ created: [], updated: [created.body.data.createCompany.id] });
    expect(await companiesNamed('Idem Upsert Orphan')).toBe(1);
  });

  it('lets a retry take over a key whose first request died (lease over): the create is made once and the retry gets it', async () => {
    const key = newKey();
    const body = { name: 'Idem Orphan' };
    // An instance SIGKILLed after its INSERT committed, before it kept the response.
    const first = await post('/rest/companies', body, key);
    expect(first.status).toBe(201);
    await ds.query(
      `UPDATE idempotency_keys SET status = NULL, body = NULL, locked_until = now() - interval '1 second' WHERE workspace_id = $1 AND key = $2`,
      [ws.id, key],
    );
    const retry = await post('/rest/companies', body, key);
    // The derived id exists: no second record, and the retry gets the record its first run made.
    expect(retry.status).toBe(201);
    expect(retry.body.data.createCompany).toMatchObject({ id: first.body.data.createCompany.id, name: 'Idem Orphan' });
    expect(await companiesNamed('Idem Orphan')).toBe(1);
    // Kept now: the next retry is a replay of that answer.
    const replay = await post('/rest/companies', body, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(retry.body);

    // A batch whose first run committed: every record back, in order, none made twice.
    const batchKey = newKey();
    const batch = [{ name: 'Idem Orphan B1' }, { name: 'Idem Orphan B2' }];
    const made = await post('/rest/batch/companies', batch, batchKey);
    expect(made.status).toBe(201);
    await ds.query(
      `UPDATE idempotency_keys SET status = NULL, body = NULL, locked_until = now() - interval '1 second' WHERE workspace_id = $1 AND key = $2`,
      [ws.id, batchKey],
    );
    const batchRetry = await post('/rest/batch/companies', batch, batchKey);
    expect(batchRetry.status).toBe(201);
    expect(batchRetry.body.data.createCompanies.map((c: { id: string }) => c.id)).toEqual(
      made.body.data.createCompanies.map((c: { id: string }) => c.id),
    );
    expect(await companiesNamed('Idem Orphan B1')).toBe(1);
    expect(await companiesNamed('Idem Orphan B2')).toBe(1);

    // A key whose earlier answer was kept and then expired (24 h) is a new key: the record of the
    // old request is not handed out as this one's (its id is taken: 409).
    const oldKey = newKey();
    expect((await post('/rest/companies', { name: 'Idem Expired' }, oldKey)).status).toBe(201);
    await ds.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE workspace_id = $1 AND key = $2`, [
      ws.id,
      oldKey,
    ]);
    expectError(await post('/rest/companies', { name: 'Idem Expired again' }, oldKey), 409, 'CONFLICT');
    expect(await companiesNamed('Idem Expired again')).toBe(0);

    // A lease still running is not taken over.
    const key2 = newKey();
    await ds.query(
      `INSERT INTO idempotency_keys (workspace_id, credential, key, fingerprint, method, path, locked_until)
       VALUES ($1, (SELECT 'apiKey:' || id FROM api_keys WHERE secret_hash = $4), $2, $3, 'POST', '/rest/companies', now() + interval '1 minute')`,
      [ws.id, key2, fingerprint('POST', '/rest/companies', body), hashSecret(ws.keys.Admin)],
    );
    expectError(await post('/rest/companies', body, key2), 409, 'IDEMPOTENCY_KEY_IN_USE');
  });

  describe('GraphQL mutations', () => {
    const gql = (query: string, variables: unknown, key?: string) => {
      const r = request(http).post('/graphql').set(auth());
      return (key === undefined ? r : r.set('Idempotency-Key', key)).send({ query, variables });
    };
    const CREATE = 'mutation($data: CompanyCreateInput!) { createCompany(data: $data) { id name } }';

    it('replays a mutation to a retry and creates once; another body is 422; queries ignore the key', async () => {
      const key = newKey();
      const first = await gql(CREATE, { data: { name: 'Idem GQL' } }, key);
      expect(first.status).toBe(200);
      expect(first.body.data.createCompany.name).toBe('Idem GQL');
      const again = await gql(CREATE, { data: { name: 'Idem GQL' } }, key);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.data).toEqual(first.body.data);
      expect(await companiesNamed('Idem GQL')).toBe(1);

      const reused = await gql(CREATE, { data: { name: 'Idem GQL 2' } }, key);
      expect(reused.status).toBe(422);
      expect(reused.body.errors[0].extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
      expect(await companiesNamed('Idem GQL 2')).toBe(0);

      const bad = await gql(CREATE, { data: { name: 'Idem GQL 3' } }, 'é');
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].extensions.code).toBe('INVALID_IDEMPOTENCY_KEY');

      const q1 = await gql('{ companies(first: 1) { totalCount } }', {}, key);
      expect(q1.status).toBe(200);
      expect(q1.headers['idempotent-replayed']).toBeUndefined();
    });

    const diedBeforeKeeping = (key: string) =>
      ds.query(
        `UPDATE idempotency_keys SET status = NULL, body = NULL, locked_until = now() - interval '1 second' WHERE workspace_id = $1 AND key = $2`,
        [ws.id, key],
      );

    it('a retry taking over the key of a mutation whose first run died after committing gets its records, not copies', async () => {
      const key = newKey();
      const first = await gql(CREATE, { data: { name: 'Idem GQL Orphan' } }, key);
      expect(first.status).toBe(200);
      await diedBeforeKeeping(key);
      const retry = await gql(CREATE, { data: { name: 'Idem GQL Orphan' } }, key);
      expect(retry.body.errors).toBeUndefined();
      expect(retry.body.data.createCompany).toEqual(first.body.data.createCompany);
      expect(await companiesNamed('Idem GQL Orphan')).toBe(1);

      // Two aliased creates and a batch in one mutation: each field gets its own ids.
      const MANY = `mutation($a: CompanyCreateInput!, $b: CompanyCreateInput!, $list: [CompanyCreateInput!]!) {
        a: createCompany(data: $a) { id } b: createCompany(data: $b) { id } list: createCompanies(data: $list) { id } }`;
      const vars = { a: { name: 'Idem GQL A' }, b: { name: 'Idem GQL B' }, list: [{ name: 'Idem GQL L1' }, { name: 'Idem GQL L2' }] };
      const manyKey = newKey();
      const made = await gql(MANY, vars, manyKey);
      expect(made.body.errors).toBeUndefined();
      const ids = [made.body.data.a.id, made.body.data.b.id, ...made.body.data.list.map((c: { id: string }) => c.id)];
      expect(new Set(ids).size).toBe(4);
      await diedBeforeKeeping(manyKey);
      const again = await gql(MANY, vars, manyKey);
      expect(again.body.errors).toBeUndefined();
      expect(again.body.data).toEqual(made.body.data);
      for (const name of ['Idem GQL A', 'Idem GQL B', 'Idem GQL L1', 'Idem GQL L2']) expect(await companiesNamed(name)).toBe(1);

      // An upsert mutation with a key matches by domain as without one.
      const domain = `https://idem-gql-${n++}.example.com`;
      const UPSERT = 'mutation($data: CompanyCreateInput!) { createCompany(data: $data, upsert: true) { id name } }';
      const base = await gql(UPSERT, { data: { name: 'Idem GQL Up', domainName: { primaryLinkUrl: domain } } });
      const up = await gql(UPSERT, { data: { name: 'Idem GQL Up 2', domainName: { primaryLinkUrl: domain } } }, newKey());
      expect(up.body.errors).toBeUndefined();
      expect(up.body.data.createCompany).toEqual({ id: base.body.data.createCompany.id, name: 'Idem GQL Up 2' });
    });
  });
});
