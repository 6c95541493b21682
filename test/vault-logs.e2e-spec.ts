import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { addMember, createApiKey, createUser, createWorkspace, findRole } from '#identity/accounts.js';
import { dataSourceOptions } from '#database/data-source.js';
import { FormBrowser } from '../bench/form-browser.js';
import { spawnApp, waitUntil, type AppProcess } from './processes.js';
import { freePort } from './public-origin.js';
import { settingsJson } from './settings-client.js';
import { TEST_WORKER_ENV } from './webhook-receiver.js';

/**
 * No log line of either app holds a vault value with LOG_FORMAT=json (docs/vault.md), whatever
 * passed through them as real processes: writes, refused writes, reveals, and a webhook
 * header filled in from the vault whose receiver answers with it.
 */
describe('The vault in the logs of both processes', () => {
  it('LOG_FORMAT=json: no line of either app holds a value that was written, refused, revealed or sent in a header', async () => {
    const ds = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 2)).initialize();
    const [apiPort, authPort] = [await freePort(), await freePort()];
    const env = {
      ...TEST_WORKER_ENV,
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'verbose',
      PORT: String(apiPort),
      AUTH_PORT: String(authPort),
      PUBLIC_URL: `http://127.0.0.1:${apiPort}`,
      AUTH_PROXY: 'on',
    };
    let auth: AppProcess | undefined;
    let api: AppProcess | undefined;
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      received.push(String(req.headers['x-api-key']));
      req.resume();
      req.on('end', () => res.writeHead(500).end(`bad key ${req.headers['x-api-key']}`));
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    try {
      auth = await spawnApp('auth-server', env);
      api = await spawnApp('records-api', env);
      const url = api.url;
      const workspace = await createWorkspace(ds, `vault-logs-${randomBytes(4).toString('hex')}`);
      const password = `pw-${randomBytes(8).toString('hex')}`;
      const email = `${randomBytes(4).toString('hex')}@vault-logs.example`;
      const user = await createUser(ds, email, password);
      await addMember(ds, workspace.id, user.id, await findRole(ds, workspace.id, 'Admin'));
      const key = await createApiKey(ds, {
        workspaceId: workspace.id,
        role: await findRole(ds, workspace.id, 'Admin'),
        name: 'logs',
        expiresAt: new Date(Date.now() + 86_400_000),
      });
      const values = Array.from({ length: 4 }, (_, i) => `logged-${i}-${randomBytes(16).toString('hex')}`);
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`${url}${path}`, {
          method,
          headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      expect((await call('POST', '/rest/vault/secrets', { name: 'API_KEY', value: values[0] })).status).toBe(201);
      expect((await call('PATCH', '/rest/vault/secrets/API_KEY', { value: values[1] })).status).toBe(200);
      // Refused writes: a value too large, a bad name, a value given where the name goes.
      expect((await call('POST', '/rest/vault/secrets', { name: 'BIG', value: values[2].repeat(400) })).status).toBe(400);
      expect((await call('POST', '/rest/vault/secrets', { name: 'bad name', value: values[2] })).status).toBe(400);
      expect((await call('POST', '/rest/vault/secrets', { name: values[2], value: 'x' })).status).toBe(400);
      expect((await call('GET', '/rest/vault/secrets/API_KEY/value')).status).toBe(403);

      const b = new FormBrowser();
      await b.go(`${url}/login`);
      await b.submit('Sign in', { email, password });
      const csrf = { 'x-csrf-token': b.cookie('wrs_csrf')! };
      expect(
        (await settingsJson(url, b, 'POST', '/settings/api/vault/secrets', { name: 'PAGE_SECRET', value: values[3] }, csrf)).status,
      ).toBe(201);
      const revealed = await settingsJson(url, b, 'POST', '/settings/api/vault/secrets/PAGE_SECRET/reveal', { password }, csrf);
      expect(revealed.body.data.vaultSecretValue.value).toBe(values[3]);
      expect(
        (await settingsJson(url, b, 'POST', '/settings/api/vault/secrets/API_KEY/reveal', {}, csrf)).body.data.vaultSecretValue.value,
      ).toBe(values[1]);

      const { port } = receiver.address() as { port: number };
      const hook = await settingsJson(
        url,
        b,
        'POST',
        '/settings/api/webhooks',
        { url: `http://127.0.0.1:${port}/hook`, headers: [{ name: 'X-Api-Key', value: '{{vault.API_KEY}}' }] },
        csrf,
      );
      expect(hook.status).toBe(201);
      expect((await call('POST', '/rest/companies', { name: 'Logged' })).status).toBe(201);
      // A failing receiver: retried (every 300 ms here), each failure logged by the worker.
      await waitUntil(
        () => received.length >= 2,
        30_000,
        () => 'two deliveries',
      );
      expect(received[0]).toBe(values[1]);

      api.child.kill('SIGTERM');
      auth.child.kill('SIGTERM');
      await Promise.all([api.exited, auth.exited]);
      const logs = { api: api.output(), auth: auth.output() };
      for (const output of Object.values(logs)) {
        const lines = output.split('\n').filter((l) => l.startsWith('{'));
        expect(lines.length).toBeGreaterThan(5);
        for (const line of lines) JSON.parse(line);
      }
      // The reveal was logged as a request, by path only.
      expect(logs.auth).toContain('/settings/api/vault/secrets/PAGE_SECRET/reveal');
      const found = values.flatMap((v, i) =>
        Object.entries(logs)
          .filter(([, out]) => out.includes(v))
          .map(([p]) => `value ${i} in the ${p} log`),
      );
      expect(found).toEqual([]);
    } finally {
      api?.child.kill('SIGKILL');
      auth?.child.kill('SIGKILL');
      receiver.closeAllConnections();
      receiver.close();
      await ds.destroy();
    }
  }, 120_000);
});
