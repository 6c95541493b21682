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
  process.stderr.write(
    `\nSKIPPING the browser suites: ${CHROMIUM} is missing (apt-get install -y chromium to run them; CI always does).\n\n`,
  );
}
export const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), 'screenshots');
export const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the browser tests need Debian's chromium (apt-get install -y chromium; .ci/run does it)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Signs `email` in on the sign-in page of the origin `url`; resolves once the settings overview is there. */
export async function signInOn(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(`${url}/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${url}/settings`);
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
 * Whatever makes the page wider than the screen (nothing should: a table wider than its
 * box scrolls inside .table-wrap; clippedControls tells when that hides a control). Empty
 * when the page fits.
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

/**
 * Why the page at its current size is not usable without sideways scrolling: the document
 * wider than the window, or a link, button or field outside the window or cut off by a
 * scrolling or clipping ancestor (a table's Actions column behind a sideways scroll).
 * Visually hidden text (.sr-only) is not a control people see, so it is left out. Empty
 * when everything fits.
 */
export async function clippedControls(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\\s+/).join('.') : '')
      + ' "' + (el.textContent || el.value || el.getAttribute('aria-label') || '').trim().replace(/\\s+/g, ' ').slice(0, 40) + '"';
    const out = [];
    const width = window.innerWidth;
    const scrollWidth = document.documentElement.scrollWidth;
    if (scrollWidth > width) out.push('page is ' + scrollWidth + 'px wide for ' + width + 'px');
    const visible = document.documentElement.clientWidth;
    for (const el of document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea')) {
      if (el.closest('.sr-only')) continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      if (box.left < -1 || box.right > visible + 1) {
        out.push(name(el) + ' is outside the window (' + Math.round(box.left) + ' to ' + Math.round(box.right) + 'px of ' + visible + ')');
        continue;
      }
      for (let a = el.parentElement; a && a !== document.body && a !== document.documentElement; a = a.parentElement) {
        if (getComputedStyle(a).overflowX === 'visible') continue;
        const r = a.getBoundingClientRect();
        if (box.left < r.left - 1 || box.right > r.right + 1) {
          out.push(name(el) + ' is cut off by ' + name(a).split(' ')[0] + ' (' + Math.round(box.right) + 'px, box ends at ' + Math.round(r.right) + 'px)');
          break;
        }
      }
    }
    return out;
  })()`);
}
