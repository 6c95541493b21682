import type pg from 'pg';
import { loadConfig } from '#config/config.js';

/**
 * Which connections may hold session state (docs/scaling.md "Behind PgBouncer";
 * docs/decisions/0038-pooler-and-citus.md). Behind a pooler in transaction mode
 * (`DATABASE_POOLER=transaction`) a connection to DATABASE_URL is a different server session
 * from one transaction to the next: startup options are refused (PgBouncer: "unsupported
 * startup parameter: options"), a `SET`, a session advisory lock, a `LISTEN` or a named
 * prepared statement lands on whichever server connection ran that statement. So the
 * request pools keep no session state there, and what needs a session (migrations, the job
 * queue's workers, exports, index builds) connects to DATABASE_SESSION_URL instead.
 */

/** Whether connections to `url` go through a transaction pooler: `url` is DATABASE_URL and DATABASE_POOLER=transaction. */
export function isTransactionPooled(url: string | undefined): boolean {
  const config = loadConfig();
  return config.database.pooler === 'transaction' && url !== undefined && url === config.databaseUrl;
}

/**
 * The session counterpart of `url`: DATABASE_SESSION_URL for DATABASE_URL (when set), any
 * other URL (a test's own database, the embedded one) as it is.
 */
export function sessionUrlFor(url: string): string {
  const config = loadConfig();
  return url === config.databaseUrl && config.database.sessionUrl ? config.database.sessionUrl : url;
}

/**
 * Startup options of a pooled session: UTC (timestamps read as text are ISO-convertible
 * without time zone math, see sql.ts) and DATABASE_STATEMENT_TIMEOUT_MS, after which Postgres
 * cancels a statement (SQLSTATE 57014) instead of letting one heavy filter hold a backend, a
 * request and a shutdown for as long as it runs.
 */
export function sessionOptions(statementTimeoutMs = loadConfig().databaseStatementTimeoutMs): string {
  return `-c TimeZone=UTC -c statement_timeout=${statementTimeoutMs}`;
}

/**
 * The options of a pool on `url`. Through a transaction pooler none: the pooler's own
 * configuration sets both on its server connections (`timezone=UTC` and
 * `connect_query='SET statement_timeout = …'` in PgBouncer's [databases] entry, docs/scaling.md), and
 * the code reads timestamps correctly in any time zone, only slower.
 */
export function poolOptions(url: string, statementTimeoutMs?: number): Pick<pg.PoolConfig, 'options'> {
  return isTransactionPooled(url) ? {} : { options: sessionOptions(statementTimeoutMs) };
}

/**
 * A connection for work that needs a session of its own (LISTEN, session advisory locks,
 * `SET`, a long COPY): DATABASE_SESSION_URL for DATABASE_URL, with the session options
 * (`statementTimeoutMs` 0 = no limit; `extra` is appended to them).
 */
export function sessionConnection(url: string, statementTimeoutMs?: number, extra = ''): pg.PoolConfig {
  return { connectionString: sessionUrlFor(url), options: `${sessionOptions(statementTimeoutMs)}${extra}` };
}
