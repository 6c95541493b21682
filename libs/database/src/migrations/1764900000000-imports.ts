import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Imports (docs/rest.md "Imports"; docs/decisions/0035-imports.md). The uploaded file is kept
 * in Postgres as ~1 MB chunks while the request streams in, so any instance's queue worker
 * can read it and no instance holds it whole. `rows_done` is the resume point: each batch of
 * rows commits together with it, so a worker that dies mid-import is followed by one that
 * skips exactly the committed rows. Refused rows are kept in `import_errors`, written in the
 * same transaction as their batch. `uploading` is the state while the body streams in; such
 * a row whose upload died with its instance is swept after an hour.
 */
export class Imports1764900000000 implements MigrationInterface {
  name = 'Imports1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE imports (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        object text NOT NULL,
        mode text NOT NULL CHECK (mode IN ('create', 'upsert')),
        match text,
        format text NOT NULL CHECK (format IN ('csv', 'ndjson')),
        record_events boolean NOT NULL DEFAULT false,
        status text NOT NULL DEFAULT 'uploading'
          CHECK (status IN ('uploading', 'queued', 'running', 'completed', 'failed', 'cancelled')),
        bytes bigint NOT NULL DEFAULT 0,
        chunks integer NOT NULL DEFAULT 0,
        rows_done bigint NOT NULL DEFAULT 0,
        bytes_done bigint NOT NULL DEFAULT 0,
        created bigint NOT NULL DEFAULT 0,
        updated bigint NOT NULL DEFAULT 0,
        unchanged bigint NOT NULL DEFAULT 0,
        failed bigint NOT NULL DEFAULT 0,
        error text,
        created_by text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        started_at timestamptz(3),
        finished_at timestamptz(3),
        PRIMARY KEY (workspace_id, id)
      );
      CREATE INDEX imports_recent_idx ON imports (workspace_id, created_at DESC);
      CREATE INDEX imports_uploading_idx ON imports (updated_at) WHERE status = 'uploading';

      CREATE TABLE import_chunks (
        workspace_id uuid NOT NULL,
        import_id uuid NOT NULL,
        seq integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (workspace_id, import_id, seq),
        FOREIGN KEY (workspace_id, import_id) REFERENCES imports (workspace_id, id) ON DELETE CASCADE
      );
      -- Already compressed or not worth it: keep chunks out of TOAST compression (CPU on the write path).
      ALTER TABLE import_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

      CREATE TABLE import_errors (
        workspace_id uuid NOT NULL,
        import_id uuid NOT NULL,
        row_no bigint NOT NULL,
        messages jsonb NOT NULL,
        PRIMARY KEY (workspace_id, import_id, row_no),
        FOREIGN KEY (workspace_id, import_id) REFERENCES imports (workspace_id, id) ON DELETE CASCADE
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE import_errors; DROP TABLE import_chunks; DROP TABLE imports;');
  }
}
