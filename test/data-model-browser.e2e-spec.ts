import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { addMember, createApiKey, createUser, findRole } from '#identity/accounts.js';
import { createRole } from '#identity/roles.js';
import { RECORD_ACTIONS, RECORD_OBJECTS, type ObjectPermissions } from '#database/entities/index.js';
import { BROWSER_AVAILABLE, WIDTHS, launchChromium, screenshotBoth } from './playwright.js';
import { PASSWORD, startPublicOrigin, unique, workspaceWith, type PublicOrigin } from './public-origin.js';

/**
 * /settings/data-model in Chromium (docs/settings.md): an Admin adds a SELECT field to
 * companies by keyboard alone, edits its label and options, deactivates it and deletes it
 * after typing its name, while an API key sees each change; a role without "Data model"
 * gets 403 and no entry in the navigation; a refused field is explained on the page and
 * writes nothing.
 */
const SLOW = 180_000;
const DAY = 86_400_000;

(BROWSER_AVAILABLE ? describe : describe.skip)('The data model settings page in Chromium', () => {
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

  async function signedIn(email: string): Promise<Page> {
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${url}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${url}/settings`);
    return page;
  }

  async function adminKey(workspaceId: string): Promise<string> {
    const key = await createApiKey(origin.ds, {
      workspaceId,
      role: await findRole(origin.ds, workspaceId, 'Admin'),
      name: 'Data model check',
      expiresAt: new Date(Date.now() + DAY),
    });
    return key.secret;
  }

  const createCompany = (secret: string, body: Record<string, unknown>) =>
    fetch(`${url}/rest/companies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const fieldsOf = (workspaceId: string) =>
    origin.ds.query('SELECT id, object, name, label, type, options, is_active FROM custom_fields WHERE workspace_id = $1', [workspaceId]);

  /** Whatever has the keyboard focus: its id and whether the focus ring shows. */
  const focused = (page: Page) =>
    page.evaluate(
      '(() => { const el = document.activeElement; const s = getComputedStyle(el); return el.id + " " + s.outlineStyle + " " + s.outlineWidth; })()',
    );

  it(
    'adds a SELECT field to companies by keyboard, edits its label and options, deactivates it and deletes it after typing its name',
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'data-model');
      const secret = await adminKey(workspace.id);
      const page = await signedIn(people[0].email);

      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Data model' }).click();
      await page.waitForURL(`${url}/settings/data-model`);
      await page.getByRole('heading', { name: 'Data model', level: 1 }).waitFor();
      const companies = page.getByRole('region', { name: 'Companies', exact: true });
      // Built-in fields are listed, marked and offer no action.
      const nameRow = companies.getByRole('row').filter({ has: page.getByText('name', { exact: true }) });
      expect(await nameRow.getByRole('cell').allInnerTexts()).toEqual(['Name\nname', 'TEXT', '', 'Built in', 'Not editable']);
      expect(await companies.getByText('domainName', { exact: true }).count()).toBe(1);
      expect(await companies.getByRole('link', { name: /^Edit/ }).count()).toBe(0);
      await screenshotBoth(page, 'data-model-empty');

      // The add form, with the keyboard only: Enter opens it, then typing, Tab, and Enter on the button.
      const add = page.getByRole('form', { name: 'Add a field to Companies' });
      expect(await add.isVisible()).toBe(false);
      await companies.getByText('Add a field to Companies').focus();
      expect(await focused(page)).toBe('new-companies-title solid 3px');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      expect(await focused(page)).toBe('new-companies-name solid 3px');
      await page.keyboard.type('tier');
      await page.keyboard.press('Tab');
      expect(await focused(page)).toBe('new-companies-label solid 3px');
      await page.keyboard.type('Customer tier');
      await page.keyboard.press('Tab');
      await page.keyboard.type('Support level bought');
      await page.keyboard.press('Tab');
      expect(await focused(page)).toBe('new-companies-type solid 3px');
      await page.keyboard.type('SEL');
      expect(await add.getByLabel('Type').inputValue()).toBe('SELECT');
      await page.keyboard.press('Tab');
      expect(await focused(page)).toBe('new-companies-options solid 3px');
      await page.keyboard.type('GOLD|Gold');
      await page.keyboard.press('Enter');
      await page.keyboard.type('SILVER|Silver');
      await page.keyboard.press('Enter');
      await page.keyboard.type('BRONZE');
      await page.keyboard.press('Tab');
      // "Records may leave it empty", ticked: stays so.
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Add field to Companies');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/settings\/data-model\?created=/);
      await page.getByText('Field "Customer tier" (companies.tier) added.').waitFor();

      const [field] = await fieldsOf(workspace.id);
      expect(field).toMatchObject({ object: 'companies', name: 'tier', label: 'Customer tier', type: 'SELECT', is_active: true });
      expect(field.options.map((o: { value: string; label: string }) => `${o.value}:${o.label}`)).toEqual([
        'GOLD:Gold',
        'SILVER:Silver',
        'BRONZE:BRONZE',
      ]);
      const row = page.locator(`#field-${field.id}`);
      expect((await row.getByRole('cell').allInnerTexts()).slice(0, 4)).toEqual([
        'Customer tier\ntier\nSupport level bought',
        'SELECT',
        'Gold (GOLD), Silver (SILVER), BRONZE (BRONZE)',
        'Active',
      ]);
      // Active: no delete action yet.
      expect(await row.getByRole('link', { name: 'Delete companies.tier' }).count()).toBe(0);
      await screenshotBoth(page, 'data-model');

      // The records API takes the field at once, and checks its values.
      const acme = await createCompany(secret, { name: 'Acme', tier: 'GOLD' });
      expect(acme.status).toBe(201);
      expect(((await acme.json()) as { data: { createCompany: { tier: string } } }).data.createCompany.tier).toBe('GOLD');
      expect((await createCompany(secret, { name: 'Bronze Co', tier: 'BRONZE' })).status).toBe(201);
      expect((await createCompany(secret, { name: 'Nope', tier: 'PLATINUM' })).status).toBe(400);

      // Edit: a new label, GOLD relabelled, BRONZE removed, PLATINUM added.
      await row.getByRole('link', { name: 'Edit companies.tier' }).click();
      await page.waitForURL(`${url}/settings/data-model/${field.id}`);
      await page.getByRole('heading', { name: 'Field companies.tier' }).waitFor();
      await screenshotBoth(page, 'data-model-field');
      await page.getByLabel('Label', { exact: true }).fill('Support tier');
      await page.getByLabel('Label of GOLD').fill('Gold plus');
      await page.getByLabel('Remove BRONZE').check();
      await page.getByLabel('Value of new option 1').fill('PLATINUM');
      await page.getByLabel('Label of new option 1').fill('Platinum');
      await page.getByRole('button', { name: 'Save field' }).click();
      await page.waitForURL(/notice=saved/);
      await page.getByText('Saved.').waitFor();
      expect(await page.getByLabel('Label of GOLD').inputValue()).toBe('Gold plus');
      expect(await page.getByLabel('Label of PLATINUM').inputValue()).toBe('Platinum');
      expect(await page.getByLabel('Label of BRONZE').count()).toBe(0);
      const [edited] = await fieldsOf(workspace.id);
      expect(edited.label).toBe('Support tier');
      expect(edited.options.map((o: { value: string; label: string }) => `${o.value}:${o.label}`)).toEqual([
        'GOLD:Gold plus',
        'SILVER:Silver',
        'PLATINUM:Platinum',
      ]);
      expect((await createCompany(secret, { name: 'Platinum Co', tier: 'PLATINUM' })).status).toBe(201);
      expect((await createCompany(secret, { name: 'Bronze again', tier: 'BRONZE' })).status).toBe(400);
      // The removed option's value left the record that held it.
      const [bronze] = await origin.ds.query(`SELECT custom FROM companies WHERE workspace_id = $1 AND name = 'Bronze Co'`, [workspace.id]);
      expect(bronze.custom.tier).toBeNull();

      // Deleting an active field is refused, with what to do instead.
      await page.goto(`${url}/settings/data-model/${field.id}/delete`);
      expect(await page.getByRole('alert').textContent()).toMatch(/tier is active\. Deactivate it first/);
      expect(await page.getByRole('button', { name: 'Delete field' }).count()).toBe(0);

      // Posted with the right name while the field is active (a stale tab, say): refused, the field stays.
      await page.goto(`${url}/settings/data-model/${field.id}`);
      const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
      const early = await page.request.post(`${url}/settings/data-model/${field.id}/delete`, {
        form: { _csrf: csrf, confirm: 'tier' },
        maxRedirects: 0,
      });
      expect(early.status()).toBe(409);
      expect(await early.text()).toContain('tier is active. Deactivate it first');
      expect(await fieldsOf(workspace.id)).toHaveLength(1);

      // Deactivate: hidden from the API, values kept.
      await page.getByRole('button', { name: 'Deactivate field' }).click();
      await page.waitForURL(/notice=deactivated/);
      await page.getByText('Deactivated: the field is hidden from the APIs').waitFor();
      const hidden = await createCompany(secret, { name: 'After', tier: 'GOLD' });
      expect(hidden.status).toBe(400);
      expect(((await hidden.json()) as { messages: string[] }).messages).toEqual(['tier is not a known field']);
      await screenshotBoth(page, 'data-model-field-inactive');

      await page.goto(`${url}/settings/data-model`);
      expect(await row.getByRole('cell').nth(3).innerText()).toBe('Inactive');
      await row.getByRole('link', { name: 'Delete companies.tier' }).click();
      await page.waitForURL(`${url}/settings/data-model/${field.id}/delete`);
      await page.getByText('2 companies hold a value of it.').waitFor();
      await screenshotBoth(page, 'data-model-delete');

      // A wrong name deletes nothing.
      await page.getByLabel('Type tier to confirm').fill('tie');
      await page.getByRole('button', { name: 'Delete field' }).click();
      expect(await page.getByRole('alert').textContent()).toContain("type the field's name, tier, to delete it");
      expect(await page.getByLabel('Type tier to confirm').getAttribute('aria-invalid')).toBe('true');
      expect(await fieldsOf(workspace.id)).toHaveLength(1);

      // The name typed, and Enter.
      await page.getByLabel('Type tier to confirm').focus();
      await page.keyboard.type('tier');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/settings\/data-model\?deleted=/);
      await page.getByText('Field companies.tier deleted, with its values.').waitFor();
      expect(await page.locator(`#field-${field.id}`).count()).toBe(0);
      expect(await fieldsOf(workspace.id)).toEqual([]);
      const left = await origin.ds.query(`SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1 AND custom ? 'tier'`, [
        workspace.id,
      ]);
      expect(left[0].n).toBe(0);

      // Every change is in the audit log, by the signed-in member.
      const audit = await origin.ds.query(
        `SELECT action, actor_email, target_label FROM audit_log WHERE workspace_id = $1 AND action LIKE 'field.%' ORDER BY created_at, action`,
        [workspace.id],
      );
      expect(audit.map((a: { action: string }) => a.action)).toEqual(['field.create', 'field.update', 'field.update', 'field.delete']);
      for (const a of audit) expect(a).toMatchObject({ actor_email: people[0].email, target_label: 'companies.tier' });
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Audit log' }).click();
      for (const what of ['Added field', 'Changed field', 'Deleted field']) await page.getByRole('cell', { name: what }).first().waitFor();
    },
    SLOW,
  );

  it(
    'answers 403 to a role without "Data model", which has no entry for it, and refuses its writes',
    async () => {
      const { workspace } = await workspaceWith(origin.ds, ['Admin'], 'data-model-403');
      const objectPermissions = Object.fromEntries(
        RECORD_OBJECTS.map((o) => [o, Object.fromEntries(RECORD_ACTIONS.map((a) => [a, true]))]),
      ) as ObjectPermissions;
      const role = await createRole(origin.ds, workspace.id, {
        name: 'Role keeper',
        description: 'Roles, no data model',
        objectPermissions,
        settingsPermissions: ['ROLES', 'API_KEYS_AND_WEBHOOKS'],
        assignableToUsers: true,
        assignableToApiKeys: true,
      });
      const email = `${unique('keeper')}@example.com`;
      const user = await createUser(origin.ds, email, PASSWORD);
      await addMember(origin.ds, workspace.id, user.id, role);

      const page = await signedIn(email);
      const nav = page.getByRole('navigation', { name: 'Settings' });
      const entries = await nav.getByRole('link').allTextContents();
      expect(entries).toContain('Roles');
      expect(entries).not.toContain('Data model');
      expect(await page.locator('.cards a[href="/settings/data-model"]').count()).toBe(0);

      for (const path of ['/settings/data-model', `/settings/data-model/${randomUUID()}`]) {
        const res = await page.goto(`${url}${path}`);
        expect([path, res?.status()]).toEqual([path, 403]);
        await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
        expect(await page.getByRole('alert').textContent()).toContain('"Data model" permission');
      }

      // A write with a valid CSRF token is refused too, and writes nothing.
      await page.goto(`${url}/settings/roles/new`);
      const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
      const post = await page.request.post(`${url}/settings/data-model`, {
        form: { _csrf: csrf, object: 'companies', name: 'sneaky', type: 'TEXT', isNullable: 'on' },
        maxRedirects: 0,
      });
      expect(post.status()).toBe(403);
      expect(await fieldsOf(workspace.id)).toEqual([]);
    },
    SLOW,
  );

  it(
    'shows a refused field on the page, by its form, and writes nothing',
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'data-model-bad');
      const page = await signedIn(people[0].email);
      const [{ v: version }] = await origin.ds.query('SELECT data_model_version AS v FROM workspaces WHERE id = $1', [workspace.id]);
      await page.goto(`${url}/settings/data-model`);

      await page.getByText('Add a field to People').click();
      const form = page.getByRole('form', { name: 'Add a field to People' });
      await form.getByLabel('Name').fill('Shoe size');
      await form.getByLabel('Label').fill('Shoe size');
      await form.getByLabel('Type').selectOption('NUMBER');
      const [res] = await Promise.all([
        page.waitForResponse((r) => r.url() === `${url}/settings/data-model` && r.request().method() === 'POST'),
        form.getByRole('button', { name: 'Add field to People' }).click(),
      ]);
      expect(res.status()).toBe(400);
      const again = page.getByRole('form', { name: 'Add a field to People' });
      const alert = again.getByRole('alert');
      expect(await alert.textContent()).toContain('name must be camelCase');
      // The message is next to the people form only, its field points at it, and the form keeps what was typed.
      expect(await page.getByRole('alert').count()).toBe(1);
      expect(await again.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
      expect((await again.getByLabel('Name').getAttribute('aria-describedby'))?.split(' ')).toContain(await alert.getAttribute('id'));
      expect(await again.getByLabel('Name').inputValue()).toBe('Shoe size');
      expect(await again.getByLabel('Type').inputValue()).toBe('NUMBER');
      await screenshotBoth(page, 'data-model-error');

      // A select without options, and an option value the rule refuses (lower case is upper-cased as typed; a hyphen stays): said in the page's words.
      await again.getByLabel('Name').fill('tier');
      await again.getByLabel('Type').selectOption('SELECT');
      await again.getByRole('button', { name: 'Add field to People' }).click();
      await page.getByRole('alert').getByText('needs at least one option').waitFor();
      const form2 = page.getByRole('form', { name: 'Add a field to People' });
      await form2.getByLabel('Options').fill('GOLD|Gold\n\ngold-plan|Lower case');
      expect(await form2.getByLabel('Options').inputValue()).toBe('GOLD|Gold\n\nGOLD-PLAN|Lower case');
      await form2.getByRole('button', { name: 'Add field to People' }).click();
      await page
        .getByRole('alert')
        .getByText(/^options, line 3: "GOLD-PLAN" is not an option value: a value is capitals, digits and _/)
        .waitFor();
      expect(await page.getByRole('form', { name: 'Add a field to People' }).getByLabel('Options').getAttribute('aria-invalid')).toBe(
        'true',
      );
      // A built-in name.
      const form3 = page.getByRole('form', { name: 'Add a field to People' });
      await form3.getByLabel('Name').fill('emails');
      await form3.getByLabel('Type').selectOption('TEXT');
      await form3.getByLabel('Options').fill('');
      await form3.getByRole('button', { name: 'Add field to People' }).click();
      await page.getByRole('alert').getByText('name "emails" is reserved or a built-in field of people').waitFor();

      expect(await fieldsOf(workspace.id)).toEqual([]);
      const audit = await origin.ds.query(`SELECT count(*)::int AS n FROM audit_log WHERE workspace_id = $1 AND action LIKE 'field.%'`, [
        workspace.id,
      ]);
      expect(audit[0].n).toBe(0);
      const [{ v: after }] = await origin.ds.query('SELECT data_model_version AS v FROM workspaces WHERE id = $1', [workspace.id]);
      expect(after).toBe(version);
    },
    SLOW,
  );
});
