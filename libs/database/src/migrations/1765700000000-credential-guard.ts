import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The credential check a write can carry instead of a read before it (libs/auth/src/
 * credential-cache.ts, `peek`; apps/records-api/src/rest/create-fast-path.ts): a principal
 * kept in the cache is good while `credential_changes.version` is the one the cache last
 * read, so a write made for it adds `credential_version_is(<that version>)` to its
 * statement. A change committed before the statement began (every change that can take
 * access away moves the version, migration 1764400000100) ends the statement with SQLSTATE
 * WA001 and nothing written; the caller then authenticates the request in full and writes
 * again, or answers 401. VOLATILE: read when the statement runs, never while it is planned.
 */
export class CredentialGuard1765700000000 implements MigrationInterface {
  name = 'CredentialGuard1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION credential_version_is(expected bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        IF (SELECT version FROM credential_changes WHERE id = 1) IS DISTINCT FROM expected THEN
          RAISE EXCEPTION 'credentials changed since version %', expected USING ERRCODE = 'WA001';
        END IF;
        RETURN true;
      END $$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION credential_version_is`);
  }
}
