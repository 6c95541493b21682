import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '#database/config.js';

/** The copy-paste examples of README.md and docs/ work as pasted, and the pages stand alone in a clone. */
describe('README and docs examples', () => {
  const root = projectRoot();
  const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

  it.each(pages)('%s: every curl URL with [ ] turns off curl globbing (-g), else curl fails with "bad range"', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    for (const line of text.split('\n').filter((l) => /^\s*curl\b/.test(l))) {
      const urls = [...line.matchAll(/"(https?:\/\/[^"]*|\$\w+\/[^"]*)"/g)].map((m) => m[1]);
      if (urls.some((u) => /[[\]{}]/.test(u))) expect({ line, globbingOff: /\s(-g|--globoff)\b/.test(line) }).toEqual({ line, globbingOff: true });
    }
  });

  it.each(pages)('%s: links nothing outside the repository', (page) => {
    expect(readFileSync(join(root, page), 'utf8')).not.toMatch(/\]\(\.\.\/(?!docs\/|README)/);
  });

  it('README: the client-credentials example sets the variables it uses', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const uses = readme.indexOf('-u "$CLIENT_ID:$CLIENT_SECRET"');
    expect(uses).toBeGreaterThan(0);
    const before = readme.slice(readme.lastIndexOf('```sh', uses), uses);
    expect(before).toMatch(/CLIENT_ID=\$\(/);
    expect(before).toMatch(/CLIENT_SECRET=\$\(/);
  });
});
