import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { createRecordsApi } from '../apps/records-api/src/bootstrap.js';

/** One records API on the test database (DATABASE_URL from the global setup) per test file. */
process.env.LOG_LEVEL ??= 'error';

export async function startApi(): Promise<{ app: INestApplication; ds: DataSource; http: ReturnType<INestApplication['getHttpServer']> }> {
  const app = await createRecordsApi();
  await app.init();
  return { app, ds: app.get(DataSource), http: app.getHttpServer() };
}

export interface TestWorkspace {
  id: string;
  name: string;
  /** Bearer secrets by role name. */
  keys: Record<'Admin' | 'Viewer', string>;
}

/** A fresh workspace with an Admin and a Viewer API key; names are unique per call. */
export async function newWorkspace(ds: DataSource, label = 'ws'): Promise<TestWorkspace> {
  const workspace = await createWorkspace(ds, `${label}-${randomUUID().slice(0, 8)}`);
  const keys = {} as TestWorkspace['keys'];
  for (const roleName of ['Admin', 'Viewer'] as const) {
    const role = await findRole(ds, workspace.id, roleName);
    const key = await createApiKey(ds, { workspaceId: workspace.id, role, name: `${roleName} key`, expiresAt: new Date(Date.now() + 86_400_000) });
    keys[roleName] = key.secret;
  }
  return { id: workspace.id, name: workspace.name, keys };
}

export const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });
