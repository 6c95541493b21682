import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The workspace settings pages: an audit log of every change made there, invite links,
 * and one-time secrets waiting to be shown once (sealed with a key derived from the
 * browser's session cookie, which the database never holds).
 */
export class Settings1764000000000 implements MigrationInterface {
  name = 'Settings1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_log (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        actor_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
        -- Kept as it was when the change was made, so the log reads the same after the user is gone.
        actor_email text NOT NULL,
        action text NOT NULL,
        target_type text NOT NULL,
        target_id text,
        target_label text NOT NULL DEFAULT '',
        details jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, id)
      );
      CREATE INDEX audit_log_recent_idx ON audit_log (workspace_id, created_at DESC, id DESC);

      CREATE TABLE workspace_invites (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        -- SHA-256 of the token in the link; the link itself is shown once.
        token_hash text NOT NULL UNIQUE,
        role_id uuid NOT NULL,
        created_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        expires_at timestamptz(3) NOT NULL,
        accepted_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
        accepted_at timestamptz(3),
        revoked_at timestamptz(3),
        PRIMARY KEY (workspace_id, id),
        -- A role with pending invites counts as in use; finished invites go with their role.
        FOREIGN KEY (workspace_id, role_id) REFERENCES roles (workspace_id, id) ON DELETE CASCADE
      );

      CREATE TABLE settings_flashes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        session_hash text NOT NULL REFERENCES web_sessions (id_hash) ON DELETE CASCADE,
        sealed text NOT NULL,
        expires_at timestamptz(3) NOT NULL
      );
      CREATE INDEX settings_flashes_session_idx ON settings_flashes (session_hash);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE settings_flashes, workspace_invites, audit_log');
  }
}
