import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { createWorkspace } from '#identity/accounts.js';
import { runMigrations } from '#database/data-source.js';
import { createSecret, revealSecret, VaultKeyMismatch } from '#identity/vault.js';
import { createWebhook, revealWebhookSecret } from '#webhooks/webhooks.js';
import { useEmptyDatabase } from './factories.js';
import { ROOT, tryStart } from './processes.js';

/**
 * Rotating VAULT_MASTER_KEY (README "Operations", docs/vault.md) as an operator does it, with
 * the CLI as its own process: `vault:rotate-master-key` re-wraps a database under a new key in
 * one transaction or refuses and changes nothing; afterwards the old key opens nothing, and
 * an app started with it stops at once with one line instead of failing a reveal or a
 * delivery later.
 */
const CLI = resolve(ROOT, 'dist/apps/cli/src/main.js');
const OPERATOR = { userId: null, email: 'test' };

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('The vault master key', () => {
  describe('rotating the master key', () => {
    const db = useEmptyDatabase('vault_rotate');
    const oldKey = process.env.VAULT_MASTER_KEY!;
    const newKey = randomBytes(32).toString('base64');
    const withKey = async <T>(key: string, work: () => Promise<T>): Promise<T> => {
      const saved = process.env.VAULT_MASTER_KEY;
      process.env.VAULT_MASTER_KEY = key;
      try {
        return await work();
      } finally {
        process.env.VAULT_MASTER_KEY = saved;
      }
    };

    it('vault:rotate-master-key re-wraps webhook secrets, vault data keys and the check value; the old key is then refused at start', async () => {
      const ws = await Promise.all([createWorkspace(db.ds, 'rotate-a'), createWorkspace(db.ds, 'rotate-b')]);
      const values = [`value-a-${randomBytes(8).toString('hex')}`, `value-b-${randomBytes(8).toString('hex')}`];
      for (const [i, w] of ws.entries()) await createSecret(db.ds, w.id, OPERATOR, { name: 'TOKEN', value: values[i] });
      const hook = await createWebhook(
        db.ds,
        ws[0].id,
        { url: 'https://hooks.example.com/r', headers: [{ name: 'X-T', value: '{{vault.TOKEN}}' }] },
        { allowPrivate: false },
      );
      const [before] = await db.ds.query('SELECT check_value FROM vault_key_check');
      const sealedBefore = await db.ds.query('SELECT name, value_sealed FROM vault_secrets ORDER BY workspace_id');

      // Refused, nothing changed: a wrong old key, a malformed new one, no new one, the same key.
      const refusals: [Record<string, string>, string[], RegExp][] = [
        [
          { VAULT_MASTER_KEY: oldKey },
          ['--old-key', randomBytes(32).toString('base64'), '--new-key', newKey],
          /VAULT_MASTER_KEY is not the key this database was set up with/,
        ],
        [{ VAULT_MASTER_KEY: oldKey, VAULT_NEW_MASTER_KEY: 'short' }, [], /VAULT_NEW_MASTER_KEY must be 32 bytes in base64/],
      ];
      const results = await Promise.all(
        refusals.map(([env, args]) => cli(['vault:rotate-master-key', ...args], { DATABASE_URL: db.url, ...env })),
      );
      for (const [i, [, args, message]] of refusals.entries()) {
        const r = results[i];
        expect({ args, code: r.code === 0 ? 'zero' : 'non-zero', stderr: r.stderr.trim().split('\n') }).toEqual({
          args,
          code: 'non-zero',
          stderr: [expect.stringMatching(message)],
        });
      }
      expect((await db.ds.query('SELECT check_value FROM vault_key_check'))[0]).toEqual(before);

      const r = await cli(['vault:rotate-master-key', '--json'], {
        DATABASE_URL: db.url,
        VAULT_MASTER_KEY: oldKey,
        VAULT_NEW_MASTER_KEY: newKey,
      });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(r.stdout)).toEqual({ webhookSecrets: 1, vaultDataKeys: 2 });
      expect(r.stdout).not.toContain(newKey);
      // The values themselves were not re-encrypted: only the keys that wrap them.
      expect(await db.ds.query('SELECT name, value_sealed FROM vault_secrets ORDER BY workspace_id')).toEqual(sealedBefore);

      await withKey(newKey, async () => {
        await runMigrations(db.ds);
        for (const [i, w] of ws.entries()) expect((await revealSecret(db.ds, w.id, OPERATOR, 'TOKEN')).value).toBe(values[i]);
        expect(await revealWebhookSecret(db.ds, ws[0].id, hook.id)).toBe(hook.secret);
      });
      await withKey(oldKey, async () => {
        await expect(runMigrations(db.ds)).rejects.toThrow(/VAULT_MASTER_KEY is not the key/);
        // A process still running with the old key answers a clear 503, never a 500.
        await expect(revealSecret(db.ds, ws[0].id, OPERATOR, 'TOKEN')).rejects.toBeInstanceOf(VaultKeyMismatch);
      });

      // Both apps started with the old key stop at start with one line (a missing key: test/webhooks-vault.e2e-spec.ts).
      const starts = await Promise.all(
        (['records-api', 'auth-server'] as const).map((app) => tryStart(app, { DATABASE_URL: db.url, VAULT_MASTER_KEY: oldKey })),
      );
      for (const [i, app] of (['records-api', 'auth-server'] as const).entries()) {
        const { started, code, output } = starts[i];
        const lines = output
          .trim()
          .split('\n')
          .filter((l) => !l.includes('oidc-provider WARNING'));
        expect({ app, started, failed: code !== 0, lines }).toEqual({
          app,
          started: false,
          failed: true,
          lines: [expect.stringMatching(/VAULT_MASTER_KEY is not the key this database was set up with/)],
        });
      }
    }, 120_000);
  });
});
