import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '#config/config.js';

/**
 * The master key that wraps secrets kept in the database (webhook signing secrets and each
 * workspace's vault data key): `VAULT_MASTER_KEY`, 32 random bytes in base64
 * (`openssl rand -base64 32`). It comes from the environment, never from the database, so
 * a copy of the database alone opens nothing. With the embedded database and no variable,
 * a key is generated on first start into `<DATA_DIR>/vault-master.key` (mode 600); with
 * DATABASE_URL and no variable the process refuses to start: a production database must
 * not depend on a file next to one instance.
 */
export class MasterKeyError extends ConfigError {}

export const MASTER_KEY_FILE = 'vault-master.key';
const KEY_BYTES = 32;
/** The value sealed under the key and stored: proves at start that the key is the database's. */
const CHECK_PLAINTEXT = 'workspace-records vault check v1';

/** What each derived key is for (see `subkey`); a new use of the master key adds its own. */
export const KEY_PURPOSES = {
  check: 'vault key check',
  webhookSecrets: 'webhook secrets',
  /** Wraps each workspace's vault data key (libs/identity/src/vault.ts); the values are sealed with the data key. */
  vaultDataKeys: 'vault data keys',
  /** Keys the idempotency fingerprint of a request whose body holds a vault value (apps/records-api/src/http/idempotency.ts). */
  fingerprints: 'request fingerprints',
} as const;

export type KeyPurpose = (typeof KEY_PURPOSES)[keyof typeof KEY_PURPOSES];

export function parseMasterKey(raw: string, source = 'VAULT_MASTER_KEY'): Buffer {
  const text = raw.trim();
  const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(text) ? Buffer.from(text, 'base64') : Buffer.alloc(0);
  if (key.length !== KEY_BYTES) {
    throw new MasterKeyError(
      `${source} must be ${KEY_BYTES} bytes in base64 (generate one with: openssl rand -base64 32); got ${key.length} bytes`,
    );
  }
  return key;
}

let cached: { source: string; key: Buffer; subkeys: Map<string, Buffer> } | undefined;

function keyFile(dataDir: string, log: (message: string) => void): { source: string; key: Buffer } {
  const file = join(dataDir, MASTER_KEY_FILE);
  let how = 'kept there since the first start';
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    // `wx`: two processes starting at once never overwrite each other's key.
    try {
      writeFileSync(file, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      how = 'generated now, mode 600';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  log(
    `VAULT_MASTER_KEY is not set: the embedded database's secrets are wrapped with the key in ${file} (${how}). Set VAULT_MASTER_KEY in production.`,
  );
  return { source: `file:${file}`, key: parseMasterKey(readFileSync(file, 'utf8'), file) };
}

/**
 * Replaces the embedded database's key file with `key` (after `vault:rotate-master-key`
 * re-wrapped the database under it): written beside it with mode 600, then renamed over it,
 * so the file is never half written.
 */
export function replaceKeyFile(dataDir: string, key: Buffer): string {
  const file = join(dataDir, MASTER_KEY_FILE);
  const next = `${file}.${process.pid}.new`;
  writeFileSync(next, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(next, file);
  cached = undefined;
  return file;
}

/**
 * The master key of this process (see the class comment for where it comes from). Read
 * again whenever VAULT_MASTER_KEY changes, so tests can start apps with another key. The
 * embedded-database notice goes to stderr unless the caller logs it: the CLI's stdout
 * carries exactly its result.
 */
export function masterKey(log: (message: string) => void = (m) => process.stderr.write(`warning: ${m}\n`)): Buffer {
  const raw = process.env.VAULT_MASTER_KEY ?? '';
  if (raw && cached?.source === `env:${raw}`) return cached.key;
  if (raw) {
    cached = { source: `env:${raw}`, key: parseMasterKey(raw), subkeys: new Map() };
    return cached.key;
  }
  const config = loadConfig();
  if (config.databaseUrl) {
    throw new MasterKeyError(
      'VAULT_MASTER_KEY is not set: with DATABASE_URL it is required (32 bytes in base64, e.g. openssl rand -base64 32; see README "Configuration")',
    );
  }
  const file = keyFile(config.dataDir, log);
  if (cached?.source !== file.source) cached = { ...file, subkeys: new Map() };
  return cached.key;
}

/**
 * A key for one purpose, derived from the master key with HKDF-SHA256 (RFC 5869), so no
 * two uses (webhook secrets, the vault, the check value) ever share a key.
 */
export function subkey(purpose: KeyPurpose): Buffer {
  masterKey();
  let key = cached!.subkeys.get(purpose);
  if (!key) {
    key = subkeyFrom(cached!.key, purpose);
    cached!.subkeys.set(purpose, key);
  }
  return key;
}

/** `subkey` of a given master key (rotating the master key re-wraps under the new one's). */
export function subkeyFrom(master: Buffer, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `workspace-records ${purpose}`, KEY_BYTES));
}

/**
 * AES-256-GCM with a random 96-bit IV: `v2.` + base64(iv ‖ tag ‖ ciphertext). `aad`
 * (additional authenticated data) binds the sealed value to where it is kept, e.g. a
 * workspace and a name: moved to another row it no longer opens.
 */
export function seal(key: Buffer, plaintext: string, aad?: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `v2.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

/** The inverse of `seal`; throws when the key is not the one it was sealed with. */
export function open(key: Buffer, sealed: string, aad?: string): string {
  const raw = Buffer.from(sealed.replace(/^v\d+\./, ''), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/** The check value to store for the current master key (or for `master`). */
export function newCheckValue(master?: Buffer): string {
  return seal(master ? subkeyFrom(master, KEY_PURPOSES.check) : subkey(KEY_PURPOSES.check), CHECK_PLAINTEXT);
}

/** Whether `stored` opens with `master`'s check key. */
export function checkValueOpens(master: Buffer, stored: string): boolean {
  try {
    return open(subkeyFrom(master, KEY_PURPOSES.check), stored) === CHECK_PLAINTEXT;
  } catch {
    return false;
  }
}

/** Throws a one-line MasterKeyError unless the stored check value opens with the current key. */
export function assertCheckValue(stored: string): void {
  const key = subkey(KEY_PURPOSES.check);
  let plain: string | undefined;
  try {
    plain = open(key, stored);
  } catch {
    plain = undefined;
  }
  if (plain !== CHECK_PLAINTEXT) {
    throw new MasterKeyError(
      'VAULT_MASTER_KEY is not the key this database was set up with (its check value does not open with it); start with the key it was set up with',
    );
  }
}
