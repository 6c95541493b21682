import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The guard of a write that needs no webhook outbox (libs/webhooks/src/webhook-outbox.ts,
 * `unwatched`): true while no enabled webhook of the workspace selects the event type, and
 * otherwise an error (SQLSTATE WH002) that ends the statement, and its implicit transaction,
 * with nothing written. The records API then writes again in a transaction with the events.
 * The selection is the outbox statement's (recordEvents): `*` or the part itself, for the
 * object and for the action.
 */
export class UnwatchedWrites1764800000100 implements MigrationInterface {
  name = 'UnwatchedWrites1764800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION webhook_events_unwatched(ws uuid, event_type text) RETURNS boolean LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM webhooks w
                    WHERE w.workspace_id = ws AND w.enabled
                      AND EXISTS (SELECT 1 FROM unnest(w.operations) op
                                   WHERE split_part(op, '.', 1) IN ('*', split_part(event_type, '.', 1))
                                     AND split_part(op, '.', 2) IN ('*', split_part(event_type, '.', 2)))) THEN
          RAISE EXCEPTION 'an enabled webhook of the workspace selects %', event_type USING ERRCODE = 'WH002';
        END IF;
        RETURN true;
      END $$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION webhook_events_unwatched`);
  }
}
