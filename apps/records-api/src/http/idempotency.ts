import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createHash, createHmac } from 'node:crypto';
import type { NextFunction, Response } from 'express';
import { authenticateRequest, type AuthenticatedRequest } from '#auth/auth.guard.js';
import type { BearerAuthService } from '#auth/bearer-auth.service.js';
import type { Principal } from '#auth/principal.js';
import { KEY_PURPOSES, subkey } from '#database/master-key.js';
import { Sql } from '#database/sql.js';
import { AppError, ErrorCode } from '#errors/errors.js';
import { sendError } from './body-parsing.js';
import type { RequestWithId } from './request-id.js';
import { isImportUpload } from '#records/imports/import-route.js';

/**
 * `Idempotency-Key` (Stripe's semantics; docs/rest): the first response to a write is kept
 * for 24 h per credential and key, in Postgres so every instance sees it; a retry with the
 * same method, path and body gets it again with `Idempotent-Replayed: true` and writes
 * nothing. The same key with another request is 422, a retry while the first still runs
 * 409. Responses of 500 and above are not kept, so the retry runs again; nor are 401, 403
 * and 429, which say nothing about the write and may change with the next attempt.
 */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/;
const TTL = '24 hours';
/**
 * How long a first request may run before a retry may take over its key: an instance
 * killed mid-request never finishes it. Far above any request we serve.
 */
const LEASE_SECONDS = 20;
const PURGE_EVERY_MS = 10 * 60 * 1000;

export interface StoredResponse {
  status: number;
  contentType: string | null;
  body: string;
}

/** Whose keys: the credential's own, within its workspace (another credential's key is another key). */
export interface KeyScope {
  workspaceId: string;
  credential: string;
}

export const scopeOf = (principal: Principal): KeyScope => ({
  workspaceId: principal.workspaceId,
  credential: `${principal.kind}:${principal.subjectId}`,
});

/** Answers about the caller, not the write: kept, they would be replayed to a retry that may now pass. */
const NOT_KEPT_STATUSES = new Set([401, 403, 429]);

/**
 * `unfinished`: the key is taken over from an earlier run of this very request that never
 * kept its answer (its instance died); that run may have committed.
 */
export type Claim =
  { kind: 'run'; unfinished?: boolean } | { kind: 'replay'; response: StoredResponse } | { kind: 'reused' } | { kind: 'in_use' };

export function invalidKey(): AppError {
  return new AppError(400, ErrorCode.INVALID_IDEMPOTENCY_KEY, ['Idempotency-Key must be 1 to 255 printable ASCII characters']);
}
export function keyReused(): AppError {
  return new AppError(422, ErrorCode.IDEMPOTENCY_KEY_REUSED, [
    'This Idempotency-Key was used with another method, path or body; use a new key for a new request',
  ]);
}
export function keyInUse(): AppError {
  return new AppError(409, ErrorCode.IDEMPOTENCY_KEY_IN_USE, ['A request with this Idempotency-Key is still running; retry shortly']);
}

export const isValidKey = (key: string) => KEY_SHAPE.test(key);

/**
 * method, path and body, hashed: what a retry must repeat exactly. A vault write's body holds
 * a secret value, so its hash is keyed (HMAC under a subkey of VAULT_MASTER_KEY): a plain
 * hash in a database dump would let a guessable value be confirmed offline.
 */
export function fingerprint(method: string, path: string, body: unknown): string {
  const text = `${method} ${path}\n${JSON.stringify(body ?? null)}`;
  return (path.startsWith('/rest/vault/') ? createHmac('sha256', subkey(KEY_PURPOSES.fingerprints)) : createHash('sha256'))
    .update(text)
    .digest('base64url');
}

@Injectable()
export class IdempotencyStore implements OnModuleDestroy {
  private readonly purge = setInterval(() => void this.purgeExpired().catch(() => undefined), PURGE_EVERY_MS);

  constructor(private readonly sql: Sql) {
    this.purge.unref();
  }

  onModuleDestroy() {
    clearInterval(this.purge);
  }

  /**
   * Claims the key for this request, or says why not. One statement decides the race
   * between two instances: the row is inserted, or taken over when it expired or its
   * first request's lease ran out; otherwise the existing row is read.
   */
  async claim(scope: KeyScope, key: string, method: string, path: string, print: string): Promise<Claim> {
    const [claimed] = await this.sql.rows<{ claimed: boolean; unfinished: boolean }>(
      `WITH previous AS (
         SELECT status, fingerprint FROM idempotency_keys WHERE workspace_id = $1 AND credential = $2 AND key = $3
       )
       INSERT INTO idempotency_keys (workspace_id, credential, key, fingerprint, method, path, locked_until)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => ${LEASE_SECONDS}))
       ON CONFLICT (workspace_id, credential, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, method = EXCLUDED.method, path = EXCLUDED.path,
             status = NULL, content_type = NULL, body = NULL, created_at = now(), locked_until = EXCLUDED.locked_until
         WHERE idempotency_keys.created_at < now() - interval '${TTL}'
            OR (idempotency_keys.status IS NULL AND idempotency_keys.locked_until < now()
                AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
       RETURNING true AS claimed, EXISTS (SELECT 1 FROM previous WHERE status IS NULL AND fingerprint = $4) AS unfinished`,
      [scope.workspaceId, scope.credential, key, print, method, path],
      { prepared: true },
    );
    if (claimed) return { kind: 'run', unfinished: claimed.unfinished };
    const [row] = await this.sql.rows<{ fingerprint: string; status: number | null; content_type: string | null; body: string | null }>(
      'SELECT fingerprint, status, content_type, body FROM idempotency_keys WHERE workspace_id = $1 AND credential = $2 AND key = $3',
      [scope.workspaceId, scope.credential, key],
      { prepared: true },
    );
    if (!row) return this.claim(scope, key, method, path, print); // purged meanwhile
    if (row.fingerprint !== print) return { kind: 'reused' };
    if (row.status === null) return { kind: 'in_use' };
    return { kind: 'replay', response: { status: row.status, contentType: row.content_type, body: row.body ?? '' } };
  }

  /** The first response, kept; or, for a status ≥ 500 or one about the caller (401, 403, 429), the key released so a retry runs again. */
  async complete(scope: KeyScope, key: string, response: StoredResponse): Promise<void> {
    if (response.status >= 500 || NOT_KEPT_STATUSES.has(response.status)) return this.release(scope, key);
    await this.sql.rows(
      `UPDATE idempotency_keys SET status = $4, content_type = $5, body = $6, locked_until = NULL
       WHERE workspace_id = $1 AND credential = $2 AND key = $3 AND status IS NULL`,
      [scope.workspaceId, scope.credential, key, response.status, response.contentType, response.body],
      { prepared: true },
    );
  }

  async release(scope: KeyScope, key: string): Promise<void> {
    await this.sql.rows(
      'DELETE FROM idempotency_keys WHERE workspace_id = $1 AND credential = $2 AND key = $3 AND status IS NULL',
      [scope.workspaceId, scope.credential, key],
      {
        prepared: true,
      },
    );
  }

  async purgeExpired(): Promise<void> {
    await this.sql.rows(`DELETE FROM idempotency_keys WHERE created_at < now() - interval '${TTL}'`);
  }
}

const WRITE_METHODS = new Set(['POST', 'PATCH', 'DELETE']);

/**
 * The `/rest` side, an Express middleware after body parsing. It needs the workspace
 * before the controllers run, so it authenticates here (only for writes that carry the
 * header) and leaves the principal on the request for the bearer guard. The response is
 * stored before it is sent: a client that got an answer finds it again on retry.
 */
export function restIdempotency(store: IdempotencyStore, auth: BearerAuthService) {
  return async (req: RequestWithId & AuthenticatedRequest, res: Response, next: NextFunction) => {
    const key = req.headers[IDEMPOTENCY_HEADER];
    // An import's upload is a stream the fingerprint cannot cover; it is not replayed (docs/rest.md "Imports").
    if (!WRITE_METHODS.has(req.method) || key === undefined || isImportUpload(req)) return next();
    try {
      if (typeof key !== 'string' || !isValidKey(key)) throw invalidKey();
      let principal: Principal;
      try {
        principal = await authenticateRequest(auth, req);
      } catch (err) {
        if (err instanceof AppError) return next(); // the guard answers 401 the usual way
        throw err;
      }
      const scope = scopeOf(principal);
      const path = req.originalUrl;
      const claim = await store.claim(scope, key, req.method, path, fingerprint(req.method, path, req.body));
      if (claim.kind === 'reused') throw keyReused();
      if (claim.kind === 'in_use') throw keyInUse();
      if (claim.kind === 'replay') {
        res.status(claim.response.status).setHeader('Idempotent-Replayed', 'true');
        if (claim.response.contentType) res.setHeader('Content-Type', claim.response.contentType);
        res.end(claim.response.body);
        return;
      }
      keepResponse(
        res,
        (response) => store.complete(scope, key, response),
        () => store.release(scope, key),
      );
      const [route, search = ''] = path.split('?');
      if (req.method === 'POST' && CREATE_PATH.test(route)) {
        req.principal = withDerivedIds(principal, Array.isArray(req.body) ? req.body : [req.body], {
          scope,
          key,
          upsert: new URLSearchParams(search).get('upsert') === 'true',
          unfinished: Boolean(claim.unfinished),
          position: String,
        });
      }
      next();
    } catch (err) {
      sendError(req, res, err);
    }
  };
}

/**
 * Holds the response body until `store` has kept it, then sends it. (A client that
 * hangs up early does not release the key: the handler may still commit.)
 */
export function keepResponse(res: Response, store: (response: StoredResponse) => Promise<void>, release: () => Promise<void>): void {
  const chunks: Buffer[] = [];
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  const toBuffer = (chunk: unknown, encoding?: unknown) =>
    Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  let ended = false;

  res.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => {
    chunks.push(toBuffer(chunk, encoding));
    if (typeof encoding === 'function') encoding();
    else if (typeof cb === 'function') cb();
    return true;
  }) as Response['write'];
  res.end = ((chunk?: unknown, encoding?: unknown, cb?: unknown) => {
    if (ended) return res;
    ended = true;
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(toBuffer(chunk, encoding));
    const body = Buffer.concat(chunks);
    const contentType = res.getHeader('content-type');
    store({ status: res.statusCode, contentType: contentType === undefined ? null : String(contentType), body: body.toString('utf8') })
      .catch(() => release().catch(() => undefined)) // not kept: a retry runs again rather than finding nothing
      .finally(() => {
        if (body.length) write(body);
        end(typeof cb === 'function' ? cb : typeof encoding === 'function' ? encoding : undefined);
      });
    return res;
  }) as Response['end'];
}

/** A name-based (version 5) UUID, RFC 9562 §5.5. */
function uuidV5(name: string): string {
  const bytes = createHash('sha1')
    .update(Buffer.from(ID_NAMESPACE.replace(/-/g, ''), 'hex'))
    .update(name)
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
const ID_NAMESPACE = '5b0c3a52-7d7e-4a51-9b1e-2f4c1f0e9a11';

const CREATE_PATH = /^\/rest\/(batch\/)?[a-z]+\/?$/;

/**
 * A create sent with a key (REST here, GraphQL in graphql-idempotency.ts) gets record ids
 * derived from (workspace, credential, key, `position(index)`) unless it names its own. The
 * key and the write cannot share one transaction (the record store owns its transactions),
 * so an instance killed after the INSERT committed but before the response was kept leaves
 * the key unfinished; the retry that takes it over (`unfinished`) then meets the same ids and
 * answers with the records made then (RecordsService.createMany), instead of creating a
 * second record. An upsert's ids stay out of its records, where they would be matched against
 * (a record found by its e-mail is not the derived id: 409): each is the id of the record if
 * it is created, and a takeover matches them first (RecordsService.upsertMany). Returns the
 * principal to write with: `principal` itself when no id was derived.
 */
export function withDerivedIds(
  principal: Principal,
  records: unknown[],
  o: { scope: KeyScope; key: string; upsert: boolean; unfinished: boolean; position: (index: number) => string },
): Principal {
  const ids: string[] = [];
  records.forEach((record, i) => {
    const id = uuidV5(`${o.scope.workspaceId}\n${o.scope.credential}\n${o.key}\n${o.position(i)}`);
    if (o.upsert) return void ids.push(id);
    if (record && typeof record === 'object' && !Array.isArray(record) && !('id' in record)) {
      (record as Record<string, unknown>).id = id;
      ids.push(id);
    }
  });
  if (!ids.length) return principal;
  return {
    ...principal,
    ...(o.upsert ? { upsertCreateIds: ids } : {}),
    ...(o.unfinished ? { retriedCreateIds: new Set(ids) } : {}),
  };
}
