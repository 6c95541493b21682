import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Storage for the authorization server: every model oidc-provider persists (sessions,
 * grants, codes, refresh tokens, clients, interactions …), its signing keys, the
 * workspace each grant was given for, server apps (client_credentials) with their role,
 * and signed-in browser sessions for our own pages.
 */
export class OAuth1763900000000 implements MigrationInterface {
  name = 'OAuth1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oidc_models (
        model text NOT NULL,
        id text NOT NULL,
        payload jsonb NOT NULL,
        grant_id text,
        user_code text,
        uid text,
        expires_at timestamptz(3),
        consumed_at timestamptz(3),
        PRIMARY KEY (model, id)
      );
      CREATE INDEX oidc_models_grant_idx ON oidc_models (grant_id) WHERE grant_id IS NOT NULL;
      CREATE INDEX oidc_models_uid_idx ON oidc_models (uid) WHERE uid IS NOT NULL;
      CREATE INDEX oidc_models_user_code_idx ON oidc_models (user_code) WHERE user_code IS NOT NULL;
      CREATE INDEX oidc_models_expires_idx ON oidc_models (expires_at) WHERE expires_at IS NOT NULL;

      -- Private JWKs for signing access tokens (newest first signs; the others still verify),
      -- and the keys that sign the provider's cookies.
      CREATE TABLE oidc_keys (
        kid text PRIMARY KEY,
        use text NOT NULL CHECK (use IN ('sig', 'cookie')),
        private_jwk jsonb,
        secret text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        retired_at timestamptz(3)
      );

      CREATE TABLE oauth_grant_workspaces (
        grant_id text PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      );

      -- The workspace a person picked during an authorization request, until consent.
      CREATE TABLE oauth_interaction_workspaces (
        uid text PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        expires_at timestamptz(3) NOT NULL
      );

      CREATE TABLE server_apps (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        client_id text NOT NULL UNIQUE,
        name text NOT NULL,
        role_id uuid NOT NULL,
        created_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, id),
        FOREIGN KEY (workspace_id, role_id) REFERENCES roles (workspace_id, id)
      );

      CREATE TABLE web_sessions (
        id_hash text PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        csrf_token text NOT NULL,
        workspace_id uuid REFERENCES workspaces (id) ON DELETE SET NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        expires_at timestamptz(3) NOT NULL
      );
      CREATE INDEX web_sessions_user_idx ON web_sessions (user_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE web_sessions, server_apps, oauth_interaction_workspaces, oauth_grant_workspaces, oidc_keys, oidc_models`);
  }
}
