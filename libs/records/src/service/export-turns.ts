/*
 * Fair turns at the export slots (docs/rest.md "Exports"; docs/decisions/0050-exports-fair-safe-patient.md).
 * Anyone can sign up many workspaces, so a workspace is the unit that gets a fair share:
 *
 * - a workspace's further export (it runs one already, on any instance) never takes a
 *   server's last free slot, which stays for a workspace that has none;
 * - a workspace refused for want of a slot waits in line (`export_waits`, read by every
 *   instance), and a freed slot is kept for those waiting longer and holding no more than
 *   the one asking, in turn, rather than given to whoever asks next.
 *
 * A server's slots (`EXPORTS_PER_INSTANCE`) are connections of its own pool, counted in
 * its memory: they are per process by nature. What a workspace holds is its advisory locks
 * (exports.service.ts), seen by every instance in pg_locks; the line is in Postgres.
 */

/** Seconds a refused workspace keeps its place without asking again: the Retry-After it was given, and then some. */
export const WAIT_SECONDS = 25;
/** Rows of workspaces that gave up are swept after this long. */
const FORGET_AFTER = `interval '10 minutes'`;

/** A statement on some connection: the export's own, or the request pool for a refusal before one is taken. */
export type Query = (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

/** Where a workspace stands: exports it runs (across instances, the one starting excluded), workspaces ahead of it, and whether it is in line. */
export interface Turn {
  held: number;
  ahead: number;
  listed: boolean;
}

/** Granted advisory locks of one export lock name in this database (its two-key form: classid, objid, objsubid 2). */
const HELD = `(SELECT count(*)::int FROM pg_locks
                WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND classid = hashtext($2)::oid AND objsubid = 2 AND granted)`;

/** Where `workspace` stands while it holds one more slot (the one it claimed to start this export). */
export async function turnOf(query: Query, workspace: string, lockName: string): Promise<Turn> {
  const [row] = await query(
    `WITH me AS (
       SELECT ${HELD} - 1 AS held,
              (SELECT since FROM export_waits WHERE workspace = $1 AND seen > now() - make_interval(secs => $3)) AS since,
              EXISTS (SELECT 1 FROM export_waits WHERE workspace = $1) AS listed)
     SELECT me.held, me.listed,
            (SELECT count(*)::int FROM export_waits o
              WHERE o.workspace <> $1 AND o.seen > now() - make_interval(secs => $3)
                AND o.holding <= me.held AND o.since < coalesce(me.since, now())) AS ahead
       FROM me`,
    [workspace, lockName, WAIT_SECONDS],
  );
  return { held: row.held as number, ahead: row.ahead as number, listed: row.listed as boolean };
}

/**
 * Why `free` slots of this server are not for a workspace that stands at `turn`, or
 * undefined when one is. A further export leaves one free slot; those waiting ahead come first.
 */
export function refusal(free: number, turn: Turn): string | undefined {
  if (free > turn.ahead + (turn.held > 0 ? 1 : 0)) return undefined;
  // How many others wait is theirs to know: the message does not count them.
  if (turn.ahead > 0) return "This server's free export slots are kept for workspaces that have waited longer";
  return `This workspace runs ${turn.held} export${turn.held > 1 ? 's' : ''} already; this server's last free export slot is kept for workspaces that have none`;
}

/**
 * Puts `workspace` in line, or keeps its place (refreshing it; a place left unrefreshed for
 * WAIT_SECONDS starts again at the back). `holding` undefined: counted from pg_locks.
 * Rows of workspaces that gave up long ago go in the same statement.
 */
export async function waitInLine(query: Query, workspace: string, lockName: string, holding?: number): Promise<void> {
  await query(
    `WITH forgotten AS (DELETE FROM export_waits WHERE seen < now() - ${FORGET_AFTER} AND workspace <> $1)
     INSERT INTO export_waits AS w (workspace, holding) VALUES ($1, coalesce($4::int, ${HELD}))
     ON CONFLICT (workspace) DO UPDATE SET holding = EXCLUDED.holding, seen = now(),
       since = CASE WHEN w.seen < now() - make_interval(secs => $3) THEN now() ELSE w.since END`,
    [workspace, lockName, WAIT_SECONDS, holding ?? null],
  );
}

/** Served: out of the line. */
export async function leaveLine(query: Query, workspace: string): Promise<void> {
  await query('DELETE FROM export_waits WHERE workspace = $1', [workspace]);
}
