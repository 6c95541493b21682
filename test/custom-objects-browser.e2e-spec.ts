import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createApiKey, findRole } from '#identity/accounts.js';
import { BROWSER_AVAILABLE, WIDTHS, clippedControls, launchChromium, screenshotBoth } from './playwright.js';
import { PASSWORD, startPublicOrigin, workspaceWith, type PublicOrigin, restAt } from './public-origin.js';

/**
 * Custom objects on the settings pages in Chromium, at 390 px (docs/settings.md): an Admin
 * creates an object, adds a field to it, deactivates and deletes it on /settings/data-model;
 * saving the built-in Member on /settings/roles keeps what it allows on the workspace's own
 * objects ("Other objects", the role's `*` entry), which the page used to drop.
 */
const SLOW = 180_000;
const DAY = 86_400_000;

(BROWSER_AVAILABLE ? describe : describe.skip)('custom objects on the settings pages in Chromium', () => {
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
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await origin?.close();
  });

  async function signedIn(email: string, viewport: { width: number; height: number } = WIDTHS.phone): Promise<Page> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${url}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${url}/settings`);
    return page;
  }
  async function keyOf(workspaceId: string, role: string): Promise<string> {
    const found = await findRole(origin.ds, workspaceId, role);
    return (await createApiKey(origin.ds, { workspaceId, role: found, name: role, expiresAt: new Date(Date.now() + DAY) })).secret;
  }
  const rest = (key: string, method: string, path: string, body?: unknown) => restAt(url, key, method, path, body);

  it(
    'creates an object, adds a field to it, deactivates and deletes it, at 390 px wide',
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'cob-dm');
      const key = await keyOf(workspace.id, 'Admin');
      const page = await signedIn(people[0].email);
      await page.goto(`${url}/settings/data-model`);

      // The form, folded until opened; a refused name is explained next to it.
      await page.getByText('New object', { exact: true }).last().click();
      const form = page.getByRole('form', { name: 'New object' });
      await form.getByLabel('Name (one record)').fill('ticket');
      await form.getByLabel('Name (several records)').fill('metadata');
      await form.getByRole('button', { name: 'Create object' }).click();
      const again = page.getByRole('form', { name: 'New object' });
      expect(await again.getByRole('alert').textContent()).toMatch(/namePlural "metadata" is reserved/);
      expect(await again.getByLabel('Name (several records)').getAttribute('aria-invalid')).toBe('true');
      await again.getByLabel('Name (several records)').fill('tickets');
      await again.getByLabel('Label (several records)').fill('Support tickets');
      await again.getByRole('button', { name: 'Create object' }).click();
      await page.waitForURL(/objectCreated=/);
      await page.getByText('Object "Support tickets" (tickets) created').waitFor();
      const tickets = page.getByRole('region', { name: 'Support tickets', exact: true });
      await tickets.getByText('Add a field to Support tickets').click();
      const add = page.getByRole('form', { name: 'Add a field to Support tickets' });
      await add.getByLabel('Name').fill('severity');
      await add.getByLabel('Type').selectOption('NUMBER');
      await add.getByRole('button', { name: 'Add field to Support tickets' }).click();
      await page.getByText('Field "severity" (tickets.severity) added.').waitFor();
      expect(await clippedControls(page)).toEqual([]);
      await screenshotBoth(page, 'data-model-objects');
      expect((await rest(key, 'POST', '/rest/tickets', { name: 'Printer on fire', severity: 3 })).status).toBe(201);

      await page.getByRole('link', { name: 'Edit object tickets' }).click();
      await page.getByRole('heading', { name: 'Object tickets' }).waitFor();
      expect(await clippedControls(page)).toEqual([]);
      await screenshotBoth(page, 'data-model-object');
      await page.getByRole('button', { name: 'Deactivate object' }).click();
      await page.getByText('Deactivated: the object is hidden from the APIs').waitFor();
      expect((await rest(key, 'GET', '/rest/tickets')).status).toBe(404);
      await page.getByRole('link', { name: 'Delete object…' }).click();
      await page.getByText('1 ticket goes with it.').waitFor();
      expect(await clippedControls(page)).toEqual([]);
      await screenshotBoth(page, 'data-model-object-delete');
      await page.getByLabel('Type tickets to confirm').fill('tickets');
      await page.getByRole('button', { name: 'Delete object' }).click();
      await page.waitForURL(/objectDeleted=/);
      await page.getByText('Object tickets deleted').waitFor();
      expect(await page.getByRole('region', { name: 'Support tickets', exact: true }).count()).toBe(0);
    },
    SLOW,
  );

  it(
    "saving Member on the roles page keeps its grant on the workspace's own objects; a custom object has its row",
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'cob-roles');
      const admin = await keyOf(workspace.id, 'Admin');
      // Member is for people only; a key of it here checks, through REST, what the role allows.
      await origin.ds.query(`UPDATE roles SET assignable_to_api_keys = true WHERE workspace_id = $1 AND name = 'Member'`, [workspace.id]);
      const memberKey = await keyOf(workspace.id, 'Member');
      expect((await rest(admin, 'POST', '/rest/metadata/objects', { nameSingular: 'ticket', namePlural: 'tickets' })).status).toBe(201);
      expect((await rest(admin, 'POST', '/rest/tickets', { name: 'Visible to members' })).status).toBe(201);
      const member = await findRole(origin.ds, workspace.id, 'Member');
      const before = member.objectPermissions['*'];
      expect(before).toEqual({ read: true, create: true, update: true, delete: true });

      const page = await signedIn(people[0].email);
      await page.goto(`${url}/settings/roles`);
      expect(await clippedControls(page)).toEqual([]);
      await page.goto(`${url}/settings/roles/${member.id}`);
      const tickets = page.getByRole('group', { name: 'Tickets' });
      expect(await tickets.getByLabel('Read', { exact: true }).isChecked()).toBe(true);
      const others = page.getByRole('group', { name: 'Other objects' });
      expect(await others.getByLabel('Delete', { exact: true }).isChecked()).toBe(true);
      expect(await clippedControls(page)).toEqual([]);
      await screenshotBoth(page, 'roles-custom-objects');
      // Saved as it is: nothing it allows changes.
      await page.getByRole('button', { name: 'Save role' }).click();
      await page.waitForURL(/\/settings\/roles\?saved=/);
      const saved = await findRole(origin.ds, workspace.id, 'Member');
      expect(saved.objectPermissions['*']).toEqual(before);
      expect((await rest(memberKey, 'GET', '/rest/tickets')).body.totalCount).toBe(1);
      // An object made after the save is the Member's through "Other objects".
      expect((await rest(admin, 'POST', '/rest/metadata/objects', { nameSingular: 'project', namePlural: 'projects' })).status).toBe(201);
      expect((await rest(memberKey, 'POST', '/rest/projects', { name: 'Apollo' })).status).toBe(201);

      // Tickets read-only for Member: unticking its boxes names it; the rest stays under "Other objects".
      await page.goto(`${url}/settings/roles/${member.id}`);
      const row = page.getByRole('group', { name: 'Tickets' });
      for (const action of ['Create', 'Update', 'Delete']) await row.getByLabel(action, { exact: true }).uncheck();
      await page.getByRole('button', { name: 'Save role' }).click();
      await page.waitForURL(/\/settings\/roles\?saved=/);
      const narrowed = await findRole(origin.ds, workspace.id, 'Member');
      expect(narrowed.objectPermissions.tickets).toEqual({ read: true, create: false, update: false, delete: false });
      expect(narrowed.objectPermissions['*']).toEqual(before);
      expect((await rest(memberKey, 'POST', '/rest/tickets', { name: 'x' })).status).toBe(403);
      expect((await rest(memberKey, 'GET', '/rest/tickets')).status).toBe(200);
    },
    SLOW,
  );
});
