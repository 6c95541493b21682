import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Read-your-writes with read replicas (libs/database/src/read-routing.ts;
 * docs/decisions/0037-read-replicas.md): per credential, the primary's WAL position just
 * after its last acknowledged write. A read of that credential goes to a replica only once
 * the replica has replayed up to it. One row per credential, updated in place (fillfactor
 * leaves room for HOT updates). Read on the primary only.
 */
export class ReadYourWrites1765000000000 implements MigrationInterface {
  name = 'ReadYourWrites1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE read_your_writes (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        credential text NOT NULL,
        lsn pg_lsn NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, credential)
      ) WITH (fillfactor = 70)
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE read_your_writes');
  }
}
