import type { LogLevel } from '@nestjs/common';
import { config as loadDotenv } from 'dotenv';
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AddressListError, addressList, inAddressList } from '#net/address-list.js';

/** Every setting the service reads, with its default. `.env.example` mirrors this list. */
export interface AppConfig {
  port: number;
  authPort: number;
  publicUrl: string;
  /** Unset: an embedded Postgres is started under `dataDir`. */
  databaseUrl: string | undefined;
  /** How `databaseUrl` reaches Postgres (docs/scaling.md "Behind PgBouncer"; docs/decisions/0038-pooler-and-citus.md). */
  database: DatabaseConnections;
  /** Read replicas of `databaseUrl` for record reads (libs/database/src/read-routing.ts); empty: all on the primary. */
  databaseReadUrls: string[];
  /** A replica further behind the primary than this (ms) is not read from. */
  readReplicaMaxLagMs: number;
  dataDir: string;
  /** Forward auth-server paths from the records API (off behind an ingress that routes them). */
  authProxy: boolean;
  /** `AUTH_HOST`: the address the auth server listens on; 127.0.0.1 unless it runs apart from the records API (docker-compose.yml). */
  authHost: string;
  /** `AUTH_URL`: the auth server's origin, where the records API forwards its paths. */
  authUrl: string;
  /**
   * `AUTH_TRUST_PROXY`: the records APIs' addresses as the auth server sees them (addresses,
   * CIDRs, `loopback`, `linklocal`, `uniquelocal`): the one hop whose X-Forwarded-For gives it
   * the client address (docs/security.md). Default `loopback`.
   */
  authTrustProxy: string[];
  /** Requests per minute per credential (or per IP when there is none). */
  rateLimitPerMinute: number;
  /** Requests per minute per workspace, all its keys and tokens together; 0 = off. */
  rateLimitPerWorkspacePerMinute: number;
  /** Failed authentications (401) per minute per client address before 429; 0 = off. */
  authFailuresPerMinute: number;
  /** Dynamic client registrations per minute per client address. */
  registrationsPerMinute: number;
  logLevel: string;
  /**
   * Which proxies in front of the records API are trusted for the client address
   * (X-Forwarded-For): Express's `trust proxy` value — empty or `false` (default: none),
   * a hop count, or addresses/CIDRs/`loopback`/`private`, comma-separated.
   */
  trustProxy: boolean | number | string[];
  /** Sign-in throttling (docs/security.md): failures per account and per client address in a window. */
  signInFailuresPerAccount: number;
  signInFailuresPerAddress: number;
  signInWindowSeconds: number;
  /** Sign-ups per client address per hour. */
  signUpsPerAddressPerHour: number;
  /** Browser origins besides PUBLIC_URL's that may call /mcp (docs/mcp.md). */
  mcpAllowedOrigins: string[];
  /** `json`: one JSON object per line, one line per request (README.md, Operations); `text`: Nest's console format. */
  logFormat: 'json' | 'text';
  /** On SIGTERM, how long requests in flight may take before their connections are closed. */
  shutdownGraceMs: number;
  /**
   * How long the records API may keep a resolved credential in memory (ms; 0 = off). A kept
   * one is used only after a read of the credential version that every change to keys,
   * roles, members, apps or grants moves; this bounds how long one is kept without any change.
   */
  credentialCacheMs: number;
  /** At most this many shared custom-field indexes per record table (docs/decisions/0028-custom-fields-storage.md). */
  customFieldIndexesPerTable: number;
  /** Of those, at most this many for one workspace's fields (docs/decisions/0048-custom-field-index-sweeper.md). */
  customFieldIndexesPerWorkspace: number;
  /** How often each records API instance makes the custom-field indexes match the fields (ms; 0 = only at start and on changes). */
  customFieldIndexSweepMs: number;
  /**
   * Old-generation heap of the records API process in MB (`--max-old-space-size`, set by the
   * launcher); 0 leaves V8's default, which lets an idle-looking heap grow to hundreds of MB.
   */
  apiHeapMb: number;
  /**
   * What the records API keeps of per-workspace GraphQL schemas and their servers, in MB
   * (estimated; docs/decisions/0052-graphql-schemas-bounded-in-bytes.md): well under the heap bound.
   */
  graphqlSchemaCacheMb: number;
  /**
   * Postgres cancels any statement of the apps' pools that runs longer (ms; 0 = no limit).
   * Migrations run without it.
   */
  databaseStatementTimeoutMs: number;
  /** `off`: every GraphQL request goes through Apollo's pipeline (an operator's fallback, no deploy needed). */
  graphqlFastPath: boolean;
  /** REST_FAST_PATH: single creates answered without Nest's routing (apps/records-api/src/rest/create-fast-path.ts). */
  restFastPath: boolean;
  /** How long the auth server waits for one client ID metadata document (ms). */
  cimdFetchTimeoutMs: number;
  /** Both apps' HTTP servers: how long a client may take to send (ms; 0 = no limit). */
  httpTimeouts: HttpTimeouts;
  /** Exports (docs/rest.md "Exports"; docs/decisions/0033-streamed-exports.md). */
  exports: ExportLimits;
  /** Imports (docs/rest.md "Imports"). */
  imports: ImportSettings;
}

export interface DatabaseConnections {
  /**
   * `DATABASE_POOLER`: `none` (default), or `transaction` when DATABASE_URL is a pooler in
   * transaction mode (PgBouncer `pool_mode = transaction`): its connections carry no session
   * state, so they get no startup options, no LISTEN and (by default) no named prepared statements.
   */
  pooler: 'none' | 'transaction';
  /**
   * `DATABASE_SESSION_URL`: a session connection to the same database (direct, or a pooler in
   * session mode) for what needs one: migrations (advisory lock), the job queue's workers
   * (LISTEN), exports (session advisory locks, COPY), custom-field index builds. Defaults to
   * DATABASE_URL; required with `pooler: 'transaction'`.
   */
  sessionUrl: string | undefined;
  /** `DATABASE_PREPARED_STATEMENTS`: named prepared statements for the hot queries; default on, off with a transaction pooler. */
  preparedStatements: boolean;
}

export interface ExportLimits {
  /** Exports of one workspace running at once, across every instance; one more → 429. */
  perWorkspace: number;
  /** Exports running at once on one records API process, each on a connection of its own pool (not the request pool). */
  perInstance: number;
  /** An export whose client reads nothing for this long is ended and its query stopped (ms; 0 = no limit). */
  stallTimeoutMs: number;
}

export interface ImportSettings {
  /** `IMPORT_MAX_BYTES`: the largest upload; a longer body is 413. */
  maxBytes: number;
  /** `IMPORT_MAX_ROWS`: rows past this many are not imported and the import ends `failed`. */
  maxRows: number;
  /** `IMPORTS_WORKER=off` keeps this process from running imports (another instance does). */
  worker: boolean;
  /** Imports run at once by this process (each workspace has at most one running anywhere). */
  concurrency: number;
  /** How often the import worker records that it is alive and releases the imports of workers that stopped (silent for 3 intervals). */
  heartbeatMs: number;
  /** `IMPORT_RETRY_BASE_MS`: the wait before the run after one that failed without importing a row; doubles with each such run. */
  retryBaseMs: number;
  /** `IMPORT_MAX_FAILED_RUNS`: this many runs in a row that import no row end the import `failed` (docs/decisions/0051-queue-workers-that-outlive-postgres.md). */
  maxFailedRuns: number;
  /**
   * `IMPORTS_SLICE_MS`: a running import that has held its worker this long gives it up after
   * its current batch when another workspace's import waits for one, and waits its turn again.
   */
  sliceMs: number;
  /** `IMPORT_UPLOADS_PER_INSTANCE`: uploads streaming into one process at once (each holds up to 1 MB); one more is 503. */
  uploadsPerInstance: number;
  /** `IMPORT_UPLOADS_PER_WORKSPACE`: of those, one workspace's; one more is 429. */
  uploadsPerWorkspace: number;
  /**
   * `IMPORT_UPLOAD_MIN_BYTES` per `IMPORT_UPLOAD_WINDOW_MS`: an upload that sends fewer bytes
   * in a window (counting only time spent waiting for the client) is cut with 408.
   */
  uploadMinBytes: number;
  uploadWindowMs: number;
  /** `IMPORT_QUEUE_PER_WORKSPACE`: a workspace's imports not yet ended (uploading, queued, running); one more is 429. */
  queuePerWorkspace: number;
  /** `IMPORT_QUEUE_BYTES_PER_WORKSPACE`: the bytes of those files together; an upload that would pass it is 429. */
  queueBytesPerWorkspace: number;
}

export interface HttpTimeouts {
  /** The request line and headers. */
  headersMs: number;
  /** The whole request, body included. */
  requestMs: number;
  /** An idle keep-alive connection between requests. */
  keepAliveMs: number;
}

/**
 * A setting that keeps the process from starting: reported as one line (see exitOnConfigError),
 * exit code 1, or `exitCode` (78, EX_CONFIG, where retrying cannot help: docs/decisions/0022-start-errors-exit-78.md).
 */
export class ConfigError extends Error {
  // Private: Nest's exception handler prints an error's own fields, and the start error must stay one line.
  readonly #exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.#exitCode = exitCode;
    this.name = new.target.name;
    // Where it was thrown says nothing about a wrong setting; whoever logs the stack (Nest's
    // ExceptionHandler, when it is thrown inside a provider) then logs one line too.
    this.stack = `${this.name}: ${message}`;
  }

  get exitCode(): number {
    return this.#exitCode;
  }
}

/**
 * For an app's entry point: a ConfigError ends the process with its one-line message (no
 * stack trace to read through for a wrong setting); anything else is thrown on.
 */
export function exitOnConfigError(err: unknown): never {
  if (err instanceof ConfigError) {
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  throw err;
}

let loaded = false;

function intFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

let root: string | undefined;

/**
 * The checkout this code runs from (where `.env` and `.data/` live), found from this
 * file's own location so the CLI and apps agree whatever the working directory.
 */
export function projectRoot(): string {
  if (process.env.WRS_ROOT) return process.env.WRS_ROOT;
  if (!root) {
    let dir = dirname(fileURLToPath(import.meta.url));
    while (dirname(dir) !== dir && !isOurPackage(dir)) dir = dirname(dir);
    root = isOurPackage(dir) ? dir : process.cwd();
  }
  return root;
}

function isOurPackage(dir: string): boolean {
  try {
    return JSON.parse(readFileSync(resolve(dir, 'package.json'), 'utf8')).name === 'workspace-records-service';
  } catch {
    return false;
  }
}

export function loadConfig(): AppConfig {
  if (!loaded) {
    const envFile = resolve(projectRoot(), '.env');
    if (existsSync(envFile)) loadDotenv({ path: envFile, quiet: true });
    loaded = true;
  }
  const port = intFrom('PORT', 3000);
  const publicUrl = (process.env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  const authPort = intFrom('AUTH_PORT', 3001);
  const authHost = authHostFrom();
  return {
    port,
    authPort,
    publicUrl,
    databaseUrl: process.env.DATABASE_URL || undefined,
    database: databaseConnectionsFrom(),
    databaseReadUrls: (process.env.DATABASE_READ_URL ?? '')
      .split(',')
      .map((url) => url.trim())
      .filter(Boolean),
    readReplicaMaxLagMs: intFrom('READ_REPLICA_MAX_LAG_MS', 1000),
    dataDir: resolve(projectRoot(), process.env.DATA_DIR || '.data'),
    authProxy: (process.env.AUTH_PROXY ?? 'on') !== 'off',
    authHost,
    authUrl: authUrlFrom(authHost, authPort),
    authTrustProxy: addressesFrom('AUTH_TRUST_PROXY', process.env.AUTH_TRUST_PROXY || 'loopback'),
    rateLimitPerMinute: intFrom('RATE_LIMIT_PER_MINUTE', 600),
    rateLimitPerWorkspacePerMinute: intFrom('RATE_LIMIT_PER_WORKSPACE_PER_MINUTE', 3000),
    registrationsPerMinute: intFrom('REGISTRATIONS_PER_MINUTE', 10),
    authFailuresPerMinute: intFrom('AUTH_FAILURES_PER_MINUTE', 120),
    logLevel: process.env.LOG_LEVEL || 'log',
    trustProxy: trustProxyFrom(process.env.TRUST_PROXY),
    signInFailuresPerAccount: intFrom('SIGNIN_FAILURES_PER_ACCOUNT', 10),
    signInFailuresPerAddress: intFrom('SIGNIN_FAILURES_PER_ADDRESS', 30),
    signInWindowSeconds: intFrom('SIGNIN_WINDOW_SECONDS', 900),
    signUpsPerAddressPerHour: intFrom('SIGNUPS_PER_ADDRESS_PER_HOUR', 10),
    mcpAllowedOrigins: originsFrom(process.env.MCP_ALLOWED_ORIGINS),
    logFormat: process.env.LOG_FORMAT === 'json' ? 'json' : 'text',
    shutdownGraceMs: intFrom('SHUTDOWN_GRACE_MS', 10_000),
    credentialCacheMs: intFrom('CREDENTIAL_CACHE_MS', 300_000),
    customFieldIndexesPerTable: intFrom('CUSTOM_FIELD_INDEXES_PER_TABLE', 64),
    customFieldIndexesPerWorkspace: intFrom('CUSTOM_FIELD_INDEXES_PER_WORKSPACE', 8),
    customFieldIndexSweepMs: intFrom('CUSTOM_FIELD_INDEX_SWEEP_MS', 60_000),
    apiHeapMb: intFrom('API_HEAP_MB', 160),
    graphqlSchemaCacheMb: positive('GRAPHQL_SCHEMA_CACHE_MB', 24),
    databaseStatementTimeoutMs: intFrom('DATABASE_STATEMENT_TIMEOUT_MS', 15_000),
    graphqlFastPath: (process.env.GRAPHQL_FAST_PATH ?? 'on') !== 'off',
    restFastPath: (process.env.REST_FAST_PATH ?? 'on') !== 'off',
    cimdFetchTimeoutMs: intFrom('CIMD_FETCH_TIMEOUT_MS', 10_000),
    httpTimeouts: httpTimeoutsFrom(),
    exports: {
      perWorkspace: positive('EXPORTS_PER_WORKSPACE', 2),
      perInstance: positive('EXPORTS_PER_INSTANCE', 4),
      stallTimeoutMs: intFrom('EXPORT_STALL_TIMEOUT_MS', 30_000),
    },
    imports: {
      maxBytes: intFrom('IMPORT_MAX_BYTES', 512 * 1024 * 1024),
      maxRows: intFrom('IMPORT_MAX_ROWS', 1_000_000),
      worker: onOff('IMPORTS_WORKER'),
      concurrency: Math.max(1, intFrom('IMPORTS_CONCURRENCY', 2)),
      heartbeatMs: Math.max(100, intFrom('IMPORTS_HEARTBEAT_MS', 10_000)),
      retryBaseMs: Math.max(1, intFrom('IMPORT_RETRY_BASE_MS', 1000)),
      maxFailedRuns: Math.max(1, intFrom('IMPORT_MAX_FAILED_RUNS', 5)),
      sliceMs: intFrom('IMPORTS_SLICE_MS', 5_000),
      uploadsPerInstance: positive('IMPORT_UPLOADS_PER_INSTANCE', 8),
      uploadsPerWorkspace: positive('IMPORT_UPLOADS_PER_WORKSPACE', 2),
      uploadMinBytes: intFrom('IMPORT_UPLOAD_MIN_BYTES', 64 * 1024),
      uploadWindowMs: positive('IMPORT_UPLOAD_WINDOW_MS', 10_000),
      queuePerWorkspace: positive('IMPORT_QUEUE_PER_WORKSPACE', 10),
      queueBytesPerWorkspace: positive('IMPORT_QUEUE_BYTES_PER_WORKSPACE', 1024 * 1024 * 1024),
    },
  };
}

function databaseConnectionsFrom(): DatabaseConnections {
  const pooler = (process.env.DATABASE_POOLER || 'none').toLowerCase();
  if (pooler !== 'none' && pooler !== 'transaction') {
    throw new ConfigError(`DATABASE_POOLER must be none or transaction, got "${process.env.DATABASE_POOLER}"`);
  }
  const sessionUrl = process.env.DATABASE_SESSION_URL || undefined;
  if (pooler === 'transaction' && process.env.DATABASE_URL && !sessionUrl) {
    throw new ConfigError(
      'DATABASE_POOLER=transaction needs DATABASE_SESSION_URL: a direct (or session-mode) connection for migrations, the job queue, exports and index builds',
    );
  }
  const prepared = process.env.DATABASE_PREPARED_STATEMENTS;
  return {
    pooler,
    sessionUrl,
    preparedStatements: prepared ? onOff('DATABASE_PREPARED_STATEMENTS') : pooler === 'none',
  };
}

function positive(name: string, fallback: number): number {
  const value = intFrom(name, fallback);
  if (value === 0) throw new ConfigError(`${name} must be at least 1, got "0"`);
  return value;
}

function onOff(name: string): boolean {
  const raw = (process.env[name] || 'on').toLowerCase();
  if (raw !== 'on' && raw !== 'off') throw new ConfigError(`${name} must be on or off, got "${process.env[name]}"`);
  return raw === 'on';
}

/**
 * Slow clients (slowloris) hold a connection for as long as the server waits for them;
 * Node's defaults wait 60 s for headers and 5 min for a request. Keep-alive outlasts common
 * load balancers' idle timeout (AWS ALB 60 s), so the balancer, not this server, closes an
 * idle connection and never reuses one this server is closing.
 */
function httpTimeoutsFrom(): HttpTimeouts {
  const timeouts = {
    headersMs: intFrom('HTTP_HEADERS_TIMEOUT_MS', 15_000),
    requestMs: intFrom('HTTP_REQUEST_TIMEOUT_MS', 60_000),
    keepAliveMs: intFrom('HTTP_KEEP_ALIVE_TIMEOUT_MS', 65_000),
  };
  // Node refuses a headers timeout longer than the request timeout.
  if (timeouts.requestMs > 0 && (timeouts.headersMs === 0 || timeouts.headersMs > timeouts.requestMs)) {
    throw new Error(
      `HTTP_HEADERS_TIMEOUT_MS (${timeouts.headersMs}) must be at most HTTP_REQUEST_TIMEOUT_MS (${timeouts.requestMs}) unless that is 0`,
    );
  }
  return timeouts;
}

/** `MCP_ALLOWED_ORIGINS`: comma-separated origins (`https://app.example.com`), each checked and normalised. */
export function originsFrom(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const origin = URL.canParse(part) ? new URL(part).origin : 'null';
      if (origin === 'null') throw new Error(`MCP_ALLOWED_ORIGINS: "${part}" is not an origin such as https://app.example.com`);
      return origin;
    });
}

/** `TRUST_PROXY` as Express's `trust proxy` setting; unset, empty or `false` trusts nobody. */
export function trustProxyFrom(raw: string | undefined): boolean | number | string[] {
  const value = (raw ?? '').trim();
  if (value === '' || value === 'false' || value === '0') return false;
  if (value === 'true') {
    throw new Error("TRUST_PROXY=true would trust any X-Forwarded-For a client sends; give a hop count or the proxies' addresses");
  }
  if (/^\d+$/.test(value)) return Number(value);
  return addressesFrom('TRUST_PROXY', value);
}

/** A comma-separated list of proxy addresses, each checked as Express's `trust proxy` would take it. */
function addressesFrom(name: string, raw: string): string[] {
  const entries = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  try {
    addressList(entries);
  } catch (err) {
    if (err instanceof AddressListError) throw new ConfigError(`${name}: ${err.message}`);
    throw err;
  }
  return entries;
}

/** Every interface: the auth server is then reached on 127.0.0.1 too. */
const ANY_ADDRESS = new Set(['0.0.0.0', '::']);

function authHostFrom(): string {
  const host = (process.env.AUTH_HOST || '127.0.0.1').trim();
  if (host !== 'localhost' && !isIP(host)) {
    throw new ConfigError(`AUTH_HOST must be an IP address to listen on (0.0.0.0: every interface), got "${process.env.AUTH_HOST}"`);
  }
  return host;
}

/** `AUTH_URL`, else the auth server of this machine: AUTH_HOST when it names one address. */
function authUrlFrom(authHost: string, authPort: number): string {
  const raw = (process.env.AUTH_URL ?? '').trim();
  if (!raw) {
    const host = ANY_ADDRESS.has(authHost) ? '127.0.0.1' : isIP(authHost) === 6 ? `[${authHost}]` : authHost;
    return `http://${host}:${authPort}`;
  }
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  // Forwarded paths are appended to the target's: anything but an origin would move them.
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.pathname !== '/' || url.search || url.hash) {
    throw new ConfigError(`AUTH_URL must be the auth server's origin, such as http://auth-server:3001, got "${raw}"`);
  }
  return url.origin;
}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** Nest's logger levels for `LOG_LEVEL`: that level and every more severe one (default `log`). */
export function logLevels(level: string): LogLevel[] {
  const index = LOG_LEVELS.indexOf(level as LogLevel);
  return LOG_LEVELS.slice(0, index < 0 ? 4 : index + 1);
}

/**
 * Node flags of the records API process: V8 otherwise sizes its heap from the machine's
 * memory and collects lazily, and the process grew from 166 to 360 MB RSS in a mixed run
 * whose live heap stayed near 60 MB. With the old generation bounded it stays under 200 MB
 * (smaller semi-spaces saved another 14 MB but cost GraphQL ~30% more CPU in GC).
 */
export function apiNodeFlags(config: Pick<AppConfig, 'apiHeapMb'>): string[] {
  return config.apiHeapMb > 0 ? [`--max-old-space-size=${config.apiHeapMb}`] : [];
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '0.0.0.0']);

/**
 * One line each for a start that works but is probably not what was meant: a Node.js past
 * its end of life, and a PUBLIC_URL on this machine that names another port than PORT (left
 * over in `.env` when PORT changed), with which OAuth redirects, the issuer and docs links
 * point at the wrong port. A PUBLIC_URL with a real host name is a proxy's: its port is its own.
 */
export function startWarnings(config: Pick<AppConfig, 'port' | 'publicUrl'>, nodeVersion = process.versions.node): string[] {
  const warnings: string[] = [];
  const major = Number(nodeVersion.split('.')[0]);
  if (major < 22) warnings.push(`Node.js ${major} is past its end of life (no more security fixes): Node.js 22 and 24 are supported`);
  if (process.env.PUBLIC_URL && URL.canParse(config.publicUrl)) {
    const url = new URL(config.publicUrl);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    if (LOOPBACK_HOSTS.has(url.hostname) && port !== config.port) {
      warnings.push(
        `PUBLIC_URL ${config.publicUrl} names port ${port} but PORT is ${config.port}: OAuth redirects, the issuer and docs links would point at the wrong port; set PUBLIC_URL to match, or leave it unset`,
      );
    }
  }
  return warnings;
}

/**
 * The auth server listening beyond loopback while it takes forwarded client addresses from
 * loopback only: a records API on another host would have every sign-in it forwards counted
 * against its own address, so one attacker's failures would throttle everyone's sign-ins.
 */
export function authServerWarnings(config: Pick<AppConfig, 'authProxy' | 'authHost' | 'authTrustProxy'>): string[] {
  const loopbackHost = config.authHost === 'localhost' || inAddressList(addressList(['loopback']), config.authHost);
  const loopbackTrust = config.authTrustProxy.every((entry) => entry === 'loopback');
  return config.authProxy && !loopbackHost && loopbackTrust
    ? [
        `AUTH_HOST is ${config.authHost} but AUTH_TRUST_PROXY trusts loopback only: sign-ins forwarded by a records API on another host all count as that host's address; set AUTH_TRUST_PROXY to the records APIs' addresses (docs/configuration.md)`,
      ]
    : [];
}
