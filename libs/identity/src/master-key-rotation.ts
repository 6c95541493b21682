import type { DataSource } from 'typeorm';
import { KEY_PURPOSES, MasterKeyError, checkValueOpens, newCheckValue, open, seal, subkeyFrom } from '#database/master-key.js';
import { BadInputError, ErrorCode } from '#errors/errors.js';
import { rewrapDataKey } from './vault.js';

export interface MasterKeyRotation {
  webhookSecrets: number;
  vaultDataKeys: number;
}

/**
 * Re-wraps everything sealed under VAULT_MASTER_KEY from `oldKey` to `newKey`, in one
 * transaction (README "Operations"; `npm run cli -- vault:rotate-master-key`): every webhook
 * signing secret, every workspace's vault data key (the values sealed under the data keys
 * stay as they are) and the check value. Either all of it moves to the new key or nothing
 * does; rows are locked, so a webhook or a first vault secret saved meanwhile waits and is
 * then sealed under the old key by a process still holding it — hence: stop the apps first.
 */
export async function rotateMasterKey(ds: DataSource, oldKey: Buffer, newKey: Buffer): Promise<MasterKeyRotation> {
  if (oldKey.equals(newKey))
    throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'The new key is the old key; generate one with: openssl rand -base64 32');
  return ds.transaction(async (tx) => {
    const [check] = (await tx.query('SELECT check_value FROM vault_key_check WHERE id = 1 FOR UPDATE')) as { check_value: string }[];
    if (!check || !checkValueOpens(oldKey, check.check_value)) {
      throw new MasterKeyError(
        'The old key is not the key this database was set up with (its check value does not open with it); nothing was changed',
      );
    }
    if (checkValueOpens(newKey, check.check_value)) throw new MasterKeyError('The database already uses the new key; nothing was changed');

    const [oldHooks, newHooks] = [subkeyFrom(oldKey, KEY_PURPOSES.webhookSecrets), subkeyFrom(newKey, KEY_PURPOSES.webhookSecrets)];
    const hooks = (await tx.query('SELECT workspace_id, id, secret_sealed FROM webhooks ORDER BY workspace_id, id FOR UPDATE')) as {
      workspace_id: string;
      id: string;
      secret_sealed: string;
    }[];
    if (hooks.length) {
      await tx.query(
        `UPDATE webhooks w SET secret_sealed = n.sealed
           FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS n (workspace_id, id, sealed)
          WHERE w.workspace_id = n.workspace_id AND w.id = n.id`,
        [hooks.map((h) => h.workspace_id), hooks.map((h) => h.id), hooks.map((h) => seal(newHooks, open(oldHooks, h.secret_sealed)))],
      );
    }

    const [oldVault, newVault] = [subkeyFrom(oldKey, KEY_PURPOSES.vaultDataKeys), subkeyFrom(newKey, KEY_PURPOSES.vaultDataKeys)];
    const keys = (await tx.query('SELECT workspace_id, data_key_sealed FROM vault_keys ORDER BY workspace_id FOR UPDATE')) as {
      workspace_id: string;
      data_key_sealed: string;
    }[];
    if (keys.length) {
      await tx.query(
        `UPDATE vault_keys k SET data_key_sealed = n.sealed
           FROM unnest($1::uuid[], $2::text[]) AS n (workspace_id, sealed)
          WHERE k.workspace_id = n.workspace_id`,
        [keys.map((k) => k.workspace_id), keys.map((k) => rewrapDataKey(k.workspace_id, k.data_key_sealed, oldVault, newVault))],
      );
    }

    await tx.query('UPDATE vault_key_check SET check_value = $1 WHERE id = 1', [newCheckValue(newKey)]);
    return { webhookSecrets: hooks.length, vaultDataKeys: keys.length };
  });
}
