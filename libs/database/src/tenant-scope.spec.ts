import { checkRecording, loadParser, objectScopeOffences, offences } from './tenant-scope.js';

const TENANT = new Set(['companies', 'people', 'record_counts']);
const tables = (sql: string) => offences(sql, TENANT).map((o) => o.table);

describe('tenant scope (a workspace_id equality on every tenant table)', () => {
  beforeAll(() => loadParser());

  it('accepts an equality with a parameter, a constant or a cast, qualified or not', () => {
    expect(tables('SELECT * FROM companies WHERE workspace_id = $1 AND id = $2')).toEqual([]);
    expect(tables('SELECT * FROM companies t WHERE t.id = $2 AND t.workspace_id = $1::uuid')).toEqual([]);
    expect(tables(`SELECT * FROM "companies" "c" WHERE "c"."workspace_id" = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'`)).toEqual([]);
    expect(tables('DELETE FROM people WHERE $1 = workspace_id')).toEqual([]);
    expect(tables('UPDATE companies SET name = $3 WHERE workspace_id = $1 AND id = $2 RETURNING *')).toEqual([]);
  });

  it('refuses a tenant table without one, under OR, or with another operator', () => {
    expect(tables('SELECT * FROM companies WHERE id = $1')).toEqual(['companies']);
    expect(tables('SELECT * FROM companies WHERE workspace_id = $1 OR id = $2')).toEqual(['companies']);
    expect(tables('SELECT * FROM companies WHERE workspace_id <> $1')).toEqual(['companies']);
    expect(tables('UPDATE people SET deleted_at = now() WHERE id = ANY($1)')).toEqual(['people']);
    expect(tables('DELETE FROM record_counts')).toEqual(['record_counts']);
  });

  it('follows joins: a co-located join on workspace_id anchors the other table, any other join does not', () => {
    expect(
      tables(
        'SELECT * FROM people p JOIN companies c ON c.id = p.company_id AND c.workspace_id = p.workspace_id WHERE p.workspace_id = $1',
      ),
    ).toEqual([]);
    expect(tables('SELECT * FROM people p JOIN companies c ON c.id = p.company_id WHERE p.workspace_id = $1')).toEqual(['companies']);
    expect(tables('SELECT * FROM people p, companies c WHERE c.workspace_id = p.workspace_id AND c.id = p.company_id')).toEqual([
      'people',
      'companies',
    ]);
  });

  it('checks each subquery and CTE at its own level; a correlated equality anchors it', () => {
    expect(
      tables(
        'SELECT * FROM companies t WHERE t.workspace_id = $1 AND EXISTS (SELECT 1 FROM people p WHERE p.workspace_id = t.workspace_id AND p.company_id = t.id)',
      ),
    ).toEqual([]);
    expect(tables('SELECT * FROM companies t WHERE t.workspace_id = $1 AND t.id IN (SELECT company_id FROM people)')).toEqual(['people']);
    expect(tables('WITH x AS (SELECT id FROM companies WHERE workspace_id = $1) SELECT * FROM x')).toEqual([]);
    expect(tables('WITH x AS (SELECT id FROM companies) SELECT * FROM x')).toEqual(['companies']);
  });

  it('wants workspace_id among the columns of an INSERT or COPY FROM, and checks COPY (SELECT …) like a SELECT', () => {
    expect(tables('INSERT INTO companies (workspace_id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING')).toEqual([]);
    expect(tables('INSERT INTO companies (name) VALUES ($1)')).toEqual(['companies']);
    expect(tables('COPY companies (workspace_id, name) FROM STDIN')).toEqual([]);
    expect(tables(`COPY (SELECT name FROM companies t WHERE t.workspace_id = '1') TO STDOUT`)).toEqual([]);
    expect(tables('COPY (SELECT name FROM companies) TO STDOUT')).toEqual(['companies']);
  });

  it('ignores reference and other tables, other schemas and statements without tables', () => {
    expect(tables('SELECT * FROM users WHERE id = $1')).toEqual([]);
    expect(tables('SELECT * FROM graphile_worker.jobs')).toEqual([]);
    expect(tables('BEGIN')).toEqual([]);
    expect(tables('SET LOCAL lock_timeout = 5')).toEqual([]);
  });

  it('reports what it cannot parse', () => {
    expect(offences('SELEC oops', TENANT)[0].reason).toMatch(/not parsed/);
  });

  it('checks a recording, application statements only, each text once', async () => {
    const lines = [
      JSON.stringify({ sql: 'SELECT * FROM companies WHERE id = $1', from: 'apps/records-api/src/x.ts:1' }),
      JSON.stringify({ sql: 'SELECT * FROM companies WHERE id = $1', from: 'dist/apps/records-api/src/x.js:1' }),
      JSON.stringify({ sql: 'SELECT * FROM people WHERE id = $1', from: 'test/factories.ts:9' }),
      JSON.stringify({ sql: 'SELECT * FROM people WHERE workspace_id = $1', from: 'libs/y.ts:3' }),
      JSON.stringify({ sql: 'UPDATE people SET custom = $1', from: 'dist/libs/database/src/migrations/1-x.js:5' }),
      JSON.stringify({ sql: 'CREATE INDEX x ON people (workspace_id); UPDATE people SET custom = $1', from: 'unknown' }),
      '',
    ];
    const report = await checkRecording(lines, TENANT);
    expect(report.checked).toBe(2);
    expect(report.offenders.map((o) => o.from)).toEqual(['apps/records-api/src/x.ts:1']);
  });

  it('wants custom_records with its object at each level (docs/decisions/0061-one-path-to-sql.md)', () => {
    const objects = (sql: string) => objectScopeOffences(sql, new Set(['custom_records'])).map((o) => `${o.table}: ${o.reason}`);
    const OBJECT = "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'";
    expect(objects(`SELECT * FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = ${OBJECT}`)).toEqual([]);
    expect(objects(`DELETE FROM custom_records WHERE workspace_id = $1 AND object_id = $2`)).toEqual([]);
    expect(objects(`INSERT INTO custom_records (workspace_id, object_id, custom) VALUES ($1, ${OBJECT}, $2)`)).toEqual([]);
    expect(objects('SELECT * FROM companies WHERE workspace_id = $1')).toEqual([]);
    expect(objects('UPDATE custom_records SET custom = $2 WHERE workspace_id = $1')).toEqual(['custom_records: no object_id equality']);
    expect(objects('SELECT * FROM custom_records t WHERE t.workspace_id = $1 AND (t.object_id = $2 OR true)')).toEqual([
      'custom_records: no object_id equality',
    ]);
    expect(
      objects(`SELECT 1 FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = ${OBJECT}
                 AND EXISTS (SELECT 1 FROM custom_records r WHERE r.workspace_id = t.workspace_id AND r.id = t.id)`),
    ).toEqual(['custom_records: no object_id equality']);
    expect(objects('INSERT INTO custom_records (workspace_id, custom) VALUES ($1, $2)')).toEqual([
      'custom_records: INSERT without object_id',
    ]);
    // A CTE named like the table is not it.
    expect(objects('WITH custom_records AS (SELECT 1) SELECT * FROM custom_records')).toEqual([]);
  });

  it('checks object tables in a recording when it is told which they are', async () => {
    const lines = [JSON.stringify({ sql: 'SELECT * FROM custom_records WHERE workspace_id = $1', from: 'unknown' })];
    expect((await checkRecording(lines, TENANT)).offenders).toEqual([]);
    expect((await checkRecording(lines, TENANT, new Set(['custom_records']))).offenders.map((o) => o.offences)).toEqual([
      [{ table: 'custom_records', reason: 'no object_id equality' }],
    ]);
  });
});
