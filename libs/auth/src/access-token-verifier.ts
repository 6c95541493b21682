import { createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { DataSource } from 'typeorm';
import { UnauthenticatedError } from '#errors/errors.js';
import { publicSigningKeys } from '#identity/signing-keys.js';

/** A kid that was still unknown after a fresh read is not looked up again for this long. */
const UNKNOWN_KID_MEMORY_MS = 30_000;

export interface AccessTokenClaims extends JWTPayload {
  workspace_id?: string;
  client_id?: string;
  /** The stored key of the grant the token was issued under (person tokens only). */
  grant?: string;
}

/**
 * Verifies OAuth access tokens (RFC 9068 JWTs) against the auth server's published keys,
 * read from the database they live in: cached, and read again when a token names a key
 * we don't know yet (a rotation); a kid still unknown after that is remembered for a while.
 */
export class AccessTokenVerifier {
  private jwks?: ReturnType<typeof createLocalJWKSet>;
  private reload?: Promise<ReturnType<typeof createLocalJWKSet>>;
  private readonly unknownKids = new Map<string, number>();

  constructor(
    private readonly ds: DataSource,
    private readonly issuer: string,
  ) {}

  async verify(token: string, audiences: string[]): Promise<AccessTokenClaims> {
    try {
      return await this.verifyWith(token, audiences, this.jwks ?? (await this.readKeys()));
    } catch (err) {
      const kid = kidOf(token);
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || !kid || (this.unknownKids.get(kid) ?? 0) > Date.now()) return this.refuse(err);
      // A key we have not seen: the auth server rotated. Read the keys again (one read at a time).
      try {
        return await this.verifyWith(token, audiences, await this.readKeys());
      } catch (again) {
        if (again instanceof joseErrors.JWKSNoMatchingKey) this.unknownKids.set(kid, Date.now() + UNKNOWN_KID_MEMORY_MS);
        return this.refuse(again);
      }
    }
  }

  private readKeys(): Promise<ReturnType<typeof createLocalJWKSet>> {
    this.reload ??= publicSigningKeys(this.ds)
      .then((keys) => (this.jwks = createLocalJWKSet({ keys })))
      .finally(() => (this.reload = undefined));
    return this.reload;
  }

  private async verifyWith(token: string, audiences: string[], jwks: ReturnType<typeof createLocalJWKSet>): Promise<AccessTokenClaims> {
    const { payload } = await jwtVerify<AccessTokenClaims>(token, jwks, {
      issuer: this.issuer,
      audience: audiences,
      typ: 'at+jwt',
      algorithms: ['RS256'],
    });
    return payload;
  }

  private refuse(err: unknown): never {
    if (this.unknownKids.size > 1000) this.unknownKids.clear();
    if (err instanceof joseErrors.JWTExpired) throw new UnauthenticatedError('The access token has expired');
    if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud') {
      throw new UnauthenticatedError('The access token is for another resource (audience)');
    }
    if (err instanceof joseErrors.JOSEError) throw new UnauthenticatedError('The access token is not valid');
    throw err;
  }
}

function kidOf(token: string): string | undefined {
  try {
    const kid = decodeProtectedHeader(token).kid;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}
