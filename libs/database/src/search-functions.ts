import type { QueryRunner } from 'typeorm';
import { searchFunctions } from '#records/field-types/search-sql.js';

/**
 * The search functions that depend on field types, made to match the field-type registry
 * (docs/decisions/0056-field-type-registry.md): after the migrations, under their advisory
 * lock, each function whose body differs from the one this code generates is replaced, all in
 * one transaction. A database that has applied a migration this code does not know belongs
 * to newer code, which generated its functions: an older instance starting during a rolling
 * deploy leaves them alone. Nothing is replaced when nothing changed (one catalog read).
 */
export async function syncSearchFunctions(runner: QueryRunner, unknownMigrations: boolean): Promise<string[]> {
  if (unknownMigrations) return [];
  const wanted = searchFunctions();
  const rows = (await runner.query(
    `SELECT s.signature, p.prosrc FROM unnest($1::text[]) s(signature)
       LEFT JOIN pg_proc p ON p.oid = to_regprocedure(s.signature)`,
    [wanted.map((f) => f.signature)],
  )) as { signature: string; prosrc: string | null }[];
  const stale = wanted.filter((f) => rows.find((r) => r.signature === f.signature)?.prosrc !== f.body);
  if (!stale.length) return [];
  await runner.startTransaction();
  try {
    for (const f of stale) await runner.query(f.sql);
    await runner.commitTransaction();
  } catch (err) {
    await runner.rollbackTransaction();
    throw err;
  }
  return stale.map((f) => f.signature);
}
