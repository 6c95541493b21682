import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Imports account for every line of their file (docs/rest.md "Imports";
 * docs/decisions/0047-import-quotes-and-fairness.md): `lines_done` is the line of the file the
 * last committed record ends on (a CSV record may span lines), the third part of the resume
 * point with `rows_done` and `bytes_done`, so a resumed import reads on from that byte with
 * the right row and line numbers; once completed, every line of the file. A refused row keeps
 * the line it starts on (`line_no`; NULL for rows refused before this migration).
 */
export class ImportLines1765800000047 implements MigrationInterface {
  name = 'ImportLines1765800000047';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE imports ADD COLUMN lines_done bigint NOT NULL DEFAULT 0;
      ALTER TABLE import_errors ADD COLUMN line_no bigint;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE import_errors DROP COLUMN line_no; ALTER TABLE imports DROP COLUMN lines_done;');
  }
}
