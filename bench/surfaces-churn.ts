import pg from 'pg';
import { DataSource } from 'typeorm';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { createObject } from '#identity/objects.js';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { benchDatabaseUrl, ensureBenchDatabase } from './seed.js';
import { startApi, stopChild } from './children.js';
import { figures, figuresLine, type Figures } from './tenant-figures.js';

/**
 * `npm run bench -- --surfaces-churn`: another tenant's REST list while one workspace with
 * the most custom objects allowed (50, of 100 fields each) makes the records API build its
 * OpenAPI document and MCP tool list again and again (docs/benchmark.md, "Custom objects
 * in OpenAPI and MCP"; docs/decisions/0059-custom-objects-open-api-and-mcp.md). The
 * attacker loops "edit one field's label (a new data-model version), GET /rest/open-api,
 * POST /mcp tools/list" on 2 connections; the victim, in another workspace, lists
 * companies on 4 connections throughout. Its p50/p99 alone and under the churn are
 * printed, with the attacker's rounds, its 429s, and whether the records API (launcher
 * heap bound) is still alive at the end.
 */

const OBJECTS = 50;
const FIELDS = 99; // and each object's `name`
const TYPES = ['TEXT', 'NUMBER', 'BOOLEAN', 'DATE_TIME', 'DATE', 'LINKS', 'EMAILS', 'PHONES', 'CURRENCY', 'TEXT'];
const DURATION_S = Number(process.env.BENCH_DURATION) || 10;
const VICTIM_CONNECTIONS = 4;
const ATTACKERS = 2;
const log = (m: string) => console.log(m);

const victim = (base: string, key: string): Promise<Figures> =>
  figures({
    url: `${base}/rest/companies?limit=10`,
    connections: VICTIM_CONNECTIONS,
    duration: DURATION_S,
    headers: { authorization: `Bearer ${key}` },
  });

export async function surfacesChurnBench(): Promise<void> {
  const { url } = await resolveDatabaseUrl(log);
  const benchUrl = benchDatabaseUrl(url, 'records_bench_surfaces');
  await ensureBenchDatabase(benchUrl);
  const ds = await new DataSource(dataSourceOptions(benchUrl, 4)).initialize();
  await runMigrations(ds);
  const pool = new pg.Pool({ connectionString: benchUrl, max: 2 });
  await pool.query('TRUNCATE workspaces, users CASCADE');
  const keyOf = async (workspaceId: string) =>
    (
      await createApiKey(ds, {
        workspaceId,
        role: await findRole(ds, workspaceId, 'Admin'),
        name: 'Admin',
        expiresAt: new Date(Date.now() + 86_400_000),
      })
    ).secret;
  const attacker = await createWorkspace(ds, 'Surfaces churn');
  const actor = { userId: null, email: 'bench@example.com' };
  for (let o = 0; o < OBJECTS; o++) {
    await createObject(ds, attacker.id, actor, { nameSingular: `thing${o}`, namePlural: `things${o}` });
    await pool.query(
      `INSERT INTO custom_fields (workspace_id, object, name, label, type, created_at)
       SELECT $1, $2, 'f' || i, 'Field ' || i, ($3::text[])[1 + i % ${TYPES.length}], now() + i * interval '1 ms'
         FROM generate_series(1, ${FIELDS}) i`,
      [attacker.id, `things${o}`, TYPES],
    );
  }
  await pool.query('UPDATE workspaces SET data_model_version = data_model_version + 1 WHERE id = $1', [attacker.id]);
  const field = (
    await pool.query(`SELECT id FROM custom_fields WHERE workspace_id = $1 AND object = 'things0' AND name = 'f1'`, [attacker.id])
  ).rows[0].id;
  const attackerKey = await keyOf(attacker.id);
  const other = await createWorkspace(ds, 'Surfaces churn victim');
  await pool.query(`INSERT INTO companies (workspace_id, name) SELECT $1, 'Company ' || i FROM generate_series(1, 100) i`, [other.id]);
  const victimKey = await keyOf(other.id);
  await pool.end();
  await ds.destroy();

  const { child, port } = await startApi({ DATABASE_URL: benchUrl, LOG_LEVEL: 'error', WEBHOOKS_WORKER: 'off', IMPORTS_WORKER: 'off' });
  const base = `http://127.0.0.1:${port}`;
  const call = (path: string, method: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${attackerKey}`,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    const first = { document: 0, tools: 0 };
    let t = performance.now();
    const doc = await call('/rest/open-api', 'GET');
    const docBytes = (await doc.arrayBuffer()).byteLength;
    first.document = performance.now() - t;
    t = performance.now();
    const list = await call('/mcp', 'POST', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const listBytes = (await list.arrayBuffer()).byteLength;
    first.tools = performance.now() - t;
    await victim(base, victimKey); // warm-up
    const alone = await victim(base, victimKey);
    const stop = { done: false };
    const counts = { rounds: 0, busy: 0, failed: 0 };
    const churn = async (n: number) => {
      for (let i = n; !stop.done; i += ATTACKERS) {
        const steps = [
          await call(`/rest/metadata/fields/${field}`, 'PATCH', { label: `Label ${i}` }),
          await call('/rest/open-api', 'GET'),
          await call('/mcp', 'POST', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
        ];
        for (const res of steps) await res.arrayBuffer();
        counts.rounds++;
        if (steps.some((r) => r.status === 429)) counts.busy++;
        else if (steps.some((r) => !r.ok)) counts.failed++;
      }
    };
    const attackers = Array.from({ length: ATTACKERS }, (_, n) => churn(n).catch(() => counts.failed++));
    const under = await victim(base, victimKey);
    stop.done = true;
    await Promise.all(attackers);
    const show = (label: string, f: Figures) => log(figuresLine(label, f, 52));
    log(`Custom objects in OpenAPI and MCP under churn: ${OBJECTS} objects of ${FIELDS + 1} fields in the attacker's workspace`);
    log(
      `  first document ${Math.round(docBytes / 1024)} KB in ${Math.round(first.document)} ms; ` +
        `first tools/list ${Math.round(listBytes / 1024)} KB in ${Math.round(first.tools)} ms`,
    );
    log(`  another tenant's GET /rest/companies?limit=10, ${VICTIM_CONNECTIONS} connections, ${DURATION_S} s each:`);
    show('alone', alone);
    show(`while ${ATTACKERS} loops edit a label + document + tool list`, under);
    log(`    (${counts.rounds} rounds: ${counts.busy} answered 429, ${counts.failed} failed otherwise)`);
    log(`  records API ${exited ? 'EXITED' : 'still running'}`);
  } finally {
    await stopChild(child);
  }
}
