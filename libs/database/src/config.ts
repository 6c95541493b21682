import { config as loadDotenv } from 'dotenv';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** Every setting the service reads, with its default. `.env.example` mirrors this list. */
export interface AppConfig {
  port: number;
  authPort: number;
  publicUrl: string;
  /** Unset: an embedded Postgres is started under `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Forward auth-server paths from the records API (off behind an ingress that routes them). */
  authProxy: boolean;
  /** Requests per minute per credential (or per IP when there is none). */
  rateLimitPerMinute: number;
  /** Dynamic client registrations per minute per client address. */
  registrationsPerMinute: number;
  logLevel: string;
}

let loaded = false;

function intFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

export function projectRoot(): string {
  return process.env.WRS_ROOT ?? process.cwd();
}

export function loadConfig(): AppConfig {
  if (!loaded) {
    const envFile = resolve(projectRoot(), '.env');
    if (existsSync(envFile)) loadDotenv({ path: envFile, quiet: true });
    loaded = true;
  }
  const port = intFrom('PORT', 3000);
  const publicUrl = (process.env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  return {
    port,
    authPort: intFrom('AUTH_PORT', 3001),
    publicUrl,
    databaseUrl: process.env.DATABASE_URL || undefined,
    dataDir: resolve(projectRoot(), process.env.DATA_DIR || '.data'),
    authProxy: (process.env.AUTH_PROXY ?? 'on') !== 'off',
    rateLimitPerMinute: intFrom('RATE_LIMIT_PER_MINUTE', 600),
    registrationsPerMinute: intFrom('REGISTRATIONS_PER_MINUTE', 10),
    logLevel: process.env.LOG_LEVEL || 'log',
  };
}
