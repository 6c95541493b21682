import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '#config/config.js';
import { dataSourceOptions, runMigrations } from '#database/data-source.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '#database/embedded-postgres.js';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { startApi, stopChild } from './children.js';

/**
 * `npm run build --silent && node dist/bench/import-outage.js [--rows N] [--crashes K]`: how
 * long an import stalls after each Postgres crash (docs/decisions/0051-queue-workers-that-outlive-postgres.md).
 * A Postgres of its own (never the one other work uses: it is killed), a records API with
 * the default worker settings (2 import workers, 10 s heartbeat), an import of N companies
 * (100,000 by default). K times (3 by default), once rows moved since the last crash, the
 * postmaster is killed (SIGKILL) and started again on the same data. Prints, per crash, the
 * seconds from Postgres accepting connections again to the import's next committed batch
 * (giving up after 120 s), then how the import ended.
 */
const log = (m: string) => console.log(m);
const GIVE_UP_MS = 120_000;

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]?.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a whole number ≥ 1; got "${process.argv[i + 1] ?? ''}"`);
  return n;
}

async function main(): Promise<void> {
  const rows = arg('--rows', 100_000);
  const crashes = arg('--crashes', 3);
  // The migrations seal the vault's check value with it, and the records API must open it.
  process.env.VAULT_MASTER_KEY ||= randomBytes(32).toString('base64');
  const dataDir = join(loadConfig().dataDir, 'bench-outage');
  rmSync(dataDir, { recursive: true, force: true });
  let db: EmbeddedDatabase = await startEmbeddedPostgres({ dataDir, database: 'records' });
  const setup = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
  await runMigrations(setup);
  const ws = await createWorkspace(setup, 'Bench Outage');
  const role = await findRole(setup, ws.id, 'Admin');
  const key = await createApiKey(setup, { workspaceId: ws.id, role, name: 'bench', expiresAt: new Date(Date.now() + 86_400_000) });
  await setup.destroy();

  let api: Awaited<ReturnType<typeof startApi>> | undefined;
  let client: pg.Pool | undefined;
  const progress = async (): Promise<{ status: string; done: number; error: string | null } | undefined> => {
    client ??= new pg.Pool({ connectionString: db.url, max: 1 }).on('error', () => undefined);
    const { rows: found } = await client
      .query('SELECT status, rows_done::int AS done, error FROM imports WHERE workspace_id = $1', [ws.id])
      .catch(() => ({ rows: [] }));
    return found[0];
  };
  try {
    api = await startApi({
      DATABASE_URL: db.url,
      IMPORTS_WORKER: 'on',
      WEBHOOKS_WORKER: 'off',
      LOG_LEVEL: 'error',
    });
    const csv = ['name,domainName.primaryLinkUrl', ...Array.from({ length: rows }, (_, i) => `Outage ${i},outage-${i}.example`)].join('\n');
    const res = await fetch(`http://127.0.0.1:${api.port}/rest/imports?object=companies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'text/csv' },
      body: csv,
    });
    if (res.status !== 202) throw new Error(`the upload was answered ${res.status}: ${await res.text()}`);
    log(`Import outage bench: ${rows.toLocaleString('en-US')} rows, ${crashes} Postgres crashes (SIGKILL of the postmaster).`);
    let atCrash = 0;
    const stalls: number[] = [];
    for (let crash = 1; crash <= crashes; crash++) {
      for (;;) {
        const p = await progress();
        if (p?.status === 'running' && p.done > atCrash) break;
        if (p && !['queued', 'running'].includes(p.status)) throw new Error(`the import ended before crash ${crash}: ${JSON.stringify(p)}`);
        await sleep(20);
      }
      const postmaster = db.postmaster()!;
      db.release();
      process.kill(postmaster, 'SIGKILL');
      await client?.end().catch(() => undefined);
      client = undefined;
      db = await startEmbeddedPostgres({ dataDir, database: 'records' });
      const back = performance.now();
      atCrash = (await progress())!.done;
      let stall: number | undefined;
      while (performance.now() - back < GIVE_UP_MS) {
        const p = await progress();
        if (p && p.done > atCrash) {
          stall = performance.now() - back;
          break;
        }
        if (p && !['queued', 'running'].includes(p.status)) break;
        await sleep(20);
      }
      if (stall === undefined) {
        log(`crash ${crash} at ${atCrash} rows: no batch within ${GIVE_UP_MS / 1000} s after Postgres was back`);
        break;
      }
      stalls.push(stall);
      log(`crash ${crash} at ${atCrash} rows: next batch ${(stall / 1000).toFixed(2)} s after Postgres was back`);
    }
    const until = performance.now() + GIVE_UP_MS;
    let end = await progress();
    while (end && ['queued', 'running'].includes(end.status) && performance.now() < until) {
      await sleep(200);
      end = await progress();
    }
    log(`import: ${JSON.stringify(end)}`);
    if (stalls.length) log(`stall after a crash: max ${(Math.max(...stalls) / 1000).toFixed(2)} s`);
  } finally {
    await client?.end().catch(() => undefined);
    await stopChild(api?.child);
    await db.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
