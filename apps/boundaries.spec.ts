import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/*
 * The apps meet only through libs/ (docs/architecture.md): the records layer, imports and
 * authentication are Nest modules there, so no app imports another's files and no library
 * imports an app; MCP's tools call the records layer with typed arguments, not REST's
 * query parsers.
 */

const root = process.cwd();

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative import of a file, resolved to a path from the repository's root. */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => relative(root, resolve(dirname(file), m[1])));
}

const appOf = (path: string) => /^apps\/([^/]+)\//.exec(path)?.[1];

describe('boundaries between apps and libraries', () => {
  const files = [...sources(join(root, 'apps')), ...sources(join(root, 'libs'))].map((f) => relative(root, f));

  it('no app imports another app, and no library imports an app', () => {
    const offences = files.flatMap((file) =>
      relativeImports(join(root, file))
        .filter((target) => target.startsWith('apps/') && appOf(target) !== appOf(file))
        .map((target) => `${file} imports ${target}`),
    );
    expect(offences).toEqual([]);
  });

  it("MCP's tools take nothing from REST", () => {
    const offences = files
      .filter((file) => file.startsWith('apps/records-api/src/mcp/'))
      .flatMap((file) =>
        relativeImports(join(root, file))
          .filter((target) => target.startsWith('apps/records-api/src/rest/'))
          .map((t) => `${file} imports ${t}`),
      );
    expect(offences).toEqual([]);
  });

  it('finds the imports it checks (a file that imports across is seen)', () => {
    expect(relativeImports(join(root, 'apps/records-api/src/app.module.ts')).length).toBeGreaterThan(5);
    expect(appOf('apps/cli/src/import.ts')).toBe('cli');
  });
});
