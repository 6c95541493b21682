import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { createApiKey } from '#identity/accounts.js';
import { createRole } from '#identity/roles.js';
import { RECORD_OBJECTS, type ObjectPermissions } from '#database/entities/role.entity.js';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { httpJson, spawnApp, statsOf, type AppProcess } from './processes.js';

/**
 * Per-workspace GraphQL schemas under attack (docs/graphql.md, "Schemas per workspace"),
 * in a real records API process with the launcher's heap bound (API_HEAP_MB, 160 MB): the
 * rounds below ended it with "Ineffective mark-compacts near heap limit" when every
 * data-model version and every restricted role kept a server of its own. The process
 * reports its schema builds, what its schema cache holds and its event loop's longest
 * delay over IPC (libs/ops/src/process-stats.ts); requests are not timed.
 */

const FIELDS = 300;
const ROUNDS = 47;
const ROLES = 48;
/** Smaller than the default, so that the budget test below passes it with fewer workspaces. */
const BUDGET_MB = 4;
/** Field n's selection: every sixth field is a LINKS composite. */
const select = (n: number) => ((n - 1) % 6 === 5 ? `f${n} { primaryLinkUrl }` : `f${n}`);

describe('GraphQL schemas per workspace on a real records API process', () => {
  let app: INestApplication;
  let ds: DataSource;
  let api: AppProcess;
  let ws: TestWorkspace;
  let fieldIds: string[];

  const gql = (key: string, query: string) =>
    httpJson(`${api.url}/graphql`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: { query } });

  const every = (): ObjectPermissions =>
    Object.fromEntries(RECORD_OBJECTS.map((o) => [o, { read: true, create: true, update: true, delete: true }])) as ObjectPermissions;

  beforeAll(async () => {
    ({ app, ds } = await startApi());
    ws = await newWorkspace(ds, 'gql-schemas');
    // 300 custom fields of several types on companies, as 300 creates through the API would leave them.
    await ds.query(
      `INSERT INTO custom_fields (workspace_id, object, name, label, type, options)
       SELECT $1, 'companies', 'f' || i, 'Field ' || i,
              (ARRAY['TEXT','NUMBER','BOOLEAN','DATE_TIME','SELECT','LINKS'])[1 + (i - 1) % 6],
              CASE WHEN (i - 1) % 6 = 4 THEN '[{"value":"GOLD","label":"Gold"},{"value":"SILVER","label":"Silver"}]'::jsonb END
         FROM generate_series(1, ${FIELDS}) i`,
      [ws.id],
    );
    await ds.query('UPDATE workspaces SET data_model_version = data_model_version + 1 WHERE id = $1', [ws.id]);
    fieldIds = (await ds.query(`SELECT id FROM custom_fields WHERE workspace_id = $1 ORDER BY (substr(name, 2))::int`, [ws.id])).map(
      (r: { id: string }) => r.id,
    );
    await ds.query(`INSERT INTO companies (workspace_id, name, custom) VALUES ($1, 'Acme', '{"f1": "one"}')`, [ws.id]);
    api = await spawnApp(
      'records-api',
      { NODE_OPTIONS: '--max-old-space-size=160', WEBHOOKS_WORKER: 'off', GRAPHQL_SCHEMA_CACHE_MB: String(BUDGET_MB) },
      { ipc: true },
    );
  }, 120_000);
  afterAll(async () => {
    api?.child.kill('SIGKILL');
    await app?.close();
  });

  it('47 rounds of "edit a label, send a query" build one schema per version, never a stale one, and keep the process', async () => {
    const before = await statsOf(api, 'reset');
    for (let round = 1; round <= ROUNDS; round++) {
      const label = `Label ${round}`;
      const edit = await httpJson(`${api.url}/rest/metadata/fields/${fieldIds[0]}`, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${ws.keys.Admin}` },
        body: { label },
      });
      expect(edit.status).toBe(200);
      const res = await gql(
        ws.keys.Admin,
        `{ companies(first: 1) { edges { node { id name f1 f151 } } } __type(name: "Company") { fields { name description } } }`,
      );
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.companies.edges[0].node).toMatchObject({ name: 'Acme', f1: 'one', f151: null });
      // The answer comes from the version the edit made, never an older one.
      const f1 = res.body.data.__type.fields.find((f: { name: string }) => f.name === 'f1');
      expect(f1.description).toBe(label);
    }
    const after = await statsOf(api);
    expect(api.child.exitCode).toBeNull();
    expect(after['graphqlSchemas.builds'] - before['graphqlSchemas.builds']).toBe(ROUNDS);
    // Only the current version of the workspace is kept.
    expect(after['graphqlSchemas.entries']).toBe(1);
    expect(after['graphqlSchemas.bytes']).toBeLessThanOrEqual(after['graphqlSchemas.budgetBytes']);
    expect(after['eventLoop.maxDelayMs']).toBeLessThan(1_000);
  }, 240_000);

  it('48 roles that each hide another field share one schema, and the process keeps serving', async () => {
    const keys: string[] = [];
    for (let i = 1; i <= ROLES; i++) {
      const role = await createRole(ds, ws.id, {
        name: `hides f${i}`,
        description: '',
        objectPermissions: every(),
        fieldPermissions: { companies: { [`f${i}`]: { read: false, update: false } } },
        settingsPermissions: [],
        assignableToUsers: true,
        assignableToApiKeys: true,
      });
      keys.push((await createApiKey(ds, { workspaceId: ws.id, role, name: `k${i}`, expiresAt: new Date(Date.now() + 86_400_000) })).secret);
    }
    const before = await statsOf(api, 'reset');
    for (let i = 1; i <= ROLES; i++) {
      const res = await gql(keys[i - 1], `{ companies(first: 1) { edges { node { id name ${select(i)} ${select(i + 1)} } } } }`);
      expect([res.status, res.body.errors?.[0]?.message]).toEqual([200, expect.anything()]);
      // The hidden field answers FORBIDDEN at its own path; the rest of the answer stands.
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
      expect(res.body.errors[0].path).toEqual(['companies', 'edges', 0, 'node', `f${i}`]);
      expect(res.body.data.companies.edges[0].node.name).toBe('Acme');
    }
    const after = await statsOf(api);
    expect(api.child.exitCode).toBeNull();
    expect(after['graphqlSchemas.builds'] - before['graphqlSchemas.builds']).toBeLessThanOrEqual(1);
    expect(after['graphqlSchemas.bytes']).toBeLessThanOrEqual(after['graphqlSchemas.budgetBytes']);
    expect(after['eventLoop.maxDelayMs']).toBeLessThan(1_000);
  }, 240_000);

  it('concurrent first requests after a change share one build', async () => {
    const edit = await httpJson(`${api.url}/rest/metadata/fields/${fieldIds[1]}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${ws.keys.Admin}` },
      body: { label: 'Concurrent' },
    });
    expect(edit.status).toBe(200);
    const before = await statsOf(api);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => gql(ws.keys.Admin, '{ companies(first: 1) { edges { node { f2 } } } }')),
    );
    for (const res of answers) expect(res.status).toBe(200);
    const after = await statsOf(api);
    expect(after['graphqlSchemas.builds'] - before['graphqlSchemas.builds']).toBe(1);
  }, 60_000);

  /** A workspace with `count` custom fields on companies named `prefix1`…, each labelled alike, and one company. */
  async function workspaceWithFields(prefix: string, count: number): Promise<TestWorkspace> {
    const made = await newWorkspace(ds, 'gql-schemas');
    await ds.query(
      `INSERT INTO custom_fields (workspace_id, object, name, label, type, created_at)
       SELECT $1, 'companies', $2 || i, 'Field ' || i, 'TEXT', now() + i * interval '1 ms' FROM generate_series(1, ${count}) i`,
      [made.id, prefix],
    );
    await ds.query('UPDATE workspaces SET data_model_version = data_model_version + 1 WHERE id = $1', [made.id]);
    await ds.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, 'Acme')`, [made.id]);
    return made;
  }

  it('workspaces whose custom fields are identical share one schema; another field set is its own', async () => {
    const one = await workspaceWithFields('same', 3);
    const two = await workspaceWithFields('same', 3);
    const three = await workspaceWithFields('other', 3);
    const before = await statsOf(api);
    for (const made of [one, two]) {
      const res = await gql(made.keys.Admin, '{ companies(first: 1) { edges { node { name same1 } } } }');
      expect(res.body).toEqual({ data: { companies: { edges: [{ node: { name: 'Acme', same1: null } }] } } });
    }
    const shared = await statsOf(api);
    expect(shared['graphqlSchemas.builds'] - before['graphqlSchemas.builds']).toBe(1);
    // Another workspace's fields are never in the shared schema.
    const theirs = await gql(three.keys.Admin, '{ companies(first: 1) { edges { node { same1 } } } }');
    expect(theirs.status).toBe(400);
    expect(theirs.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect((await statsOf(api))['graphqlSchemas.builds'] - shared['graphqlSchemas.builds']).toBe(1);
  }, 60_000);

  it('however many workspaces ask, what is kept stays within the byte budget and every answer is right', async () => {
    const many: TestWorkspace[] = [];
    for (let i = 0; i < 16; i++) many.push(await workspaceWithFields(`w${i}f`, 100));
    for (let round = 0; round < 2; round++) {
      for (const [i, made] of many.entries()) {
        const res = await gql(made.keys.Admin, `{ companies(first: 1) { edges { node { name w${i}f1 w${i}f100 } } } }`);
        expect(res.body).toEqual({ data: { companies: { edges: [{ node: { name: 'Acme', [`w${i}f1`]: null, [`w${i}f100`]: null } }] } } });
      }
      const stats = await statsOf(api);
      expect(stats['graphqlSchemas.budgetBytes']).toBe(BUDGET_MB * 1024 * 1024);
      expect(stats['graphqlSchemas.bytes']).toBeLessThanOrEqual(stats['graphqlSchemas.budgetBytes']);
      expect(stats['graphqlSchemas.entries']).toBeLessThan(many.length);
    }
    expect(api.child.exitCode).toBeNull();
  }, 120_000);
});
