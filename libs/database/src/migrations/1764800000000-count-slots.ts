import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Writers of one workspace no longer wait on each other for its counts (docs/decisions/0034-writes-that-scale.md).
 * `record_counts` had one row per (workspace, object), updated by every write's statement
 * trigger and so locked from the write to its COMMIT: all creates, updates and deletes of
 * an object in a workspace ran one at a time through that row, each holding it across its
 * WAL flush. Now a (workspace, object) has several slot rows, and the unfiltered count and
 * the write version are their sums. A write's trigger adds to a slot no other open
 * transaction holds (`FOR UPDATE SKIP LOCKED`), or, when every slot is held, to a new one
 * (its number from a sequence, so it conflicts with no one): writers never wait on each
 * other's counts, and the slots of a (workspace, object) are at most as many as the writers
 * it ever had at the same time.
 *
 * The sums keep both promises of the single row: the count is exact, and the version moves
 * with every committed write (each adds 1 to one slot's version; a snapshot sees a prefix of
 * the commits, so a sum names one set of them). The existing rows become slot 0.
 */
export class CountSlots1764800000000 implements MigrationInterface {
  name = 'CountSlots1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE record_counts ADD COLUMN slot integer NOT NULL DEFAULT 0;
      ALTER TABLE record_counts ALTER COLUMN slot DROP DEFAULT;
      ALTER TABLE record_counts DROP CONSTRAINT record_counts_pkey;
      ALTER TABLE record_counts ADD PRIMARY KEY (workspace_id, object, slot);
      -- Numbers of slots added when every existing one is held (slot 0 holds the counts moved over).
      CREATE SEQUENCE record_counts_slot_seq AS integer MINVALUE 1 CYCLE OWNED BY record_counts.slot;

      -- Adds a write's change to one slot of (ws, obj) that no other open transaction holds.
      CREATE FUNCTION record_counts_add(ws uuid, obj text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$
      DECLARE
        taken integer;
      BEGIN
        SELECT slot INTO taken FROM record_counts
         WHERE workspace_id = ws AND object = obj
         ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF FOUND THEN
          UPDATE record_counts SET live_count = live_count + delta, version = version + 1
           WHERE workspace_id = ws AND object = obj AND slot = taken;
        ELSE
          -- Not for a workspace being deleted (its slots went first, by ON DELETE CASCADE).
          INSERT INTO record_counts (workspace_id, object, slot, live_count, version)
          SELECT ws, obj, nextval('record_counts_slot_seq'), delta, 1 WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ws)
          -- Only after the sequence wrapped around: add to the slot that number names.
          ON CONFLICT (workspace_id, object, slot) DO UPDATE
            SET live_count = record_counts.live_count + excluded.live_count, version = record_counts.version + 1;
        END IF;
      END $$;

      CREATE OR REPLACE FUNCTION record_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM record_counts_add(workspace_id, TG_ARGV[0], count(*) FILTER (WHERE deleted_at IS NULL))
           FROM new_rows GROUP BY workspace_id ORDER BY workspace_id;
        RETURN NULL;
      END $$;

      CREATE OR REPLACE FUNCTION record_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM record_counts_add(workspace_id, TG_ARGV[0], sum(delta)) FROM (
            SELECT workspace_id, CASE WHEN deleted_at IS NULL THEN 1 ELSE 0 END AS delta FROM new_rows
            UNION ALL
            SELECT workspace_id, CASE WHEN deleted_at IS NULL THEN -1 ELSE 0 END FROM old_rows
          ) changes GROUP BY workspace_id ORDER BY workspace_id;
        RETURN NULL;
      END $$;

      CREATE OR REPLACE FUNCTION record_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM record_counts_add(workspace_id, TG_ARGV[0], -count(*) FILTER (WHERE deleted_at IS NULL))
           FROM old_rows GROUP BY workspace_id ORDER BY workspace_id;
        RETURN NULL;
      END $$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    // One row per (workspace, object) again, holding the sums.
    await q.query(`
      CREATE OR REPLACE FUNCTION record_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO record_counts AS rc (workspace_id, object, live_count, version)
          SELECT workspace_id, TG_ARGV[0], count(*) FILTER (WHERE deleted_at IS NULL), 1
          FROM new_rows GROUP BY workspace_id ORDER BY workspace_id
        ON CONFLICT (workspace_id, object) DO UPDATE
          SET live_count = rc.live_count + excluded.live_count, version = rc.version + 1;
        RETURN NULL;
      END $$;

      CREATE OR REPLACE FUNCTION record_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
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

      CREATE OR REPLACE FUNCTION record_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO record_counts AS rc (workspace_id, object, live_count, version)
          SELECT workspace_id, TG_ARGV[0], -count(*) FILTER (WHERE deleted_at IS NULL), 1
          FROM old_rows GROUP BY workspace_id ORDER BY workspace_id
        ON CONFLICT (workspace_id, object) DO UPDATE
          SET live_count = rc.live_count + excluded.live_count, version = rc.version + 1;
        RETURN NULL;
      END $$;

      DROP FUNCTION record_counts_add;
      LOCK TABLE record_counts IN EXCLUSIVE MODE;
      CREATE TEMP TABLE record_counts_summed ON COMMIT DROP AS
        SELECT workspace_id, object, sum(live_count)::bigint AS live_count, sum(version)::bigint AS version
          FROM record_counts GROUP BY workspace_id, object;
      DELETE FROM record_counts;
      ALTER TABLE record_counts DROP CONSTRAINT record_counts_pkey;
      ALTER TABLE record_counts DROP COLUMN slot;
      ALTER TABLE record_counts ADD PRIMARY KEY (workspace_id, object);
      INSERT INTO record_counts (workspace_id, object, live_count, version)
        SELECT workspace_id, object, live_count, version FROM record_counts_summed;
    `);
  }
}
