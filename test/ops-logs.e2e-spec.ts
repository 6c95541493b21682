import { DataSource } from 'typeorm';
import { dataSourceOptions } from '#database/data-source.js';
import { newWorkspace } from './factories.js';
import { spawnApp, type AppProcess } from './processes.js';

/**
 * README.md, Operations logs: LOG_FORMAT=json prints one JSON object per line and one line per request,
 * and no line holds a secret, a token, a password, an Authorization or Cookie header.
 */
describe('JSON logs', () => {
  let api: AppProcess;
  let auth: AppProcess;
  let key: string;
  let workspaceId: string;

  beforeAll(async () => {
    const ds = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 2)).initialize();
    const ws = await newWorkspace(ds, 'logs');
    await ds.destroy();
    key = ws.keys.Admin;
    workspaceId = ws.id;
    const env = { DATABASE_URL: process.env.DATABASE_URL!, LOG_FORMAT: 'json', LOG_LEVEL: 'log' };
    [api, auth] = await Promise.all([spawnApp('records-api', env), spawnApp('auth-server', env)]);
  }, 60_000);
  afterAll(() => {
    api?.child.kill('SIGKILL');
    auth?.child.kill('SIGKILL');
  });

  it('writes one line per request with who called, and never a credential, password, query or cookie', async () => {
    const secretFilter = 'name[eq]:"secret-customer-name"';
    const cookie = 'session=cookie-value-that-must-not-leak';
    const list = await fetch(`${api.url}/rest/companies?limit=1&filter=${encodeURIComponent(secretFilter)}`, {
      headers: { Authorization: `Bearer ${key}`, Cookie: cookie, 'X-Request-Id': 'log-test-1' },
    });
    expect(list.status).toBe(200);
    const made = 'wrs_made-up-token-that-must-not-leak';
    expect(
      (await fetch(`${api.url}/rest/companies`, { headers: { Authorization: `Bearer ${made}`, 'X-Request-Id': 'log-test-2' } })).status,
    ).toBe(401);
    const password = 'password-that-must-not-leak';
    await fetch(`${auth.url}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
      body: new URLSearchParams({ email: 'nobody@example.com', password }).toString(),
      redirect: 'manual',
    });

    api.child.kill('SIGTERM');
    auth.child.kill('SIGTERM');
    await Promise.all([api.exited, auth.exited]);
    const output = api.output() + auth.output();
    const lines = output.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');

    const ok = requests.find((l) => l.requestId === 'log-test-1');
    expect(ok).toMatchObject({ method: 'GET', path: '/rest/companies', status: 200, workspaceId, credentialKind: 'apiKey' });
    expect(ok.credentialId).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof ok.durationMs).toBe('number');
    expect(requests.find((l) => l.requestId === 'log-test-2')).toMatchObject({ path: '/rest/companies', status: 401 });
    expect(requests.find((l) => l.path === '/login')).toMatchObject({ method: 'POST' });

    for (const leak of [key, key.slice(4, 20), made, password, 'cookie-value-that-must-not-leak', 'secret-customer-name', 'Bearer ']) {
      expect({ leak, found: output.includes(leak) }).toEqual({ leak, found: false });
    }
    expect(output).not.toMatch(/authorization|"cookie"/i);
  }, 60_000);
});
