import type { INestApplication } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createApiKey, createWorkspace, findRole } from '#identity/accounts.js';
import { dataSourceOptions, runMigrations } from '#database/data-source.js';
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
    const key = await createApiKey(ds, {
      workspaceId: workspace.id,
      role,
      name: `${roleName} key`,
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    keys[roleName] = key.secret;
  }
  return { id: workspace.id, name: workspace.name, keys };
}

export const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });

/**
 * A database of its own on the test server, migrated and otherwise empty, for code that acts
 * only on an empty database (the demo seed); dropped after the file. Call in a describe body.
 */
export function useEmptyDatabase(label: string): {
  readonly ds: DataSource;
  readonly url: string;
  beforeDrop(close: () => Promise<void>): void;
} {
  const name = `${label}_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  let admin: pg.Client;
  let ds: DataSource;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    ds = await new DataSource(dataSourceOptions(url.toString(), 2)).initialize();
    await runMigrations(ds);
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await ds?.destroy();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });
  return {
    get ds() {
      return ds;
    },
    url: url.toString(),
    /** What must stop before the database is dropped (apps and clients connected to it). */
    beforeDrop: (close) => void closers.push(close),
  };
}
