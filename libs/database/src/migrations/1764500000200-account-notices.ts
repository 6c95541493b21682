import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 18: sign-up answers an existing e-mail address exactly as a new one, so it no
 * longer tells anyone which addresses have accounts; the account's owner is told instead.
 * With no mail sender, the notice waits here and is shown to the owner on /settings
 * (a mail sender would read the same rows).
 */
export class AccountNotices1764500000200 implements MigrationInterface {
  name = 'AccountNotices1764500000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE account_notices (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        kind text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE INDEX account_notices_user_idx ON account_notices (user_id, created_at DESC);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE account_notices');
  }
}
