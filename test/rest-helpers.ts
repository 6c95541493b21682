import { STATUS_CODES } from 'node:http';
import type { Response } from 'supertest';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createApiKey } from '#identity/accounts.js';
import { RoleEntity, type ObjectPermissions } from '#database/entities/index.js';
import { bearer } from './factories.js';

/** Shared helpers of the REST e2e suites (test/rest-*.e2e-spec.ts). */

export type Http = Parameters<typeof request>[0];

/** A small client bound to one bearer secret (or none). */
export function client(http: Http, secret?: string) {
  const auth = secret ? bearer(secret) : {};
  return {
    get: (path: string, query?: Record<string, string | number>) =>
      request(http)
        .get(path)
        .query(query ?? {})
        .set(auth),
    post: (path: string, body: unknown) =>
      request(http)
        .post(path)
        .set(auth)
        .send(body as object),
    patch: (path: string, body: unknown) =>
      request(http)
        .patch(path)
        .set(auth)
        .send(body as object),
    delete: (path: string) => request(http).delete(path).set(auth),
  };
}
export type Client = ReturnType<typeof client>;

/**
 * The documented error shape (docs/rest.md): exactly `{statusCode, error, code, messages, requestId}`,
 * with `requestId` equal to the `X-Request-Id` response header. Returns the messages joined.
 */
export function expectError(res: Response, status: number, code: string): string {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(res.body).sort()).toEqual(['code', 'error', 'messages', 'requestId', 'statusCode']);
  expect(res.body.statusCode).toBe(status);
  expect(res.body.error).toBe(STATUS_CODES[status]);
  expect(Array.isArray(res.body.messages)).toBe(true);
  expect(res.body.messages.length).toBeGreaterThan(0);
  for (const m of res.body.messages) expect(typeof m).toBe('string');
  expect(typeof res.headers['x-request-id']).toBe('string');
  expect(res.headers['x-request-id'].length).toBeGreaterThan(0);
  expect(res.body.requestId).toBe(res.headers['x-request-id']);
  const text = JSON.stringify(res.body);
  expect(text).not.toMatch(/\bat .*\.(?:js|ts):\d+/); // no stack frames, ever
  return res.body.messages.join(' | ');
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The list envelope, exactly: `{data:{<plural>:[…]}, totalCount, pageInfo:{…}}`. */
export function expectListEnvelope(res: Response, plural: 'companies' | 'people'): any[] {
  expect(res.status).toBe(200);
  expect(Object.keys(res.body).sort()).toEqual(['data', 'pageInfo', 'totalCount']);
  expect(Object.keys(res.body.data)).toEqual([plural]);
  expect(Array.isArray(res.body.data[plural])).toBe(true);
  expect(typeof res.body.totalCount).toBe('number');
  expect(Object.keys(res.body.pageInfo).sort()).toEqual(['endCursor', 'hasNextPage', 'hasPreviousPage', 'startCursor']);
  expect(typeof res.body.pageInfo.hasNextPage).toBe('boolean');
  expect(typeof res.body.pageInfo.hasPreviousPage).toBe('boolean');
  return res.body.data[plural];
}

export const ids = (records: { id: string }[]) => records.map((r) => r.id);

/** A supertest parser that keeps the body as text whatever its type (supertest parses only JSON): `.buffer(true).parse(asText)`. */
export function asText(res: Response, done: (err: Error | null, body: string) => void): void {
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (text += chunk));
  res.on('end', () => done(null, text));
}

/** A role of the workspace with the given object permissions, and an API key acting under it. */
export async function keyWithRole(
  ds: DataSource,
  workspaceId: string,
  name: string,
  objectPermissions: ObjectPermissions,
): Promise<{ roleId: string; secret: string; keyId: string }> {
  const repo = ds.getRepository(RoleEntity);
  const role = await repo.save(
    repo.create({
      workspaceId,
      name,
      description: 'test role',
      objectPermissions,
      settingsPermissions: [],
      assignableToUsers: true,
      assignableToApiKeys: true,
    }),
  );
  const key = await createApiKey(ds, { workspaceId, role, name: `${name} key`, expiresAt: new Date(Date.now() + 86_400_000) });
  return { roleId: role.id, secret: key.secret, keyId: key.id };
}

export function allPermissions(value = true): ObjectPermissions {
  const actions = () => ({ read: value, create: value, update: value, delete: value });
  return { companies: actions(), people: actions() };
}
