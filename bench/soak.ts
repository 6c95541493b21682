import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { addMember, createApiKey, createUser, createWorkspace, findRole } from '#identity/accounts.js';
import { apiNodeFlags, loadConfig, projectRoot } from '#config/config.js';
import { dataSourceOptions, runMigrations } from '#database/data-source.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '#database/embedded-postgres.js';
import { FormBrowser } from './form-browser.js';
import { startReplicaPair, type ReplicaPair } from './replica-pair.js';

/**
 * `npm run soak -- --minutes N` (README.md, Operations): two records APIs and two auth servers, each
 * started alone on one embedded Postgres; mixed traffic spread over both records APIs
 * (reads, creates and updates with Idempotency-Key and client retries on timeouts,
 * resets and 503, GraphQL, OAuth refreshes). A third of the way in one records API is
 * SIGKILLed and started again; at two thirds Postgres is stopped for 5 s. At the end:
 * every write acknowledged to a client exists exactly once, no answer was a 500.
 *
 * `--replica`: the database is a primary and a streaming read replica (bench/replica-pair.ts)
 * held REPLICA_DELAY_MS behind, both APIs read through DATABASE_READ_URL, and at two thirds
 * the replica (not the primary) is stopped for 5 s and started again. Every list read also
 * checks read-your-writes: all writes go through one API key, so a list's totalCount may
 * never be below the creates that key had acknowledged when the read was sent, and each
 * worker reads back the last company it created.
 */
const argv = process.argv.slice(2);
const minutes = Number(argv[argv.indexOf('--minutes') + 1] ?? 3) || 3;
const replicaMode = argv.includes('--replica');
/** With --replica: how far the replica is held behind (recovery_min_apply_delay), within READ_REPLICA_MAX_LAG_MS's 1 s. */
const REPLICA_DELAY_MS = 300;
const WORKERS = 8;
const REQUEST_TIMEOUT_MS = 5_000;
const ROOT = projectRoot();
const DATA_DIR = join(ROOT, '.data', 'soak');
const REDIRECT = 'http://127.0.0.1:9/callback';
const PASSWORD = 'soak password 1234';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (message: string) => process.stdout.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

// ---- processes -------------------------------------------------------------------------
interface App {
  name: string;
  entry: string;
  env: Record<string, string>;
  url: string;
  child?: ChildProcess;
}

function startApp(app: App): Promise<void> {
  const flags = app.entry === 'records-api' ? apiNodeFlags(loadConfig()) : [];
  const child = spawn(process.execPath, [...flags, join(ROOT, 'dist/apps', app.entry, 'src/main.js')], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...app.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d) => process.stderr.write(`[${app.name}] ${d}`));
  app.child = child;
  return waitReady(app.url, 30_000);
}

async function waitReady(url: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (
      (await fetch(`${url}/health/ready`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      return;
    await sleep(100);
  }
  throw new Error(`${url} not ready after ${ms} ms`);
}

// ---- statistics ------------------------------------------------------------------------
const statusCounts = new Map<string, number>();
const latencies: number[] = [];
const count = (label: string) => statusCounts.set(label, (statusCounts.get(label) ?? 0) + 1);
const events: string[] = [];
let phase = 'steady';
const perPhase = new Map<string, Map<string, number>>();

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

let rr = 0;
/**
 * One client call with the retry policy of a careful client: the same Idempotency-Key on
 * every attempt, the other instance after a failure, backoff from 100 ms to 2 s, for up
 * to 90 s. Retries on connection errors, timeouts, 503, 409 IDEMPOTENCY_KEY_IN_USE, 429.
 */
async function call(
  apis: App[],
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; form?: boolean } = {},
): Promise<Answer> {
  let instance = rr++ % apis.length;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const t = performance.now();
    let label: string;
    let answer: Answer | undefined;
    try {
      const res = await fetch(`${apis[instance].url}${path}`, {
        method: init.method ?? 'GET',
        headers: init.headers,
        body: init.body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        redirect: 'manual',
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON
      }
      answer = { status: res.status, body, headers: res.headers };
      label = String(res.status);
    } catch (err) {
      label = (err as Error).name === 'TimeoutError' ? 'timeout' : `conn:${(err as { cause?: { code?: string } }).cause?.code ?? 'error'}`;
    }
    latencies.push(performance.now() - t);
    count(label);
    const inPhase = perPhase.get(phase) ?? new Map<string, number>();
    inPhase.set(label, (inPhase.get(label) ?? 0) + 1);
    perPhase.set(phase, inPhase);
    const retry =
      !answer ||
      answer.status === 503 ||
      answer.status === 429 ||
      (answer.status === 409 && answer.body?.code === 'IDEMPOTENCY_KEY_IN_USE');
    if (!retry || Date.now() - started > 90_000) {
      if (!answer) throw new Error(`${path}: gave up after ${attempt + 1} attempts (${label})`);
      return answer;
    }
    instance = (instance + 1) % apis.length;
    await sleep(Math.min(2_000, 100 * 2 ** attempt));
  }
}

// ---- the run ---------------------------------------------------------------------------
async function main(): Promise<void> {
  rmSync(DATA_DIR, { recursive: true, force: true });
  let db: EmbeddedDatabase | undefined;
  let pair: ReplicaPair | undefined;
  // The apps get DATABASE_URL, and with it they need the vault key in their environment.
  process.env.VAULT_MASTER_KEY ||= randomBytes(32).toString('base64');
  if (replicaMode) {
    pair = await startReplicaPair({ applyDelayMs: REPLICA_DELAY_MS });
  } else db = await startEmbeddedPostgres({ dataDir: DATA_DIR, database: 'records' });
  const url = pair?.primaryUrl ?? db!.url;
  const ds = await new DataSource(dataSourceOptions(url, 2)).initialize();
  await runMigrations(ds);
  const workspace = await createWorkspace(ds, 'Soak');
  const key = (
    await createApiKey(ds, {
      workspaceId: workspace.id,
      role: await findRole(ds, workspace.id, 'Admin'),
      name: 'soak',
      expiresAt: new Date(Date.now() + 86_400_000),
    })
  ).secret;
  const email = `soak-${randomUUID().slice(0, 8)}@example.com`;
  const user = await createUser(ds, email, PASSWORD);
  await addMember(ds, workspace.id, user.id, await findRole(ds, workspace.id, 'Member'));
  await ds.destroy();

  const [r1, r2, a1, a2] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const publicUrl = `http://127.0.0.1:${r1}`;
  const common = {
    DATABASE_URL: url,
    PUBLIC_URL: publicUrl,
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_PER_WORKSPACE_PER_MINUTE: '0',
    REGISTRATIONS_PER_MINUTE: '100',
    ...(pair ? { DATABASE_READ_URL: pair.replicaUrl } : {}),
  };
  const auths: App[] = [
    { name: 'auth-1', entry: 'auth-server', env: { ...common, AUTH_PORT: String(a1) }, url: `http://127.0.0.1:${a1}` },
    { name: 'auth-2', entry: 'auth-server', env: { ...common, AUTH_PORT: String(a2) }, url: `http://127.0.0.1:${a2}` },
  ];
  const apis: App[] = [
    { name: 'api-1', entry: 'records-api', env: { ...common, PORT: String(r1), AUTH_PORT: String(a1) }, url: `http://127.0.0.1:${r1}` },
    { name: 'api-2', entry: 'records-api', env: { ...common, PORT: String(r2), AUTH_PORT: String(a2) }, url: `http://127.0.0.1:${r2}` },
  ];
  await Promise.all([...auths, ...apis].map(startApp));
  log(
    `2 records APIs (${r1}, ${r2}) and 2 auth servers (${a1}, ${a2}) on ${url.replace(/:[^:@]*@/, ':***@')}${
      pair ? ` and a read replica ${REPLICA_DELAY_MS} ms behind` : ''
    }; ${WORKERS} clients for ${minutes} min`,
  );

  const json = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const acked = new Map<string, number>(); // company name → records the client was told were created
  const ids: string[] = [];
  let oauthRelogins = 0;
  let staleReads = 0;
  let freshnessChecks = 0;
  let oauthRefreshes = 0;

  // ---- OAuth: sign in once through the pages, then refresh all along ----
  const register = await call(apis, '/oauth/register', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'soak', redirect_uris: [REDIRECT] }),
  });
  const clientId = register.body.client_id as string;
  async function authorize(): Promise<{ refresh: string; access: string }> {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const browser = new FormBrowser(REDIRECT);
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'api profile',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's',
    });
    await browser.go(`${publicUrl}/oauth/authorize?${q}`);
    await browser.submit('Sign in', { email, password: PASSWORD });
    if (!browser.lastUrl.startsWith(REDIRECT)) await browser.submit('Allow');
    const code = new URL(browser.lastUrl).searchParams.get('code');
    if (!code) throw new Error(`no code: ${browser.lastUrl} ${browser.lastBody.slice(0, 300)}`);
    const token = await call(apis, '/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        client_id: clientId,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      }).toString(),
    });
    if (token.status !== 200) throw new Error(`token: ${token.status} ${JSON.stringify(token.body)}`);
    return { refresh: token.body.refresh_token, access: token.body.access_token };
  }
  let tokens = await authorize();

  const deadline = Date.now() + minutes * 60_000;
  const problems: string[] = [];

  async function oauthLoop(): Promise<void> {
    while (Date.now() < deadline) {
      await sleep(1_000);
      const res = await call(apis, '/oauth/token', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, refresh_token: tokens.refresh }).toString(),
      }).catch((err) => ({ status: 0, body: String(err), headers: new Headers() }));
      if (res.status === 200) {
        oauthRefreshes++;
        tokens = { refresh: res.body.refresh_token, access: res.body.access_token };
        const use = await call(apis, '/rest/companies?limit=1', { headers: { Authorization: `Bearer ${tokens.access}` } });
        if (use.status !== 200) problems.push(`access token refused: ${use.status}`);
      } else if (res.status === 400 && res.body?.error === 'invalid_grant') {
        // A refresh whose answer was lost (instance killed after rotating) and then retried
        // with the old token: RFC 9700 §4.14.2 revokes the grant. Sign in again.
        oauthRelogins++;
        events.push(`${new Date().toISOString().slice(11, 19)} refresh token rotated under a lost answer: signed in again`);
        tokens = await authorize();
      } else {
        problems.push(`refresh: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      }
    }
  }

  /** A read of the key that wrote everything, sent when it had `floor` creates acknowledged, answered `totalCount`. */
  function checkFresh(what: string, floor: number, totalCount: unknown): void {
    freshnessChecks++;
    if (typeof totalCount === 'number' && totalCount >= floor) return;
    staleReads++;
    problems.push(`${what}: totalCount ${String(totalCount)} below the ${floor} creates acknowledged before the read`);
  }

  async function worker(w: number): Promise<void> {
    let n = 0;
    let lastCreated: string | undefined;
    while (Date.now() < deadline) {
      const dice = Math.random();
      try {
        if (dice < 0.45) {
          const floor = acked.size;
          const res = await call(apis, '/rest/companies?limit=20&order_by=createdAt[DescNullsLast]', { headers: json });
          if (res.status !== 200) problems.push(`list: ${res.status}`);
          else checkFresh('list', floor, res.body.totalCount);
          if (lastCreated) {
            const own = await call(apis, `/rest/companies/${lastCreated}`, { headers: json });
            freshnessChecks++;
            if (own.status !== 200) {
              if (own.status === 404) staleReads++;
              problems.push(`read back own create: ${own.status}`);
            }
          }
        } else if (dice < 0.55) {
          const floor = acked.size;
          const res = await call(apis, '/graphql', {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ query: '{ companies(first: 10) { totalCount edges { node { id name } } } }' }),
          });
          if (res.status !== 200 || res.body.errors) problems.push(`graphql read: ${res.status}`);
          else checkFresh('graphql read', floor, res.body.data.companies.totalCount);
        } else if (dice < 0.8) {
          const name = `soak-${w}-${n++}-${randomUUID().slice(0, 6)}`;
          const res = await call(apis, '/rest/companies', {
            method: 'POST',
            headers: { ...json, 'Idempotency-Key': randomUUID() },
            body: JSON.stringify({ name }),
          });
          if (res.status === 201) {
            acked.set(name, (acked.get(name) ?? 0) + 1);
            ids.push(res.body.data.createCompany.id);
            lastCreated = res.body.data.createCompany.id;
          } else problems.push(`create: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        } else if (dice < 0.87) {
          const base = `soak-b${w}-${n++}-${randomUUID().slice(0, 6)}`;
          const batch = Array.from({ length: 5 }, (_, i) => ({ name: `${base}-${i}` }));
          const res = await call(apis, '/rest/batch/companies', {
            method: 'POST',
            headers: { ...json, 'Idempotency-Key': randomUUID() },
            body: JSON.stringify(batch),
          });
          if (res.status === 201) for (const c of batch) acked.set(c.name, (acked.get(c.name) ?? 0) + 1);
          else problems.push(`batch: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        } else if (dice < 0.93) {
          const name = `soak-g${w}-${n++}-${randomUUID().slice(0, 6)}`;
          const res = await call(apis, '/graphql', {
            method: 'POST',
            headers: { ...json, 'Idempotency-Key': randomUUID() },
            body: JSON.stringify({
              query: 'mutation($data: CompanyCreateInput!) { createCompany(data: $data) { id } }',
              variables: { data: { name } },
            }),
          });
          if (res.status === 200 && res.body.data?.createCompany) acked.set(name, (acked.get(name) ?? 0) + 1);
          else problems.push(`graphql create: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        } else if (ids.length) {
          const id = ids[Math.floor(Math.random() * ids.length)];
          const res = await call(apis, `/rest/companies/${id}`, {
            method: 'PATCH',
            headers: { ...json, 'Idempotency-Key': randomUUID() },
            body: JSON.stringify({ domainName: { primaryLinkUrl: `https://w${w}.example.com/${n++}` } }),
          });
          if (res.status !== 200) problems.push(`update: ${res.status}`);
        }
      } catch (err) {
        problems.push(String(err));
      }
    }
  }

  async function chaos(): Promise<void> {
    const total = minutes * 60_000;
    const t0 = Date.now();
    const until = (at: number) => sleep(Math.max(0, t0 + at - Date.now()));
    await until(total / 3);
    phase = 'api-1 killed';
    events.push(`${new Date().toISOString().slice(11, 19)} SIGKILL api-1 (pid ${apis[0].child!.pid})`);
    log(events[events.length - 1]);
    apis[0].child!.kill('SIGKILL');
    await sleep(1_000);
    await startApp(apis[0]);
    events.push(`${new Date().toISOString().slice(11, 19)} api-1 serving again`);
    log(events[events.length - 1]);
    phase = 'steady';
    await until((2 * total) / 3);
    if (pair) {
      phase = 'replica down';
      events.push(`${new Date().toISOString().slice(11, 19)} read replica stopped`);
      log(events[events.length - 1]);
      await pair.stopReplica();
      await sleep(5_000);
      await pair.startReplica();
      events.push(`${new Date().toISOString().slice(11, 19)} read replica started`);
      log(events[events.length - 1]);
      phase = 'steady';
      return;
    }
    phase = 'postgres down';
    events.push(`${new Date().toISOString().slice(11, 19)} Postgres stopped`);
    log(events[events.length - 1]);
    await db!.stop();
    await sleep(5_000);
    db = await startEmbeddedPostgres({ dataDir: DATA_DIR, database: 'records' });
    if (db.url !== url) throw new Error(`Postgres came back on another address (${db.url})`);
    events.push(`${new Date().toISOString().slice(11, 19)} Postgres started`);
    log(events[events.length - 1]);
    await Promise.all(apis.map((a) => waitReady(a.url, 30_000)));
    phase = 'steady';
  }

  const started = Date.now();
  await Promise.all([chaos(), oauthLoop(), ...Array.from({ length: WORKERS }, (_, w) => worker(w))]);
  const elapsed = (Date.now() - started) / 1000;

  // ---- verdict ----
  const check = await new DataSource(dataSourceOptions(url, 2)).initialize();
  const rows: { name: string; n: number }[] = await check.query(
    `SELECT name, count(*)::int AS n FROM companies WHERE workspace_id = $1 AND name LIKE 'soak-%' GROUP BY name`,
    [workspace.id],
  );
  await check.destroy();
  const stored = new Map(rows.map((r) => [r.name, r.n]));
  let lost = 0;
  let duplicated = 0;
  for (const [name] of acked) {
    const n = stored.get(name) ?? 0;
    if (n === 0) lost++;
    if (n > 1) duplicated++;
  }
  const unacked = [...stored.keys()].filter((name) => !acked.has(name)).length;

  for (const app of [...apis, ...auths]) app.child?.kill('SIGTERM');
  await Promise.all([...apis, ...auths].map((a) => new Promise((r) => (a.child?.exitCode !== null ? r(null) : a.child.once('exit', r)))));
  await db?.stop();
  await pair?.stop();
  rmSync(DATA_DIR, { recursive: true, force: true });

  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]?.toFixed(1);
  const total = [...statusCounts.values()].reduce((a, b) => a + b, 0);
  const fiveHundreds = statusCounts.get('500') ?? 0;
  console.log('\n== soak result ==');
  console.log(
    `duration ${elapsed.toFixed(0)} s, ${total} HTTP attempts (${(total / elapsed).toFixed(0)}/s), p50 ${pct(50)} ms, p99 ${pct(99)} ms`,
  );
  console.log(
    `by status: ${[...statusCounts]
      .sort()
      .map(([k, v]) => `${k}=${v}`)
      .join('  ')}`,
  );
  for (const [name, counts] of perPhase)
    console.log(
      `  during ${name}: ${[...counts]
        .sort()
        .map(([k, v]) => `${k}=${v}`)
        .join('  ')}`,
    );
  console.log(`acknowledged creates ${acked.size}: lost ${lost}, duplicated ${duplicated}; created but never acknowledged ${unacked}`);
  console.log(`read-your-writes: ${freshnessChecks} reads checked, ${staleReads} older than the key's acknowledged writes`);
  console.log(`OAuth refreshes ${oauthRefreshes}, sign-ins again after a lost rotation ${oauthRelogins}`);
  console.log(`events:\n  ${events.join('\n  ')}`);
  if (problems.length) console.log(`unexpected answers (${problems.length}):\n  ${[...new Set(problems)].slice(0, 20).join('\n  ')}`);
  const ok = lost === 0 && duplicated === 0 && fiveHundreds === 0 && staleReads === 0 && problems.length === 0;
  console.log(ok ? 'PASS: 0 lost, 0 duplicated, 0 answers of 500, 0 stale reads' : 'FAIL');
  process.exit(ok ? 0 : 1);
}

await main();
