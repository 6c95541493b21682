import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every key of a tenant table includes `workspace_id`, as a table distributed by it needs
 * (docs/scaling.md "Distributed Postgres (Citus)"): `custom_fields` was the one tenant table whose
 * primary key was `id` alone. Nothing references it; ids stay unique (random UUIDs).
 */
export class CitusKeys1765200000000 implements MigrationInterface {
  name = 'CitusKeys1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE custom_fields DROP CONSTRAINT custom_fields_pkey, ADD PRIMARY KEY (workspace_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE custom_fields DROP CONSTRAINT custom_fields_pkey, ADD PRIMARY KEY (id)`);
  }
}
