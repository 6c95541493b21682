import { ownPostgresWithKey, spawnApp, waitUntil, type AppProcess, type OwnPostgres } from './processes.js';

/**
 * README.md, Operations "Database unreachable": a records API process (started alone, as in a
 * deployment) on a Postgres of its own, which the test stops and starts again.
 */
describe('database outage', () => {
  let pg: OwnPostgres;
  let api: AppProcess;
  let key: string;

  beforeAll(async () => {
    ({ pg, key } = await ownPostgresWithKey('outage'));
    api = await spawnApp('records-api', { DATABASE_URL: pg.url });
  }, 60_000);

  afterAll(async () => {
    api?.child.kill('SIGKILL');
    await pg?.remove();
  });

  const auth = () => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' });
  const rest = () => fetch(`${api.url}/rest/companies?limit=1`, { headers: auth() });
  const graphql = () =>
    fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify({ query: '{ companies(first: 1) { totalCount } }' }),
    });
  const mcp = () =>
    fetch(`${api.url}/mcp`, {
      method: 'POST',
      headers: { ...auth(), Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_companies', arguments: {} } }),
    });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After on every transport while Postgres is down, and recovers by itself', async () => {
    expect((await rest()).status).toBe(200);
    expect((await fetch(`${api.url}/health/ready`)).status).toBe(200);

    await pg.stop();

    const r = await rest();
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    const body = (await r.json()) as any;
    expect(body).toMatchObject({ statusCode: 503, code: 'SERVICE_UNAVAILABLE', requestId: expect.any(String) });
    expect(body.messages[0]).toMatch(/database is unavailable/);

    const post = await fetch(`${api.url}/rest/companies`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify({ name: 'during outage' }),
    });
    expect(post.status).toBe(503);

    const g = await graphql();
    expect(g.status).toBe(503);
    expect(g.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await g.json()) as any).errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');

    const m = await mcp();
    expect(m.status).toBe(503);
    expect(m.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await m.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32000, data: { code: 'SERVICE_UNAVAILABLE' } } });

    const ready = await fetch(`${api.url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'unavailable' });
    const live = await fetch(`${api.url}/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    expect(api.child.exitCode).toBeNull();

    await pg.restart();
    const back = Date.now();
    await waitUntil(
      async () => (await rest()).status === 200,
      5_000,
      () => 'REST to answer 200 again',
    );
    expect(Date.now() - back).toBeLessThan(5_000);
    expect((await graphql()).status).toBe(200);
    expect((await mcp()).status).toBe(200);
    expect((await fetch(`${api.url}/health/ready`)).status).toBe(200);
    // The body of the write refused during the outage was not kept.
    const list = (await (
      await fetch(`${api.url}/rest/companies?filter=${encodeURIComponent('name[eq]:"during outage"')}`, { headers: auth() })
    ).json()) as any;
    expect(list.totalCount).toBe(0);
    expect(api.output()).not.toMatch(/INTERNAL_ERROR|Internal server error/);
  }, 60_000);
});
