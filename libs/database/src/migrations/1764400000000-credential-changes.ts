import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 12: the records API keeps the principals it resolved in process memory; every
 * change that can take a credential's access away (revoking or deleting a key, changing
 * or deleting a role, removing a member, deleting a server app, revoking or expiring a
 * grant, retiring a signing key, deleting a workspace) announces itself on the channel
 * `wrs_credentials` from a trigger, so it reaches every instance whatever made it: the
 * auth server, the CLI, or an operator's psql. NOTIFY is sent at COMMIT.
 * `last_used_at` alone (written once a minute per busy key) does not notify.
 */
const TABLES_ANY_CHANGE = ['roles', 'workspace_members', 'server_apps', 'oidc_keys', 'workspaces'];

export class CredentialChanges1764400000000 implements MigrationInterface {
  name = 'CredentialChanges1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('wrs_credentials', TG_TABLE_NAME);
        RETURN NULL;
      END $$;

      CREATE TRIGGER credentials_changed AFTER UPDATE ON api_keys FOR EACH ROW
        WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
        EXECUTE FUNCTION notify_credentials_changed();
      CREATE TRIGGER credentials_deleted AFTER DELETE OR TRUNCATE ON api_keys
        FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();

      CREATE TRIGGER credentials_changed AFTER UPDATE OR DELETE ON oidc_models FOR EACH ROW
        WHEN (OLD.model = 'Grant')
        EXECUTE FUNCTION notify_credentials_changed();
      CREATE TRIGGER credentials_truncated AFTER TRUNCATE ON oidc_models
        FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
    `);
    for (const table of TABLES_ANY_CHANGE) {
      await q.query(`CREATE TRIGGER credentials_changed AFTER UPDATE OR DELETE OR TRUNCATE ON ${table}
                       FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['api_keys', 'oidc_models', ...TABLES_ANY_CHANGE]) {
      await q.query(`DROP TRIGGER IF EXISTS credentials_changed ON ${table}`);
    }
    await q.query('DROP TRIGGER IF EXISTS credentials_deleted ON api_keys');
    await q.query('DROP TRIGGER IF EXISTS credentials_truncated ON oidc_models');
    await q.query('DROP FUNCTION notify_credentials_changed()');
  }
}
