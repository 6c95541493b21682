import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { httpJson, spawnApp, statsOf, type AppProcess } from './processes.js';

/**
 * Custom objects across instances and under churn (docs/data-model.md "Custom objects"):
 * two records API processes on one database, as behind a load balancer. A change of the
 * data model made through one is served by the other on its next request; a workspace
 * changing its objects and fields in a loop loses none of its own writes, gets no 500,
 * and does not hold up another workspace (counted: schema builds, the event loop's longest
 * delay, over IPC — not timed requests).
 */
describe('custom objects on two instances', () => {
  let app: INestApplication;
  let ds: DataSource;
  let one: AppProcess;
  let two: AppProcess;
  let ws: TestWorkspace;

  const call = (api: AppProcess, key: string, method: string, path: string, body?: unknown) =>
    httpJson(`${api.url}${path}`, { method, headers: { Authorization: `Bearer ${key}` }, body });

  beforeAll(async () => {
    ({ app, ds } = await startApi());
    ws = await newWorkspace(ds, 'objects-instances');
    const env = { WEBHOOKS_WORKER: 'off', IMPORTS_WORKER: 'off', NODE_OPTIONS: '--max-old-space-size=160' };
    [one, two] = await Promise.all([spawnApp('records-api', env, { ipc: true }), spawnApp('records-api', env, { ipc: true })]);
  }, 90_000);
  afterAll(async () => {
    one?.child.kill('SIGKILL');
    two?.child.kill('SIGKILL');
    await app?.close();
  });

  it('an object made through one instance is served at once by the other, and so is its deactivation', async () => {
    // The other instance has this workspace's model already (a version before the object).
    expect((await call(two, ws.keys.Admin, 'GET', '/rest/companies')).status).toBe(200);
    const made = await call(one, ws.keys.Admin, 'POST', '/rest/metadata/objects', {
      nameSingular: 'project',
      namePlural: 'projects',
      labelSingular: 'Project',
      labelPlural: 'Projects',
    });
    expect(made.status).toBe(201);
    const created = await call(two, ws.keys.Admin, 'POST', '/rest/projects', { name: 'Apollo' });
    expect(created.status).toBe(201);
    expect((await call(one, ws.keys.Admin, 'GET', `/rest/projects/${created.body.data.createProject.id}`)).body.data.project.name).toBe(
      'Apollo',
    );
    expect(
      (await call(two, ws.keys.Admin, 'POST', '/rest/metadata/fields', { object: 'projects', name: 'budget', type: 'NUMBER' })).status,
    ).toBe(201);
    expect(
      (await call(one, ws.keys.Admin, 'PATCH', `/rest/projects/${created.body.data.createProject.id}`, { budget: 5 })).body.data
        .updateProject.budget,
    ).toBe(5);
    const id = made.body.data.createObject.id;
    expect((await call(two, ws.keys.Admin, 'PATCH', `/rest/metadata/objects/${id}`, { isActive: false })).status).toBe(200);
    expect((await call(one, ws.keys.Admin, 'GET', '/rest/projects')).status).toBe(404);
  });

  it('object and field churn while writes run: no 500, no lost write, and another workspace is not held up', async () => {
    const churner = await newWorkspace(ds, 'objects-churn');
    const other = await newWorkspace(ds, 'objects-other');
    expect(
      (
        await call(one, churner.keys.Admin, 'POST', '/rest/metadata/objects', {
          nameSingular: 'task',
          namePlural: 'tasks',
          labelSingular: 'T',
          labelPlural: 'Ts',
        })
      ).status,
    ).toBe(201);
    await statsOf(one, 'reset');
    let stop = false;
    const statuses: number[] = [];
    let created = 0;
    const writes = (async () => {
      for (let i = 0; !stop; i++) {
        const res = await call(i % 2 ? one : two, churner.keys.Admin, 'POST', '/rest/tasks', { name: `task ${i}` });
        statuses.push(res.status);
        if (res.status === 201) created++;
      }
    })();
    const churn = (async () => {
      for (let i = 0; i < 12; i++) {
        const object = await call(one, churner.keys.Admin, 'POST', '/rest/metadata/objects', {
          nameSingular: `thing${i}`,
          namePlural: `things${i}`,
          labelSingular: 'T',
          labelPlural: 'Ts',
        });
        statuses.push(object.status);
        const field = await call(two, churner.keys.Admin, 'POST', '/rest/metadata/fields', {
          object: 'tasks',
          name: `f${i}`,
          type: 'TEXT',
        });
        statuses.push(field.status);
        statuses.push(
          (await call(one, churner.keys.Admin, 'PATCH', `/rest/metadata/fields/${field.body.data.createField.id}`, { isActive: false }))
            .status,
        );
        statuses.push(
          (await call(two, churner.keys.Admin, 'PATCH', `/rest/metadata/objects/${object.body.data.createObject.id}`, { isActive: false }))
            .status,
        );
        statuses.push((await call(one, churner.keys.Admin, 'DELETE', `/rest/metadata/objects/${object.body.data.createObject.id}`)).status);
      }
    })();
    const reads: number[] = [];
    const others = (async () => {
      while (!stop) reads.push((await call(one, other.keys.Admin, 'GET', '/rest/companies')).status);
    })();
    await churn;
    stop = true;
    await Promise.all([writes, others]);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(new Set(statuses)).toEqual(new Set([200, 201]));
    expect(reads.every((s) => s === 200)).toBe(true);
    // Every create answered 201 is there, and nothing else.
    const [{ n }] = await ds.query(
      `SELECT count(*)::int AS n FROM custom_records r JOIN objects o ON o.workspace_id = r.workspace_id AND o.id = r.object_id
        WHERE r.workspace_id = $1 AND o.name_plural = 'tasks'`,
      [churner.id],
    );
    expect(n).toBe(created);
    const stats = await statsOf(one);
    expect(one.child.exitCode).toBeNull();
    expect(stats['eventLoop.maxDelayMs']).toBeLessThan(1_000);
  }, 120_000);
});
