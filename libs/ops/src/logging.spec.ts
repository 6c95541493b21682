import { createLogger, redactPath, scrubSecrets } from './logging.js';
import { loadConfig } from '#config/config.js';

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

  it.each([
    '/rest/companies/0d35ca2d-f3ba-4c7b-945e-562ee58c69ef',
    '/settings/members/invites/created/c9c11f46',
    '/settings/invites',
    '/settings/invites/',
    '/oauth/token',
    '/rest/bad%zz',
  ])('keeps %s', (path) => {
    expect(redactPath(path)).toBe(path);
  });
});

describe('scrubSecrets', () => {
  it('replaces every prefixed secret in a text', () => {
    expect(scrubSecrets('Error: no key wrs_abc, or whsec_x/y+z= at /settings/invites/wrsi_q')).toBe(
      'Error: no key [redacted], or [redacted] at /settings/invites/[redacted]',
    );
  });
});

describe('createLogger (text)', () => {
  it('logs an error line without a stack (the launcher logs them so; a throw there ended it)', () => {
    const logger = createLogger({ ...loadConfig(), logFormat: 'text', logLevel: 'error' });
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      expect(() => logger.error('PostgreSQL (pid 1) exited; restarting in 500 ms', 'start')).not.toThrow();
      expect(() => logger.error('key wrs_secret123 refused', 'whsec_abc', 'start')).not.toThrow();
    } finally {
      process.stderr.write = write;
    }
    expect(written.join('')).toMatch(/PostgreSQL \(pid 1\) exited/);
    expect(written.join('')).not.toMatch(/wrs_secret123|whsec_abc/);
  });
});
