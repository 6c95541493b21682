import { loadConfig } from '#config/config.js';

/**
 * Is this error the database being unreachable (stopped, restarting, network gone), as
 * opposed to a bug or a bad statement? Those become 503 SERVICE_UNAVAILABLE with
 * Retry-After (README "Operations"), never 500: the client should retry, and nothing was written.
 */

/** Seconds a client is told to wait (`Retry-After`) while the database is away. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * SQLSTATE class 08 (connection exception), 57P01–57P03 (admin/crash shutdown, cannot
 * connect now), 53300 (too many connections) — PostgreSQL Appendix A.
 */
const SQLSTATES = new Set(['08000', '08001', '08003', '08004', '08006', '08007', '57P01', '57P02', '57P03', '53300']);
const ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** node-postgres reports these without a code. */
const MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|the database system is (starting up|shutting down|in recovery mode)/i;

/**
 * Did Postgres cancel the statement (SQLSTATE 57014 query_canceled): it ran past
 * DATABASE_STATEMENT_TIMEOUT_MS (or an operator cancelled it)? Not a bug and not the client's
 * syntax: a 503 with QUERY_TIMEOUT and Retry-After, never a 500. A cancelled statement
 * fails its transaction, so nothing it was part of was written.
 */
export function isStatementTimeout(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let queue: unknown[] = [error]; queue.length;) {
    const current = queue.shift();
    if (!current || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const e = current as { code?: unknown; driverError?: unknown; cause?: unknown; originalError?: unknown };
    if (e.code === '57014') return true;
    queue.push(e.driverError, e.cause, e.originalError);
  }
  return false;
}

export function statementTimeoutMessage(): string {
  return `The query took longer than ${loadConfig().databaseStatementTimeoutMs} ms and was cancelled; narrow it (a more selective filter, a smaller page) or retry after ${RETRY_AFTER_SECONDS} s`;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length) {
    const current = queue.shift();
    if (!current || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const e = current as {
      code?: unknown;
      message?: unknown;
      driverError?: unknown;
      cause?: unknown;
      originalError?: unknown;
      errors?: unknown;
    };
    if (typeof e.code === 'string' && (SQLSTATES.has(e.code) || ERRNOS.has(e.code))) return true;
    if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true;
    queue.push(e.driverError, e.cause, e.originalError);
    if (Array.isArray(e.errors)) queue.push(...e.errors); // AggregateError (connect to several addresses)
  }
  return false;
}
