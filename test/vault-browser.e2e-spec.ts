import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { BROWSER_AVAILABLE, WIDTHS, launchChromium, screenshotBoth } from './playwright.js';
import { PASSWORD, startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';

/**
 * The Vault page in Chromium (docs/vault.md): an Admin adds a secret, is refused a reveal
 * without the password and with a wrong one, reveals it with the password, and the page hides
 * the value again after 30 seconds (the page's clock, driven by Playwright); the reveal is in
 * the audit log, without the value.
 */
const SLOW = 120_000;

(BROWSER_AVAILABLE ? describe : describe.skip)('The Vault page in Chromium', () => {
  let origin: PublicOrigin;
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
    origin = await startPublicOrigin();
  }, SLOW);

  afterAll(async () => {
    await browser?.close();
    await origin?.close();
  });

  async function signedIn(email: string): Promise<Page> {
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    const page = await context.newPage();
    // The page's timers run on a clock the test moves (Playwright's page.clock).
    await page.clock.install();
    await page.goto(`${origin.url}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${origin.url}/settings`);
    return page;
  }

  /** Submits the button's form without the browser's own field checks, as a script or an old browser would. */
  async function submitUnchecked(page: Page, button: string): Promise<void> {
    await page.getByRole('button', { name: button }).evaluate((b) => {
      (b as unknown as { form: { noValidate: boolean } }).form.noValidate = true;
    });
    await page.getByRole('button', { name: button }).click();
  }

  it(
    'adds a secret, refuses a reveal without or with a wrong password, shows the value with it, hides it after 30 s, audits it',
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'vault-page');
      const value = `page-${randomBytes(16).toString('hex')}`;
      const page = await signedIn(people[0].email);
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Vault' }).click();
      await page.waitForURL(`${origin.url}/settings/vault`);

      // A bad name (past the browser's own check of the pattern) is explained, and the value typed is not written back into the page.
      await page.getByLabel('Name').fill('crm token');
      await page.getByLabel('Value', { exact: true }).fill(value);
      await submitUnchecked(page, 'Add secret');
      await expect(page.getByRole('alert').textContent()).resolves.toMatch(/name must be 1 to 64 capital letters/);
      expect(await page.content()).not.toContain(value);

      await page.getByLabel('Name').fill('CRM_TOKEN');
      await page.getByLabel('Value', { exact: true }).fill(value);
      await page.getByLabel('Description').fill('Token of the CRM');
      await page.getByRole('button', { name: 'Add secret' }).click();
      await page.waitForURL(`${origin.url}/settings/vault/CRM_TOKEN?notice=created`);
      expect(await page.content()).not.toContain(value);
      await screenshotBoth(page, 'settings-vault-secret');

      // No password (the field is required; the server refuses it all the same): refused.
      await submitUnchecked(page, 'Reveal value');
      await expect(page.locator('#reveal-error').textContent()).resolves.toMatch(/Type your password to reveal a value/);
      expect(await page.content()).not.toContain(value);
      // A wrong one: refused.
      await page.getByLabel(/Your password/).fill('not my password');
      await page.getByRole('button', { name: 'Reveal value' }).click();
      await expect(page.locator('#reveal-error').textContent()).resolves.toMatch(/Wrong password/);
      expect(await page.content()).not.toContain(value);

      // The password: the value, for 30 seconds.
      await page.getByLabel(/Your password/).fill(PASSWORD);
      await page.getByRole('button', { name: 'Reveal value' }).click();
      const shown = page.getByLabel('Value of CRM_TOKEN');
      await expect(shown.inputValue()).resolves.toBe(value);
      await page.clock.runFor(29_000);
      await expect(shown.inputValue()).resolves.toBe(value);
      await page.clock.runFor(1_500);
      await expect(shown.count()).resolves.toBe(0);
      await expect(page.getByRole('status').filter({ hasText: 'hidden again' }).isVisible()).resolves.toBe(true);
      expect(await page.content()).not.toContain(value);

      // The audit log names the reveal, without the value.
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Audit log' }).click();
      await page.waitForURL(`${origin.url}/settings/audit`);
      const audit = await page.content();
      expect(audit).toContain('Revealed vault secret');
      expect(audit).toContain('CRM_TOKEN');
      expect(audit).not.toContain(value);
      const rows = await origin.ds.query(
        `SELECT actor_email, target_label FROM audit_log WHERE workspace_id = $1 AND action = 'vault.reveal'`,
        [workspace.id],
      );
      expect(rows).toEqual([{ actor_email: people[0].email, target_label: 'CRM_TOKEN' }]);
    },
    SLOW,
  );
});
