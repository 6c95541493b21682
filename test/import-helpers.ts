import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createRecordsApi } from '../apps/records-api/src/bootstrap.js';
import { bearer } from './factories.js';
import { asText, type Http } from './rest-helpers.js';

/** Shared helpers of the import suites (docs/rest.md "Imports"). */

/** A records API that runs imports (the suite's default is IMPORTS_WORKER=off, test/global-setup.mjs); env applies while it starts. */
export async function importingApi(env: Record<string, string> = {}): Promise<{ app: INestApplication; ds: DataSource; http: Http }> {
  const saved = { ...process.env };
  Object.assign(process.env, { IMPORTS_WORKER: 'on', IMPORTS_HEARTBEAT_MS: '500', ...env });
  try {
    const app = await createRecordsApi();
    await app.init();
    return { app, ds: app.get(DataSource), http: app.getHttpServer() };
  } finally {
    process.env = saved;
  }
}

/** A records API that runs imports for the tests of a describe block (importingApi), closed after them. */
export function useImportingApi(env: Record<string, string> = {}): { readonly ds: DataSource; readonly http: Http } {
  let app: INestApplication | undefined;
  let ds: DataSource;
  let http: Http;
  beforeAll(async () => {
    ({ app, ds, http } = await importingApi(env));
  });
  afterAll(() => app?.close());
  return {
    get ds() {
      return ds;
    },
    get http() {
      return http;
    },
  };
}

export function upload(http: Http, key: string | undefined, query: string, body: string | Buffer, type = 'text/csv') {
  const req = request(http).post(`/rest/imports${query}`).set('Content-Type', type);
  if (key) req.set(bearer(key));
  return req.send(body);
}

/** An upload sent in `pieces`, without a Content-Length (chunked): the server counts the bytes as they come. */
export function uploadInPieces(http: Http, key: string, pieces: string[]): Promise<request.Response> {
  return new Promise((resolve, reject) => {
    const req = request(http)
      .post('/rest/imports?object=companies')
      .set(bearer(key))
      .set('Content-Type', 'text/csv')
      .ok(() => true);
    req.on('error', reject);
    for (const piece of pieces) req.write(piece);
    req.end((err, res) => (err ? reject(err) : resolve(res)));
  });
}

/** The names of a workspace's companies, in order. */
export async function companyNames(ds: DataSource, workspaceId: string): Promise<string[]> {
  return (await ds.query('SELECT name FROM companies WHERE workspace_id = $1 ORDER BY name', [workspaceId])).map(
    (r: { name: string }) => r.name,
  );
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `GET /rest/imports/{id}` until the import has ended; returns its last state. */
export async function waitForImport(http: Http, key: string, id: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await request(http).get(`/rest/imports/${id}`).set(bearer(key));
    expect(res.status).toBe(200);
    const state = res.body.data.import;
    if (['completed', 'failed', 'cancelled'].includes(state.status)) return state;
    if (Date.now() > until) throw new Error(`import ${id} still ${state.status} after ${timeoutMs} ms: ${JSON.stringify(state)}`);
    await sleep(100);
  }
}

/** `GET /rest/imports/{id}/errors`, parsed. */
export async function importErrors(http: Http, key: string, id: string): Promise<{ row: number; messages: string[] }[]> {
  const res = await request(http).get(`/rest/imports/${id}/errors`).set(bearer(key)).buffer(true).parse(asText);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
  return (res.body as string)
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** The operator CLI (the build's `apps/cli/src/main.js`) run with `args`: its exit code and output. */
export function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(
      process.execPath,
      [resolve(process.cwd(), 'dist/apps/cli/src/main.js'), ...args],
      { timeout: 120_000 },
      (err, stdout, stderr) => done({ code: err ? Number(err.code) : 0, stdout, stderr }),
    ),
  );
}
