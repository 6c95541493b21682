import { randomBytes } from 'node:crypto';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { KEY_PURPOSES, newCheckValue, open, seal, subkey } from '../master-key.js';

/**
 * Webhook signing secrets were sealed with a key stored in `webhook_secret_keys`, next to
 * them: a database dump opened them. They are re-sealed here under a key derived from
 * VAULT_MASTER_KEY (the environment), the old key is dropped, and a check value sealed
 * under the master key is stored so a start with the wrong key fails at once.
 */
export class VaultMasterKey1764500000000 implements MigrationInterface {
  name = 'VaultMasterKey1764500000000';

  async up(q: QueryRunner): Promise<void> {
    const key = subkey(KEY_PURPOSES.webhookSecrets);
    await q.query(`
      CREATE TABLE vault_key_check (
        id smallint PRIMARY KEY CHECK (id = 1),
        check_value text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    const [old] = (await q.query('SELECT key FROM webhook_secret_keys WHERE id = 1')) as { key: Buffer }[];
    if (old) {
      const rows = (await q.query(`SELECT workspace_id, id, secret_sealed FROM webhooks WHERE secret_sealed LIKE 'v1.%'`)) as {
        workspace_id: string;
        id: string;
        secret_sealed: string;
      }[];
      for (const row of rows) {
        await q.query('UPDATE webhooks SET secret_sealed = $3 WHERE workspace_id = $1 AND id = $2', [
          row.workspace_id,
          row.id,
          seal(key, open(old.key, row.secret_sealed)),
        ]);
      }
    }
    await q.query('DROP TABLE webhook_secret_keys');
    await q.query('INSERT INTO vault_key_check (id, check_value) VALUES (1, $1)', [newCheckValue()]);
  }

  async down(q: QueryRunner): Promise<void> {
    const key = subkey(KEY_PURPOSES.webhookSecrets);
    const dbKey = randomBytes(32);
    await q.query(
      'CREATE TABLE webhook_secret_keys (id smallint PRIMARY KEY, key bytea NOT NULL, created_at timestamptz(3) NOT NULL DEFAULT now())',
    );
    await q.query('INSERT INTO webhook_secret_keys (id, key) VALUES (1, $1)', [dbKey]);
    const rows = (await q.query(`SELECT workspace_id, id, secret_sealed FROM webhooks`)) as {
      workspace_id: string;
      id: string;
      secret_sealed: string;
    }[];
    for (const row of rows) {
      await q.query('UPDATE webhooks SET secret_sealed = $3 WHERE workspace_id = $1 AND id = $2', [
        row.workspace_id,
        row.id,
        seal(dbKey, open(key, row.secret_sealed)).replace(/^v2\./, 'v1.'),
      ]);
    }
    await q.query('DROP TABLE vault_key_check');
  }
}
