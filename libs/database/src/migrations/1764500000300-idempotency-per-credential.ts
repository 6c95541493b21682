import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency keys belong to the credential that sent them, as Stripe scopes them to the
 * account and API key: within a workspace, a Viewer repeating an Admin's key got the
 * Admin's stored 201, and the Admin then got the Viewer's stored 403. `credential` is the
 * principal's kind and id (`apiKey:<id>`, `user:<id>`, `app:<client id>`). Rows kept
 * before this step have the empty credential and expire within their 24 h.
 */
export class IdempotencyPerCredential1764500000300 implements MigrationInterface {
  name = 'IdempotencyPerCredential1764500000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE idempotency_keys ADD COLUMN credential text NOT NULL DEFAULT '';
      ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
      ALTER TABLE idempotency_keys ADD PRIMARY KEY (workspace_id, credential, key);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM idempotency_keys WHERE credential <> '';
      ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
      ALTER TABLE idempotency_keys ADD PRIMARY KEY (workspace_id, key);
      ALTER TABLE idempotency_keys DROP COLUMN credential;
    `);
  }
}
