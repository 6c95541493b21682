import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * docs/security.md. oidc-provider's secret ids (refresh tokens, authorization codes, session ids,
 * registration access tokens …) become SHA-256 hex, like API keys, and their payloads keep
 * no copy; client ids stay as they are (public). Sign-in throttling counters live in
 * `auth_throttle`, shared by every auth-server instance (rate-limiter-flexible's table shape).
 */
export class Security1764200000000 implements MigrationInterface {
  name = 'Security1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE oidc_models
         SET id = encode(sha256(convert_to(id, 'UTF8')), 'hex'),
             payload = CASE WHEN payload->>'jti' = id THEN payload - 'jti' ELSE payload END
       WHERE model <> 'Client';

      CREATE TABLE auth_throttle (
        key varchar(255) PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint
      );
      CREATE INDEX auth_throttle_expire_idx ON auth_throttle (expire);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    // Hashes cannot be turned back into ids: the stored tokens and sessions are dropped.
    await q.query(`DELETE FROM oidc_models WHERE model <> 'Client'; DROP TABLE auth_throttle;`);
  }
}
