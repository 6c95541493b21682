import pg from 'pg';
import { DataSource } from 'typeorm';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { createRole } from '#identity/roles.js';
import { RECORD_OBJECTS, type ObjectPermissions } from '#database/entities/role.entity.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { benchDatabaseUrl, ensureBenchDatabase } from './seed.js';
import { startApi, stopChild } from './children.js';
import { figures, figuresLine, type Figures } from './tenant-figures.js';

/**
 * `npm run bench -- --schema-churn`: another tenant's GraphQL query while one workspace
 * makes the records API build schema after schema (docs/benchmark.md, "GraphQL schemas
 * under churn"; docs/decisions/0052-graphql-schemas-bounded-in-bytes.md). The attacker's
 * workspace has 300 custom fields on companies; it loops "edit one field's label, send one
 * GraphQL query" (a new data-model version each round), then sends queries with 48 keys
 * whose roles each hide another field. The victim, in another workspace, sends a simple
 * query on 4 connections throughout; its p50/p99 are printed alone, under each churn, and
 * the records API (launcher heap bound) must still be alive at the end.
 */

const FIELDS = 300;
const ROLES = 48;
const DURATION_S = Number(process.env.BENCH_DURATION) || 10;
const VICTIM_CONNECTIONS = 4;
const log = (m: string) => console.log(m);

const victim = (base: string, key: string): Promise<Figures> =>
  figures({
    url: `${base}/graphql`,
    method: 'POST',
    connections: VICTIM_CONNECTIONS,
    duration: DURATION_S,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: '{ companies(first: 10) { edges { node { id name } } } }' }),
  });

/** Runs `round` in a loop until `stop` is set; counts the rounds and their failures. */
async function loop(round: (i: number) => Promise<boolean>, stop: { done: boolean }): Promise<{ rounds: number; failed: number }> {
  let rounds = 0;
  let failed = 0;
  while (!stop.done) {
    const ok = await round(rounds).catch(() => false);
    rounds++;
    if (!ok) failed++;
  }
  return { rounds, failed };
}

export async function schemaChurnBench(): Promise<void> {
  const { url } = await resolveDatabaseUrl(log);
  const benchUrl = benchDatabaseUrl(url, 'records_bench_schemas');
  await ensureBenchDatabase(benchUrl);
  const ds = await new DataSource(dataSourceOptions(benchUrl, 4)).initialize();
  await runMigrations(ds);
  const pool = new pg.Pool({ connectionString: benchUrl, max: 2 });
  await pool.query('TRUNCATE workspaces, users CASCADE');
  const keyOf = async (workspaceId: string, roleName: string) =>
    (
      await createApiKey(ds, {
        workspaceId,
        role: await findRole(ds, workspaceId, roleName),
        name: roleName,
        expiresAt: new Date(Date.now() + 86_400_000),
      })
    ).secret;
  const attacker = await createWorkspace(ds, 'Schema churn');
  await pool.query(
    `INSERT INTO custom_fields (workspace_id, object, name, label, type, created_at)
     SELECT $1, 'companies', 'f' || i, 'Field ' || i, 'TEXT', now() + i * interval '1 ms' FROM generate_series(1, ${FIELDS}) i`,
    [attacker.id],
  );
  await pool.query('UPDATE workspaces SET data_model_version = data_model_version + 1 WHERE id = $1', [attacker.id]);
  const field = (await pool.query(`SELECT id FROM custom_fields WHERE workspace_id = $1 AND name = 'f1'`, [attacker.id])).rows[0].id;
  const adminKey = await keyOf(attacker.id, 'Admin');
  const every = Object.fromEntries(
    RECORD_OBJECTS.map((o) => [o, { read: true, create: true, update: true, delete: true }]),
  ) as ObjectPermissions;
  const roleKeys: string[] = [];
  for (let i = 1; i <= ROLES; i++) {
    const role = await createRole(ds, attacker.id, {
      name: `hides f${i}`,
      description: '',
      objectPermissions: every,
      fieldPermissions: { companies: { [`f${i}`]: { read: false, update: false } } },
      settingsPermissions: [],
      assignableToUsers: true,
      assignableToApiKeys: true,
    });
    roleKeys.push(
      (await createApiKey(ds, { workspaceId: attacker.id, role, name: `k${i}`, expiresAt: new Date(Date.now() + 86_400_000) })).secret,
    );
  }
  const other = await createWorkspace(ds, 'Schema churn victim');
  await pool.query(`INSERT INTO companies (workspace_id, name) SELECT $1, 'Company ' || i FROM generate_series(1, 100) i`, [other.id]);
  const victimKey = await keyOf(other.id, 'Admin');
  await pool.end();
  await ds.destroy();

  const { child, port } = await startApi({ DATABASE_URL: benchUrl, LOG_LEVEL: 'error', WEBHOOKS_WORKER: 'off', IMPORTS_WORKER: 'off' });
  const base = `http://127.0.0.1:${port}`;
  const post = (path: string, key: string, method: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    await victim(base, victimKey); // warm-up
    const alone = await victim(base, victimKey);
    const labels = { done: false };
    const labelRounds = loop(async (i) => {
      const edit = await post(`/rest/metadata/fields/${field}`, adminKey, 'PATCH', { label: `Label ${i}` });
      const query = await post('/graphql', adminKey, 'POST', { query: '{ companies(first: 1) { edges { node { id f1 } } } }' });
      return edit.ok && query.ok;
    }, labels);
    const underLabels = await victim(base, victimKey);
    labels.done = true;
    const labelLoop = await labelRounds;
    const roles = { done: false };
    const roleRounds = loop(async (i) => {
      const n = (i % ROLES) + 1;
      const res = await post('/graphql', roleKeys[n - 1], 'POST', { query: `{ companies(first: 1) { edges { node { id f${n} } } } }` });
      return res.ok;
    }, roles);
    const underRoles = await victim(base, victimKey);
    roles.done = true;
    const roleLoop = await roleRounds;
    const show = (label: string, f: Figures) => log(figuresLine(label, f, 46));
    log(`GraphQL schemas under churn: another tenant's query, ${VICTIM_CONNECTIONS} connections, ${DURATION_S} s each`);
    show('alone', alone);
    show(`while one workspace edits a label + queries`, underLabels);
    log(`    (${labelLoop.rounds} rounds: ${labelLoop.rounds} data-model versions, ${labelLoop.failed} failed)`);
    show(`while 48 restricted roles query in turn`, underRoles);
    log(`    (${roleLoop.rounds} queries, ${roleLoop.failed} failed)`);
    log(`  records API ${exited ? 'EXITED' : 'still running'}`);
  } finally {
    await stopChild(child);
  }
}
