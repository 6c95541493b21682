import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The types before this migration (kept as they were: a migration is history). */
export const BEFORE = [
  'TEXT',
  'NUMBER',
  'BOOLEAN',
  'DATE',
  'DATE_TIME',
  'SELECT',
  'MULTI_SELECT',
  'RATING',
  'CURRENCY',
  'LINKS',
  'EMAILS',
  'PHONES',
];
export const ADDED = ['FULL_NAME', 'ADDRESS', 'RICH_TEXT', 'UUID'];

export const check = (types: string[]) => `CHECK (type IN (${types.map((t) => `'${t}'`).join(', ')}))`;

/**
 * Custom fields of the types FULL_NAME, ADDRESS, RICH_TEXT and UUID (docs/data-model.md
 * "Types"; docs/decisions/0056-field-type-registry.md). The CHECK on `custom_fields.type`
 * is replaced by a wider one, added NOT VALID and then validated: the table is locked only
 * for the catalog change, and the scan of existing rows takes a lock that lets writes go on
 * (PostgreSQL docs, ALTER TABLE … VALIDATE CONSTRAINT). The search functions that know the
 * searchable types are generated from the registry at start (search-functions.ts).
 */
export class FieldTypes1765900000100 implements MigrationInterface {
  name = 'FieldTypes1765900000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE custom_fields DROP CONSTRAINT custom_fields_type_check,
        ADD CONSTRAINT custom_fields_type_check ${check([...BEFORE, ...ADDED])} NOT VALID;
      ALTER TABLE custom_fields VALIDATE CONSTRAINT custom_fields_type_check;
    `);
  }

  /** Fields of the added types are kept (NOT VALID checks new rows only): no data is lost going back. */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE custom_fields DROP CONSTRAINT custom_fields_type_check,
        ADD CONSTRAINT custom_fields_type_check ${check(BEFORE)} NOT VALID;
    `);
  }
}
