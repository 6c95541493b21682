import { BadInputError, ErrorCode } from '#errors/errors.js';

export const API_KEY_EXPIRY_CHOICES = { '15d': 15, '30d': 30, '90d': 90, '1y': 365 } as const;
export type ApiKeyExpiryChoice = keyof typeof API_KEY_EXPIRY_CHOICES;
export const DEFAULT_API_KEY_EXPIRY: ApiKeyExpiryChoice = '90d';
const DAY_MS = 86_400_000;

export function expiryFromChoice(choice: string | undefined, now = new Date()): Date {
  const key = (choice ?? DEFAULT_API_KEY_EXPIRY) as ApiKeyExpiryChoice;
  const days = API_KEY_EXPIRY_CHOICES[key];
  if (!days) {
    throw new BadInputError(
      ErrorCode.VALIDATION_FAILED,
      `expires must be one of ${Object.keys(API_KEY_EXPIRY_CHOICES).join(', ')}; got "${choice}"`,
    );
  }
  return new Date(now.getTime() + days * DAY_MS);
}

/** An expiry later than one year is shortened to one year, not refused (docs/authentication.md). */
export function capExpiry(requested: Date, now = new Date()): Date {
  const max = new Date(now.getTime() + 365 * DAY_MS);
  return requested > max ? max : requested;
}
