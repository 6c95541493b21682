import { redactPath, scrubSecrets } from './logging.js';

describe('redactPath', () => {
  it.each([
    ['/settings/invites/wrsi_abc-DEF_123', '/settings/invites/[redacted]'],
    ['/settings/invites/wrsi_abc/signup', '/settings/invites/[redacted]/signup'],
    ['/settings/invites/cut-short-token', '/settings/invites/[redacted]'],
    ['/rest/companies/wrs_abcdef', '/rest/companies/[redacted]'],
    ['/rest/companies/wrs%5Fabcdef', '/rest/companies/[redacted]'],
    ['/x/whsec_abc+def/=', '/x/[redacted]/='],
    ['/x/wrsa_secret', '/x/[redacted]'],
  ])('%s → %s', (path, logged) => {
    expect(redactPath(path)).toBe(logged);
  });

  it.each(['/rest/companies/0d35ca2d-f3ba-4c7b-945e-562ee58c69ef', '/settings/members/invites/created/c9c11f46', '/settings/invites', '/settings/invites/', '/oauth/token', '/rest/bad%zz'])('keeps %s', (path) => {
    expect(redactPath(path)).toBe(path);
  });
});

describe('scrubSecrets', () => {
  it('replaces every prefixed secret in a text', () => {
    expect(scrubSecrets('Error: no key wrs_abc, or whsec_x/y+z= at /settings/invites/wrsi_q')).toBe('Error: no key [redacted], or [redacted] at /settings/invites/[redacted]');
  });
});
