import { StringDecoder } from 'node:string_decoder';
import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { isUUID } from 'class-validator';
import { assertCan, can, type Principal } from '#auth/principal.js';
import { assertUpdatableFields, fieldAccess } from '#auth/field-access.js';
import { loadConfig, type ImportSettings } from '#config/config.js';
import { Sql, type SqlTx } from '#database/sql.js';
import { AppError, BadInputError, ConflictError, ErrorCode, NotFoundError, TooManyRequestsError } from '#errors/errors.js';
import { DataModel } from '../service/data-model.js';
import type { ObjectDefinition } from '../service/object-definitions.js';
import { RecordsService } from '../service/records.service.js';
import { CHUNK_BYTES, csvHeader, keysWithin, MAX_RECORD_BYTES, maxCells } from './import-reader.js';
import { importActor, auditImport } from './import-audit.js';
import { IMPORT_TASK } from './import-runner.js';
import { importSummary, type ImportRow, type ImportSummary } from './import-summary.js';
import { atMinimumPace } from './upload-pace.js';

/**
 * graphile-worker's attempts of one import job. The import's own count of runs that imported
 * nothing decides when it ends `failed` (import-runner.ts); an import whose job spent them
 * all (its workers died) gets a new job from the heartbeat (stranded-imports.ts).
 */
export const MAX_ATTEMPTS = 5;
/** Seconds an upload refused for want of a slot is told to wait (Retry-After): slots free as uploads end. */
const UPLOAD_RETRY_SECONDS = 10;
/** Seconds an upload refused by its workspace's queue caps is told to wait: imports end as workers run them. */
const QUEUE_RETRY_SECONDS = 30;
/** A workspace's imports that count against its queue caps: not yet ended. */
const WAITING = `status IN ('uploading', 'queued', 'running')`;
/** Refused rows per page of `GET /rest/imports/{id}/errors`, read by keyset. */
const ERRORS_PAGE = 1000;

const FORMATS: Record<string, 'csv' | 'ndjson'> = { 'text/csv': 'csv', 'application/x-ndjson': 'ndjson' };
const PARAMS = new Set(['object', 'mode', 'match', 'events']);

/** A refused row of an import: its number (1 = the first record after a CSV header, or an NDJSON line) and why. */
export interface RefusedRow {
  row: number;
  /** The line of the file the row starts on (null for rows refused before lines were counted). */
  line: number | null;
  messages: string[];
}

export interface ImportRequest {
  object: string;
  mode: 'create' | 'upsert';
  match: string | null;
  recordEvents: boolean;
  format: 'csv' | 'ndjson';
}

/** The query and content type of `POST /rest/imports`, checked; a problem is a 400 (415 for the type) naming it. */
export function parseImportRequest(query: Record<string, unknown>, headers: IncomingHttpHeaders): ImportRequest {
  const problems: string[] = [];
  for (const key of Object.keys(query)) if (!PARAMS.has(key)) problems.push(`unknown query parameter "${key.slice(0, 100)}"`);
  const text = (name: string) => {
    const value = query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') {
      problems.push(`${name} must be given once`);
      return undefined;
    }
    return value;
  };
  // Which objects the workspace serves is checked with its data model (ImportsService.start).
  const object = text('object');
  if (object === undefined) problems.push('object is required: the plural name of one of your objects, such as companies');
  const mode = text('mode') ?? 'create';
  if (mode !== 'create' && mode !== 'upsert') problems.push(`mode must be create or upsert; got "${mode.slice(0, 100)}"`);
  const match = text('match') ?? null;
  if (match !== null && mode !== 'upsert') problems.push('match is for mode=upsert only');
  const events = text('events');
  if (events !== undefined && events !== 'records')
    problems.push(`events must be "records" (one event per record) or left out; got "${events.slice(0, 100)}"`);
  if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
  const type = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const format = FORMATS[type];
  if (!format) {
    throw new AppError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, [
      `Content-Type must be text/csv or application/x-ndjson; got "${(headers['content-type'] ?? 'none').slice(0, 100)}"`,
    ]);
  }
  return { object: object!, mode: mode as 'create' | 'upsert', match, recordEvents: events === 'records', format };
}

/** 429 unless one more import of `bytes` fits the workspace's queue caps, given what it has waiting or running. */
function assertQueueRoom(queued: { count: number; bytes: number }, bytes: number, limits: ImportSettings): void {
  if (queued.count >= limits.queuePerWorkspace) {
    throw new TooManyRequestsError(
      `this workspace has ${queued.count} imports waiting or running; at most ${limits.queuePerWorkspace} (IMPORT_QUEUE_PER_WORKSPACE); retry when one ends`,
      QUEUE_RETRY_SECONDS,
    );
  }
  if (queued.bytes + bytes > limits.queueBytesPerWorkspace) {
    throw new TooManyRequestsError(
      `this upload would make more than ${limits.queueBytesPerWorkspace} bytes of imports waiting or running in this workspace (IMPORT_QUEUE_BYTES_PER_WORKSPACE); retry when one ends`,
      QUEUE_RETRY_SECONDS,
    );
  }
}

const tooLarge = (max: number) => new AppError(413, ErrorCode.PAYLOAD_TOO_LARGE, [`The file is larger than the ${max}-byte import limit`]);

/**
 * Imports (docs/rest.md "Imports"; docs/decisions/0035-imports.md): the upload streamed into
 * `import_chunks` as it arrives, then one job on the queue; status, refused rows and cancel.
 * Every statement is scoped by the caller's workspace: another workspace's import is missing.
 */
@Injectable()
export class ImportsService {
  /**
   * Uploads streaming into this process, in all and per workspace. Per process by nature: they
   * bound what uploads take of this process's memory (a chunk of up to 1 MB each); the queue
   * caps, in Postgres, bound a workspace across instances.
   */
  private uploads = 0;
  private readonly uploadsOf = new Map<string, number>();

  constructor(
    private readonly sql: Sql,
    private readonly records: RecordsService,
    private readonly dataModel: DataModel,
  ) {}

  /** The objects `principal` may import into: the workspace's active ones (custom ones included) its role may create. */
  async importable(principal: Principal): Promise<string[]> {
    return (await this.dataModel.of(principal)).served.filter((object) => can(principal, object, 'create'));
  }

  /**
   * Reads the body as it arrives, 1 MB at a time, each chunk written before more is read
   * (backpressure: a slow database slows the client, nothing piles up in memory). The first
   * chunk's header row is checked before anything is written. The import is queued in the
   * transaction that closes the upload; an upload that fails leaves nothing behind. A
   * workspace holds at most IMPORT_UPLOADS_PER_WORKSPACE of this process's upload slots (429),
   * the process IMPORT_UPLOADS_PER_INSTANCE (503), a client slower than the minimum pace is
   * cut (408), and a workspace's imports waiting or running are capped in number and bytes (429).
   */
  async start(
    principal: Principal,
    request: ImportRequest,
    body: AsyncIterable<Buffer>,
    declaredLength?: number,
    /** Who the import row names (the CLI says "operator (CLI)"). */
    createdBy = `${principal.kind}:${principal.subjectId}`,
  ): Promise<ImportSummary> {
    const model = await this.dataModel.of(principal);
    // Only this workspace's active objects are named: another workspace's are unknown here, as a deactivated one is.
    if (!model.has(request.object)) {
      throw new BadInputError(
        ErrorCode.VALIDATION_FAILED,
        `object must be one of ${model.served.join(', ')}; got "${request.object.slice(0, 100)}"`,
      );
    }
    const def = model.definition(request.object);
    assertCan(principal, def.object, 'create');
    if (request.mode === 'upsert') {
      assertCan(principal, def.object, 'update');
      // match= names `id` or a unique field of the object (400 otherwise), before anything is stored.
      await this.records.upsertKeys(def, principal.workspaceId, request.match ?? undefined);
    }
    // Read at each upload: a changed limit applies to the next one.
    const limits = loadConfig().imports;
    if (declaredLength !== undefined && declaredLength > limits.maxBytes) throw tooLarge(limits.maxBytes);
    const workspace = principal.workspaceId;
    const mine = this.uploadsOf.get(workspace) ?? 0;
    if (mine >= limits.uploadsPerWorkspace) {
      throw new TooManyRequestsError(
        `${mine} uploads of this workspace are already streaming into this instance (at most ${limits.uploadsPerWorkspace}); retry when one ends`,
        UPLOAD_RETRY_SECONDS,
      );
    }
    if (this.uploads >= limits.uploadsPerInstance) {
      throw new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, [
        `${limits.uploadsPerInstance} uploads are already streaming into this instance; retry shortly`,
      ]);
    }
    // Taken before anything is awaited: uploads arriving together cannot all see the same free slot.
    this.uploads++;
    this.uploadsOf.set(workspace, mine + 1);
    try {
      // Before the body is read: a workspace at its queue caps is told so at once.
      assertQueueRoom(await this.queued(this.sql, workspace), declaredLength ?? 0, limits);
      return await this.store(
        principal,
        request,
        def,
        atMinimumPace(body, limits.uploadMinBytes, limits.uploadWindowMs),
        limits,
        createdBy,
      );
    } finally {
      this.uploads--;
      const left = (this.uploadsOf.get(workspace) ?? 1) - 1;
      if (left > 0) this.uploadsOf.set(workspace, left);
      else this.uploadsOf.delete(workspace);
    }
  }

  /** The workspace's imports not yet ended and their bytes (an upload's so far), but for `except`. */
  private async queued(sql: Sql | SqlTx, workspaceId: string, except?: string): Promise<{ count: number; bytes: number }> {
    const [row] = await sql.rows<{ count: number; bytes: string }>(
      `SELECT count(*)::int AS count, coalesce(sum(bytes), 0)::bigint AS bytes FROM imports
        WHERE workspace_id = $1 AND ${WAITING} AND id IS DISTINCT FROM $2`,
      [workspaceId, except ?? null],
    );
    return { count: row.count, bytes: Number(row.bytes) };
  }

  private async store(
    principal: Principal,
    request: ImportRequest,
    def: ObjectDefinition,
    body: AsyncIterable<Buffer>,
    limits: ImportSettings,
    createdBy: string,
  ): Promise<ImportSummary> {
    const max = limits.maxBytes;
    let id: string | undefined;
    let seq = 0;
    let total = 0;
    let stored = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const protectedFields = fieldAccess(principal, def.object) && ndjsonKeysCheck(principal, def);
    const write = async (chunk: Buffer, last: boolean) => {
      if (id === undefined) {
        // A column the role cannot update is 403 before anything is stored (docs/rest.md, "Imports").
        if (request.format === 'csv')
          assertUpdatableFields(
            principal,
            def.object,
            csvHeader(chunk, def, last).map((c) => c.path[0]),
          );
        // The queue caps again, checked and taken in one step: a workspace's uploads take their places one at a time.
        id = await this.sql.transaction(async (tx) => {
          await tx.rows(`SELECT pg_advisory_xact_lock(hashtextextended('imports:' || $1, 0))`, [principal.workspaceId]);
          assertQueueRoom(await this.queued(tx, principal.workspaceId), chunk.length, limits);
          const [row] = await tx.rows<{ id: string }>(
            `INSERT INTO imports (workspace_id, object, mode, match, format, record_events, created_by, max_rows)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
            [
              principal.workspaceId,
              def.object,
              request.mode,
              request.match,
              request.format,
              request.recordEvents,
              createdBy,
              // The limit in force when the upload was accepted, whichever worker runs it.
              loadConfig().imports.maxRows,
            ],
          );
          return row.id;
        });
      }
      // The chunk and the upload's bytes so far, which the workspace's byte cap counts (others' too, as each chunk is stored).
      const [others] = await this.sql.rows<{ bytes: string }>(
        `WITH chunk AS (INSERT INTO import_chunks (workspace_id, import_id, seq, data) VALUES ($1, $2, $3, $4)),
              grown AS (UPDATE imports SET bytes = $5, chunks = $3 + 1, updated_at = now() WHERE workspace_id = $1 AND id = $2)
         SELECT coalesce(sum(bytes), 0)::bigint AS bytes FROM imports WHERE workspace_id = $1 AND ${WAITING} AND id <> $2`,
        [principal.workspaceId, id, seq++, chunk, stored + chunk.length],
      );
      stored += chunk.length;
      assertQueueRoom({ count: 0, bytes: Number(others.bytes) }, stored, limits);
    };
    try {
      for await (const piece of body) {
        total += piece.length;
        if (total > max) throw tooLarge(max);
        if (protectedFields && request.format === 'ndjson') protectedFields(piece);
        pending.push(piece);
        pendingBytes += piece.length;
        while (pendingBytes >= CHUNK_BYTES) {
          const all = Buffer.concat(pending, pendingBytes);
          await write(all.subarray(0, CHUNK_BYTES), false);
          pending = [all.subarray(CHUNK_BYTES)];
          pendingBytes -= CHUNK_BYTES;
        }
      }
      if (total === 0) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'the file is empty');
      if (protectedFields && request.format === 'ndjson') protectedFields(undefined);
      if (pendingBytes) await write(Buffer.concat(pending, pendingBytes), true);
      const uploaded = id!;
      const actor = await importActor(this.sql, principal.workspaceId, createdBy);
      const [queued] = await this.sql.transaction(async (tx) => {
        const rows = await tx.rows<ImportRow>(
          `UPDATE imports SET status = 'queued', bytes = $3, chunks = $4, updated_at = now()
            WHERE workspace_id = $1 AND id = $2 AND status = 'uploading' RETURNING *`,
          [principal.workspaceId, uploaded, total, seq],
        );
        if (rows[0]) await auditImport(tx, actor, 'import.start', rows[0]);
        // One queue per workspace: its imports run one at a time, in order, on any instance. The
        // priority is the import's place in its workspace's line, so a worker takes every
        // workspace's first import (the one waiting longest first) before anyone's second.
        await tx.rows(
          `SELECT graphile_worker.add_job($1, json_build_object('workspaceId', $2::uuid, 'importId', $3::uuid),
                                          queue_name => 'imports:' || $2, max_attempts => $4,
                                          priority => (SELECT least(count(*), 1000)::int FROM imports
                                                        WHERE workspace_id = $2::uuid AND status IN ('queued', 'running') AND id <> $3::uuid))`,
          [IMPORT_TASK, principal.workspaceId, uploaded, MAX_ATTEMPTS],
        );
        return rows;
      });
      return importSummary(queued);
    } catch (err) {
      if (id !== undefined)
        await this.sql.rows('DELETE FROM imports WHERE workspace_id = $1 AND id = $2', [principal.workspaceId, id]).catch(() => undefined);
      throw err;
    }
  }

  async get(principal: Principal, id: string): Promise<ImportSummary> {
    return importSummary(await this.visible(principal, id));
  }

  /**
   * Refused rows in row order, a page at a time (constant memory at any count); `send`
   * resolves when the next may follow, false to stop. The import is checked first (404, 403),
   * before `send` is called.
   */
  async errors(principal: Principal, id: string, send: (refused: RefusedRow) => Promise<boolean>): Promise<void> {
    await this.visible(principal, id);
    let after = 0;
    for (;;) {
      const page = await this.sql.rows<{ row_no: string; line_no: string | null; messages: string[] }>(
        `SELECT row_no, line_no, messages FROM import_errors WHERE workspace_id = $1 AND import_id = $2 AND row_no > $3
          ORDER BY row_no LIMIT ${ERRORS_PAGE}`,
        [principal.workspaceId, id, after],
        { prepared: true },
      );
      for (const e of page) {
        const line = e.line_no === null ? null : Number(e.line_no);
        if (!(await send({ row: Number(e.row_no), line, messages: e.messages }))) return;
      }
      if (page.length < ERRORS_PAGE) return;
      after = Number(page[page.length - 1].row_no);
    }
  }

  /** Stops a queued or running import (audited); the rows it committed stay. Its file goes at once. */
  async cancel(principal: Principal, id: string): Promise<ImportSummary> {
    const found = await this.visible(principal, id);
    const actor = await importActor(this.sql, principal.workspaceId, `${principal.kind}:${principal.subjectId}`);
    const cancelled = await this.sql.transaction(async (tx) => {
      // `was`: the status it is stopped in (the row locked first, so no run starts or ends in between).
      const [row] = await tx.rows<ImportRow & { was: ImportRow['status'] }>(
        `UPDATE imports i SET status = 'cancelled', finished_at = now(), updated_at = now()
           FROM (SELECT id, status AS was FROM imports WHERE workspace_id = $1 AND id = $2 FOR UPDATE) b
          WHERE i.workspace_id = $1 AND i.id = $2 AND b.id = i.id AND b.was IN ('queued', 'running') RETURNING i.*, b.was`,
        [principal.workspaceId, id],
      );
      if (!row) return undefined;
      const { was, ...cancelled } = row;
      await auditImport(tx, actor, 'import.cancel', { ...cancelled, status: was });
      return cancelled as ImportRow;
    });
    if (!cancelled) throw new ConflictError(`The import has already ended (${found.status})`);
    await this.sql.rows('DELETE FROM import_chunks WHERE workspace_id = $1 AND import_id = $2', [principal.workspaceId, id]);
    return importSummary(cancelled);
  }

  /** The workspace's latest imports, newest first (the settings page's list). */
  async recent(principal: Principal, limit = 20): Promise<ImportSummary[]> {
    const rows = await this.sql.rows<ImportRow>(
      `SELECT * FROM imports WHERE workspace_id = $1 AND status <> 'uploading' ORDER BY created_at DESC LIMIT $2`,
      [principal.workspaceId, limit],
    );
    return rows.map(importSummary);
  }

  /** The import, if it is the caller's workspace's and the caller may import that object (404, then 403). */
  private async visible(principal: Principal, id: string): Promise<ImportRow> {
    if (!isUUID(id)) throw new BadInputError(ErrorCode.INVALID_ID, `id must be a UUID; got "${id.slice(0, 100)}"`);
    const [row] = await this.sql.rows<ImportRow>(
      `SELECT * FROM imports WHERE workspace_id = $1 AND id = $2 AND status <> 'uploading'`,
      [principal.workspaceId, id],
      { prepared: true },
    );
    if (!row) throw new NotFoundError(`No import with id ${id}`);
    assertCan(principal, row.object, 'create');
    return row;
  }
}

/**
 * For a role that cannot update some fields of the object: each NDJSON line's keys as the
 * upload arrives (a line may span pieces; `undefined` ends the file). A line setting such a
 * field is 403 and the upload is dropped, so nothing is written; a line that is not JSON, one
 * longer than MAX_RECORD_BYTES or with an object of more keys than the object has columns is
 * left to the import, which refuses it as a row (so none is held whole or parsed here).
 */
function ndjsonKeysCheck(principal: Principal, def: ObjectDefinition): (piece: Buffer | undefined) => void {
  const decoder = new StringDecoder('utf8');
  const limit = maxCells(def);
  let rest = '';
  let skipping = false;
  const check = (line: string) => {
    if (!line.trim() || !keysWithin(line, limit)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) assertUpdatableFields(principal, def.object, Object.keys(parsed));
  };
  return (piece) => {
    const lines = (piece ? decoder.write(piece) : decoder.end()).split('\n');
    const last = piece ? lines.pop()! : '';
    if (lines.length) {
      const first = rest + lines[0];
      if (skipping) lines.shift();
      else lines[0] = first;
      skipping = false;
      rest = '';
    }
    lines.forEach(check);
    if (skipping || rest.length + last.length > MAX_RECORD_BYTES) {
      skipping = true;
      rest = '';
    } else rest += last;
  };
}
