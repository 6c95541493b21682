import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import pg from 'pg';
import { fileURLToPath } from 'node:url';

/** One recorded statement text: where it was first sent from (`libs/…/x.ts:12`, `test/…`, or `unknown`). */
export interface RecordedStatement {
  sql: string;
  from: string;
}

const RECORDING = Symbol.for('wrs.sqlRecording');

/** The checkout this file runs from (its source or its build under dist/), whatever WRS_ROOT says. */
const here = fileURLToPath(import.meta.url);
const ROOT = here.slice(0, here.lastIndexOf('/libs/database/src/')).replace(/\/dist$/, '');

/**
 * With `SQL_RECORD_FILE` set (the test suite sets it; nothing else should), every distinct
 * statement text this process sends through node-postgres — TypeORM's, the `Sql` helpers',
 * graphile-worker's, COPY — is appended to that file as one JSON line, with the first
 * caller outside node_modules. The suite's teardown checks them for a `workspace_id`
 * equality on every tenant table (tenant-scope.ts; docs/scaling.md "Distributed Postgres (Citus)").
 * Values are never recorded, only texts. Off (nothing patched) when the variable is unset.
 */
export function recordSql(file = process.env.SQL_RECORD_FILE): void {
  if (!file) return;
  const proto = pg.Client.prototype as unknown as Record<symbol, unknown> & { query: (...args: unknown[]) => unknown };
  if (proto[RECORDING]) return;
  proto[RECORDING] = true;
  const seen = new Set<string>();
  const query = proto.query;
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: unknown } | undefined;
    const text = typeof first === 'string' ? first : first?.text;
    if (typeof text === 'string' && !seen.has(text)) {
      seen.add(text);
      try {
        appendFileSync(file, `${JSON.stringify({ sql: text, from: caller() } satisfies RecordedStatement)}\n`);
      } catch {
        // A recording that cannot be written must not fail the statement.
      }
    }
    return query.apply(this, args);
  };
}

/** The first stack frame in this checkout's own code (not a library's, not this file's), relative to the checkout. */
function caller(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 60;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  for (const line of stack.split('\n').slice(1)) {
    const match = /\(?((?:file:\/\/)?\/[^():]+):(\d+):\d+\)?$/.exec(line.trim());
    if (!match) continue;
    const path = match[1].replace(/^file:\/\//, '');
    const file = relative(ROOT, path);
    // Libraries (their source maps may point anywhere) and this file are skipped.
    if (file.includes('node_modules/') || !/^(apps|libs|test|bench|scripts|dist)\//.test(file) || /sql-record\.[jt]s$/.test(file)) continue;
    return `${file}:${match[2]}`;
  }
  return 'unknown';
}
