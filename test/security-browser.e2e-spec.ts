import { createServer, type Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { findRole } from '#identity/accounts.js';
import { BROWSER_AVAILABLE, launchChromium } from './playwright.js';
import { PASSWORD, freePort, startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';

/**
 * The CSRF attack of the security review, as an attacker runs it: a page on another port
 * of the same host (same site, so SameSite=Lax cookies go along) sets `wrs_csrf` to a
 * value it knows and auto-submits a role change with that value as the token.
 */
const SLOW = 120_000;
const PLANTED = 'planted-by-the-attacker-0123456789abcdef';

(BROWSER_AVAILABLE ? describe : describe.skip)('CSRF from another port of the host, in Chromium', () => {
  let origin: PublicOrigin;
  let browser: Browser;
  let attacker: Server;
  let attackerUrl: string;
  let target = '';
  let roleId = '';

  beforeAll(async () => {
    browser = await launchChromium();
    origin = await startPublicOrigin();
    const port = await freePort();
    attackerUrl = `http://127.0.0.1:${port}`;
    attacker = createServer((_req, res) => {
      // A cookie set by an HTTP response overrides the victim's HttpOnly one: cookies are per host, not per port.
      res.setHeader('Set-Cookie', `wrs_csrf=${PLANTED}; Path=/`);
      res.setHeader('Content-Type', 'text/html');
      res.end(`<!doctype html><form id="f" method="post" action="${origin.url}${target}">
        <input type="hidden" name="_csrf" value="${PLANTED}"><input type="hidden" name="role" value="${roleId}"></form>
        <script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(port, '127.0.0.1', resolve));
  }, SLOW);

  afterAll(async () => {
    await browser?.close();
    await origin?.close();
    await new Promise((resolve) => attacker?.close(resolve));
  });

  it(
    'does not let a planted wrs_csrf cookie turn a Viewer into an Admin through the signed-in admin',
    async () => {
      const { workspace, people } = await workspaceWith(origin.ds, ['Admin', 'Viewer'], 'browser-csrf');
      const [admin, viewer] = people;
      target = `/settings/members/${viewer.id}/role`;
      roleId = (await findRole(origin.ds, workspace.id, 'Admin')).id;

      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${origin.url}/login`);
      await page.getByLabel('Email').fill(admin.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${origin.url}/settings`);

      // The admin visits the attacker's page; it plants the cookie and posts the form.
      const landed = page.waitForURL(
        (u) => u.toString().startsWith(`${origin.url}${target}`) || u.toString().startsWith(`${origin.url}/settings/members`),
      );
      await page.goto(attackerUrl);
      await landed;
      const planted = (await context.cookies(origin.url)).find((c) => c.name === 'wrs_csrf');
      expect(planted?.value).toBe(PLANTED);
      expect(await page.content()).toMatch(/Form expired/);

      const [row] = await origin.ds.query(
        'SELECT r.name FROM workspace_members m JOIN roles r ON r.id = m.role_id WHERE m.workspace_id = $1 AND m.user_id = $2',
        [workspace.id, viewer.id],
      );
      expect(row.name).toBe('Viewer');
      expect(
        await origin.ds.query(`SELECT 1 FROM audit_log WHERE workspace_id = $1 AND action LIKE '%role%'`, [workspace.id]),
      ).toHaveLength(0);
      await context.close();
    },
    SLOW,
  );
});
