import type { Browser, Page } from 'playwright-core';
import { addMember, createApiKey, createUser, findRole } from '#identity/accounts.js';
import { createRole } from '#identity/roles.js';
import { RECORD_OBJECTS, type ObjectPermissions } from '#database/entities/index.js';
import { settingsJson, signInAt } from './settings-client.js';
import { BROWSER_AVAILABLE, WIDTHS, launchChromium, screenshotBoth } from './playwright.js';
import { PASSWORD, startPublicOrigin, unique, workspaceWith, type PublicOrigin } from './public-origin.js';

/**
 * Field permissions on /settings/roles (docs/settings.md) in Chromium: a field's Read and
 * Update boxes are saved, shown again, and act on a key of the role at its next request;
 * and the roles JSON API with its refusals (unknown or foreign fields, huge bodies, the
 * built-in Admin, handing out more than one holds, bearer tokens).
 */
const SLOW = 120_000;
const DAY = 86_400_000;

(BROWSER_AVAILABLE ? describe : describe.skip)('field permissions on the roles page', () => {
  let origin: PublicOrigin;
  let url: string;
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
    origin = await startPublicOrigin();
    url = origin.url;
  }, SLOW);
  afterAll(async () => {
    await browser?.close();
    await origin?.close();
  });

  async function signIn(page: Page, email: string): Promise<void> {
    await page.goto(`${url}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${url}/settings`);
  }
  const api = (key: string, method: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
  const expectErrorShape = (res: { status: number; body: any }, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'error', 'messages', 'requestId', 'statusCode']);
    expect(res.body.code).toBe(code);
    return (res.body.messages as string[]).join(' | ');
  };

  it(
    'edits a field permission on the page, shows it saved, and a key of the role follows it at once',
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'fperm-page');
      const admin = await findRole(origin.ds, workspace.id, 'Admin');
      const adminKey = (
        await createApiKey(origin.ds, { workspaceId: workspace.id, role: admin, name: 'a', expiresAt: new Date(Date.now() + DAY) })
      ).secret;
      expect(
        (
          await api(adminKey, 'POST', '/rest/metadata/fields', {
            object: 'opportunities',
            name: 'dealNote',
            label: 'Deal note',
            type: 'TEXT',
          })
        ).status,
      ).toBe(201);
      const deal = await api(adminKey, 'POST', '/rest/opportunities', {
        name: 'Walrus deal',
        amount: { amountMicros: 7_000_000, currencyCode: 'EUR' },
        dealNote: 'secret',
      });
      expect(deal.status).toBe(201);
      const dealId = deal.body.data.createOpportunity.id;

      const context = await browser.newContext({ viewport: WIDTHS.desktop });
      const page = await context.newPage();
      await signIn(page, people[0].email);
      await page.goto(`${url}/settings/roles/new`);
      await page.getByLabel('Name').fill('Deal viewer');
      const opportunities = page.locator('fieldset', { has: page.locator('legend', { hasText: 'Opportunities' }) });
      await opportunities.getByText('Field permissions').click();
      // Every box starts checked: a new role reads and updates every field.
      expect(await opportunities.getByTitle('Read Amount', { exact: true }).isChecked()).toBe(true);
      await opportunities.getByTitle('Read Amount', { exact: true }).uncheck();
      await opportunities.getByTitle('Update Amount', { exact: true }).uncheck();
      await opportunities.getByTitle('Update Deal note', { exact: true }).uncheck();
      await screenshotBoth(page, 'roles-field-permissions');
      await page.getByRole('button', { name: 'Create role' }).click();
      await page.waitForURL(/\/settings\/roles\?saved=/);
      await page.getByRole('status').filter({ hasText: 'Role "Deal viewer" saved.' }).waitFor();
      expect(await page.locator('tr', { hasText: 'Deal viewer' }).textContent()).toContain('2 fields restricted');

      const role = await findRole(origin.ds, workspace.id, 'Deal viewer');
      expect(role.fieldPermissions).toEqual({
        opportunities: { amount: { read: false, update: false }, dealNote: { read: true, update: false } },
      });
      await page.goto(`${url}/settings/roles/${role.id}`);
      const saved = page.locator('fieldset', { has: page.locator('legend', { hasText: 'Opportunities' }) });
      expect(await saved.getByTitle('Read Amount', { exact: true }).isChecked()).toBe(false);
      expect(await saved.getByTitle('Read Deal note', { exact: true }).isChecked()).toBe(true);
      expect(await saved.getByTitle('Update Deal note', { exact: true }).isChecked()).toBe(false);

      const key = (
        await createApiKey(origin.ds, { workspaceId: workspace.id, role, name: 'viewer', expiresAt: new Date(Date.now() + DAY) })
      ).secret;
      const before = await api(key, 'GET', `/rest/opportunities/${dealId}`);
      expect(before.body.data.opportunity).not.toHaveProperty('amount');
      expect(before.body.data.opportunity.dealNote).toBe('secret');

      // Update without read is refused with the reason, and nothing changes.
      await saved.getByTitle('Update Amount', { exact: true }).check();
      await page.getByRole('button', { name: 'Save role' }).click();
      await page.getByText(/update needs read/).waitFor();
      expect((await findRole(origin.ds, workspace.id, 'Deal viewer')).fieldPermissions).toEqual(role.fieldPermissions);

      // Giving Read back applies to the key at its next request.
      await page.goto(`${url}/settings/roles/${role.id}`);
      const again = page.locator('fieldset', { has: page.locator('legend', { hasText: 'Opportunities' }) });
      await again.getByTitle('Read Amount', { exact: true }).check();
      await page.getByRole('button', { name: 'Save role' }).click();
      await page.waitForURL(/\/settings\/roles\?saved=/);
      const after = await api(key, 'GET', `/rest/opportunities/${dealId}`);
      expect(after.body.data.opportunity.amount).toEqual({ amountMicros: 7_000_000, currencyCode: 'EUR' });
      expect((await findRole(origin.ds, workspace.id, 'Deal viewer')).fieldPermissions).toEqual({
        opportunities: { amount: { read: true, update: false }, dealNote: { read: true, update: false } },
      });
      await context.close();
    },
    SLOW,
  );

  it(
    'on a role that cannot update an object, unchecking Read alone saves (update goes with it); the column heads stay on one line at 1280 px',
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'fperm-readonly');
      const context = await browser.newContext({ viewport: WIDTHS.desktop });
      const page = await context.newPage();
      await signIn(page, people[0].email);
      await page.goto(`${url}/settings/roles/new`);
      await page.getByLabel('Name').fill('Reader without domains');
      // A new role reads every object and updates none.
      const companies = page.locator('fieldset', { has: page.locator('legend', { hasText: 'Companies' }) });
      expect(await companies.getByLabel('Update', { exact: true }).isChecked()).toBe(false);
      await companies.getByText('Field permissions').click();

      // Each head of the field table is one line: its text's boxes all sit on one line.
      const lines = await page.evaluate(`[...document.querySelectorAll('fieldset .field-permissions[open] th')].map((th) => {
        const range = document.createRange();
        range.selectNodeContents(th);
        return [th.textContent.trim(), new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
      })`);
      expect(lines).toEqual([
        ['Field', 1],
        ['Read', 1],
        ['Update', 1],
      ]);

      await companies.getByTitle('Read Domain name', { exact: true }).uncheck();
      expect(await companies.getByTitle('Update Domain name', { exact: true }).isChecked()).toBe(false);
      await page.getByRole('button', { name: 'Create role' }).click();
      await page.waitForURL(/\/settings\/roles\?saved=/);
      expect((await findRole(origin.ds, workspace.id, 'Reader without domains')).fieldPermissions).toEqual({
        companies: { domainName: { read: false, update: false } },
      });
      await context.close();
    },
    SLOW,
  );

  it('takes fieldPermissions on the roles JSON API and refuses what it must', async () => {
    const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'fperm-api');
    const other = await workspaceWith(origin.ds, [], 'fperm-api-other');
    const admin = await findRole(origin.ds, workspace.id, 'Admin');
    const otherAdmin = await findRole(origin.ds, other.workspace.id, 'Admin');
    const otherKey = (
      await createApiKey(origin.ds, { workspaceId: other.workspace.id, role: otherAdmin, name: 'o', expiresAt: new Date(Date.now() + DAY) })
    ).secret;
    expect((await api(otherKey, 'POST', '/rest/metadata/fields', { object: 'companies', name: 'theirSecret', type: 'TEXT' })).status).toBe(
      201,
    );
    const b = await signInAt(url, people[0].email);
    const csrf = { 'x-csrf-token': b.cookie('wrs_csrf')! };
    const call = (method: string, path: string, body?: unknown) => settingsJson(url, b, method, path, body, csrf);
    const objectPermissions = Object.fromEntries(
      RECORD_OBJECTS.map((o) => [o, { read: true, create: false, update: false, delete: false }]),
    ) as ObjectPermissions;

    const made = await call('POST', '/settings/api/roles', {
      name: 'No domains',
      objectPermissions,
      fieldPermissions: { companies: { domainName: { read: false } } },
      assignableToApiKeys: true,
    });
    expect(made.status).toBe(201);
    expect(made.body.data.createRole).toMatchObject({
      name: 'No domains',
      fieldPermissions: { companies: { domainName: { read: false, update: false } } },
    });
    const id = made.body.data.createRole.id;
    const listed = await call('GET', '/settings/api/roles');
    expect(listed.body.data.roles.find((r: { id: string }) => r.id === id).fieldPermissions).toEqual({
      companies: { domainName: { read: false, update: false } },
    });
    // PATCH is partial: the name and object permissions stay.
    const patched = await call('PATCH', `/settings/api/roles/${id}`, { fieldPermissions: { companies: { name: { update: false } } } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.updateRole).toMatchObject({
      name: 'No domains',
      fieldPermissions: { companies: { name: { read: true, update: false } } },
    });

    expect(
      expectErrorShape(
        await call('PATCH', `/settings/api/roles/${id}`, { fieldPermissions: { companies: { nope: { read: false } } } }),
        400,
        'VALIDATION_FAILED',
      ),
    ).toMatch(/companies has no field "nope"/);
    expect(
      expectErrorShape(
        await call('PATCH', `/settings/api/roles/${id}`, { fieldPermissions: { companies: { theirSecret: { read: false } } } }),
        400,
        'VALIDATION_FAILED',
      ),
    ).toMatch(/no field "theirSecret" in this workspace/);
    expect(
      expectErrorShape(
        await call('PATCH', `/settings/api/roles/${id}`, '{"fieldPermissions":{"__proto__":{"x":1}}}'),
        400,
        'VALIDATION_FAILED',
      ),
    ).toMatch(/unknown object/);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(
      expectErrorShape(
        await call('PATCH', `/settings/api/roles/${id}`, { fieldPermissions: { companies: { id: { read: false } } } }),
        400,
        'VALIDATION_FAILED',
      ),
    ).toMatch(/cannot be restricted/);
    const huge = await call('PATCH', `/settings/api/roles/${id}`, {
      fieldPermissions: { companies: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`f${i}`, { read: false }])) },
    });
    expect([400, 413]).toContain(huge.status);
    expect(huge.body.code).toMatch(/VALIDATION_FAILED|PAYLOAD_TOO_LARGE/);
    expect(
      expectErrorShape(
        await call('PATCH', `/settings/api/roles/${admin.id}`, { fieldPermissions: { companies: { name: { read: false } } } }),
        403,
        'FORBIDDEN',
      ),
    ).toMatch(/built in/);
    expect((await findRole(origin.ds, workspace.id, 'Admin')).fieldPermissions).toEqual({});
    expect((await findRole(origin.ds, workspace.id, 'No domains')).fieldPermissions).toEqual({
      companies: { name: { read: true, update: false } },
    });
    // Never with a bearer token.
    const key = (
      await createApiKey(origin.ds, { workspaceId: workspace.id, role: admin, name: 'k', expiresAt: new Date(Date.now() + DAY) })
    ).secret;
    const bearer = await fetch(`${url}/settings/api/roles`, { headers: { authorization: `Bearer ${key}` } });
    expect(bearer.status).toBe(401);

    // A member whose role hides a field cannot hand out a role that reads it.
    const keeper = await createRole(origin.ds, workspace.id, {
      name: 'Role keeper',
      description: '',
      objectPermissions,
      fieldPermissions: { companies: { domainName: { read: false, update: false } } },
      settingsPermissions: ['ROLES'],
      assignableToUsers: true,
      assignableToApiKeys: true,
    });
    const email = `${unique('keeper')}@example.com`;
    await addMember(origin.ds, workspace.id, (await createUser(origin.ds, email, PASSWORD)).id, keeper);
    const k = await signInAt(url, email);
    const asKeeper = (body: unknown) =>
      settingsJson(url, k, 'POST', '/settings/api/roles', body, { 'x-csrf-token': k.cookie('wrs_csrf')! });
    expect(expectErrorShape(await asKeeper({ name: 'Sees domains', objectPermissions }), 403, 'FORBIDDEN')).toMatch(
      /companies\.domainName\.read/,
    );
    const within = await asKeeper({
      name: 'Also no domains',
      objectPermissions,
      fieldPermissions: { companies: { domainName: { read: false } } },
    });
    expect(within.status).toBe(201);

    // An import started on the settings page follows the member's field permissions too.
    const loader = await createRole(origin.ds, workspace.id, {
      name: 'Loader',
      description: '',
      objectPermissions: { ...objectPermissions, companies: { read: true, create: true, update: false, delete: false } },
      fieldPermissions: { companies: { domainName: { read: true, update: false } } },
      settingsPermissions: [],
      assignableToUsers: true,
      assignableToApiKeys: true,
    });
    const loaderEmail = `${unique('loader')}@example.com`;
    await addMember(origin.ds, workspace.id, (await createUser(origin.ds, loaderEmail, PASSWORD)).id, loader);
    const l = await signInAt(url, loaderEmail);
    const upload = (csv: string) =>
      settingsJson(url, l, 'POST', '/settings/imports?object=companies&mode=create', csv, {
        'content-type': 'text/csv',
        'x-csrf-token': l.cookie('wrs_csrf')!,
      });
    const refusedImport = await upload('name,domainName.primaryLinkUrl\nLoaded,https://loaded.example\n');
    expect(refusedImport.status).toBe(403);
    expect(refusedImport.body).toMatchObject({ code: 'FORBIDDEN', messages: [expect.stringContaining('companies.domainName')] });
    expect((await origin.ds.query('SELECT count(*)::int AS n FROM imports WHERE workspace_id = $1', [workspace.id]))[0].n).toBe(0);
    expect((await upload('name\nLoaded\n')).status).toBe(202);
  });
});
