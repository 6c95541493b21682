import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createApiKey, findRole } from '#identity/accounts.js';
import { BROWSER_AVAILABLE, WIDTHS, launchChromium, screenshotBoth } from './playwright.js';
import { PASSWORD, startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';

/**
 * The Import panel in Chromium (docs/settings.md): an Admin uploads a CSV from
 * /settings/imports, follows the import on its page while it waits and runs, and reads the
 * refused row once it has ended; a file with an unknown column is explained on the page and
 * starts nothing; a Viewer, who cannot create records, gets no upload form.
 */
const SLOW = 180_000;

(BROWSER_AVAILABLE ? describe : describe.skip)('The Import panel in Chromium', () => {
  let origin: PublicOrigin;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    origin = await startPublicOrigin({ IMPORTS_WORKER: 'on', IMPORTS_HEARTBEAT_MS: '500' });
  }, SLOW);

  afterAll(async () => {
    await browser?.close();
    await origin?.close();
  });

  async function signedIn(email: string): Promise<Page> {
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${origin.url}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${origin.url}/settings`);
    return page;
  }

  it(
    'uploads a CSV, shows the import waiting and running, then its counts and the refused row',
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'import-panel');
      // An import already queued in the workspace: the panel's import waits behind it, and the page shows it waiting.
      const key = await createApiKey(origin.ds, {
        workspaceId: workspace.id,
        role: await findRole(origin.ds, workspace.id, 'Admin'),
        name: 'first import',
        expiresAt: new Date(Date.now() + 86_400_000),
      });
      const ahead = await fetch(`${origin.url}/rest/imports?object=companies`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'text/csv' },
        body: ['name', ...Array.from({ length: 20_000 }, (_, i) => `Ahead ${i}`)].join('\n'),
      });
      expect(ahead.status).toBe(202);

      const page = await signedIn(people[0].email);
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Import' }).click();
      await page.waitForURL(`${origin.url}/settings/imports`);
      await screenshotBoth(page, 'settings-imports');
      await page.getByLabel('Object').selectOption('companies');
      const csv = [
        'name,domainName.primaryLinkUrl',
        ...Array.from({ length: 3000 }, (_, i) => (i === 1999 ? 'Panel 2000,not a domain' : `Panel ${i + 1},panel${i + 1}.com`)),
      ];
      await page.getByLabel(/^File/).setInputFiles({ name: 'companies.csv', mimeType: 'text/csv', buffer: Buffer.from(csv.join('\n')) });
      await page.getByRole('button', { name: 'Upload and import' }).click();
      await page.waitForURL(/\/settings\/imports\/[0-9a-f-]{36}$/);

      const seen = new Set<string>();
      for (let i = 0; ; i++) {
        const status = (
          await page
            .locator('[data-import-status]')
            .first()
            .textContent()
            .catch(() => null)
        )?.trim();
        if (status) seen.add(status);
        if (status === 'completed') break;
        if (i > 900) throw new Error(`the import did not complete; seen ${[...seen].join(', ')}`);
        await page.waitForTimeout(100);
      }
      // Followed while it waited or ran, without reloading by hand.
      expect([...seen].some((s) => s === 'queued' || s === 'running')).toBe(true);
      await page.getByRole('heading', { name: 'Refused rows' }).waitFor();
      await expect(page.locator('[data-import-counts]').first().textContent()).resolves.toMatch(
        /3,000 rows read, 2,999 created, 0 updated, 1 refused/,
      );
      expect(await page.locator('#import-bar').getAttribute('value')).toBe('1');
      const refused = page.getByRole('table', { name: 'Refused rows' });
      await expect(refused.getByRole('row').nth(1).textContent()).resolves.toMatch(/2000\s*2001\s*domainName\.primaryLinkUrl/);
      await screenshotBoth(page, 'settings-import');
      const [{ n }] = await origin.ds.query("SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1 AND name LIKE 'Panel %'", [
        workspace.id,
      ]);
      expect(n).toBe(2999);

      // The list shows both imports; a file with an unknown column is explained and starts nothing.
      await page.getByRole('link', { name: 'All imports' }).click();
      await expect(
        page
          .getByRole('table', { name: /Recent imports/ })
          .getByRole('row')
          .count(),
      ).resolves.toBe(3);
      await page
        .getByLabel(/^File/)
        .setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('name,revenue\nAcme,1\n') });
      await page.getByRole('button', { name: 'Upload and import' }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toMatch(/unknown column "revenue"/);
      const [{ imports }] = await origin.ds.query('SELECT count(*)::int AS imports FROM imports WHERE workspace_id = $1', [workspace.id]);
      expect(imports).toBe(2);
    },
    SLOW,
  );

  it(
    'keeps a Viewer, who cannot create records, out of the panel, and hides its entry',
    async () => {
      const { people } = await workspaceWith(origin.ds, ['Viewer'], 'import-viewer');
      const page = await signedIn(people[0].email);
      expect(await page.getByRole('navigation', { name: 'Settings' }).getByRole('link').allTextContents()).toEqual(['Overview']);
      const res = await page.goto(`${origin.url}/settings/imports`);
      expect(res?.status()).toBe(403);
      await expect(page.getByText(/does not include the create permission/).count()).resolves.toBe(1);
      await expect(page.getByRole('button', { name: 'Upload and import' }).count()).resolves.toBe(0);
    },
    SLOW,
  );
});
