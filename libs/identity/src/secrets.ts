import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'wrs_';

/** 32 random bytes: high entropy, so a fast hash is enough to store it (unlike a password). */
export function newApiKeySecret(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
