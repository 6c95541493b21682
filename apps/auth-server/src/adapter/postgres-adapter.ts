import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { DataSource } from 'typeorm';
import { hashSecret } from '#identity/secrets.js';

/**
 * Models whose id is public (a client_id) and stays readable; every other id is a bearer
 * value (refresh token, authorization code, session cookie, registration access token …).
 */
const PUBLIC_IDS = new Set(['Client']);

/**
 * oidc-provider storage in Postgres: one table for every persisted model (the contract of
 * panva/node-oidc-provider example/my_adapter.js). Expired rows are invisible at once and
 * deleted by `deleteExpired`, so a restart or a second instance sees the same state.
 * Secret ids are stored only as their SHA-256 (docs/security.md), like API keys: the row is keyed
 * by the hash and the payload keeps no copy (`jti` is put back from the id on a read).
 */
export function postgresAdapter(ds: DataSource): new (model: string) => Adapter {
  return class PostgresAdapter implements Adapter {
    private readonly hashed: boolean;

    constructor(private readonly model: string) {
      this.hashed = !PUBLIC_IDS.has(model);
    }

    private key(id: string): string {
      return this.hashed ? hashSecret(id) : id;
    }

    async upsert(id: string, original: AdapterPayload, expiresIn: number): Promise<void> {
      const payload = this.hashed && original.jti === id ? { ...original, jti: undefined } : original;
      await ds.query(
        `INSERT INTO oidc_models (model, id, payload, grant_id, user_code, uid, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::int > 0 THEN now() + make_interval(secs => $7::int) END)
         ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
           user_code = excluded.user_code, uid = excluded.uid, expires_at = excluded.expires_at`,
        [
          this.model,
          this.key(id),
          JSON.stringify(payload),
          payload.grantId ?? null,
          payload.userCode ?? null,
          payload.uid ?? null,
          expiresIn ?? 0,
        ],
      );
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const payload = await this.one('id = $2', this.key(id));
      return payload && this.hashed ? { ...payload, jti: id } : payload;
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.one('uid = $2', uid);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.one('user_code = $2', userCode);
    }

    async consume(id: string): Promise<void> {
      await ds.query('UPDATE oidc_models SET consumed_at = now() WHERE model = $1 AND id = $2', [this.model, this.key(id)]);
    }

    async destroy(id: string): Promise<void> {
      await ds.query('DELETE FROM oidc_models WHERE model = $1 AND id = $2', [this.model, this.key(id)]);
    }

    /** Every token of a grant, whatever its model (refresh token reuse revokes them all). */
    async revokeByGrantId(grantId: string): Promise<void> {
      await ds.query('DELETE FROM oidc_models WHERE grant_id = $1', [grantId]);
    }

    private async one(where: string, value: string): Promise<AdapterPayload | undefined> {
      const rows = await ds.query(
        `SELECT payload, consumed_at FROM oidc_models
          WHERE model = $1 AND ${where} AND (expires_at IS NULL OR expires_at > now())`,
        [this.model, value],
      );
      if (!rows.length) return undefined;
      const { payload, consumed_at: consumedAt } = rows[0];
      return consumedAt ? { ...payload, consumed: Math.floor(new Date(consumedAt).getTime() / 1000) } : payload;
    }
  };
}

export async function deleteExpired(ds: DataSource): Promise<void> {
  await ds.query(`
    DELETE FROM oidc_models WHERE expires_at < now();
    DELETE FROM oauth_interaction_workspaces WHERE expires_at < now();
    DELETE FROM web_sessions WHERE expires_at < now();
    DELETE FROM auth_throttle WHERE expire < (extract(epoch FROM now()) * 1000)::bigint;
  `);
}
