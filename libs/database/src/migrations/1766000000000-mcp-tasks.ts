import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * MCP tasks (docs/mcp.md "Tasks"; docs/decisions/0065-mcp-tasks.md): one row per task, owned
 * by a workspace and the credential that made it (`kind:subject`), read by any instance.
 * `import_id` links an import task to its import, whose row carries its progress; an export's
 * file is `output`. `beat_at` is when the instance running an export or a change last wrote:
 * a working task whose beat is old lost its instance.
 */
export class McpTasks1766000000000 implements MigrationInterface {
  name = 'McpTasks1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mcp_tasks (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        credential text NOT NULL,
        tool text NOT NULL,
        status text NOT NULL DEFAULT 'working' CHECK (status IN ('working', 'completed', 'failed', 'cancelled')),
        writing boolean NOT NULL DEFAULT false,
        status_message text,
        progress bigint,
        total bigint,
        import_id uuid,
        result jsonb,
        error jsonb,
        output bytea,
        output_type text,
        ttl_ms integer NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        beat_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, id)
      );
      CREATE INDEX mcp_tasks_owner_idx ON mcp_tasks (workspace_id, credential, created_at DESC);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE mcp_tasks`);
  }
}
