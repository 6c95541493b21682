import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium; `.ci/run` installs it. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * In CI (and whenever the browser is there) the browser suites run; a missing browser is
 * a failure in CI. On a developer's fresh machine without it they are skipped, loudly,
 * so `npm test` passes after `npm install` alone.
 */
export const BROWSER_AVAILABLE = existsSync(CHROMIUM) || process.env.CI === 'true';
if (!BROWSER_AVAILABLE) {
  process.stderr.write(`\nSKIPPING the browser suites: ${CHROMIUM} is missing (apt-get install -y chromium to run them; CI always does).\n\n`);
}
export const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), 'screenshots');
export const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the browser tests need Debian's chromium (apt-get install -y chromium; .ci/run does it)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Full-page screenshots of the current page at 1280 and 390 px wide, under
 * test/screenshots/ (git-ignored) as `<name>-1280.png` and `<name>-390.png`; fails when the
 * page is wider than the screen at either width.
 */
export async function screenshotBoth(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const original = page.viewportSize();
  const problems: string[] = [];
  for (const size of Object.values(WIDTHS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${size.width}.png`), fullPage: true });
    problems.push(...(await overflowingElements(page)).map((p) => `${size.width}px: ${p}`));
  }
  if (original) await page.setViewportSize(original);
  // Readable at both widths: a page wider than the screen fails the test that took it.
  if (problems.length) throw new Error(`${name} does not fit:\n${problems.join('\n')}`);
}

/**
 * Whatever makes the page wider than the screen (nothing should: wide tables scroll inside
 * their .table-wrap box). Empty when the page fits.
 */
export async function overflowingElements(page: Page): Promise<string[]> {
  // A string, so this file needs no DOM typings.
  return page.evaluate(`(() => {
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= width) return [];
    const out = ['page is ' + document.documentElement.scrollWidth + 'px wide for ' + width + 'px'];
    for (const el of document.body.querySelectorAll('*')) {
      if (el.parentElement && el.parentElement.closest('.table-wrap, pre') && !el.classList.contains('sr-only')) continue;
      const box = el.getBoundingClientRect();
      if (box.right > width + 1) out.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className ? '.' + el.className : '') + ' (' + Math.round(box.right) + 'px)');
    }
    return out;
  })()`);
}
