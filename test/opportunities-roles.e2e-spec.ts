import { findRole } from '#identity/accounts.js';
import { FormBrowser } from '../bench/form-browser.js';
import { PASSWORD, startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';

/** The roles page lists opportunities (docs/architecture.md): a column, a fieldset, and what a saved role records. */
describe('roles page with opportunities', () => {
  let origin: PublicOrigin;

  beforeAll(async () => {
    origin = await startPublicOrigin();
  });
  afterAll(() => origin.close());

  async function signIn(email: string): Promise<FormBrowser> {
    const b = new FormBrowser();
    await b.go(`${origin.url}/login`);
    await b.submit('Sign in', { email, password: PASSWORD });
    expect(b.lastUrl).toBe(`${origin.url}/settings`);
    return b;
  }

  it('shows an Opportunities column and checkboxes, and saves an explicit choice', async () => {
    const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'roles-opp');
    const b = await signIn(people[0].email);
    await b.go(`${origin.url}/settings/roles`);
    expect(b.lastStatus).toBe(200);
    expect(b.lastBody).toMatch(/<th scope="col">Companies<\/th><th scope="col">People<\/th><th scope="col">Opportunities<\/th>/);
    await b.go(`${origin.url}/settings/roles/new`);
    expect(b.lastBody).toContain('<legend>Opportunities</legend>');
    expect(b.lastBody).toContain('value="opportunities.read"');

    await b.go(`${origin.url}/settings/roles`, {
      method: 'POST',
      form: {
        _csrf: b.cookie('wrs_csrf')!,
        name: 'Deal desk',
        permissions: ['companies.read', 'opportunities.read', 'opportunities.update'],
        assignableToUsers: 'on',
      },
    });
    expect(b.lastStatus).toBe(200);
    const saved = await findRole(origin.ds, workspace.id, 'Deal desk');
    expect(saved.objectPermissions.opportunities).toEqual({ read: true, create: false, update: true, delete: false });
    // Saved on the page, "none" is recorded as a choice, not left undecided.
    await b.go(`${origin.url}/settings/roles`, {
      method: 'POST',
      form: { _csrf: b.cookie('wrs_csrf')!, name: 'No deals', permissions: 'companies.read', assignableToUsers: 'on' },
    });
    expect((await findRole(origin.ds, workspace.id, 'No deals')).objectPermissions.opportunities).toEqual({
      read: false,
      create: false,
      update: false,
      delete: false,
    });
  });
});
