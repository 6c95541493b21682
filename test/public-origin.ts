import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { DataSource } from 'typeorm';
import { createAuthServer } from '../apps/auth-server/src/bootstrap.js';
import { createRecordsApi } from '../apps/records-api/src/bootstrap.js';
import { addMember, createUser, createWorkspace, findRole } from '#identity/accounts.js';

process.env.LOG_LEVEL ??= 'error';

export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

export interface PublicOrigin {
  url: string;
  /** The records API. */
  api: INestApplication;
  ds: DataSource;
  close(): Promise<void>;
}

/**
 * The records API (the public origin, forwarding /settings, /login … ) and the auth server,
 * each on a loopback port, as `npm start` runs them, with `env` on top. The environment is
 * restored on close.
 */
export async function startPublicOrigin(env: Record<string, string> = {}): Promise<PublicOrigin> {
  const savedEnv = { ...process.env };
  const authPort = await freePort();
  const apiPort = await freePort();
  const url = `http://127.0.0.1:${apiPort}`;
  Object.assign(process.env, { PORT: String(apiPort), AUTH_PORT: String(authPort), PUBLIC_URL: url, ...env });
  let auth: INestApplication | undefined;
  let api: INestApplication | undefined;
  try {
    auth = await createAuthServer();
    await auth.listen(authPort, '127.0.0.1');
    api = await createRecordsApi();
    await api.listen(apiPort, '127.0.0.1');
  } catch (err) {
    await api?.close();
    await auth?.close();
    process.env = savedEnv;
    throw err;
  }
  return {
    url,
    api,
    ds: api.get(DataSource),
    async close() {
      await api?.close();
      await auth?.close();
      process.env = savedEnv;
    },
  };
}

export const PASSWORD = 'correct horse battery';
export const unique = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;

/** A workspace with one member per given role; every person's password is PASSWORD. */
export async function workspaceWith(ds: DataSource, roles: string[], label = 'ws') {
  const workspace = await createWorkspace(ds, unique(label));
  const people: { id: string; email: string; role: string }[] = [];
  for (const roleName of roles) {
    const email = `${unique(roleName.toLowerCase())}@example.com`;
    const user = await createUser(ds, email, PASSWORD);
    await addMember(ds, workspace.id, user.id, await findRole(ds, workspace.id, roleName));
    people.push({ id: user.id, email, role: roleName });
  }
  return { workspace, people };
}

/** A REST call with a bearer key at the public origin `url`; the body parsed as JSON. */
export async function restAt(url: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test reads the envelope it expects
  return { status: res.status, body: (await res.json()) as any };
}
