import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { DataSource } from 'typeorm';
import { UnauthenticatedError } from '../../records/src/errors.js';
import { publicSigningKeys } from './signing-keys.js';

const RELOAD_AT_MOST_EVERY_MS = 5_000;

export interface AccessTokenClaims extends JWTPayload {
  workspace_id?: string;
  client_id?: string;
}

/**
 * Verifies OAuth access tokens (RFC 9068 JWTs) against the auth server's published keys,
 * read from the database they live in: cached, and read again when a token names a key
 * we don't know yet (a rotation), at most every few seconds.
 */
export class AccessTokenVerifier {
  private jwks?: ReturnType<typeof createLocalJWKSet>;
  private loadedAt = 0;

  constructor(
    private readonly ds: DataSource,
    private readonly issuer: string,
  ) {}

  async verify(token: string, audiences: string[]): Promise<AccessTokenClaims> {
    try {
      return await this.verifyOnce(token, audiences, false);
    } catch (err) {
      if (err instanceof joseErrors.JWKSNoMatchingKey && Date.now() - this.loadedAt > RELOAD_AT_MOST_EVERY_MS) {
        return this.verifyOnce(token, audiences, true).catch((again) => this.refuse(again));
      }
      return this.refuse(err);
    }
  }

  private async verifyOnce(token: string, audiences: string[], reload: boolean): Promise<AccessTokenClaims> {
    if (!this.jwks || reload) {
      this.jwks = createLocalJWKSet({ keys: await publicSigningKeys(this.ds) });
      this.loadedAt = Date.now();
    }
    const { payload } = await jwtVerify<AccessTokenClaims>(token, this.jwks, {
      issuer: this.issuer,
      audience: audiences,
      typ: 'at+jwt',
      algorithms: ['RS256'],
    });
    return payload;
  }

  private refuse(err: unknown): never {
    if (err instanceof joseErrors.JWTExpired) throw new UnauthenticatedError('The access token has expired');
    if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud') {
      throw new UnauthenticatedError('The access token is for another resource (audience)');
    }
    if (err instanceof joseErrors.JOSEError) throw new UnauthenticatedError('The access token is not valid');
    throw err;
  }
}
