import crypto, { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'wrs_';

/** 32 random bytes: high entropy, so a fast hash is enough to store it (unlike a password). */
export function newApiKeySecret(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** SHA-256, hex. `crypto.hash` (one call, about half the time of createHash on every request) where Node has it (20.12+). */
export function hashSecret(secret: string): string {
  return oneShot ? oneShot('sha256', secret, 'hex') : createHash('sha256').update(secret).digest('hex');
}
const oneShot = (crypto as { hash?: typeof crypto.hash }).hash;
