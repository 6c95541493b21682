import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createApiKey, findRole, revokeApiKey } from '#identity/accounts.js';
import { createWebhook } from '#webhooks/webhooks.js';
import { heldCompany } from './held-record.js';
import { BROWSER_AVAILABLE, WIDTHS, launchChromium, screenshotBoth, signInOn } from './playwright.js';
import { waitUntil } from './processes.js';
import { PASSWORD, startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';
import { Receiver, TEST_WORKER_ENV } from './webhook-receiver.js';

/**
 * An operator's day on the settings pages in Chromium (docs/settings.md): an import followed
 * while it waits and runs (counts, progress and its start time, without reloading), its
 * refused rows downloaded as CSV; a test event sent to a webhook and seen in its attempts;
 * option values typed in lower case upper-cased as typed, a refusal said once with the focus
 * kept on Options; revoked keys out of the list until asked for; the audit log to the second,
 * filtered by actor and action.
 */
const SLOW = 180_000;
const DAY = 86_400_000;
const SECONDS = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

(BROWSER_AVAILABLE ? describe : describe.skip)("An operator's settings pages in Chromium", () => {
  let origin: PublicOrigin;
  let url: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    origin = await startPublicOrigin({ ...TEST_WORKER_ENV, IMPORTS_WORKER: 'on', IMPORTS_HEARTBEAT_MS: '500' });
    url = origin.url;
  }, SLOW);

  afterAll(async () => {
    await browser?.close();
    await origin?.close();
  });

  async function signedIn(email: string): Promise<Page> {
    const context = await browser.newContext({ viewport: WIDTHS.desktop, acceptDownloads: true });
    contexts.push(context);
    const page = await context.newPage();
    await signInOn(page, url, email, PASSWORD);
    return page;
  }

  async function adminWithKey(label: string, roles = ['Admin']) {
    const { workspace, people } = await workspaceWith(origin.ds, roles, label);
    const role = await findRole(origin.ds, workspace.id, 'Admin');
    const key = await createApiKey(origin.ds, { workspaceId: workspace.id, role, name: 'importer', expiresAt: new Date(Date.now() + DAY) });
    return { workspace, people, key: key.secret };
  }

  const text = async (page: Page, selector: string) => ((await page.locator(selector).first().textContent()) ?? '').trim();

  it(
    'follows an import while it waits and runs (counts, progress, start time) without a reload, then downloads its refused rows as CSV',
    async () => {
      const { workspace, people, key } = await adminWithKey('import-follow');
      const ahead = await heldCompany(origin.ds, url, key, 'Ahead');
      const inside = await heldCompany(origin.ds, url, key, 'Inside');
      try {
        // An import ahead of the page's, stopped on a held record: the page's import waits in line.
        const first = await fetch(`${url}/rest/imports?object=companies&mode=upsert`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' },
          body: `id,name\n${Array.from({ length: 1000 }, (_, i) => `,Ahead ${i}`).join('\n')}\n${ahead.id},Ahead renamed\n`,
        });
        expect(first.status).toBe(202);

        const page = await signedIn(people[0].email);
        await page.goto(`${url}/settings/imports`);
        await page.getByLabel('Object').selectOption('companies');
        await page.getByLabel('Mode').selectOption('upsert');
        // 1000 rows, then the held record (the import stops there while it runs), then 499 more with one refused.
        const rows = [
          ...Array.from({ length: 1000 }, (_, i) => `,Panel ${i + 1},panel${i + 1}.com`),
          `${inside.id},Inside renamed,`,
          ...Array.from({ length: 499 }, (_, i) => (i === 198 ? `,"=HYPERLINK(""x"")",not a domain` : `,Late ${i},late${i}.com`)),
        ];
        await page.getByLabel(/^File/).setInputFiles({
          name: 'companies.csv',
          mimeType: 'text/csv',
          buffer: Buffer.from(`id,name,domainName.primaryLinkUrl\n${rows.join('\n')}\n`),
        });
        await page.getByRole('button', { name: 'Upload and import' }).click();
        await page.waitForURL(/\/settings\/imports\/[0-9a-f-]{36}$/);
        const importId = page.url().split('/').pop()!;
        expect(await text(page, '[data-import-status]')).toBe('queued');
        expect(await text(page, '[data-import-started]')).toBe('not yet');
        // The page is never reloaded while the import runs: this mark would go with a reload.
        await page.evaluate('window.followedWithoutReload = true');

        await ahead.release();
        await waitUntil(
          async () =>
            (await text(page, '[data-import-status]')) === 'running' &&
            (await text(page, '[data-import-counts]')).startsWith('1,000 rows read'),
          30_000,
        );
        expect(await page.evaluate('window.followedWithoutReload')).toBe(true);
        expect(await text(page, '[data-import-counts]')).toBe(
          '1,000 rows read, 1,000 created, 0 updated, 0 refused, 0 unchanged (1,001 lines of the file)',
        );
        const started = await text(page, '[data-import-started]');
        expect(started).toMatch(SECONDS);
        const [{ started_at: startedAt }] = await origin.ds.query('SELECT started_at FROM imports WHERE workspace_id = $1 AND id = $2', [
          workspace.id,
          importId,
        ]);
        expect(started).toBe(startedAt.toISOString().slice(0, 19).replace('T', ' '));
        expect(await page.locator('[data-import-started] time').getAttribute('datetime')).toBe(startedAt.toISOString());
        const percent = Number((await text(page, '[data-import-percent]')).replace('%', ''));
        expect(percent).toBeGreaterThan(0);
        expect(percent).toBeLessThan(100);
        expect(Math.floor(Number(await page.locator('#import-bar').getAttribute('value')) * 100)).toBe(percent);
        expect(await text(page, '[data-import-ended]')).toBe('not yet');
        await screenshotBoth(page, 'settings-import-running');

        await inside.release();
        await page.getByRole('heading', { name: 'Refused rows' }).waitFor();
        await page.getByRole('link', { name: /^Download the 1 refused row/ }).waitFor({ timeout: 30_000 });
        expect(await text(page, '[data-import-counts]')).toBe(
          '1,500 rows read, 1,498 created, 1 updated, 1 refused, 0 unchanged (1,501 lines of the file)',
        );
        expect(await text(page, '[data-import-ended]')).toMatch(SECONDS);
        await screenshotBoth(page, 'settings-import-ended');

        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('link', { name: /^Download the 1 refused row/ }).click(),
        ]);
        expect(download.suggestedFilename()).toBe(`import-${importId}-refused-rows.csv`);
        const csv = readFileSync((await download.path())!, 'utf8');
        expect(csv.split('\n')[0]).toBe('row,line,reason');
        expect(csv.split('\n')[1]).toBe('1200,1201,domainName.primaryLinkUrl must be a URL address');
        expect(csv.split('\n')).toHaveLength(3);
      } finally {
        await ahead.release();
        await inside.release();
      }
    },
    SLOW,
  );

  it(
    'sends a test event from a webhook page and shows its attempt',
    async () => {
      const { workspace, people } = await adminWithKey('webhook-test-page');
      const receiver = await new Receiver().start();
      try {
        const hook = await createWebhook(
          origin.ds,
          workspace.id,
          { url: receiver.url, description: 'CRM', operations: ['company.deleted'] },
          { allowPrivate: true },
        );
        const page = await signedIn(people[0].email);
        await page.goto(`${url}/settings/webhooks/${hook.id}`);
        await page.getByRole('button', { name: 'Send test event' }).click();
        await page.waitForURL(/notice=tested$/);
        await page.getByText('Test event queued').waitFor();
        await receiver.waitFor(1);
        expect(receiver.verified(hook.secret)[0]).toMatchObject({ type: 'webhook.test', data: { webhook: { id: hook.id } } });
        await waitUntil(async () => {
          await page.reload();
          return (await page.getByRole('cell', { name: /webhook\.test/ }).count()) > 0;
        }, 10_000);
        const row = page.getByRole('row').filter({ has: page.getByText('webhook.test') });
        expect(await row.getByText('HTTP 200').count()).toBe(1);
        await screenshotBoth(page, 'webhook-test-event');
      } finally {
        await receiver.close();
      }
    },
    SLOW,
  );

  it(
    'upper-cases option values as they are typed, says a refusal once and keeps the focus on Options',
    async () => {
      const { workspace, people } = await adminWithKey('options-typed');
      const page = await signedIn(people[0].email);
      await page.goto(`${url}/settings/data-model`);
      await page.getByText('Add a field to Companies').click();
      const form = page.getByRole('form', { name: 'Add a field to Companies' });
      await form.getByLabel('Name').fill('tier');
      await form.getByLabel('Type').selectOption('SELECT');
      const options = form.getByLabel('Options');
      await options.focus();
      await page.keyboard.type('gold|Gold');
      await page.keyboard.press('Enter');
      await page.keyboard.type('silver plan|Silver tier');
      await page.keyboard.press('Enter');
      await page.keyboard.type('bronze');
      // Values capitals as typed, labels as typed, the caret where the typing was.
      expect(await options.inputValue()).toBe('GOLD|Gold\nSILVER PLAN|Silver tier\nBRONZE');
      expect(await page.evaluate('document.activeElement.id')).toBe('new-companies-options');
      // Typing in the middle keeps the caret there.
      await page.keyboard.press('Home');
      await page.keyboard.type('x');
      expect(await options.inputValue()).toBe('GOLD|Gold\nSILVER PLAN|Silver tier\nXBRONZE');
      await page.keyboard.press('Backspace');

      // "SILVER PLAN" has a space: one message, naming the line, and the focus back on Options.
      await form.getByRole('button', { name: 'Add field to Companies' }).click();
      const again = page.getByRole('form', { name: 'Add a field to Companies' });
      const alert = again.getByRole('alert');
      await alert.waitFor();
      expect(await page.getByRole('alert').count()).toBe(1);
      expect(await alert.textContent()).toBe(
        'options, line 2: "SILVER PLAN" is not an option value: a value is capitals, digits and _, starting with a capital, as in GOLD (at most 63 characters)',
      );
      expect(await page.evaluate('document.activeElement.id')).toBe('new-companies-options');
      expect(await again.getByLabel('Options').getAttribute('aria-invalid')).toBe('true');
      await screenshotBoth(page, 'data-model-option-refused');

      await again.getByLabel('Options').fill('GOLD|Gold\nSILVER_PLAN|Silver tier\nBRONZE');
      await again.getByRole('button', { name: 'Add field to Companies' }).click();
      await page.waitForURL(/\/settings\/data-model\?created=/);
      const [field] = await origin.ds.query('SELECT id, options FROM custom_fields WHERE workspace_id = $1', [workspace.id]);
      expect(field.options.map((o: { value: string }) => o.value)).toEqual(['GOLD', 'SILVER_PLAN', 'BRONZE']);

      // The field's page: a new option's value is upper-cased as typed too.
      await page.goto(`${url}/settings/data-model/${field.id}`);
      await page.getByLabel('Value of new option 1').focus();
      await page.keyboard.type('platinum_2');
      expect(await page.getByLabel('Value of new option 1').inputValue()).toBe('PLATINUM_2');
      await page.getByRole('button', { name: 'Save field' }).click();
      await page.waitForURL(/notice=saved/);
      expect(await page.getByLabel('Label of PLATINUM_2').count()).toBe(1);
    },
    SLOW,
  );

  it(
    'keeps revoked API keys out of the list until "Show revoked keys", and filters the audit log by actor and action, to the second',
    async () => {
      const { workspace, people } = await adminWithKey('keys-audit', ['Admin', 'Admin']);
      const page = await signedIn(people[0].email);
      const other = await signedIn(people[1].email);
      // Two keys made on the page by the first Admin, one revoked there; one by the second Admin.
      for (const [who, name] of [
        [page, 'Kept key'],
        [page, 'Old key'],
        [other, 'Their key'],
      ] as const) {
        await who.goto(`${url}/settings/api-keys`);
        await who.getByLabel('Name').fill(name);
        await who.getByLabel('Role').selectOption({ label: 'Viewer' });
        await who.getByRole('button', { name: 'Create API key' }).click();
        await who.waitForURL(/\/settings\/api-keys\/created\//);
      }
      await page.goto(`${url}/settings/api-keys`);
      await page.getByRole('link', { name: 'Revoke Old key' }).click();
      await page.getByRole('button', { name: 'Revoke', exact: true }).click();
      await page.getByText('API key "Old key" revoked.').waitFor();
      const names = () => page.locator('tbody tr td[data-label="Name"]').allTextContents();
      expect((await names()).sort()).toEqual(['Kept key', 'Their key', 'importer']);
      await page.getByRole('link', { name: 'Show 1 revoked key' }).click();
      await page.waitForURL(`${url}/settings/api-keys?include=revoked`);
      expect((await names()).sort()).toEqual(['Kept key', 'Old key', 'Their key', 'importer']);
      expect(await page.locator('tbody .badge').allTextContents()).toEqual(['Active', 'Active', 'Active', 'Revoked']);
      await screenshotBoth(page, 'api-keys-with-revoked');
      await page.getByRole('link', { name: 'Hide revoked keys' }).click();
      await page.waitForURL(`${url}/settings/api-keys`);
      expect(await names()).toHaveLength(3);
      // A key revoked outside the page stays out too.
      const [kept] = await origin.ds.query(`SELECT id FROM api_keys WHERE workspace_id = $1 AND name = 'Kept key'`, [workspace.id]);
      await revokeApiKey(origin.ds, kept.id, workspace.id);
      await page.reload();
      expect(await page.getByRole('link', { name: 'Show 2 revoked keys' }).count()).toBe(1);

      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Audit log' }).click();
      await page.waitForURL(`${url}/settings/audit`);
      const times = await page.locator('td[data-label="When"] time').allTextContents();
      expect(times.length).toBeGreaterThanOrEqual(4);
      for (const t of times) expect(t).toMatch(SECONDS);
      await page.getByLabel('Who').fill(people[1].email);
      await page.getByLabel('What').selectOption('api_key.create');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/\/settings\/audit\?/);
      const targets = () => page.locator('td[data-label="Target"]').allTextContents();
      expect(await targets()).toEqual(['Their key']);
      expect(await page.getByLabel('Who').inputValue()).toBe(people[1].email);
      await screenshotBoth(page, 'audit-filtered');
      await page.getByLabel('Who').fill('');
      await page.getByLabel('What').selectOption('api_key.*');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/action=api_key/);
      expect((await targets()).map((t) => t.trim())).toEqual(['Old key', 'Their key', 'Old key', 'Kept key']);
      await page.getByRole('link', { name: 'Show everything' }).click();
      await page.waitForURL(`${url}/settings/audit`);
    },
    SLOW,
  );
});
