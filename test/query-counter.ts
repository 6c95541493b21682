import type { DataSource } from 'typeorm';

/** Every statement the app sends straight to its pg pool while `fn` runs (for N+1 checks). */
export async function statementsDuring(ds: DataSource, fn: () => Promise<unknown>): Promise<string[]> {
  const pool = (ds.driver as unknown as { master: { query: (...args: unknown[]) => Promise<unknown> } }).master;
  const original = pool.query;
  const statements: string[] = [];
  pool.query = (sql: unknown, ...rest: unknown[]) => {
    statements.push(typeof sql === 'string' ? sql : (sql as { text: string }).text);
    return original.call(pool, sql, ...rest);
  };
  try {
    await fn();
  } finally {
    pool.query = original;
  }
  return statements;
}
