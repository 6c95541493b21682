import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 12, strict: NOTIFY alone reaches an instance a moment after COMMIT, so a client that
 * revoked a key and at once used it could still be let in by a cached entry. Every change
 * that can take access away now also moves one version number, in its own transaction;
 * a cached credential is used only after a read of that number that started after the
 * request arrived (credential-cache.ts), so a committed change is always seen. The bump
 * runs in deferred constraint triggers (at COMMIT, after every other lock the transaction
 * takes), which keeps the one counter row from ordering locks against anything else.
 * The NOTIFY stays, so instances also drop their entries without waiting for a request.
 */
const ANY_CHANGE = ['roles', 'workspace_members', 'server_apps', 'oidc_keys', 'workspaces'];

export class CredentialVersion1764400000100 implements MigrationInterface {
  name = 'CredentialVersion1764400000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE credential_changes (
        id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        version bigint NOT NULL DEFAULT 0
      );
      INSERT INTO credential_changes (id) VALUES (1);

      CREATE OR REPLACE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE credential_changes SET version = version + 1 WHERE id = 1;
        PERFORM pg_notify('wrs_credentials', TG_TABLE_NAME);
        RETURN NULL;
      END $$;

      DROP TRIGGER credentials_changed ON api_keys;
      DROP TRIGGER credentials_deleted ON api_keys;
      DROP TRIGGER credentials_changed ON oidc_models;

      CREATE CONSTRAINT TRIGGER credentials_changed AFTER UPDATE ON api_keys DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
        EXECUTE FUNCTION notify_credentials_changed();
      CREATE CONSTRAINT TRIGGER credentials_deleted AFTER DELETE ON api_keys DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        EXECUTE FUNCTION notify_credentials_changed();
      CREATE TRIGGER credentials_truncated AFTER TRUNCATE ON api_keys
        FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
      CREATE CONSTRAINT TRIGGER credentials_changed AFTER UPDATE OR DELETE ON oidc_models DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        WHEN (OLD.model = 'Grant')
        EXECUTE FUNCTION notify_credentials_changed();
    `);
    for (const table of ANY_CHANGE) {
      await q.query(`DROP TRIGGER credentials_changed ON ${table}`);
      await q.query(`CREATE CONSTRAINT TRIGGER credentials_changed AFTER UPDATE OR DELETE ON ${table}
                       DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION notify_credentials_changed()`);
      await q.query(`CREATE TRIGGER credentials_truncated AFTER TRUNCATE ON ${table}
                       FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ANY_CHANGE) {
      await q.query(`DROP TRIGGER credentials_changed ON ${table}`);
      await q.query(`DROP TRIGGER credentials_truncated ON ${table}`);
      await q.query(`CREATE TRIGGER credentials_changed AFTER UPDATE OR DELETE OR TRUNCATE ON ${table}
                       FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed()`);
    }
    await q.query(`
      DROP TRIGGER credentials_changed ON api_keys;
      DROP TRIGGER credentials_deleted ON api_keys;
      DROP TRIGGER credentials_truncated ON api_keys;
      DROP TRIGGER credentials_changed ON oidc_models;
      CREATE TRIGGER credentials_changed AFTER UPDATE ON api_keys FOR EACH ROW
        WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
        EXECUTE FUNCTION notify_credentials_changed();
      CREATE TRIGGER credentials_deleted AFTER DELETE OR TRUNCATE ON api_keys
        FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
      CREATE TRIGGER credentials_changed AFTER UPDATE OR DELETE ON oidc_models FOR EACH ROW
        WHEN (OLD.model = 'Grant')
        EXECUTE FUNCTION notify_credentials_changed();
      CREATE OR REPLACE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('wrs_credentials', TG_TABLE_NAME);
        RETURN NULL;
      END $$;
      DROP TABLE credential_changes;
    `);
  }
}
