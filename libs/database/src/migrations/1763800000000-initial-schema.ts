import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenant tables carry `workspace_id` in their primary key and in every reference, so the
 * database itself refuses a cross-workspace link and the tables can later be distributed
 * by `workspace_id` (Citus) without redesign. Timestamps are millisecond precision so a
 * cursor made from a JavaScript Date points at exactly one position.
 */
export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE workspaces (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX workspaces_name_key ON workspaces (lower(name));

      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email text NOT NULL,
        password_hash text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX users_email_key ON users (lower(email));

      CREATE TABLE roles (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        object_permissions jsonb NOT NULL,
        settings_permissions text[] NOT NULL DEFAULT '{}',
        assignable_to_users boolean NOT NULL DEFAULT true,
        assignable_to_api_keys boolean NOT NULL DEFAULT true,
        is_editable boolean NOT NULL DEFAULT true,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, id)
      );
      CREATE UNIQUE INDEX roles_name_key ON roles (workspace_id, lower(name));

      CREATE TABLE workspace_members (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        role_id uuid NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, user_id),
        FOREIGN KEY (workspace_id, role_id) REFERENCES roles (workspace_id, id)
      );
      CREATE INDEX workspace_members_user_idx ON workspace_members (user_id);

      CREATE TABLE api_keys (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        name text NOT NULL,
        role_id uuid NOT NULL,
        secret_hash text NOT NULL,
        expires_at timestamptz(3) NOT NULL,
        revoked_at timestamptz(3),
        last_used_at timestamptz(3),
        created_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, id),
        FOREIGN KEY (workspace_id, role_id) REFERENCES roles (workspace_id, id)
      );
      -- The bearer token is looked up by its hash before its workspace is known.
      CREATE UNIQUE INDEX api_keys_secret_hash_key ON api_keys (secret_hash);
      CREATE UNIQUE INDEX api_keys_id_key ON api_keys (id);

      CREATE TABLE companies (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        name text NOT NULL,
        domain_primary_link_url text,
        domain_primary_link_label text,
        domain_secondary_links jsonb NOT NULL DEFAULT '[]',
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        deleted_at timestamptz(3),
        PRIMARY KEY (workspace_id, id)
      );
      -- Serves createdAt[AscNullsFirst] (the default, scanned backwards) and createdAt[DescNullsLast].
      CREATE INDEX companies_created_idx ON companies (workspace_id, created_at DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      CREATE INDEX companies_updated_idx ON companies (workspace_id, updated_at DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      -- Name orders: declared DESC NULLS LAST so a backward scan serves the default AscNullsFirst.
      CREATE INDEX companies_name_idx ON companies (workspace_id, name DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      CREATE INDEX companies_domain_idx ON companies (workspace_id, domain_primary_link_url) WHERE deleted_at IS NULL;
      CREATE INDEX companies_deleted_idx ON companies (workspace_id, deleted_at) WHERE deleted_at IS NOT NULL;

      CREATE TABLE people (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        first_name text,
        last_name text,
        primary_email text,
        additional_emails jsonb NOT NULL DEFAULT '[]',
        company_id uuid,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        deleted_at timestamptz(3),
        PRIMARY KEY (workspace_id, id),
        -- A person can only point at a company of its own workspace.
        FOREIGN KEY (workspace_id, company_id) REFERENCES companies (workspace_id, id)
      );
      CREATE INDEX people_created_idx ON people (workspace_id, created_at DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      CREATE INDEX people_updated_idx ON people (workspace_id, updated_at DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      CREATE INDEX people_company_idx ON people (workspace_id, company_id, created_at, id) WHERE deleted_at IS NULL;
      CREATE INDEX people_last_name_idx ON people (workspace_id, last_name DESC NULLS LAST, first_name DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      CREATE INDEX people_first_name_idx ON people (workspace_id, first_name DESC NULLS LAST, last_name DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      CREATE INDEX people_email_idx ON people (workspace_id, primary_email) WHERE deleted_at IS NULL;
      CREATE INDEX people_deleted_idx ON people (workspace_id, deleted_at) WHERE deleted_at IS NOT NULL;

      -- Exact live-row counts and a write version per (workspace, object), maintained by
      -- statement triggers: an unfiltered totalCount is one row read, and a filtered
      -- count can be cached until the version moves.
      CREATE TABLE record_counts (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        object text NOT NULL,
        live_count bigint NOT NULL DEFAULT 0,
        version bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (workspace_id, object)
      );

      CREATE FUNCTION record_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO record_counts AS rc (workspace_id, object, live_count, version)
          SELECT workspace_id, TG_ARGV[0], count(*) FILTER (WHERE deleted_at IS NULL), 1
          FROM new_rows GROUP BY workspace_id ORDER BY workspace_id
        ON CONFLICT (workspace_id, object) DO UPDATE
          SET live_count = rc.live_count + excluded.live_count, version = rc.version + 1;
        RETURN NULL;
      END $$;

      CREATE FUNCTION record_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO record_counts AS rc (workspace_id, object, live_count, version)
          SELECT workspace_id, TG_ARGV[0], sum(delta), 1 FROM (
            SELECT workspace_id, CASE WHEN deleted_at IS NULL THEN 1 ELSE 0 END AS delta FROM new_rows
            UNION ALL
            SELECT workspace_id, CASE WHEN deleted_at IS NULL THEN -1 ELSE 0 END FROM old_rows
          ) changes GROUP BY workspace_id ORDER BY workspace_id
        ON CONFLICT (workspace_id, object) DO UPDATE
          SET live_count = rc.live_count + excluded.live_count, version = rc.version + 1;
        RETURN NULL;
      END $$;

      CREATE FUNCTION record_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO record_counts AS rc (workspace_id, object, live_count, version)
          SELECT workspace_id, TG_ARGV[0], -count(*) FILTER (WHERE deleted_at IS NULL), 1
          FROM old_rows GROUP BY workspace_id ORDER BY workspace_id
        ON CONFLICT (workspace_id, object) DO UPDATE
          SET live_count = rc.live_count + excluded.live_count, version = rc.version + 1;
        RETURN NULL;
      END $$;

      CREATE TRIGGER companies_counts_insert AFTER INSERT ON companies REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION record_counts_after_insert('companies');
      CREATE TRIGGER companies_counts_update AFTER UPDATE ON companies REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION record_counts_after_update('companies');
      CREATE TRIGGER companies_counts_delete AFTER DELETE ON companies REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION record_counts_after_delete('companies');
      CREATE TRIGGER people_counts_insert AFTER INSERT ON people REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION record_counts_after_insert('people');
      CREATE TRIGGER people_counts_update AFTER UPDATE ON people REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION record_counts_after_update('people');
      CREATE TRIGGER people_counts_delete AFTER DELETE ON people REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION record_counts_after_delete('people');
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE record_counts, people, companies, api_keys, workspace_members, roles, users, workspaces;
      DROP FUNCTION record_counts_after_insert, record_counts_after_update, record_counts_after_delete;
    `);
  }
}
