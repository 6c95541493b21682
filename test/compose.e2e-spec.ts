import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '#database/data-source.js';
import { freePort, PASSWORD, workspaceWith } from './public-origin.js';
import { ROOT, spawnApp, tryStart, type AppProcess } from './processes.js';
import { expectThrottled, tryLogin } from './sign-in-attempts.js';

// js-yaml ships no types; it comes with @nestjs/swagger and graphile-worker's cosmiconfig.
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  networks?: string[] | Record<string, unknown>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}
interface Compose {
  services: Record<string, Service>;
  networks?: Record<string, { ipam?: { config?: { subnet: string }[] } } | null>;
}

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const compose = yaml.load(read('docker-compose.yml')) as Compose;
const env = (service: string) =>
  Object.fromEntries(Object.entries(compose.services[service].environment ?? {}).map(([k, v]) => [k, String(v)]));

/**
 * `docker-compose.yml` (README "Operating it"): there is no Docker engine here, so the file is
 * read as Docker would read it and both apps are started as it wires them, each on an address
 * of its own, with the auth server reached only through the records API's forwarding.
 */
describe('docker-compose.yml', () => {
  it('parses, and wires the auth server and the records API to each other', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['auth-server', 'postgres', 'records-api']);
    const auth = env('auth-server');
    const api = env('records-api');
    // The auth server listens on its container's network, and only the records API is published.
    expect(auth.AUTH_HOST).toBe('0.0.0.0');
    expect(compose.services['auth-server'].ports).toBeUndefined();
    expect(compose.services['records-api'].ports).toEqual([expect.stringMatching(/:3000$/)]);
    expect(api.AUTH_URL).toBe(`http://auth-server:${auth.AUTH_PORT}`);
    // It trusts X-Forwarded-For from the apps' network only, where the records APIs are.
    const [network] = Object.keys(compose.networks ?? {});
    const subnet = compose.networks?.[network]?.ipam?.config?.[0]?.subnet;
    expect(subnet).toEqual(expect.any(String));
    expect(auth.AUTH_TRUST_PROXY).toBe(subnet);
    for (const name of ['auth-server', 'records-api']) expect(compose.services[name].networks).toEqual([network]);
    // The records API reports unhealthy when what it forwards to does not answer.
    expect(compose.services['records-api'].healthcheck?.test.join(' ')).toContain('/.well-known/oauth-authorization-server');
    for (const name of ['auth-server', 'records-api']) expect(compose.services[name].depends_on?.postgres).toBeDefined();
  });

  it('sets only variables the apps read, each listed in .env.example', () => {
    const listed = new Set([...read('.env.example').matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
    for (const name of ['auth-server', 'records-api']) {
      for (const variable of Object.keys(env(name))) expect({ variable, listed: listed.has(variable) }).toEqual({ variable, listed: true });
    }
    for (const variable of ['AUTH_HOST', 'AUTH_URL', 'AUTH_TRUST_PROXY']) expect(listed.has(variable)).toBe(true);
  });

  it('builds its image on Node.js 24 LTS', () => {
    const from = [...read('Dockerfile').matchAll(/^FROM\s+(\S+)/gim)].map((m) => m[1]);
    expect(from.length).toBeGreaterThan(0);
    for (const image of from) expect(image).toMatch(/^node:24[.-]/);
    for (const service of ['auth-server', 'records-api']) expect(compose.services[service].build).toBe('.');
    // `npm run cli` in a container runs the built code (scripts/cli.mjs; test/cli-build.e2e-spec.ts).
    expect(read('Dockerfile')).toMatch(/^COPY --from=build \/app\/scripts\/cli\.mjs \.\/scripts\/cli\.mjs$/m);
  });
});

/**
 * Docker's .dockerignore rules (https://docs.docker.com/build/concepts/context/#dockerignore-files):
 * Go `filepath.Match` patterns relative to the context root, `**` for any number of
 * directories, `!` to keep again; the last matching line wins, and a directory that matches
 * takes everything under it along.
 */
function dockerIgnores(rules: string[], path: string): boolean {
  const compiled = rules.map((line) => {
    const keep = line.startsWith('!');
    const pattern = (keep ? line.slice(1) : line).trim().replace(/^\/+|\/+$/g, '');
    const source = pattern
      .split(/(\*\*\/|\/\*\*$|\*\*|\*|\?)/)
      .map((part) =>
        part === '**/'
          ? '(?:.*/)?'
          : part === '/**'
            ? '(?:/.*)?'
            : part === '**'
              ? '.*'
              : part === '*'
                ? '[^/]*'
                : part === '?'
                  ? '[^/]'
                  : part.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
      )
      .join('');
    return { keep, re: new RegExp(`^${source}$`) };
  });
  const prefixes = path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const { keep, re } of compiled) if (prefixes.some((p) => re.test(p))) ignored = !keep;
  return ignored;
}

describe('.dockerignore', () => {
  let rules: string[];
  beforeAll(() => {
    rules = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
  });

  it.each([
    'node_modules/pg/package.json',
    '.data/vault-master.key',
    '.data/pg.json',
    '.data/pg/PG_VERSION',
    '.data/private-x/data/pg.json',
    '.env',
    '.env.production',
    'deploy/.env',
    'server.key',
    'certs/tls.key',
    'certs/tls.pem',
    'dist/apps/start.js',
    '.git/config',
    'coverage/lcov.info',
  ])('keeps %s out of the image', (path) => {
    expect(dockerIgnores(rules, path)).toBe(true);
  });

  it.each([
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'apps/start.ts',
    'apps/records-api/src/main.ts',
    'libs/config/src/config.ts',
    'bench/run.ts',
    'docs/configuration.md',
    'scripts/cli.mjs',
  ])('sends %s, which the build needs', (path) => {
    expect(dockerIgnores(rules, path)).toBe(false);
  });

  it('reads rules as Docker does (the checker itself)', () => {
    expect(dockerIgnores(['**/*.key', '!keep/*.key'], 'a/b/c.key')).toBe(true);
    expect(dockerIgnores(['**/*.key', '!keep/*.key'], 'keep/c.key')).toBe(false);
    expect(dockerIgnores(['.data'], '.data/pg/base/1')).toBe(true);
    expect(dockerIgnores(['*.key'], 'a/c.key')).toBe(false);
  });
});

/** This machine's first address off loopback with its network, as a container's on the compose network; else a second loopback address. */
function containerAddress(): { host: string; network: string } {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  // Without one, the records API's connections to 127.0.0.2 leave from 127.0.0.1.
  return found ? { host: found.address, network: found.cidr! } : { host: '127.0.0.2', network: '127.0.0.1/32' };
}

describe('both apps started as docker-compose.yml wires them', () => {
  const { host, network } = containerAddress();
  let ds: DataSource;
  let api: AppProcess;
  let auth: AppProcess;
  // Client addresses of this run only: the sign-in counters live in the shared test database.
  const prefix = `127.${randomBytes(2).join('.')}`;
  let seq = 1;
  const client = () => `${prefix}.${++seq}`;

  beforeAll(async () => {
    ds = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 2)).initialize();
    const [apiPort, authPort] = await Promise.all([freePort(), freePort()]);
    const publicUrl = `http://127.0.0.1:${apiPort}`;
    const common = { DATABASE_URL: process.env.DATABASE_URL!, PUBLIC_URL: publicUrl, AUTH_PROXY: 'on', SIGNIN_FAILURES_PER_ADDRESS: '3' };
    const wired = env('auth-server');
    auth = await spawnApp('auth-server', {
      ...common,
      AUTH_HOST: wired.AUTH_HOST,
      AUTH_PORT: String(authPort),
      // The compose network's subnet, here this machine's network.
      AUTH_TRUST_PROXY: network,
    });
    // `auth-server` resolves to the auth server's address on that network.
    api = await spawnApp('records-api', {
      ...common,
      PORT: String(apiPort),
      AUTH_URL: `http://${host}:${authPort}`,
      WEBHOOKS_WORKER: 'off',
    });
  }, 60_000);
  afterAll(async () => {
    api?.child.kill('SIGTERM');
    auth?.child.kill('SIGTERM');
    await Promise.all([api?.exited, auth?.exited]);
    await ds?.destroy();
  });

  it('signs in through the records API, and throttles two client addresses apart', async () => {
    const { people } = await workspaceWith(ds, ['Member'], 'compose');
    const signedIn = await tryLogin(api.url, people[0].email, PASSWORD, client());
    expect({ status: signedIn.status, location: signedIn.headers.location }).toEqual({ status: 303, location: '/settings' });

    const attacker = client();
    let last;
    for (let i = 0; i < 4; i++) last = await tryLogin(api.url, `nobody-${randomBytes(4).toString('hex')}@example.com`, 'wrong', attacker);
    expectThrottled(last!);
    // Another client is not throttled by the first one's failures: the auth server saw each address.
    const other = await tryLogin(api.url, `nobody-${randomBytes(4).toString('hex')}@example.com`, 'wrong', client());
    expect(other.status).toBe(401);
    expect((await tryLogin(api.url, people[0].email, PASSWORD, client())).status).toBe(303);
  });

  it("takes a direct caller's address from its socket, whatever X-Forwarded-For it sends", async () => {
    const direct = `http://${host}:${auth.port}`;
    const from = client();
    let last;
    for (let i = 0; i < 4; i++) {
      last = await tryLogin(direct, `nobody-${randomBytes(4).toString('hex')}@example.com`, 'wrong', from, {
        'x-forwarded-for': `203.0.113.${i + 1}`,
      });
    }
    expectThrottled(last!);
  });
});

describe('a wrong auth wiring setting', () => {
  it.each([
    ['auth-server', { AUTH_HOST: 'auth.example' }, 'AUTH_HOST must be an IP address'],
    ['auth-server', { AUTH_PROXY: 'on', AUTH_TRUST_PROXY: 'private' }, 'AUTH_TRUST_PROXY: "private" is not'],
    ['records-api', { AUTH_URL: 'http://auth-server:3001/auth' }, "AUTH_URL must be the auth server's origin"],
    ['records-api', { AUTH_URL: 'auth-server:3001' }, "AUTH_URL must be the auth server's origin"],
    ['records-api', { TRUST_PROXY: '10.0.0.0/8,private' }, 'TRUST_PROXY: "private" is not'],
  ] as const)('%s with %j stops the start with one line', async (app, env, message) => {
    const result = await tryStart(app, { DATABASE_URL: process.env.DATABASE_URL!, ...env });
    expect({ started: result.started, code: result.code }).toEqual({ started: false, code: 1 });
    expect(result.output).toContain(`error: ${message}`);
    expect(result.output).not.toMatch(/^\s+at /m);
  });

  it('warns when the auth server listens beyond loopback but trusts forwarded addresses from loopback only', async () => {
    const env = { DATABASE_URL: process.env.DATABASE_URL!, AUTH_PROXY: 'on', AUTH_HOST: '0.0.0.0', LOG_LEVEL: 'warn' };
    const warned = await tryStart('auth-server', env);
    expect(warned.started).toBe(true);
    expect(warned.output).toContain('AUTH_HOST is 0.0.0.0 but AUTH_TRUST_PROXY trusts loopback only');
    const wired = await tryStart('auth-server', { ...env, AUTH_TRUST_PROXY: '172.28.0.0/24' });
    expect(wired.started).toBe(true);
    expect(wired.output).not.toContain('AUTH_TRUST_PROXY');
  });
});
