import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '#database/index.js';
import { OBJECTS, relationFields } from '#records/objects/index.js';
import { schemaDrift } from './schema-drift.js';

/** The migrated record tables against the record objects' declarations (docs/architecture.md, "One declaration per object"). */
describe('schema drift', () => {
  let ds: DataSource;
  beforeAll(async () => {
    ds = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 2)).initialize();
  });
  afterAll(() => ds.destroy());

  it('the migrations made every record table as its object declares it, and nothing more', async () => {
    expect(await schemaDrift(ds)).toEqual([]);
  });

  describe('on a copy of the tables that is then altered', () => {
    // Unique per run: DATABASE_URL may be a server other runs use at the same time.
    const scratch = `schema_drift_${process.pid}_${randomBytes(4).toString('hex')}`;
    beforeAll(async () => {
      await ds.query(`CREATE SCHEMA ${scratch}`);
      for (const object of OBJECTS) await ds.query(`CREATE TABLE ${scratch}.${object.table} (LIKE public.${object.table} INCLUDING ALL)`);
      // LIKE copies no foreign keys: add the ones the declarations ask for, between the copies.
      for (const object of OBJECTS) {
        for (const field of relationFields(object)) {
          const target = OBJECTS.find((o) => o.plural === field.target)!.table;
          await ds.query(
            `ALTER TABLE ${scratch}.${object.table} ADD CONSTRAINT ${object.table}_${field.column}_fkey
               FOREIGN KEY (workspace_id, ${field.column}) REFERENCES ${scratch}.${target} (workspace_id, id)`,
          );
        }
      }
    });
    afterAll(() => ds.query(`DROP SCHEMA IF EXISTS ${scratch} CASCADE`));

    it('finds nothing on the faithful copy, and every table missing in a schema without them', async () => {
      expect(await schemaDrift(ds, scratch)).toEqual([]);
      expect(await schemaDrift(ds, `${scratch}_absent`)).toEqual(
        OBJECTS.map((o) => `${o.plural}: table ${scratch}_absent.${o.table} does not exist`),
      );
    });

    it('names the object, field and column of each difference', async () => {
      const [stageCheck] = await ds.query(
        `SELECT conname FROM pg_constraint WHERE conrelid = '${scratch}.opportunities'::regclass AND contype = 'c'
            AND pg_get_constraintdef(oid) LIKE '%stage%'`,
      );
      await ds.query(`
        ALTER TABLE ${scratch}.companies DROP COLUMN domain_primary_link_label, ALTER COLUMN name DROP NOT NULL,
          DROP COLUMN IF EXISTS custom;
        ALTER TABLE ${scratch}.companies ADD COLUMN custom text;
        ALTER TABLE ${scratch}.people ALTER COLUMN last_name TYPE integer USING NULL, ALTER COLUMN first_name TYPE varchar(50),
          ALTER COLUMN additional_emails DROP DEFAULT, ADD COLUMN nickname text,
          ADD COLUMN IF NOT EXISTS custom jsonb NOT NULL DEFAULT '{}';
        ALTER TABLE ${scratch}.opportunities ALTER COLUMN close_date TYPE timestamptz, ALTER COLUMN stage SET DEFAULT 'SCREENING',
          DROP CONSTRAINT ${stageCheck.conname}, ADD CHECK (stage IN ('NEW', 'SCREENING', 'WON')),
          DROP CONSTRAINT opportunities_point_of_contact_id_fkey;
      `);
      expect((await schemaDrift(ds, scratch)).sort()).toEqual(
        [
          'companies.domainName.primaryLinkLabel: column companies.domain_primary_link_label is missing',
          'companies.name: column companies.name is nullable, expected NOT NULL',
          'companies (system column): column companies.custom is text, expected jsonb',
          'companies (system column): column companies.custom is nullable, expected NOT NULL',
          'people.name.lastName: column people.last_name is integer, expected text',
          "people.name.firstName: column people.first_name is character varying(50), shorter than the field's maxLength 200",
          "people.emails.additionalEmails: column people.additional_emails defaults to nothing, expected '[]'",
          'people: column people.nickname (text) is neither declared by a field nor a system column',
          'opportunities.closeDate: column opportunities.close_date is timestamp with time zone, expected timestamp(3) with time zone',
          "opportunities.stage: column opportunities.stage defaults to 'SCREENING'::text, expected 'NEW'",
          'opportunities.stage: column opportunities.stage has a CHECK allowing NEW, SCREENING, WON, expected CUSTOMER, MEETING, NEW, PROPOSAL, SCREENING',
          'opportunities.pointOfContactId: column opportunities.point_of_contact_id has no foreign key (workspace_id, point_of_contact_id) → people (workspace_id, id)',
        ].sort(),
      );
    });
  });
});
