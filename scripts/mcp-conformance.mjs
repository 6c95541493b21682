// The official MCP conformance suite (@modelcontextprotocol/conformance) against our /mcp,
// for the scenarios that apply to a real server (docs/mcp.md). The suite sends no credentials,
// so it talks to a small proxy that adds an API key and keeps Host and Origin as sent.
//
//   node scripts/mcp-conformance.mjs <node22 binary> <conformance dist/index.js>
//
// Needs `npm run build` first. Uses DATABASE_URL, or the checkout's embedded Postgres (a
// throwaway database). Prints one line per scenario and `conformance: N passed, N failed`;
// exits non-zero when a scenario fails.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import typeorm from 'typeorm';

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'tools-call-error', 'dns-rebinding-protection'];
const [node22, conformance] = process.argv.slice(2);
if (!node22 || !conformance) {
  console.error('usage: node scripts/mcp-conformance.mjs <node 22 binary> <@modelcontextprotocol/conformance dist/index.js>');
  process.exit(2);
}

const db = await import('../dist/libs/database/src/index.js');
// Both apps in this one process: Nest's static logger at LOG_LEVEL before their modules load,
// or @nestjs/typeorm warns that the second one's data source name is taken (true only here).
const { Logger } = await import('@nestjs/common');
Logger.overrideLogger(db.logLevels(process.env.LOG_LEVEL ?? 'error'));
const { createAuthServer } = await import('../dist/apps/auth-server/src/bootstrap.js');
const { createRecordsApi } = await import('../dist/apps/records-api/src/bootstrap.js');
const accounts = await import('../dist/libs/identity/src/accounts.js');

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

process.env.LOG_LEVEL ??= 'error';
// A database of its own, thrown away after the run: a throwaway master key for it too (the
// apps refuse to start with DATABASE_URL and no VAULT_MASTER_KEY).
process.env.VAULT_MASTER_KEY ||= randomBytes(32).toString('base64');
let embedded;
let dropDatabase = async () => undefined;
if (!process.env.DATABASE_URL) {
  embedded = await db.startEmbeddedPostgres({ dataDir: db.loadConfig().dataDir, database: 'postgres' });
  const name = `conformance_${process.pid}`;
  const admin = new pg.Client({ connectionString: embedded.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  process.env.DATABASE_URL = embedded.url.replace(/\/postgres$/, `/${name}`);
  dropDatabase = async () => {
    const c = new pg.Client({ connectionString: embedded.url });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  };
}

const [apiPort, authPort, proxyPort] = [await freePort(), await freePort(), await freePort()];
// The suite's DNS-rebinding scenario checks a localhost server: PUBLIC_URL is on localhost.
Object.assign(process.env, { PORT: String(apiPort), AUTH_PORT: String(authPort), PUBLIC_URL: `http://localhost:${apiPort}` });
const auth = await createAuthServer();
await auth.listen(authPort, '127.0.0.1');
const api = await createRecordsApi();
await api.listen(apiPort, '127.0.0.1');

const ds = api.get(typeorm.DataSource);
const workspace = await accounts.createWorkspace(ds, `Conformance ${process.pid}`);
const key = await accounts.createApiKey(ds, {
  workspaceId: workspace.id,
  role: await accounts.findRole(ds, workspace.id, 'Admin'),
  name: 'conformance',
  expiresAt: new Date(Date.now() + 3600_000),
});

// Adds the bearer key; Host, Origin and everything else pass through untouched.
const proxy = createServer((req, res) => {
  const upstream = request(
    {
      host: '127.0.0.1',
      port: apiPort,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, authorization: `Bearer ${key.secret}` },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.writeHead(502).end());
  req.pipe(upstream);
});
await new Promise((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));

let passed = 0;
let failed = 0;
for (const scenario of SCENARIOS) {
  const out = mkdtempSync(join(tmpdir(), `conformance-${scenario}-`));
  const code = await new Promise((resolve) => {
    const child = spawn(
      node22,
      [conformance, 'server', '--url', `http://localhost:${proxyPort}/mcp`, '--scenario', scenario, '--output-dir', out],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    child.on('close', (c) => {
      if (c !== 0 || process.env.CONFORMANCE_VERBOSE) process.stdout.write(text);
      resolve(c);
    });
  });
  const checks = readdirSync(out, { recursive: true })
    .filter((f) => String(f).endsWith('checks.json'))
    .flatMap((f) => JSON.parse(readFileSync(join(out, String(f)), 'utf8')));
  const bad = checks.filter((c) => c.status === 'FAILURE');
  const ok = code === 0 && checks.length > 0 && bad.length === 0;
  console.log(
    `conformance ${scenario}: ${ok ? 'passed' : 'FAILED'} (${checks.length} checks${bad.length ? `; failing: ${bad.map((c) => c.id ?? c.name).join(', ')}` : ''})`,
  );
  if (ok) passed++;
  else failed++;
}

proxy.close();
await api.close();
await auth.close();
await dropDatabase();
if (embedded?.owned) await embedded.stop();
console.log(`conformance: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
