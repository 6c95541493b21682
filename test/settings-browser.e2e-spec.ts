import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { findRole } from '#identity/accounts.js';
import { BROWSER_AVAILABLE, SCREENSHOTS, WIDTHS, launchChromium, overflowingElements, screenshotBoth } from './playwright.js';
import { PASSWORD, startPublicOrigin, unique, workspaceWith, type PublicOrigin } from './public-origin.js';

/**
 * The settings pages in a real browser (Debian's Chromium through playwright-core), against
 * both apps on the public origin. Every page is saved at 1280 and 390 px under
 * test/screenshots/ for a person to look at. DOCS_SCREENSHOTS=1 also refreshes docs/settings.md's
 * docs/screenshots/api-keys.png.
 */
const DAY = 86_400_000;
const SLOW = 120_000;

(BROWSER_AVAILABLE ? describe : describe.skip)('Settings pages in Chromium', () => {
  let origin: PublicOrigin;
  let url: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    origin = await startPublicOrigin();
    url = origin.url;
  }, SLOW);

  afterAll(async () => {
    await browser?.close();
    await origin?.close();
  });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    contexts.push(context);
    return context.newPage();
  }

  async function signIn(page: Page, email: string): Promise<void> {
    await page.goto(`${url}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${url}/settings`);
  }

  const rest = (secret: string, init: RequestInit = {}) =>
    fetch(`${url}/rest/companies`, { ...init, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } });

  /** Creates a key on the API keys page and returns its secret, read from the page shown once. */
  async function createKey(page: Page, o: { name: string; role: string; expiration?: string }): Promise<string> {
    await page.goto(`${url}/settings/api-keys`);
    await page.getByLabel('Name').fill(o.name);
    await page.getByLabel('Role').selectOption({ label: o.role });
    if (o.expiration) await page.getByLabel('Expiration').selectOption({ label: o.expiration });
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.waitForURL(/\/settings\/api-keys\/created\//);
    return page.getByLabel(/^Secret of/).inputValue();
  }

  it(
    'signs up, creates an API key with each expiry, shows each secret once, and the key works until revoked',
    async () => {
      const docs = process.env.DOCS_SCREENSHOTS === '1';
      const page = await newPage();
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
      const email = docs ? 'ada@acme.example' : `${unique('ada')}@acme.example`;
      const workspaceName = docs ? 'Acme Sales' : unique('Acme Sales');

      await page.goto(`${url}/signup`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByLabel('Workspace name').fill(workspaceName);
      await page.getByRole('button', { name: 'Sign up' }).click();
      // Sign-up signs no one in (it answers a taken e-mail the same way): the page asks to sign in.
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.getByLabel('Email').inputValue()).toBe(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${url}/settings`);
      await page.getByRole('heading', { name: workspaceName }).waitFor();
      await screenshotBoth(page, 'settings-home');
      const [{ id: workspaceId }] = await origin.ds.query('SELECT id FROM workspaces WHERE name = $1', [workspaceName]);

      const nav = page.getByRole('navigation', { name: 'Settings' });
      await nav.getByRole('link', { name: 'API keys' }).click();
      await page.waitForURL(`${url}/settings/api-keys`);
      for (const label of ['Name', 'Role', 'Expiration']) expect(await page.getByLabel(label, { exact: true }).count()).toBe(1);
      expect(await page.getByRole('button', { name: 'Create API key' }).count()).toBe(1);
      const expiration = page.getByLabel('Expiration');
      expect(await expiration.locator('option').allTextContents()).toEqual(['15 days', '30 days', '90 days', '1 year']);
      expect(await expiration.locator('option:checked').textContent()).toBe('90 days');
      // Only roles assignable to API keys: Admin and Viewer, not Member.
      expect(await page.getByLabel('Role').locator('option:not([disabled])').allTextContents()).toEqual(['Admin', 'Viewer']);
      await screenshotBoth(page, 'api-keys-empty');

      const choices: [string, number, string][] = [
        ['15 days', 15, 'Zapier sync'],
        ['30 days', 30, 'CI import'],
        ['90 days', 90, 'Warehouse export'],
        ['1 year', 365, 'Nightly backup'],
      ];
      const secrets: string[] = [];
      for (const [label, days, name] of choices) {
        const secret = await createKey(page, { name, role: label === '30 days' ? 'Viewer' : 'Admin', expiration: label });
        expect(secret).toMatch(/^wrs_/);
        secrets.push(secret);
        const [stored] = await origin.ds.query('SELECT created_at, expires_at FROM api_keys WHERE workspace_id = $1 AND name = $2', [
          workspaceId,
          name,
        ]);
        expect(Math.abs(stored.expires_at.getTime() - stored.created_at.getTime() - days * DAY)).toBeLessThan(5_000);
        expect(await page.getByText('shown only once').count()).toBe(1);
        expect(await page.getByText(/secret manager/).count()).toBe(1);

        if (label === '15 days') {
          await page.getByRole('button', { name: 'Copy' }).click();
          await page.getByRole('button', { name: 'Copied' }).waitFor();
          expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
          await screenshotBoth(page, 'api-key-created');
          const again = await page.reload();
          expect(again?.status()).toBe(410);
          expect(await page.content()).not.toContain(secret);
          await page.getByRole('heading', { name: 'Shown only once' }).waitFor();
          await screenshotBoth(page, 'api-key-shown-once');
        }
        expect((await rest(secret)).status).toBe(200);
      }

      await page.goto(`${url}/settings/api-keys`);
      await page.getByRole('link', { name: 'Revoke Zapier sync' }).click();
      await page.waitForURL(/\/revoke$/);
      await screenshotBoth(page, 'api-key-revoke');
      await page.getByRole('button', { name: 'Revoke', exact: true }).click();
      await page.waitForURL(/\/settings\/api-keys\?revoked=/);
      await page.getByText('API key "Zapier sync" revoked.').waitFor();
      const revoked = await rest(secrets[0]);
      expect(revoked.status).toBe(401);
      expect(((await revoked.json()) as { messages: string[] }).messages[0]).toMatch(/revoked/);
      expect((await rest(secrets[1])).status).toBe(200);

      // A revoked key leaves the list; "Show 1 revoked key" brings it back, marked.
      const rows = page.locator('tbody tr');
      expect(await rows.count()).toBe(3);
      expect(await page.locator('tbody .badge').allTextContents()).toEqual(['Active', 'Active', 'Active']);
      await page.getByRole('link', { name: 'Show 1 revoked key' }).click();
      await page.waitForURL(`${url}/settings/api-keys?include=revoked`);
      expect(await rows.count()).toBe(4);
      expect(await page.locator('tbody .badge').allTextContents()).toEqual(['Active', 'Active', 'Active', 'Revoked']);
      await page.reload();
      await screenshotBoth(page, 'api-keys');
      if (docs) {
        const target = join(SCREENSHOTS, '..', '..', 'docs', 'screenshots');
        mkdirSync(target, { recursive: true });
        copyFileSync(join(SCREENSHOTS, 'api-keys-1280.png'), join(target, 'api-keys.png'));
      }

      // Readable at 390 px: nothing wider than the screen except the scrolling tables.
      await page.setViewportSize(WIDTHS.phone);
      expect(await overflowingElements(page)).toEqual([]);
      await page.setViewportSize(WIDTHS.desktop);

      // Visible focus for keyboard users.
      await page.getByLabel('Name').focus();
      await page.keyboard.press('Tab');
      const outline = await page.evaluate(
        'getComputedStyle(document.activeElement).outlineStyle + " " + getComputedStyle(document.activeElement).outlineWidth',
      );
      expect(outline).toBe('solid 3px');
    },
    SLOW,
  );

  it(
    'keeps a Viewer member out of the API keys page, and hides its entry',
    async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin', 'Viewer'], 'viewer');
      const page = await newPage();
      await signIn(page, people[1].email);
      const nav = page.getByRole('navigation', { name: 'Settings' });
      expect(await nav.getByRole('link').allTextContents()).toEqual(['Overview']);
      await screenshotBoth(page, 'settings-home-viewer');
      const res = await page.goto(`${url}/settings/api-keys`);
      expect(res?.status()).toBe(403);
      await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
      expect(await page.getByRole('alert').textContent()).toContain('"API keys and webhooks" permission');
      await screenshotBoth(page, 'forbidden');
    },
    SLOW,
  );

  it(
    'edits a role on the roles page, and the change applies to an existing key at once',
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'roles');
      const page = await newPage();
      await signIn(page, people[0].email);
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Roles' }).click();
      await page.waitForURL(`${url}/settings/roles`);
      await screenshotBoth(page, 'roles');

      await page.getByRole('link', { name: 'New role' }).click();
      await page.getByLabel('Name').fill('Importer');
      await page.getByLabel('Description').fill('Loads companies from the ERP');
      await page.getByRole('group', { name: 'People' }).getByLabel('Read').uncheck();
      await page.getByLabel('Assignable to users').uncheck();
      await screenshotBoth(page, 'role-form');
      await page.getByRole('button', { name: 'Create role' }).click();
      await page.getByText('Role "Importer" saved.').waitFor();

      const secret = await createKey(page, { name: 'ERP import', role: 'Importer' });
      expect((await rest(secret)).status).toBe(200);
      expect((await rest(secret, { method: 'POST', body: JSON.stringify({ name: 'Before' }) })).status).toBe(403);

      await page.goto(`${url}/settings/roles`);
      await page.getByRole('link', { name: 'Edit Importer' }).click();
      await page.getByText('Used by 1 API key').waitFor();
      await page.getByRole('group', { name: 'Companies' }).getByLabel('Create').check();
      await page.getByRole('button', { name: 'Save role' }).click();
      await page.getByText('Role "Importer" saved.').waitFor();
      expect((await rest(secret, { method: 'POST', body: JSON.stringify({ name: 'After' }) })).status).toBe(201);

      // The Admin role is shown, never editable.
      const admin = await findRole(origin.ds, workspace.id, 'Admin');
      await page.goto(`${url}/settings/roles/${admin.id}`);
      expect(await page.getByLabel('Name').isDisabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Save role' }).count()).toBe(0);
      await screenshotBoth(page, 'role-admin');

      // In use: deleting is refused with the reason.
      await page.goto(`${url}/settings/roles`);
      await page.getByRole('link', { name: 'Delete Importer' }).click();
      await page.getByText('This role is in use (1 API key)').waitFor();
      await screenshotBoth(page, 'role-delete-in-use');
    },
    SLOW,
  );

  it(
    'adds a webhook, shows its secret once, edits it and reveals the secret again; the pages fit both widths',
    async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'webhooks');
      const page = await newPage();
      await signIn(page, people[0].email);
      await page.goto(`${url}/settings/webhooks`);
      await screenshotBoth(page, 'webhooks-empty');
      await page.getByLabel('URL').fill('https://hooks.example.com/crm/a-fairly-long-path/that-should-still-fit-on-a-phone');
      await page.getByLabel('Description').fill('CRM sync');
      await page.getByLabel('Operations').fill('company.*, person.created');
      await page.getByRole('button', { name: 'Add webhook' }).click();
      await page.waitForURL(/\/settings\/webhooks\/created\//);
      const secret = await page.getByLabel(/^Signing secret for/).inputValue();
      expect(secret).toMatch(/^whsec_/);
      await screenshotBoth(page, 'webhook-created');
      await page.getByRole('link', { name: 'Done' }).click();
      await page.waitForURL(/\/settings\/webhooks\/[0-9a-f-]{36}$/);
      await page.getByLabel('Enabled').uncheck();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.waitForURL(/notice=saved/);
      expect(await page.getByLabel('Enabled').isChecked()).toBe(false);
      await screenshotBoth(page, 'webhook');
      await page.getByRole('button', { name: 'Reveal signing secret' }).click();
      expect(await page.getByLabel(/^Signing secret for/).inputValue()).toBe(secret);
      await page.goto(`${url}/settings/webhooks`);
      await page.getByRole('cell', { name: /a-fairly-long-path.* CRM sync$/ }).waitFor();
      await screenshotBoth(page, 'webhooks');
    },
    SLOW,
  );

  it(
    'registers a server app, shows its secret once, and the secret gets tokens',
    async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'apps');
      const page = await newPage();
      await signIn(page, people[0].email);
      await page.goto(`${url}/settings/apps`);
      await page.getByLabel('Name').fill('Billing sync');
      await page.getByLabel('Role').selectOption({ label: 'Viewer' });
      await page.getByRole('button', { name: 'Register app' }).click();
      await page.waitForURL(/\/settings\/apps\/secret\//);
      const clientId = await page.getByLabel('Client ID').inputValue();
      const clientSecret = await page.getByLabel('Client secret').inputValue();
      await screenshotBoth(page, 'app-secret');
      const token = await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials&scope=api',
      });
      expect(token.status).toBe(200);
      await page.getByRole('link', { name: 'Done' }).click();
      await page.waitForURL(`${url}/settings/apps`);
      await page.getByRole('cell', { name: clientId }).waitFor();
      await screenshotBoth(page, 'apps');
    },
    SLOW,
  );

  it(
    'invites a new person with a link: they create an account and land in the workspace with the chosen role',
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin', 'Viewer'], 'invite');
      const admin = await newPage();
      await signIn(admin, people[0].email);
      await admin.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Members' }).click();
      await admin.waitForURL(`${url}/settings/members`);
      await admin.getByLabel('Role', { exact: true }).selectOption({ label: 'Member' });
      await admin.getByRole('button', { name: 'Create invite link' }).click();
      await admin.waitForURL(/\/settings\/members\/invites\/created\//);
      const link = await admin.getByLabel('Invite link').inputValue();
      expect(link.startsWith(`${url}/settings/invites/`)).toBe(true);
      await screenshotBoth(admin, 'invite-created');

      const guest = await newPage();
      await guest.goto(link);
      await guest.getByRole('heading', { name: `Join ${workspace.name}` }).waitFor();
      await screenshotBoth(guest, 'invite');
      const email = `${unique('grace')}@example.com`;
      await guest.getByLabel('Email').fill(email);
      await guest.getByLabel('Password').fill(PASSWORD);
      await guest.getByRole('button', { name: 'Create account and join' }).click();
      await guest.waitForURL(`${url}/settings?joined=${workspace.id}`);
      await guest.getByText(`Welcome to ${workspace.name}: you joined as Member.`).waitFor();
      // A Member creates records, so it may import them (docs/settings.md); nothing else of the settings.
      expect(await guest.getByRole('navigation', { name: 'Settings' }).getByRole('link').allTextContents()).toEqual(['Overview', 'Import']);

      // The link was for one person.
      const other = await newPage();
      const res = await other.goto(link);
      expect(res?.status()).toBe(410);

      await admin.goto(`${url}/settings/members`);
      await admin.getByRole('cell', { name: email, exact: true }).waitFor();
      // Role change from the members page.
      await admin.getByLabel(`Role of ${people[1].email}`).selectOption({ label: 'Member' });
      await admin.getByRole('button', { name: `Change role of ${people[1].email}` }).click();
      await admin.getByText('Role changed.').waitFor();
      await screenshotBoth(admin, 'members');
      await admin.setViewportSize(WIDTHS.phone);
      expect(await overflowingElements(admin)).toEqual([]);
      await admin.setViewportSize(WIDTHS.desktop);

      await admin.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Audit log' }).click();
      await admin.getByRole('cell', { name: 'Joined by invite' }).waitFor();
      await admin.getByRole('cell', { name: 'Created invite link' }).waitFor();
      await screenshotBoth(admin, 'audit');
    },
    SLOW,
  );
});
