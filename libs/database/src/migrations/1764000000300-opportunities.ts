import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Opportunities (docs/architecture.md, Twenty's standard object): the table, an index for each order
 * and filter the API serves, the counters' triggers, and the role permission: the built-in
 * Admin and the default Member get all four actions, Viewer reads; custom roles get none
 * (no key: absent means none) until an admin grants it on /settings/roles.
 */
export class Opportunities1764000000300 implements MigrationInterface {
  name = 'Opportunities1764000000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE opportunities (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        name text NOT NULL,
        -- amount: integer micros (JSON numbers stay exact up to 2^53) and an ISO 4217 code.
        amount_micros bigint CHECK (amount_micros BETWEEN -9007199254740991 AND 9007199254740991),
        amount_currency_code text CHECK (amount_currency_code ~ '^[A-Z]{3}$'),
        close_date timestamptz(3),
        stage text NOT NULL DEFAULT 'NEW' CHECK (stage IN ('NEW', 'SCREENING', 'MEETING', 'PROPOSAL', 'CUSTOMER')),
        company_id uuid,
        point_of_contact_id uuid,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        deleted_at timestamptz(3),
        PRIMARY KEY (workspace_id, id),
        -- Links only within the workspace, as for people.
        FOREIGN KEY (workspace_id, company_id) REFERENCES companies (workspace_id, id),
        FOREIGN KEY (workspace_id, point_of_contact_id) REFERENCES people (workspace_id, id)
      );
      -- Orders, declared so one index serves a direction and its reverse (see the initial schema).
      CREATE INDEX opportunities_created_idx ON opportunities (workspace_id, created_at DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      CREATE INDEX opportunities_updated_idx ON opportunities (workspace_id, updated_at DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      CREATE INDEX opportunities_name_idx ON opportunities (workspace_id, name DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      -- amount.amountMicros[DescNullsLast] (largest deals first) and AscNullsFirst backwards.
      CREATE INDEX opportunities_amount_idx ON opportunities (workspace_id, amount_micros DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      -- closeDate[AscNullsLast] (closing soonest, undated last) and DescNullsFirst backwards.
      CREATE INDEX opportunities_close_date_idx ON opportunities (workspace_id, close_date ASC NULLS LAST, id ASC) WHERE deleted_at IS NULL;
      -- Filters in the default order: a stage (stage[eq], stage[in]), a company's or a contact's deals
      -- (and Company.opportunities / Person.pointOfContactForOpportunities, oldest first).
      CREATE INDEX opportunities_stage_idx ON opportunities (workspace_id, stage, created_at DESC NULLS LAST, id DESC) WHERE deleted_at IS NULL;
      CREATE INDEX opportunities_company_idx ON opportunities (workspace_id, company_id, created_at, id) WHERE deleted_at IS NULL;
      CREATE INDEX opportunities_point_of_contact_idx ON opportunities (workspace_id, point_of_contact_id, created_at, id) WHERE deleted_at IS NULL;
      CREATE INDEX opportunities_deleted_idx ON opportunities (workspace_id, deleted_at) WHERE deleted_at IS NOT NULL;

      CREATE TRIGGER opportunities_counts_insert AFTER INSERT ON opportunities REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION record_counts_after_insert('opportunities');
      CREATE TRIGGER opportunities_counts_update AFTER UPDATE ON opportunities REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION record_counts_after_update('opportunities');
      CREATE TRIGGER opportunities_counts_delete AFTER DELETE ON opportunities REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION record_counts_after_delete('opportunities');

      UPDATE roles SET object_permissions = object_permissions
          || '{"opportunities": {"read": true, "create": true, "update": true, "delete": true}}'::jsonb
        WHERE NOT is_editable OR name = 'Member';
      UPDATE roles SET object_permissions = object_permissions
          || '{"opportunities": {"read": true, "create": false, "update": false, "delete": false}}'::jsonb
        WHERE is_editable AND name = 'Viewer';
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE roles SET object_permissions = object_permissions - 'opportunities';
      DELETE FROM record_counts WHERE object = 'opportunities';
      DROP TABLE opportunities;
    `);
  }
}
