import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A webhook delivers as a role (docs/decisions/0049-webhooks-vault-and-read-permissions.md):
 * each event is cut to what `role_id` may read when it is sent. Existing webhooks get the
 * role their creator holds in the workspace today, and the built-in Admin where the creator
 * is unknown (made with the CLI) or no longer a member: what they delivered before. No
 * foreign key: a deleted role leaves the id behind, and the webhook then delivers nothing
 * and its page says why; so does NULL (a workspace without an Admin, which only a database
 * written by hand can hold).
 *
 * `webhook_attempts.response_excerpt` NULL: the attempt sent vault values, so nothing of the
 * answer was kept (an echo of a secret in any encoding stays out of the log).
 */
export class WebhookRoles1765849000000 implements MigrationInterface {
  name = 'WebhookRoles1765849000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN role_id uuid`);
    await q.query(`
      UPDATE webhooks w SET role_id = coalesce(
        (SELECT m.role_id FROM workspace_members m WHERE m.workspace_id = w.workspace_id AND m.user_id = w.created_by_user_id),
        (SELECT r.id FROM roles r WHERE r.workspace_id = w.workspace_id AND NOT r.is_editable ORDER BY r.created_at LIMIT 1))
    `);
    await q.query(`ALTER TABLE webhook_attempts ALTER COLUMN response_excerpt DROP NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE webhook_attempts SET response_excerpt = '' WHERE response_excerpt IS NULL`);
    await q.query(`ALTER TABLE webhook_attempts ALTER COLUMN response_excerpt SET NOT NULL`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN role_id`);
  }
}
