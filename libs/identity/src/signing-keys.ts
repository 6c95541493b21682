import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];

/** The public half of a key, as published at the JWKS endpoint. */
export function publicJwk(jwk: JWK): JWK {
  return Object.fromEntries(Object.entries(jwk).filter(([key]) => !PRIVATE_MEMBERS.includes(key))) as JWK;
}

async function newSigningKey(db: Pick<DataSource, 'query'>): Promise<void> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  const jwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  await db.query(`INSERT INTO oidc_keys (kid, use, private_jwk) VALUES ($1, 'sig', $2)`, [kid, JSON.stringify(jwk)]);
}

/**
 * Signing keys (newest first: it signs, the others still verify) and cookie keys, created
 * on first start and kept in the database so every instance and every restart agrees.
 */
export async function ensureOidcKeys(ds: DataSource): Promise<{ signing: JWK[]; cookies: string[] }> {
  await ds.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(727275)');
    const [{ n: signing }] = await tx.query(`SELECT count(*)::int AS n FROM oidc_keys WHERE use = 'sig' AND retired_at IS NULL`);
    if (signing === 0) await newSigningKey(tx);
    const [{ n: cookies }] = await tx.query(`SELECT count(*)::int AS n FROM oidc_keys WHERE use = 'cookie' AND retired_at IS NULL`);
    if (cookies === 0) {
      await tx.query(`INSERT INTO oidc_keys (kid, use, secret) VALUES ($1, 'cookie', $2)`, [
        randomUUID(),
        randomBytes(32).toString('base64url'),
      ]);
    }
  });
  const rows: { use: string; private_jwk: JWK | null; secret: string | null }[] = await ds.query(
    `SELECT use, private_jwk, secret FROM oidc_keys WHERE retired_at IS NULL ORDER BY created_at DESC, kid`,
  );
  return {
    signing: rows.filter((r) => r.use === 'sig').map((r) => r.private_jwk!),
    cookies: rows.filter((r) => r.use === 'cookie').map((r) => r.secret!),
  };
}

/**
 * Adds a new signing key; auth servers sign with it from their next start, and tokens
 * signed with the older keys keep verifying until those are retired.
 */
export async function rotateSigningKey(ds: DataSource): Promise<string> {
  await newSigningKey(ds);
  const [row] = await ds.query(`SELECT kid FROM oidc_keys WHERE use = 'sig' ORDER BY created_at DESC LIMIT 1`);
  return row.kid;
}

export async function publicSigningKeys(ds: DataSource): Promise<JWK[]> {
  const rows: { private_jwk: JWK }[] = await ds.query(
    `SELECT private_jwk FROM oidc_keys WHERE use = 'sig' AND retired_at IS NULL ORDER BY created_at DESC`,
  );
  return rows.map((r) => publicJwk(r.private_jwk));
}
