import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { OBJECTS } from '../objects/index.js';
import { scope } from './scope.js';
import { compileFilter } from './sql.js';
import type { FilterNode, ObjectSchema } from './types.js';

const OBJECT = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
const WORKSPACE = { workspaceId: '00000000-0000-4000-8000-000000000001' };

describe('the record scope', () => {
  it('gives the workspace, a custom object and live, deleted or every record', () => {
    const companies = scope(WORKSPACE, { schema: { table: 'companies' } });
    expect(companies.table).toBe('companies');
    expect(companies.params()).toEqual([WORKSPACE.workspaceId]);
    expect(companies.where()).toBe('workspace_id = $1 AND deleted_at IS NULL');
    expect(companies.where('t.', 'deleted')).toBe('t.workspace_id = $1 AND t.deleted_at IS NOT NULL');
    expect(companies.where('r.', 'any', 't.workspace_id')).toBe('r.workspace_id = t.workspace_id');
    expect(companies.insertColumns).toBe('workspace_id');
    const tickets = scope(WORKSPACE, { schema: { table: 'custom_records' }, objectId: OBJECT });
    expect(tickets.where('t.')).toBe(`t.workspace_id = $1 AND t.object_id = '${OBJECT}' AND t.deleted_at IS NULL`);
    expect([tickets.insertColumns, tickets.insertValues]).toEqual(['workspace_id, object_id', `$1, '${OBJECT}'::uuid`]);
  });

  it('refuses what it would write into SQL unchecked, and parameters that are not its own', () => {
    expect(() => scope(WORKSPACE, { schema: { table: 'companies; DROP TABLE x' } })).toThrow('not a record table');
    expect(() => scope(WORKSPACE, { schema: { table: 'custom_records' }, objectId: "x' OR '1'='1" })).toThrow('not an object id');
    const companies = scope(WORKSPACE, { schema: { table: 'companies' } });
    const schema = { name: 'companies', table: 'companies', fields: {}, compositeSort: {} } as ObjectSchema;
    expect(() => companies.filtered(undefined, schema, ['another workspace'])).toThrow("first parameter is its scope's workspace");
  });

  it("scopes the target records of a relation filter with the outer record's workspace", () => {
    const people = OBJECTS.find((o) => o.plural === 'people')!;
    const companies = OBJECTS.find((o) => o.plural === 'companies')!;
    const companySchema = { name: 'companies', table: companies.table, fields: {}, compositeSort: {} } as ObjectSchema;
    const schema = {
      name: 'people',
      table: people.table,
      fields: {},
      compositeSort: {},
      relations: { company: { kind: 'toOne', column: 'company_id', target: companySchema } },
    } as unknown as ObjectSchema;
    const node: FilterNode = { kind: 'relation', relation: 'company', child: { kind: 'and', children: [] } };
    const s = scope(WORKSPACE, { schema });
    expect(compileFilter(node, schema, s.params(), 't', s)).toBe(
      'EXISTS (SELECT 1 FROM companies r WHERE r.workspace_id = t.workspace_id AND r.deleted_at IS NULL AND r.id = t.company_id AND TRUE)',
    );
    expect(() => compileFilter(node, schema, s.params())).toThrow("within its records' scope");
  });
});

/*
 * Every statement the application writes that names a record table takes the table from a
 * RecordScope (docs/decisions/0061-one-path-to-sql.md), so its predicates come from the scope
 * too: read with the TypeScript checker over every source file of apps/ and libs/ (not specs,
 * not migrations, which change every workspace's records by design), a record table written
 * after FROM, INTO, UPDATE, JOIN or TABLE is an offence, and so is a table interpolated there
 * that is not the `table` of a RecordScope, unless listed below with its reason.
 */

/** Interpolated tables that are not records' (file: the text of the interpolation). */
const OTHER_TABLES: Record<string, { expression: string; reason: string }[]> = {
  'libs/identity/src/objects.ts': [{ expression: 'table', reason: "a deleted object's metadata tables (custom_fields, unique_fields, …)" }],
  'libs/webhooks/src/delivery.ts': [{ expression: 'CLAIMED.from', reason: 'webhook deliveries claimed by a job' }],
  'libs/records/src/service/group-by.ts': [
    { expression: 'table', reason: "groupByStatement is given its scope's table and predicate (RecordRepository.groupBy)" },
  ],
};

/** Texts of functions Postgres runs itself (they name the records of the row they fire for), by file. */
const RUN_BY_POSTGRES: Record<string, string> = {
  'libs/records/src/field-types/search-sql.ts':
    "the search trigger functions generated from the field types, created under the migrations' lock",
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' || entry.name === 'node_modules' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

describe('statements on records', () => {
  it('take their table from a RecordScope, wherever they are written', () => {
    const root = process.cwd();
    const files = [...sources(join(root, 'apps')), ...sources(join(root, 'libs'))];
    const config = ts.parseJsonConfigFileContent(ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, root);
    const program = ts.createProgram({ rootNames: files, options: { ...config.options, noEmit: true, incremental: false } });
    const checker = program.getTypeChecker();
    // The standard objects' tables, and the one every custom object's records share (docs/decisions/0057-custom-objects-storage.md).
    const tables = [...OBJECTS.map((o) => o.table), 'custom_records'];
    const named = new RegExp(`\\b(FROM|INTO|UPDATE|JOIN|TABLE)\\s+(${tables.join('|')})\\b`);
    const before = /\b(FROM|INTO|UPDATE|JOIN|TABLE)\s+$/;
    const offenders: string[] = [];
    for (const file of files) {
      if (relative(root, file) in RUN_BY_POSTGRES) continue;
      const source = program.getSourceFile(file)!;
      const where = (node: ts.Node) => `${relative(root, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
      const visit = (node: ts.Node) => {
        if (ts.isNoSubstitutionTemplateLiteral(node) || ts.isStringLiteral(node)) {
          if (named.test(node.text)) offenders.push(`${where(node)} names a record table: ${node.text.slice(0, 80)}`);
        } else if (ts.isTemplateExpression(node)) {
          let text = node.head.text;
          for (const span of node.templateSpans) {
            if (named.test(text)) offenders.push(`${where(node)} names a record table`);
            if (before.test(text) && !fromScope(span.expression)) {
              const expression = span.expression.getText(source);
              const allowed = OTHER_TABLES[relative(root, file)]?.some((o) => o.expression === expression);
              if (!allowed) offenders.push(`${where(span)} FROM \${${expression}}: not a RecordScope's table`);
            }
            text = span.literal.text;
          }
          if (named.test(text)) offenders.push(`${where(node)} names a record table`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(offenders).toEqual([]);

    /** `<a RecordScope>.table`. */
    function fromScope(expression: ts.Expression): boolean {
      if (!ts.isPropertyAccessExpression(expression) || expression.name.text !== 'table') return false;
      return checker.getTypeAtLocation(expression.expression).getSymbol()?.getName() === 'RecordScope';
    }
  });
});
