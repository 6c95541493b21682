import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { projectRoot } from '#config/config.js';

/** The copy-paste examples of README.md and docs/ work as pasted, and the pages stand alone in a clone. */
describe('README and docs examples', () => {
  const root = projectRoot();
  const pages = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join('docs', f)),
  ];

  it.each(pages)('%s: every curl URL with [ ] turns off curl globbing (-g), else curl fails with "bad range"', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    for (const line of text.split('\n').filter((l) => /^\s*curl\b/.test(l))) {
      const urls = [...line.matchAll(/"(https?:\/\/[^"]*|\$\w+\/[^"]*)"/g)].map((m) => m[1]);
      if (urls.some((u) => /[[\]{}]/.test(u)))
        expect({ line, globbingOff: /\s(-g|--globoff)\b/.test(line) }).toEqual({ line, globbingOff: true });
    }
  });

  it.each(pages)('%s: links nothing outside the repository', (page) => {
    expect(readFileSync(join(root, page), 'utf8')).not.toMatch(/\]\(\.\.\/(?!docs\/|README)/);
  });

  // The client-credentials walkthrough moved from the README to docs/authentication.md (issue 19).
  it('docs/authentication.md: the client-credentials example sets the variables it uses', () => {
    const readme = readFileSync(join(root, 'docs', 'authentication.md'), 'utf8');
    const uses = readme.indexOf('-u "$CLIENT_ID:$CLIENT_SECRET"');
    expect(uses).toBeGreaterThan(0);
    const before = readme.slice(readme.lastIndexOf('```sh', uses), uses);
    expect(before).toMatch(/CLIENT_ID=\$\(/);
    expect(before).toMatch(/CLIENT_SECRET=\$\(/);
  });

  /** README.md and every markdown file under docs/, subfolders included. */
  const allPages = ['README.md', ...markdownUnder(root, 'docs')];

  it('README: what a newcomer and an operator need, in under 300 lines', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThan(300);
    for (const heading of [
      '## Quick start',
      '## Configuration',
      '## Operating it',
      '## Security in brief',
      '## Architecture',
      '## Where the docs are',
    ]) {
      expect(readme).toContain(`\n${heading}\n`);
    }
    for (const link of ['docs/benchmark.md', 'docs/decisions/README.md', 'docs/architecture.md', 'docs/security.md'])
      expect(readme).toContain(`](${link})`);
  });

  it.each(allPages)('%s: every relative link names a file of the repository, and an #anchor a heading in it', (page) => {
    const links = relativeLinks(readFileSync(join(root, page), 'utf8'));
    for (const link of links) {
      const [target, anchor] = link.split('#');
      const file = target ? resolve(root, dirname(page), decodeURIComponent(target)) : join(root, page);
      const inRepo = !relative(root, file).startsWith('..');
      const exists = inRepo && existsSync(file);
      expect({ link, inRepo, exists }).toEqual({ link, inRepo: true, exists: true });
      if (anchor && file.endsWith('.md') && statSync(file).isFile()) {
        expect({ link, anchored: headingAnchors(readFileSync(file, 'utf8')).has(anchor) }).toEqual({ link, anchored: true });
      }
    }
  });

  it.each(allPages.filter((p) => p.startsWith('docs/decisions/') && !p.endsWith('README.md')))(
    '%s: a decision record with context, decision and consequences, listed in the index',
    (page) => {
      expect(page).toMatch(/^docs\/decisions\/\d{4}-[a-z0-9-]+\.md$/);
      const text = readFileSync(join(root, page), 'utf8');
      for (const heading of ['## Context', '## Decision', '## Consequences']) expect(text).toContain(`\n${heading}\n`);
      expect(readFileSync(join(root, 'docs', 'decisions', 'README.md'), 'utf8')).toContain(`](${page.slice('docs/decisions/'.length)})`);
    },
  );

  it('the link checker itself: finds relative links outside code, and GitHub-style heading anchors', () => {
    const text =
      '# Start over\n\n## Lost credentials (demo)\n\n```sh\n# not a heading\n[x](nope.md)\n```\n[a](docs/x.md#y) [b](https://example.com) [c](#start-over) `[d](e.md)`';
    expect(relativeLinks(text)).toEqual(['docs/x.md#y', '#start-over']);
    expect(headingAnchors(text)).toEqual(new Set(['start-over', 'lost-credentials-demo']));
    expect(headingAnchors(text).has('lost-credentials-demo')).toBe(true);
    expect(headingAnchors('### order_by').has('order-by') && headingAnchors('### order_by').has('order_by')).toBe(true);
  });
});

function markdownUnder(root: string, dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return markdownUnder(root, path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** Markdown outside fenced code blocks and inline code. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Link targets without a scheme (`docs/x.md`, `../README.md#a`, `#a`); images included. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href));
}

/**
 * The ids GitHub gives a file's headings (lower case, punctuation dropped, spaces to hyphens,
 * repeats numbered), and those of the served docs pages.
 */
function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*_]/g, (c) => (c === '_' ? '_' : ''));
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
    // The id the records API gives the heading on its served HTML pages (docs-pages.ts), which served pages link to.
    anchors.add(
      text
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, ''),
    );
  }
  return anchors;
}
