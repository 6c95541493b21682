import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { FIELD_TYPE_NAMES } from './registry.js';

/*
 * Metadata is the only source (docs/decisions/0062-standard-fields-in-the-registry.md):
 * outside the field-type registry (this folder) no code decides by a field's kind or type
 * name, and outside the seeded metadata (the objects' declarations) no code names the
 * standard objects. A new `switch (field.type)` or `if (f.type === 'TEXT')` in a surface,
 * or a new list of 'companies', 'people', 'opportunities', fails here.
 */

/** Jest runs from the repository root. */
const ROOT = process.cwd();
const REGISTRY = 'libs/records/src/field-types/';

/** Where the standard objects are declared: their names are the metadata itself. */
const SEEDED = [/^libs\/records\/src\/objects\/[a-z-]+\.object\.ts$/];

/**
 * Files that name standard objects on purpose, each for a reason of its own. Migrations are
 * history: each made the schema of its day, and never changes.
 */
const NAMES_BY_DESIGN: Record<string, string> = {
  'libs/database/src/migrations/': 'schema history, written once',
  'apps/records-api/src/companies/companies.service.ts': "the companies' Nest provider class (an injection token kept for its users)",
  'apps/records-api/src/people/people.service.ts': "the people's Nest provider class (an injection token kept for its users)",
  'libs/identity/src/demo-seed.ts': 'demo records written into the standard tables, column by column',
  'libs/records/src/objects/unique-fields.ts': "the standard objects' built-in unique fields, as their migration made them",
};

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (name === 'node_modules' || name === 'dist') return [];
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The file's code without its comments (block and line comments; a `//` inside a string is rare enough here). */
function code(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const TYPE_NAMES = [...FIELD_TYPE_NAMES, 'RELATION'].join('|');
const KINDS = 'text|enum|timestamp|relation|composite|textList|linkList|bigint|number';

/** A decision by a field's kind or registry type name: a switch on it, a case of a name, a comparison with one. */
const FIELD_SWITCH: RegExp[] = [
  /switch \(\s*(?:f|field|sub|def|d|first|leaf)\.(?:kind|type)\s*\)/,
  new RegExp(`\\b(?:f|field|sub|first|leaf)\\??\\.kind\\s*[!=]==?\\s*'(?:${KINDS})'`),
  new RegExp(`\\.type\\s*[!=]==?\\s*'(?:${TYPE_NAMES})'`),
  new RegExp(`'(?:${TYPE_NAMES})'\\s*[!=]==?\\s*[\\w.?]+\\.type\\b`),
  new RegExp(`case '(?:${TYPE_NAMES})'\\s*:`),
];

const STANDARD_NAMES = /['"`](?:companies|people|opportunities)['"`]/;

function findings(files: string[], patterns: RegExp[]): string[] {
  return files.flatMap((path) =>
    code(path)
      .split('\n')
      .flatMap((line, i) => (patterns.some((p) => p.test(line)) ? [`${path}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('metadata is the only source', () => {
  const files = ['apps', 'libs'].flatMap((dir) => sources(dir)).map((p) => relative(ROOT, join(ROOT, p)));

  it('reads every source file of apps/ and libs/', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(files).toContain('apps/records-api/src/graphql/graphql-types.ts');
  });

  it('no switch or if-chain on field kinds or type names outside the field-type registry', () => {
    expect(
      findings(
        files.filter((p) => !p.startsWith(REGISTRY)),
        FIELD_SWITCH,
      ),
    ).toEqual([]);
  });

  it("no list of the standard objects' names outside their declarations", () => {
    const outside = files.filter((p) => !SEEDED.some((r) => r.test(p)) && !Object.keys(NAMES_BY_DESIGN).some((k) => p.startsWith(k)));
    expect(findings(outside, [STANDARD_NAMES])).toEqual([]);
  });

  it('the scans find what they look for', () => {
    const hit = (line: string, patterns: RegExp[]) => patterns.some((p) => p.test(line));
    for (const line of [
      'switch (field.kind) {',
      'switch (f.type) {',
      "if (f.kind === 'relation') continue;",
      "const x = sub.kind === 'textList' ? a : b;",
      "if (field.type === 'TEXT') return;",
      "case 'SELECT':",
      "'CURRENCY' === field.type",
    ])
      expect({ line, found: hit(line, FIELD_SWITCH) }).toEqual({ line, found: true });
    for (const line of ["if (node.kind === 'relation')", "column.kind === 'ignored'", 'fieldType(field.type).composite'])
      expect({ line, found: hit(line, FIELD_SWITCH) }).toEqual({ line, found: false });
    expect(hit("const OBJECTS = ['companies', 'people'];", [STANDARD_NAMES])).toBe(true);
    expect(code('libs/records/src/objects/declaration.ts')).not.toContain('(`companies`)');
  });
});
