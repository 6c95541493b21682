import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The workspace vault (docs/vault.md). Each workspace gets one data key on its first secret
 * (`vault_keys`), sealed under VAULT_MASTER_KEY's `vault data keys` subkey; each value is
 * sealed under the data key, bound to its workspace and name. The database holds no key that
 * opens either. The built-in Admin role gains the new settings permission VAULT; roles made by
 * users are left as they are. Webhooks gain custom headers, whose values may name a secret
 * (`{{vault.NAME}}`), and a settings session remembers when its member last typed the
 * password again (revealing a value needs that within 5 minutes).
 */
export class Vault1765100000000 implements MigrationInterface {
  name = 'Vault1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE vault_keys (
        workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
        data_key_sealed text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE TABLE vault_secrets (
        workspace_id uuid NOT NULL REFERENCES vault_keys (workspace_id) ON DELETE CASCADE,
        name text NOT NULL CHECK (name ~ '^[A-Z][A-Z0-9_]{0,63}$'),
        value_sealed text NOT NULL,
        description text NOT NULL DEFAULT '',
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        rotated_at timestamptz(3),
        last_used_at timestamptz(3),
        PRIMARY KEY (workspace_id, name)
      );
      UPDATE roles SET settings_permissions = array_append(settings_permissions, 'VAULT')
       WHERE NOT is_editable AND NOT ('VAULT' = ANY (settings_permissions));
      ALTER TABLE webhooks ADD COLUMN headers jsonb NOT NULL DEFAULT '[]'::jsonb;
      ALTER TABLE web_sessions ADD COLUMN password_confirmed_at timestamptz(3);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE web_sessions DROP COLUMN password_confirmed_at;
      ALTER TABLE webhooks DROP COLUMN headers;
      UPDATE roles SET settings_permissions = array_remove(settings_permissions, 'VAULT');
      DROP TABLE vault_secrets, vault_keys;
    `);
  }
}
