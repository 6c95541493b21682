import pg from 'pg';
import { fieldIndexName } from '#identity/field-indexes.js';
import { indexKind, type CustomFieldType } from '#records/objects/index.js';
import { newWorkspace, useEmptyDatabase, type TestWorkspace } from './factories.js';
import { httpJson, spawnApp, waitUntil, type AppProcess } from './processes.js';

/**
 * The shared custom-field indexes (docs/decisions/0048-custom-field-index-sweeper.md): one
 * builder per cluster on one connection of its own, a fair share of a table's slots per
 * workspace, and a sweeper that makes the indexes match the live fields both ways, whatever
 * the interleaving of creates and deletes, crashes included. A database of its own, so the
 * slots and the connections counted are this file's alone; records API processes, so the
 * instances, their pools and their crashes are real.
 */
describe('custom-field indexes', () => {
  const db = useEmptyDatabase('cf_indexes');
  const apps: AppProcess[] = [];
  let holders: pg.Client[] = [];

  db.beforeDrop(async () => {
    for (const holder of holders) await holder.end().catch(() => undefined);
    for (const app of apps) await stop(app, 'SIGKILL');
  });

  // Each test starts the instances it needs.
  afterEach(async () => {
    for (const app of apps.splice(0)) await stop(app, 'SIGTERM');
  });

  async function start(): Promise<AppProcess> {
    const app = await spawnApp('records-api', { DATABASE_URL: db.url, WEBHOOKS_WORKER: 'off', IMPORTS_WORKER: 'off' });
    apps.push(app);
    return app;
  }

  async function stop(app: AppProcess, signal: NodeJS.Signals): Promise<void> {
    if (app.child.exitCode === null && app.child.signalCode === null) app.child.kill(signal);
    await app.exited;
  }

  async function connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: db.url });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  /** A transaction that keeps a snapshot open (as a running export does): every index build waits for it. */
  async function holdSnapshot(): Promise<pg.Client> {
    const holder = await connect();
    holders.push(holder);
    await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await holder.query('SELECT count(*) FROM companies');
    return holder;
  }

  async function release(holder: pg.Client): Promise<void> {
    await holder.end().catch(() => undefined);
    holders = holders.filter((h) => h !== holder);
  }

  const fieldsUrl = (app: AppProcess) => `${app.url}/rest/metadata/fields`;
  const as = (ws: TestWorkspace) => ({ authorization: `Bearer ${ws.keys.Admin}` });

  async function addField(app: AppProcess, ws: TestWorkspace, body: Record<string, unknown>): Promise<{ id: string; name: string }> {
    const res = await httpJson(fieldsUrl(app), { method: 'POST', headers: as(ws), body });
    if (res.status !== 201) throw new Error(`field create: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.createField;
  }

  /** Deactivates, then deletes (the only way to delete a field). */
  async function removeField(app: AppProcess, ws: TestWorkspace, id: string): Promise<void> {
    const off = await httpJson(`${fieldsUrl(app)}/${id}`, { method: 'PATCH', headers: as(ws), body: { isActive: false } });
    expect(off.status).toBe(200);
    const gone = await httpJson(`${fieldsUrl(app)}/${id}`, { method: 'DELETE', headers: as(ws) });
    expect(gone.status).toBe(200);
  }

  /** `work` over `items`, at most `n` at a time. */
  async function inParallel<T, R>(items: T[], n: number, work: (item: T, i: number) => Promise<R>): Promise<R[]> {
    const out: R[] = new Array(items.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: n }, async () => {
        while (next < items.length) {
          const i = next++;
          out[i] = await work(items[i], i);
        }
      }),
    );
    return out;
  }

  /** Every custom-field index of the database: name → valid. */
  async function indexes(): Promise<Map<string, boolean>> {
    const rows: { name: string; valid: boolean }[] = await db.ds.query(
      `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname LIKE 'cf\\_%'`,
    );
    return new Map(rows.map((r) => [r.name, r.valid]));
  }

  /** The index each active field of a kind that takes one is served by, by field id. */
  async function indexOfFields(where = 'TRUE', params: unknown[] = []): Promise<Map<string, string>> {
    const rows: { id: string; object: 'companies'; name: string; type: CustomFieldType }[] = await db.ds.query(
      `SELECT id, object, name, type FROM custom_fields WHERE is_active AND ${where} ORDER BY created_at, id`,
      params,
    );
    return new Map(rows.filter((r) => indexKind(r.type)).map((r) => [r.id, fieldIndexName(r)!]));
  }

  /** Waits for `check`; on timeout, fails with what `state` says then. */
  async function eventually(check: () => Promise<boolean>, ms: number, state: () => Promise<string>): Promise<void> {
    try {
      await waitUntil(check, ms);
    } catch (err) {
      throw new Error(`${(err as Error).message}: ${await state()}`, { cause: err });
    }
  }

  /** No sweep under way on any instance, and the indexes the same a second apart. */
  async function quiescent(): Promise<void> {
    let last = '';
    await eventually(
      async () => {
        const [{ n }] = await db.ds.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'custom-field indexes'`,
        );
        const now = `${n}:${JSON.stringify([...(await indexes())].sort())}`;
        const still = n === 0 && now === last;
        last = now;
        if (!still) await new Promise((resolve) => setTimeout(resolve, 1000));
        return still;
      },
      180_000,
      async () => `the sweeps to end: ${last}`,
    );
  }

  /** Waits until the test database's backends matching `where` (other than the test's own) are as `wanted` says. */
  async function backends(where: string, wanted: (n: number) => boolean): Promise<void> {
    const count = async () =>
      (
        await db.ds.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${where}`,
        )
      )[0].n as number;
    await eventually(
      async () => wanted(await count()),
      60_000,
      async () => `backends where ${where}: ${await count()}`,
    );
  }

  /** Samples the test database's connections while `work` runs: the most seen at once, in all and per kind. */
  async function watchConnections<T>(work: () => Promise<T>): Promise<{ result: T; total: number; indexers: number; builds: number }> {
    const monitor = await connect();
    const peak = { total: 0, indexers: 0, builds: 0 };
    let done = false;
    const sampling = (async () => {
      while (!done) {
        const [row] = (
          await monitor.query<typeof peak>(
            `SELECT count(*)::int AS total,
                    count(*) FILTER (WHERE application_name = 'custom-field indexes')::int AS indexers,
                    count(*) FILTER (WHERE state = 'active' AND query ILIKE 'CREATE INDEX%')::int AS builds
               FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
          )
        ).rows;
        for (const key of Object.keys(peak) as (keyof typeof peak)[]) peak[key] = Math.max(peak[key], row[key]);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      const result = await work();
      return { result, ...peak };
    } finally {
      done = true;
      await sampling;
      await monitor.end();
    }
  }

  it('one workspace creating 70 fields cannot keep another workspace’s field from an index, and a freed slot goes to a field without one', async () => {
    const [one, two] = [await start(), await start()];
    const hog = await newWorkspace(db.ds, 'hog');
    const other = await newWorkspace(db.ds, 'other');
    await inParallel(
      Array.from({ length: 70 }, (_, i) => i),
      10,
      (i) => addField(one, hog, { object: 'companies', name: `hog${i}`, type: i % 2 ? 'NUMBER' : 'TEXT' }),
    );
    const hogIndexes = async () => {
      const present = await indexes();
      return [...(await indexOfFields('workspace_id = $1', [hog.id]))].filter(([, name]) => present.get(name));
    };
    // The hog gets its share (8 of the table's 64), no more, however long it waits.
    await quiescent();
    expect((await hogIndexes()).length).toBe(8);

    await addField(two, other, { object: 'companies', name: 'mine', type: 'NUMBER' });
    const mine = fieldIndexName({ object: 'companies', name: 'mine', type: 'NUMBER' })!;
    await eventually(
      async () => (await indexes()).get(mine) === true,
      120_000,
      async () => `an index for mine: ${JSON.stringify([...(await indexes())])}`,
    );
    expect((await indexes()).size).toBe(9);

    // One of the hog's indexed fields goes: the slot it frees serves another of its fields.
    const [freed] = (await hogIndexes())[0];
    await removeField(two, hog, freed);
    await eventually(
      async () => {
        const held = await hogIndexes();
        return held.length === 8 && !held.some(([id]) => id === freed);
      },
      120_000,
      async () => `the freed slot to serve another field: ${JSON.stringify(await hogIndexes())}`,
    );
  }, 300_000);

  it('indexes every field the instance that took it died before indexing, from the next instance’s start', async () => {
    const first = await start();
    const ws = await newWorkspace(db.ds, 'crash');
    const holder = await holdSnapshot();
    for (const name of ['crashA', 'crashB', 'crashC']) await addField(first, ws, { object: 'people', name, type: 'TEXT' });
    // A build has begun (it waits for the open snapshot); the process dies under it.
    await backends(`state = 'active' AND query ILIKE 'CREATE INDEX%'`, (n) => n > 0);
    await stop(first, 'SIGKILL');
    await release(holder);
    await start();
    const wanted = [...(await indexOfFields('workspace_id = $1', [ws.id])).values()];
    expect(wanted).toHaveLength(3);
    await eventually(
      async () => {
        const present = await indexes();
        return wanted.every((name) => present.get(name) === true) && [...present.values()].every(Boolean);
      },
      120_000,
      async () => `indexes ${wanted.join(', ')}; present: ${JSON.stringify([...(await indexes())])}`,
    );
  }, 240_000);

  it('an instance stopped while its build waits on a snapshot exits, and the server cancels that build instead of running it for nobody', async () => {
    const app = await start();
    const ws = await newWorkspace(db.ds, 'stopping');
    const holder = await holdSnapshot();
    await addField(app, ws, { object: 'people', name: 'stopping', type: 'NUMBER' });
    await backends(`state = 'active' AND query ILIKE 'CREATE INDEX%'`, (n) => n > 0);
    await stop(app, 'SIGTERM');
    // The snapshot is still open: only the build's cancellation ends its session (and frees the lock).
    await backends(`application_name = 'custom-field indexes'`, (n) => n === 0);
    await release(holder);
    await start();
    const wanted = fieldIndexName({ object: 'people', name: 'stopping', type: 'NUMBER' })!;
    await eventually(
      async () => (await indexes()).get(wanted) === true,
      60_000,
      async () => `an index for stopping: ${JSON.stringify([...(await indexes())])}`,
    );
  }, 240_000);

  it('churning creates and deletes on two instances leaves exactly the indexes of the live fields, built one at a time', async () => {
    const [one, two] = [await start(), await start()];
    const workspaces = [await newWorkspace(db.ds, 'churn-a'), await newWorkspace(db.ds, 'churn-b'), await newWorkspace(db.ds, 'churn-c')];
    const watched = await watchConnections(() =>
      Promise.all(
        workspaces.map(async (ws, w) => {
          for (let round = 0; round < 12; round++) {
            // Names shared between workspaces (one index serves them all) and kinds that change.
            const name = `churn${(round + w) % 4}`;
            const type = (round + w) % 3 ? 'NUMBER' : 'SELECT';
            const body = { object: 'opportunities', name, type, ...(type === 'SELECT' ? { options: [{ value: 'A' }] } : {}) };
            const created = await httpJson(fieldsUrl(round % 2 ? one : two), { method: 'POST', headers: as(ws), body });
            if (created.status !== 201) continue; // the name is still taken by this workspace's previous round
            // Most go at once (while their build may still be queued or running), some stay.
            if (round % 5 !== 4) await removeField(round % 2 ? two : one, ws, created.body.data.createField.id);
          }
        }),
      ),
    );
    expect(watched.builds).toBeLessThanOrEqual(1);
    // This table only: the earlier tests' fields (beyond their share, some of them) are on the others.
    const live = async () => new Set((await indexOfFields(`object = 'opportunities'`)).values());
    const indexesOf = async () => new Map([...(await indexes())].filter(([name]) => name.startsWith('cf_opportunities_')));
    await eventually(
      async () => {
        const present = await indexesOf();
        const wanted = await live();
        return present.size === wanted.size && [...wanted].every((name) => present.get(name) === true);
      },
      120_000,
      async () =>
        `indexes to match the live fields: present ${JSON.stringify([...(await indexesOf())])}, live ${JSON.stringify([...(await live())])}`,
    );
    expect(new Set((await indexesOf()).keys())).toEqual(await live());
  }, 240_000);

  it('300 field creates while every build waits on an open snapshot stay within the request pool, with one index connection', async () => {
    const api = await start();
    const workspaces = [await newWorkspace(db.ds, 'many-a'), await newWorkspace(db.ds, 'many-b'), await newWorkspace(db.ds, 'many-c')];
    const monitor = await connect();
    const [{ n: atRest }] = (
      await monitor.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      )
    ).rows;
    await monitor.end();
    const holder = await holdSnapshot();
    const watched = await watchConnections(() =>
      inParallel(
        Array.from({ length: 300 }, (_, i) => i),
        60,
        async (i) =>
          (
            await httpJson(fieldsUrl(api), {
              method: 'POST',
              headers: as(workspaces[i % 3]),
              body: { object: 'companies', name: `many${i % 3}x${Math.floor(i / 3)}`, type: 'NUMBER' },
            })
          ).status,
      ),
    );
    expect(watched.result.filter((status) => status !== 201)).toEqual([]);
    // At rest, this file's data source and the instance's credential listener; then the
    // snapshot's, the request pool's 20, the rate limiter's 4, and the one that builds indexes.
    expect(watched.indexers).toBeLessThanOrEqual(1);
    expect(watched.total).toBeLessThanOrEqual(atRest + 1 + 20 + 4 + 1);
    await release(holder);
    // Once the snapshot is gone, each workspace's share of the slots gets built: 8 indexes each.
    const built = async () => {
      const present = await indexes();
      return Promise.all(
        workspaces.map(
          async (ws) => [...(await indexOfFields('workspace_id = $1', [ws.id])).values()].filter((name) => present.get(name)).length,
        ),
      );
    };
    await eventually(
      async () => (await built()).every((n) => n === 8),
      120_000,
      async () => `the shares to be built: ${await built()}`,
    );
  }, 240_000);
});
