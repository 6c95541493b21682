import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { PASSWORD_MIN_LENGTH, addMember, createApiKey, findRole, revokeApiKey } from '#identity/accounts.js';
import { createSecret } from '#identity/vault.js';
import { createField } from '#identity/data-model.js';
import { RECORD_OBJECTS } from '#database/entities/index.js';
import { OBJECTS } from '#records/objects/index.js';
import { createWebhook, listAttempts } from '#webhooks/webhooks.js';
import { newWorkspace } from './factories.js';
import { BROWSER_AVAILABLE, WIDTHS, clippedControls, launchChromium } from './playwright.js';
import { PASSWORD, freePort, startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';
import { TEST_WORKER_ENV, sleep } from './webhook-receiver.js';
import { pkceAuthorizationUrl } from './oauth-flow.js';

/**
 * Every page people open, in one Chromium, at 390 px (a phone) and 1280 px: nothing scrolls
 * sideways and no link, button or field is out of the window or cut off by a scrolling box
 * (WCAG 2.2 SC 1.4.10 Reflow). Settings and docs pages start with a skip link (SC 2.4.1),
 * and fields point at their errors (SC 3.3.1).
 */
const SLOW = 180_000;
const DAY = 86_400_000;

(BROWSER_AVAILABLE ? describe : describe.skip)('Pages at 390 and 1280 px, in Chromium', () => {
  let origin: PublicOrigin;
  let url: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchChromium();
    origin = await startPublicOrigin({ ...TEST_WORKER_ENV, IMPORTS_WORKER: 'on' });
    url = origin.url;
    page = await (await browser.newContext({ viewport: WIDTHS.phone })).newPage();
  }, SLOW);

  afterAll(async () => {
    await browser?.close();
    await origin?.close();
  });

  /** The page at `path` fits both widths; returns what did not, by width. */
  async function problemsAt(path: string): Promise<string[]> {
    const problems: string[] = [];
    for (const size of [WIDTHS.phone, WIDTHS.desktop]) {
      await page.setViewportSize(size);
      problems.push(...(await clippedControls(page)).map((p) => `${path} at ${size.width}px: ${p}`));
    }
    await page.setViewportSize(WIDTHS.phone);
    return problems;
  }

  async function visit(path: string, status = 200): Promise<string[]> {
    const res = await page.goto(`${url}${path}`);
    expect([path, res?.status()]).toEqual([path, status]);
    return problemsAt(path);
  }

  /** Table cells (with text, not only controls) beyond the box of their .table-wrap. */
  function cellsCutOff(): Promise<string[]> {
    return page.evaluate(`[...document.querySelectorAll('.table-wrap td')].flatMap((td) => {
      const box = td.getBoundingClientRect();
      const wrap = td.closest('.table-wrap').getBoundingClientRect();
      return box.width && (box.right > wrap.right + 1 || box.right > document.documentElement.clientWidth + 1)
        ? ['cell "' + td.textContent.trim().slice(0, 30) + '" ends at ' + Math.round(box.right) + 'px'] : [];
    })`);
  }

  /** The first Tab lands on a visible "Skip to content" link whose target exists. */
  async function skipLink(path: string): Promise<string> {
    await page.goto(`${url}${path}`);
    await page.keyboard.press('Tab');
    return page.evaluate(`(() => {
      const el = document.activeElement;
      const box = el.getBoundingClientRect();
      const target = document.getElementById((el.getAttribute('href') || '').slice(1));
      return [el.textContent.trim(), target ? 'target' : 'no target', box.top >= 0 && box.left >= 0 && box.right <= innerWidth && box.height > 0 ? 'visible' : 'hidden'].join(', ');
    })()`);
  }

  it(
    'sign-in, sign-up, the landing page, /graphql in a browser and every docs page fit, and docs pages have a skip link',
    async () => {
      const problems: string[] = [];
      problems.push(...(await visit('/login')));
      problems.push(...(await visit('/signup')));

      // The sign-up page states the rule its validation applies.
      await page.goto(`${url}/signup`);
      const rule = `At least ${PASSWORD_MIN_LENGTH} characters.`;
      expect(await page.locator('#password-rules').textContent()).toBe(rule);
      expect(await page.getByLabel('Password').getAttribute('aria-describedby')).toContain('password-rules');
      expect(await page.getByLabel('Password').getAttribute('minlength')).toBe(String(PASSWORD_MIN_LENGTH));
      // A password the server refuses (the browser's own check taken off): the field says so, the others do not.
      await page.getByLabel('Email').fill(`short-${Date.now()}@example.com`);
      await page.getByLabel('Password').evaluate((input: any) => input.removeAttribute('minlength'));
      await page.getByLabel('Password').fill('x'.repeat(PASSWORD_MIN_LENGTH - 1));
      await page.getByLabel('Workspace name').fill('Short password');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).toMatch(/password/);
      expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
      expect(await page.getByLabel('Password').getAttribute('aria-describedby')).toBe('password-rules form-error');
      expect(await page.getByLabel('Email').getAttribute('aria-invalid')).toBeNull();
      expect(await page.getByLabel('Workspace name').getAttribute('aria-invalid')).toBeNull();

      // The landing page: HTML, pointing to what there is.
      const landing = await page.goto(`${url}/`);
      expect(landing?.status()).toBe(200);
      expect(landing?.headers()['content-type']).toMatch(/^text\/html/);
      for (const href of ['/docs', '/settings', '/llms.txt', '/rest/open-api', '/graphql'])
        expect(await page.locator(`main a[href="${href}"]`).count()).toBeGreaterThan(0);
      problems.push(...(await problemsAt('/')));
      expect(await skipLink('/')).toBe('Skip to content, target, visible');

      // /graphql opened in a browser says how to call it, and loads nothing from elsewhere.
      const outside: string[] = [];
      page.on('request', (r) => void (r.url().startsWith(url) || outside.push(r.url())));
      const graphql = await page.goto(`${url}/graphql`);
      expect(graphql?.status()).toBe(200);
      await page.getByRole('heading', { name: 'GraphQL' }).first().waitFor();
      expect(await page.locator('main').textContent()).toMatch(/POST/);
      expect(await page.locator('main').textContent()).toMatch(/Authorization: Bearer/);
      expect(await page.locator('main a[href="/docs/graphql"]').count()).toBeGreaterThan(0);
      expect(outside).toEqual([]);
      problems.push(...(await problemsAt('/graphql')));
      // With a query in the address too; and clients asking for JSON still get GraphQL.
      await page.goto(`${url}/graphql?query=${encodeURIComponent('{ __typename }')}`);
      await page.locator('main a[href="/docs/graphql"]').first().waitFor();
      expect(outside).toEqual([]);
      const { keys } = await newWorkspace(origin.ds, 'graphql-get');
      const json = await fetch(`${url}/graphql?query=${encodeURIComponent('{ companies(first: 1) { totalCount } }')}`, {
        headers: { accept: 'application/json', authorization: `Bearer ${keys.Viewer}`, 'apollo-require-preflight': '1' },
      });
      expect([json.status, await json.json()]).toEqual([200, { data: { companies: { totalCount: 0 } } }]);
      const noQuery = await fetch(`${url}/graphql`, { headers: { accept: 'application/json' } });
      expect(noQuery.headers.get('content-type')).toMatch(/^application\/json/);

      // Every docs page /llms.txt lists, as HTML.
      const llms = await (await fetch(`${url}/llms.txt`)).text();
      const docs = [...llms.matchAll(/\]\((?:[^)\s]*?)(\/docs(?:\/[a-z-]+)?)(?:\.md)?\)/g)].map((m) => m[1]);
      expect(docs).toEqual(
        expect.arrayContaining(['/docs/quick-start', '/docs/rest', '/docs/graphql', '/docs/authentication', '/docs/mcp', '/docs/webhooks']),
      );
      for (const path of ['/docs', ...new Set(docs)]) {
        problems.push(...(await visit(path)));
        if (path !== '/docs/api-reference') expect([path, await skipLink(path)]).toEqual([path, 'Skip to content, target, visible']);
      }
      expect(problems).toEqual([]);
    },
    SLOW,
  );

  it(
    'every settings page fits with data in every table, and each has a skip link; fields point at their errors',
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin', 'Viewer'], 'fit');
      const admin = await findRole(origin.ds, workspace.id, 'Admin');
      const key = await createApiKey(origin.ds, {
        workspaceId: workspace.id,
        role: admin,
        name: 'Nightly warehouse export to the finance team',
        expiresAt: new Date(Date.now() + 90 * DAY),
      });
      // Nothing listens on this port: every delivery fails with a connection error.
      const closed = await freePort();
      const hook = await createWebhook(
        origin.ds,
        workspace.id,
        { url: `http://127.0.0.1:${closed}/hooks/crm/orders-and-invoices/sync`, description: 'ERP sync', operations: ['*.*'] },
        { allowPrivate: true },
      );
      const created = await fetch(`${url}/rest/companies`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Fit Inc' }),
      });
      expect(created.status).toBe(201);

      await page.setViewportSize(WIDTHS.phone);
      await page.goto(`${url}/login`);
      // A wrong password: both fields are marked and point at the message.
      await page.getByLabel('Email').fill(people[0].email);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
      const alertId = await page.getByRole('alert').getAttribute('id');
      expect(alertId).toBeTruthy();
      for (const label of ['Email', 'Password']) {
        expect(await page.getByLabel(label).getAttribute('aria-invalid')).toBe('true');
        expect((await page.getByLabel(label).getAttribute('aria-describedby'))?.split(' ')).toContain(alertId);
      }
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${url}/settings`);

      // Overview: every card says what is behind it.
      const cards = page.locator('.cards a');
      expect(await cards.count()).toBeGreaterThan(0);
      for (const text of await cards.locator('.muted').allTextContents()) expect(text.trim()).not.toBe('');

      // API keys: the page names every API the keys work with.
      await page.goto(`${url}/settings/api-keys`);
      const intro = await page.locator('.content > p.muted').first().textContent();
      for (const api of ['/rest', '/graphql', '/mcp']) expect(intro).toContain(api);
      // A settings form error is tied to its field.
      await page.getByLabel('Name').fill('x'.repeat(5));
      await page.getByLabel('Role').selectOption({ label: 'Admin' });
      await page.evaluate(
        `document.getElementById('key-name').removeAttribute('maxlength'); document.getElementById('key-name').value = '${'x'.repeat(101)}'`,
      );
      await page.getByRole('button', { name: 'Create API key' }).click();
      await page.getByRole('alert').waitFor();
      const keyError = await page.getByRole('alert').getAttribute('id');
      expect(await page.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
      expect((await page.getByLabel('Name').getAttribute('aria-describedby'))?.split(' ')).toContain(keyError);

      // New role: read is pre-ticked for every declared object, nothing else.
      await page.goto(`${url}/settings/roles/new`);
      expect(RECORD_OBJECTS.length).toBe(OBJECTS.length);
      for (const o of OBJECTS) {
        const group = page.getByRole('group', { name: o.pluralType });
        expect([o.plural, await group.getByLabel('Read').isChecked(), await group.getByLabel('Create').isChecked()]).toEqual([
          o.plural,
          true,
          false,
        ]);
      }
      await page.getByLabel('Name').fill('Importer with a rather long name');
      await page.getByLabel('Description').fill('Loads companies, people and opportunities from the ERP every night');
      await page.getByRole('button', { name: 'Create role' }).click();
      await page.getByText('saved.').waitFor();
      const [{ id: roleId }] = await origin.ds.query('SELECT id FROM roles WHERE workspace_id = $1 AND name = $2', [
        workspace.id,
        'Importer with a rather long name',
      ]);

      // An invite and a server app, so their tables and the audit log have rows.
      await page.goto(`${url}/settings/members`);
      await page.getByLabel('Role', { exact: true }).selectOption({ label: 'Member' });
      await page.getByRole('button', { name: 'Create invite link' }).click();
      await page.waitForURL(/\/invites\/created\//);
      const problems = await problemsAt('invite link created');
      const invite = new URL(await page.getByLabel('Invite link').inputValue()).pathname;
      await page.goto(`${url}/settings/apps`);
      await page.getByLabel('Name').fill('Billing sync');
      await page.getByLabel('Role').selectOption({ label: 'Viewer' });
      await page.getByRole('button', { name: 'Register app' }).click();
      await page.waitForURL(/\/settings\/apps\/secret\//);
      problems.push(...(await problemsAt('app secret')));

      // Custom fields with long names and labels, one of them inactive (its page offers delete).
      const actor = { userId: people[0].id, email: people[0].email };
      const tier = await createField(origin.ds, workspace.id, actor, {
        object: 'companies',
        name: 'supportContractTierForTheEnterpriseCustomersOfTheWholeRegion',
        label: 'Support contract tier for the enterprise customers of the whole region',
        description: 'Bought with the yearly contract; renewals may move a customer up or down',
        type: 'MULTI_SELECT',
        options: [
          { value: 'PLATINUM_WITH_DEDICATED_ACCOUNT_MANAGER_AND_ON_SITE_VISITS', label: 'Platinum with a dedicated account manager' },
          { value: 'GOLD', label: 'Gold' },
          { value: 'SILVER', label: 'Silver' },
        ],
      });
      const inactive = await createField(origin.ds, workspace.id, actor, {
        object: 'opportunities',
        name: 'lossReason',
        label: 'Why the opportunity was lost',
        type: 'TEXT',
        isActive: false,
      });

      // The failed delivery is in the log before the webhook page is looked at.
      for (let i = 0; i < 60 && !(await listAttempts(origin.ds, workspace.id, hook.id)).length; i++) await sleep(250);
      expect((await listAttempts(origin.ds, workspace.id, hook.id))[0]).toMatchObject({
        statusCode: null,
        error: expect.stringMatching(/ECONNREFUSED/),
      });

      // A vault secret with a long name and description.
      await createSecret(origin.ds, workspace.id, actor, {
        name: 'CRM_RECEIVER_TOKEN_FOR_THE_ENTERPRISE_CUSTOMERS_OF_THE_REGION',
        value: 'page-fit',
        description: 'Sent by the webhook to the CRM receiver of the enterprise customers of the whole region',
      });

      // An import with refused rows (its page lists them and links the CSV); a revoked key (the list hides it until asked).
      const imported = await fetch(`${url}/rest/imports?object=companies`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/x-ndjson' },
        body: '{"name":"Fit import"}\n{"name":"Refused","aFieldNameLongEnoughToWrapAcrossTheWholeCellOfTheTable":1}\n[1]\n',
      });
      const importId = ((await imported.json()) as { data: { import: { id: string } } }).data.import.id;
      for (let i = 0; i < 120; i++) {
        const [{ status }] = await origin.ds.query('SELECT status FROM imports WHERE workspace_id = $1 AND id = $2', [
          workspace.id,
          importId,
        ]);
        if (status === 'completed') break;
        await sleep(250);
      }
      const revoked = await createApiKey(origin.ds, {
        workspaceId: workspace.id,
        role: admin,
        name: 'Revoked last year',
        expiresAt: new Date(Date.now() + DAY),
      });
      await revokeApiKey(origin.ds, revoked.id, workspace.id);

      const paths = [
        '/settings',
        '/settings/api-keys',
        '/settings/api-keys?include=revoked',
        '/settings/imports',
        `/settings/imports/${importId}`,
        '/settings/apps',
        '/settings/webhooks',
        `/settings/webhooks/${hook.id}`,
        '/settings/data-model',
        `/settings/data-model/${tier.id}`,
        `/settings/data-model/${inactive.id}`,
        `/settings/data-model/${inactive.id}/delete`,
        '/settings/roles',
        '/settings/roles/new',
        `/settings/roles/${roleId}`,
        '/settings/members',
        '/settings/vault',
        '/settings/vault/CRM_RECEIVER_TOKEN_FOR_THE_ENTERPRISE_CUSTOMERS_OF_THE_REGION',
        '/settings/audit',
        `/settings/audit?actor=${encodeURIComponent(people[0].email)}&action=role.*`,
        invite,
      ];
      for (const path of paths) {
        problems.push(...(await visit(path)));
        // Text counts too: at 390 px no table cell reaches past its table's box.
        problems.push(...(await cellsCutOff()).map((p) => `${path} at 390px: ${p}`));
        expect([path, await skipLink(path)]).toEqual([path, 'Skip to content, target, visible']);
      }
      // The data model's add forms, unfolded.
      await page.goto(`${url}/settings/data-model`);
      await page.evaluate(`document.querySelectorAll('details').forEach((d) => { d.open = true; })`);
      problems.push(...(await problemsAt('/settings/data-model with its add forms open')));
      expect(problems).toEqual([]);

      // The webhook page: Enabled sits on the line of its checkbox, Redeliver is in reach.
      await page.goto(`${url}/settings/webhooks/${hook.id}`);
      for (const size of [WIDTHS.phone, WIDTHS.desktop]) {
        await page.setViewportSize(size);
        const box = (await page.getByLabel('Enabled').boundingBox())!;
        const label = (await page.getByText('Enabled', { exact: true }).boundingBox())!;
        expect([size.width, Math.abs(box.y + box.height / 2 - (label.y + label.height / 2)) < 6]).toEqual([size.width, true]);
        // One line: the box is not stretched across the form with the word wrapped below it.
        expect([size.width, box.width < 40, label.height < 40]).toEqual([size.width, true, true]);
        expect(
          await page
            .getByRole('button', { name: /^Redeliver event/ })
            .first()
            .isVisible(),
        ).toBe(true);
      }
      await page.setViewportSize(WIDTHS.phone);

      // At 390 px, table rows are cards whose cells say which column they are.
      await page.goto(`${url}/settings/api-keys`);
      const revoke = page.getByRole('link', { name: /^Revoke Nightly warehouse/ });
      expect(await revoke.isVisible()).toBe(true);
      const cell = page.locator('tbody tr').first().locator('td').nth(1);
      expect(await cell.getAttribute('data-label')).toBe('Role');
      // No DOM typings in the tests: the element and window are untyped here.
      expect(await cell.evaluate((td: any) => (globalThis as any).getComputedStyle(td, '::before').content)).toBe('"Role"');
    },
    SLOW,
  );

  it(
    'the OAuth sign-in, workspace choice and consent pages fit',
    async () => {
      const { people } = await workspaceWith(origin.ds, ['Admin'], 'fit-oauth');
      const second = await workspaceWith(origin.ds, [], 'fit-oauth-2');
      await addMember(origin.ds, second.workspace.id, people[0].id, await findRole(origin.ds, second.workspace.id, 'Viewer'));
      const redirect = 'http://127.0.0.1:8765/callback';
      const insecure = { execute: [oidc.allowInsecureRequests] };
      const config = await oidc.dynamicClientRegistration(
        new URL(url),
        { redirect_uris: [redirect], client_name: 'Fit check CLI' },
        undefined,
        insecure,
      );
      // Every scope at once: the longest consent page, each scope in words (docs/authentication.md "Scopes").
      const scopes = ['api', 'records:read', 'records:write', 'records:delete', 'data_model:write', 'profile'];
      const { url: authorize } = await pkceAuthorizationUrl(config, redirect, { scope: scopes.join(' ') });

      // A fresh context: not signed in, so the flow shows its own sign-in page.
      const flow = await (await browser.newContext({ viewport: WIDTHS.phone })).newPage();
      const previous = page;
      page = flow;
      try {
        await flow.goto(authorize);
        await flow.getByRole('button', { name: 'Sign in' }).waitFor();
        const problems = await problemsAt('oauth sign-in');
        await flow.getByLabel('Email').fill(people[0].email);
        await flow.getByLabel('Password').fill(PASSWORD);
        await flow.getByRole('button', { name: 'Sign in' }).click();
        await flow.getByRole('button', { name: 'Continue' }).waitFor();
        problems.push(...(await problemsAt('oauth workspace choice')));
        await flow.getByRole('button', { name: 'Continue' }).click();
        await flow.getByRole('button', { name: 'Allow' }).waitFor();
        problems.push(...(await problemsAt('oauth consent')));
        for (const scope of scopes)
          await flow
            .getByRole('listitem')
            .filter({ hasText: `(${scope})` })
            .waitFor();
        expect(problems).toEqual([]);
      } finally {
        page = previous;
        await flow.context().close();
      }
    },
    SLOW,
  );
});
