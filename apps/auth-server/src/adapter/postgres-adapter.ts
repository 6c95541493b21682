import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { DataSource } from 'typeorm';

/**
 * oidc-provider storage in Postgres: one table for every persisted model (the contract of
 * panva/node-oidc-provider example/my_adapter.js). Expired rows are invisible at once and
 * deleted by `deleteExpired`, so a restart or a second instance sees the same state.
 */
export function postgresAdapter(ds: DataSource): new (model: string) => Adapter {
  return class PostgresAdapter implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await ds.query(
        `INSERT INTO oidc_models (model, id, payload, grant_id, user_code, uid, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::int > 0 THEN now() + make_interval(secs => $7::int) END)
         ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
           user_code = excluded.user_code, uid = excluded.uid, expires_at = excluded.expires_at`,
        [this.model, id, JSON.stringify(payload), payload.grantId ?? null, payload.userCode ?? null, payload.uid ?? null, expiresIn ?? 0],
      );
    }

    find(id: string): Promise<AdapterPayload | undefined> {
      return this.one('id = $2', id);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.one('uid = $2', uid);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.one('user_code = $2', userCode);
    }

    async consume(id: string): Promise<void> {
      await ds.query('UPDATE oidc_models SET consumed_at = now() WHERE model = $1 AND id = $2', [this.model, id]);
    }

    async destroy(id: string): Promise<void> {
      await ds.query('DELETE FROM oidc_models WHERE model = $1 AND id = $2', [this.model, id]);
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
  `);
}
