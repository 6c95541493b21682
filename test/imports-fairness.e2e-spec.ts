import type { INestApplication } from '@nestjs/common';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, newWorkspace, useEmptyDatabase, type TestWorkspace } from './factories.js';
import { importErrors, importingApi, sleep, upload, uploadInPieces, waitForImport } from './import-helpers.js';
import { client, expectError, type Http } from './rest-helpers.js';

/**
 * Imports share a records API fairly between workspaces (docs/rest.md "Imports";
 * docs/decisions/0047-import-quotes-and-fairness.md): upload slots per workspace, a minimum
 * upload rate, caps on what a workspace has queued, cells per record bounded, parsing in
 * small pieces between requests, and workers that take turns between workspaces.
 */

/** Sets env variables for the length of `run` (the import settings are read at each upload). */
async function withEnv<T>(env: Record<string, string>, run: () => Promise<T>): Promise<T> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    return await run();
  } finally {
    process.env = saved;
  }
}

/** Over 1 MB (a row, then blank lines): once it is in, the upload has a row in `imports` (its first chunk is stored). */
const FIRST_CHUNK = 'name\nSlow\n' + '\n'.repeat(1_100_000);

/** An upload whose body stays open after its first bytes (a slow client); `end` sends the rest. */
function openUpload(api: Http, key: string, first = FIRST_CHUNK) {
  const req = request(api)
    .post('/rest/imports?object=companies')
    .set(bearer(key))
    .set('Content-Type', 'text/csv')
    .ok(() => true);
  req.write(first);
  return {
    write: (more: string) => req.write(more),
    end: () => new Promise<request.Response>((done, fail) => req.end((err, res) => (err ? fail(err) : done(res)))),
  };
}

describe('imports: fairness between workspaces', () => {
  describe('uploads and queue', () => {
    // A database of its own, and no import worker: the uploaded imports stay queued (another suite's worker would run them).
    const db = useEmptyDatabase('imports_uploads');
    let app: INestApplication;
    let ds: DataSource;
    let api: Http;
    let base: string;

    beforeAll(async () => {
      ({ app, http: api } = await importingApi({ DATABASE_URL: db.url, IMPORTS_WORKER: 'off' }));
      ds = db.ds;
      await new Promise<void>((resolve) => (api as Server).listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${((api as Server).address() as AddressInfo).port}`;
    });
    db.beforeDrop(() => app.close());

    /** Until `n` uploads of the workspace are streaming in (each has stored its first chunk). */
    async function uploading(ws: TestWorkspace, n: number): Promise<void> {
      for (let i = 0; ; i++) {
        const [{ count }] = await ds.query(`SELECT count(*)::int AS count FROM imports WHERE workspace_id = $1 AND status = 'uploading'`, [
          ws.id,
        ]);
        if (count >= n) return;
        if (i > 300) throw new Error(`${count} of ${n} uploads started`);
        await sleep(50);
      }
    }

    const imports = async (ws: TestWorkspace) =>
      (await ds.query('SELECT status FROM imports WHERE workspace_id = $1 ORDER BY created_at', [ws.id])).map(
        (r: { status: string }) => r.status,
      );

    it('a workspace holds at most IMPORT_UPLOADS_PER_WORKSPACE of the instance uploads (429): slow uploads of one never turn another away', async () => {
      // No minimum pace here: these uploads stay open, idle, for as long as the test needs.
      await withEnv({ IMPORT_UPLOADS_PER_INSTANCE: '4', IMPORT_UPLOADS_PER_WORKSPACE: '2', IMPORT_UPLOAD_MIN_BYTES: '0' }, async () => {
        const a = await newWorkspace(ds, 'fair-slots-a');
        const b = await newWorkspace(ds, 'fair-slots-b');
        const c = await newWorkspace(ds, 'fair-slots-c');
        const slowA = [openUpload(api, a.keys.Admin), openUpload(api, a.keys.Admin)];
        await uploading(a, 2);
        // A third and fourth of the same workspace: refused, so they never hold the others' slots.
        for (let i = 0; i < 2; i++) {
          const third = await upload(api, a.keys.Admin, '?object=companies', 'name\nThird\n');
          expect(expectError(third, 429, 'RATE_LIMITED')).toMatch(/2 uploads of this workspace are already streaming into this instance/);
          expect(third.headers['retry-after']).toBe('10');
        }
        // Another workspace still gets a slot, and can take its share.
        expect((await upload(api, b.keys.Admin, '?object=companies', 'name\nB quick\n')).status).toBe(202);
        const slowB = [openUpload(api, b.keys.Admin), openUpload(api, b.keys.Admin)];
        await uploading(b, 2);
        // The instance is full (4): 503 with Retry-After for everyone, until one ends.
        const full = await upload(api, c.keys.Admin, '?object=companies', 'name\nC\n');
        expect(expectError(full, 503, 'SERVICE_UNAVAILABLE')).toMatch(/4 uploads are already streaming into this instance/);
        expect(full.headers['retry-after']).toBeDefined();
        const answers = await Promise.all([...slowA, ...slowB].map((s) => s.end()));
        expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202]);
        expect((await upload(api, c.keys.Admin, '?object=companies', 'name\nC again\n')).status).toBe(202);
      });
    });

    it('uploads arriving together get no more than their share: the workspace slots and the queue cap hold exactly', async () => {
      await withEnv({ IMPORT_UPLOADS_PER_WORKSPACE: '2', IMPORT_UPLOAD_MIN_BYTES: '0' }, async () => {
        const ws = await newWorkspace(ds, 'fair-together-slots');
        const slow = Array.from({ length: 6 }, () => openUpload(api, ws.keys.Admin));
        await uploading(ws, 2);
        const answers = await Promise.all(slow.map((s) => s.end()));
        expect(answers.map((r) => r.status).sort()).toEqual([202, 202, 429, 429, 429, 429]);
      });
      await withEnv({ IMPORT_UPLOADS_PER_WORKSPACE: '8', IMPORT_QUEUE_PER_WORKSPACE: '3' }, async () => {
        const ws = await newWorkspace(ds, 'fair-together-queue');
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, i) => upload(api, ws.keys.Admin, '?object=companies', `name\nTogether ${i}\n`)),
        );
        expect(answers.map((r) => r.status).sort()).toEqual([202, 202, 202, 429, 429, 429, 429, 429]);
        expect(await imports(ws)).toEqual(['queued', 'queued', 'queued']);
      });
    });

    /**
     * A raw upload that sends `first`, then `drip` every `everyMs` until it is answered or
     * `giveUpMs` passes; `closed`: the server closed the connection within 2 s of its answer.
     */
    function dripUpload(key: string, first: string, drip: string, everyMs: number, giveUpMs: number) {
      return new Promise<{ status: number; body: string; closed: boolean }>((resolve, reject) => {
        let closed = false;
        const req = http.request(`${base}/rest/imports?object=companies`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv', 'transfer-encoding': 'chunked' },
        });
        req.on('socket', (socket) => socket.once('close', () => (closed = true)));
        const dripping = setInterval(() => req.write(drip), everyMs);
        const giveUp = setTimeout(() => {
          clearInterval(dripping);
          req.destroy();
          resolve({ status: 0, body: 'no answer', closed: false });
        }, giveUpMs);
        req.on('response', (res) => {
          clearInterval(dripping);
          clearTimeout(giveUp);
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', async () => {
            for (let waited = 0; !closed && waited < 2000; waited += 50) await sleep(50);
            resolve({ status: res.statusCode ?? 0, body, closed });
          });
        });
        req.on('error', (err) => (['ECONNRESET', 'EPIPE'].includes((err as NodeJS.ErrnoException).code ?? '') ? undefined : reject(err)));
        req.write(first);
      });
    }

    it('an upload slower than IMPORT_UPLOAD_MIN_BYTES per IMPORT_UPLOAD_WINDOW_MS is cut with 408, its connection closed and its slot freed', async () => {
      await withEnv({ IMPORT_UPLOAD_MIN_BYTES: '1000', IMPORT_UPLOAD_WINDOW_MS: '1000', IMPORT_UPLOADS_PER_WORKSPACE: '1' }, async () => {
        const ws = await newWorkspace(ds, 'fair-rate');
        // One byte every 200 ms: 5 bytes a second against 1000.
        const slow = await dripUpload(ws.keys.Admin, 'name\nDrip', 'x', 200, 8000);
        expect(slow.status).toBe(408);
        const body = JSON.parse(slow.body);
        expect(body).toMatchObject({ statusCode: 408, error: 'Request Timeout', code: 'REQUEST_TIMEOUT' });
        expect(body.messages[0]).toMatch(/fewer than 1000 bytes in 1000 ms/);
        expect(slow.closed).toBe(true);
        // Its slot is free (one a workspace here) and nothing of it was kept.
        expect((await upload(api, ws.keys.Admin, '?object=companies', 'name\nAfter\n')).status).toBe(202);
        expect(await imports(ws)).toEqual(['queued']);
      });
    });

    it('a steady upload above the minimum rate is not cut, however long it takes', async () => {
      await withEnv({ IMPORT_UPLOAD_MIN_BYTES: '1000', IMPORT_UPLOAD_WINDOW_MS: '1000' }, async () => {
        const ws = await newWorkspace(ds, 'fair-steady');
        const rows = Array.from({ length: 40 }, (_, i) => `Steady company number ${String(i).padStart(4, '0')} of a slow link\n`).join('');
        // 2,000 bytes every 400 ms for ~4 s, then the end.
        const req = openUpload(api, ws.keys.Admin, 'name\n');
        for (let i = 0; i < 10; i++) {
          await sleep(400);
          req.write(rows);
        }
        const res = await req.end();
        expect(res.status).toBe(202);
        expect(await imports(ws)).toEqual(['queued']);
      });
    });

    it('caps what a workspace has waiting: IMPORT_QUEUE_PER_WORKSPACE imports and IMPORT_QUEUE_BYTES_PER_WORKSPACE bytes (429), other workspaces unaffected', async () => {
      const a = await newWorkspace(ds, 'fair-queue-a');
      const b = await newWorkspace(ds, 'fair-queue-b');
      await withEnv({ IMPORT_QUEUE_PER_WORKSPACE: '3', IMPORT_QUEUE_BYTES_PER_WORKSPACE: String(3 * 1024 * 1024) }, async () => {
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          const res = await upload(api, a.keys.Admin, '?object=companies', `name\nQueued ${i}\n`);
          expect(res.status).toBe(202);
          ids.push(res.body.data.import.id);
        }
        const fourth = await upload(api, a.keys.Admin, '?object=companies', 'name\nFourth\n');
        expect(expectError(fourth, 429, 'RATE_LIMITED')).toMatch(/this workspace has 3 imports waiting or running; at most 3/);
        expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0);
        expect((await upload(api, b.keys.Admin, '?object=companies', 'name\nOther\n')).status).toBe(202);
        // One ends (cancelled): room for one more.
        expect((await client(api, a.keys.Admin).delete(`/rest/imports/${ids[0]}`)).status).toBe(200);
        expect((await upload(api, a.keys.Admin, '?object=companies', 'name\nFourth again\n')).status).toBe(202);
        expect(await imports(a)).toEqual(['cancelled', 'queued', 'queued', 'queued']);

        // Bytes: 2 MB waiting, then another 2 MB (declared, or only counted as it streams in) passes 3 MB.
        const c = await newWorkspace(ds, 'fair-queue-bytes');
        const twoMb = 'name\n' + 'A company name that fills a line\n'.repeat(Math.ceil((2 * 1024 * 1024) / 33));
        expect((await upload(api, c.keys.Admin, '?object=companies', twoMb)).status).toBe(202);
        const declared = await upload(api, c.keys.Admin, '?object=companies', twoMb);
        expect(expectError(declared, 429, 'RATE_LIMITED')).toMatch(/more than 3145728 bytes of imports waiting or running/);
        const pieces = Array.from({ length: Math.ceil(twoMb.length / 65_536) }, (_, i) => twoMb.slice(i * 65_536, (i + 1) * 65_536));
        const streamed = await uploadInPieces(api, c.keys.Admin, pieces);
        expect(expectError(streamed, 429, 'RATE_LIMITED')).toMatch(/more than 3145728 bytes of imports waiting or running/);
        expect(await imports(c)).toEqual(['queued']);
        expect(Number((await ds.query('SELECT count(*) AS n FROM import_chunks WHERE workspace_id = $1', [c.id]))[0].n)).toBe(3);
      });
    });

    it('a header row of more cells than the object has columns is 400 before anything is stored', async () => {
      const ws = await newWorkspace(ds, 'fair-wide-header');
      const header = Array.from({ length: 200_000 }, (_, i) => `c${i}`).join(',');
      const res = await upload(api, ws.keys.Admin, '?object=companies', `${header}\nA\n`);
      expect(expectError(res, 400, 'VALIDATION_FAILED')).toMatch(
        /^the header row is not a CSV record: it has more than \d+ cells; companies has \d+ columns$/,
      );
      expect(await imports(ws)).toEqual([]);
    });
  });

  describe('workers', () => {
    // A database of its own: no other suite's import worker takes these imports.
    const db = useEmptyDatabase('imports_fairness');
    const apps: INestApplication[] = [];
    // Each test's records API alone runs imports: its workers are the ones counted.
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
    });

    async function api(env: Record<string, string>): Promise<Http> {
      const started = await importingApi({ DATABASE_URL: db.url, ...env });
      apps.push(started.app);
      return started.http;
    }

    const csv = (rows: number, bad?: number) =>
      [
        'name,domainName.primaryLinkUrl',
        ...Array.from({ length: rows }, (_, i) => (i + 1 === bad ? `Bad ${i},"oops"x` : `Row ${i},row${i}.com`)),
      ].join('\n');

    async function started(h: Http, ws: TestWorkspace, body: string): Promise<string> {
      const res = await upload(h, ws.keys.Admin, '?object=companies', body);
      expect(res.status).toBe(202);
      return res.body.data.import.id;
    }

    it("another workspace's import runs before a workspace's second one (each workspace's n-th import waits behind every workspace's earlier ones)", async () => {
      const h = await api({ IMPORTS_CONCURRENCY: '1', IMPORTS_SLICE_MS: '600000' });
      const a = await newWorkspace(db.ds, 'fair-order-a');
      const b = await newWorkspace(db.ds, 'fair-order-b');
      const first = await started(h, a, csv(30_000));
      const later = [await started(h, a, csv(100)), await started(h, a, csv(100)), await started(h, a, csv(100))];
      const small = await started(h, b, csv(1));
      const done = new Map<string, Record<string, unknown>>();
      for (const [key, id] of [[a.keys.Admin, first], ...later.map((id) => [a.keys.Admin, id]), [b.keys.Admin, small]])
        done.set(id, await waitForImport(h, key, id, 120_000));
      expect([...done.values()].map((s) => s.status)).toEqual(Array(5).fill('completed'));
      const at = (id: string, key: 'startedAt' | 'finishedAt') => Date.parse(done.get(id)![key] as string);
      expect(at(small, 'finishedAt')).toBeLessThanOrEqual(at(later[0], 'startedAt'));
    }, 180_000);

    it("a running import yields its worker to another workspace's waiting import after IMPORTS_SLICE_MS, and goes on later from where it stopped", async () => {
      const h = await api({ IMPORTS_CONCURRENCY: '2', IMPORTS_SLICE_MS: '300' });
      // Big enough to take many turns of 300 ms each, on a busy machine too.
      const ROWS = 100_000;
      // One party, two workspaces, a big import each: both workers busy.
      const p1 = await newWorkspace(db.ds, 'fair-slice-p1');
      const p2 = await newWorkspace(db.ds, 'fair-slice-p2');
      const other = await newWorkspace(db.ds, 'fair-slice-other');
      const big1 = await started(h, p1, csv(ROWS, 45_000));
      const big2 = await started(h, p2, csv(ROWS));
      const statusOf = async (ws: TestWorkspace) =>
        (await db.ds.query('SELECT status FROM imports WHERE workspace_id = $1', [ws.id]))[0].status;
      for (let i = 0; (await statusOf(p1)) !== 'running' || (await statusOf(p2)) !== 'running'; i++) {
        if (i > 600) throw new Error('the big imports did not start');
        await sleep(20);
      }
      const small = await started(h, other, csv(1));
      const smallDone = await waitForImport(h, other.keys.Admin, small, 120_000);
      const done1 = await waitForImport(h, p1.keys.Admin, big1, 180_000);
      const done2 = await waitForImport(h, p2.keys.Admin, big2, 180_000);
      expect(smallDone).toMatchObject({ status: 'completed', created: 1 });
      // The small import ended while both big ones were still going.
      expect(Date.parse(smallDone.finishedAt as string)).toBeLessThan(
        Math.min(Date.parse(done1.finishedAt as string), Date.parse(done2.finishedAt as string)),
      );
      // Each big import resumed from its committed byte, row and line: every row once, the refused one with its line.
      expect(done1).toMatchObject({ status: 'completed', rowsRead: ROWS, linesRead: ROWS + 1, created: ROWS - 1, failed: 1 });
      expect(done2).toMatchObject({ status: 'completed', rowsRead: ROWS, linesRead: ROWS + 1, created: ROWS, failed: 0 });
      expect(await importErrors(h, p1.keys.Admin, big1)).toEqual([
        { row: 45_000, line: 45_001, messages: [expect.stringMatching(/^not a CSV record: Invalid Closing Quote/)] },
      ]);
      for (const ws of [p1, p2]) {
        const [counts] = await db.ds.query(
          'SELECT count(*)::int AS n, count(DISTINCT name)::int AS names FROM companies WHERE workspace_id = $1',
          [ws.id],
        );
        expect(counts).toEqual({ n: ws === p1 ? ROWS - 1 : ROWS, names: ws === p1 ? ROWS - 1 : ROWS });
      }
    }, 240_000);

    // That reading gives the event loop a turn every 64 KiB is import-reader.spec.ts's; the delay other requests see is bench/import-fairness.ts's.
    it('rows wider than the header row, and NDJSON objects of more keys than the object has columns, are refused on their own', async () => {
      const h = await api({ IMPORTS_CONCURRENCY: '1' });
      const ws = await newWorkspace(db.ds, 'fair-wide');
      // 12 rows of 400,000 cells (~9.6 MB), then one good row.
      const wide = 'x,'.repeat(399_999) + 'x';
      const body = ['name,domainName.primaryLinkUrl', ...Array(12).fill(wide), 'Good,good.com'].join('\n');
      const id = await started(h, ws, body);
      const done = await waitForImport(h, ws.keys.Admin, id, 120_000);
      expect(done).toMatchObject({ status: 'completed', rowsRead: 13, created: 1, failed: 12 });
      const errors = await importErrors(h, ws.keys.Admin, id);
      expect(errors[0]).toEqual({
        row: 1,
        line: 2,
        messages: ['not a CSV record: Invalid Record Length: this record has 400000 cells, the header row 2'],
      });

      // NDJSON: an object of more keys than the object has columns is refused unparsed.
      const keys = '{' + Array.from({ length: 90_000 }, (_, i) => `"k${i}":1`).join(',') + '}';
      const res = await upload(h, ws.keys.Admin, '?object=companies', `${keys}\n{"name":"Fine"}\n`, 'application/x-ndjson');
      expect(res.status).toBe(202);
      expect(await waitForImport(h, ws.keys.Admin, res.body.data.import.id)).toMatchObject({ status: 'completed', created: 1, failed: 1 });
      expect(await importErrors(h, ws.keys.Admin, res.body.data.import.id)).toEqual([
        { row: 1, line: 1, messages: [expect.stringMatching(/^the line has an object of more than \d+ keys/)] },
      ]);
    }, 120_000);
  });
});
