import { StringDecoder } from 'node:string_decoder';
import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { isUUID } from 'class-validator';
import { assertCan, can, type Principal } from '#auth/principal.js';
import { assertUpdatableFields, fieldAccess } from '#auth/field-access.js';
import { loadConfig } from '#config/config.js';
import { Sql } from '#database/sql.js';
import { AppError, BadInputError, ConflictError, ErrorCode, NotFoundError } from '#errors/errors.js';
import { DataModel } from '../records/data-model.js';
import type { ObjectDefinition } from '../records/object-definitions.js';
import { RecordsService } from '../records/records.service.js';
import { csvHeader } from './import-reader.js';
import { IMPORT_TASK } from './import-runner.js';
import { importSummary, type ImportRow, type ImportSummary } from './import-summary.js';

/** The file is kept in chunks of this size (the last one shorter). */
export const CHUNK_BYTES = 1024 * 1024;
/**
 * graphile-worker's attempts of one import job. The import's own count of runs that imported
 * nothing decides when it ends `failed` (import-runner.ts); an import whose job spent them
 * all (its workers died) gets a new job from the heartbeat (stranded-imports.ts).
 */
export const MAX_ATTEMPTS = 5;
/**
 * Uploads streaming into one process at once: each holds up to a chunk (1 MB) in memory, so
 * this bounds what uploads take of the records API's memory; one more is 503 with Retry-After.
 */
export const MAX_UPLOADS = 4;
/** Refused rows per page of `GET /rest/imports/{id}/errors`, read by keyset. */
const ERRORS_PAGE = 1000;

const FORMATS: Record<string, 'csv' | 'ndjson'> = { 'text/csv': 'csv', 'application/x-ndjson': 'ndjson' };
const PARAMS = new Set(['object', 'mode', 'match', 'events']);

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

const tooLarge = (max: number) => new AppError(413, ErrorCode.PAYLOAD_TOO_LARGE, [`The file is larger than the ${max}-byte import limit`]);

/**
 * Imports (docs/rest.md "Imports"; docs/decisions/0035-imports.md): the upload streamed into
 * `import_chunks` as it arrives, then one job on the queue; status, refused rows and cancel.
 * Every statement is scoped by the caller's workspace: another workspace's import is missing.
 */
@Injectable()
export class ImportsService {
  private uploads = 0;

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
   * transaction that closes the upload; an upload that fails leaves nothing behind.
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
    const max = loadConfig().imports.maxBytes;
    if (declaredLength !== undefined && declaredLength > max) throw tooLarge(max);
    if (this.uploads >= MAX_UPLOADS) {
      throw new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, [
        `${MAX_UPLOADS} uploads are already streaming into this instance; retry shortly`,
      ]);
    }
    this.uploads++;
    try {
      return await this.store(principal, request, def, body, max, createdBy);
    } finally {
      this.uploads--;
    }
  }

  private async store(
    principal: Principal,
    request: ImportRequest,
    def: ObjectDefinition,
    body: AsyncIterable<Buffer>,
    max: number,
    createdBy: string,
  ): Promise<ImportSummary> {
    let id: string | undefined;
    let seq = 0;
    let total = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const protectedFields = fieldAccess(principal, def.object) && ndjsonKeysCheck(principal, def.object);
    const write = async (chunk: Buffer) => {
      if (id === undefined) {
        // A column the role cannot update is 403 before anything is stored (docs/rest.md, "Imports").
        if (request.format === 'csv')
          assertUpdatableFields(
            principal,
            def.object,
            csvHeader(chunk, def).map((c) => c.path[0]),
          );
        const [row] = await this.sql.rows<{ id: string }>(
          `INSERT INTO imports (workspace_id, object, mode, match, format, record_events, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
          [principal.workspaceId, def.object, request.mode, request.match, request.format, request.recordEvents, createdBy],
        );
        id = row.id;
      }
      await this.sql.rows('INSERT INTO import_chunks (workspace_id, import_id, seq, data) VALUES ($1, $2, $3, $4)', [
        principal.workspaceId,
        id,
        seq++,
        chunk,
      ]);
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
          await write(all.subarray(0, CHUNK_BYTES));
          pending = [all.subarray(CHUNK_BYTES)];
          pendingBytes -= CHUNK_BYTES;
        }
      }
      if (total === 0) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'the file is empty');
      if (protectedFields && request.format === 'ndjson') protectedFields(undefined);
      if (pendingBytes) await write(Buffer.concat(pending, pendingBytes));
      const uploaded = id!;
      const [queued] = await this.sql.transaction(async (tx) => {
        const rows = await tx.rows<ImportRow>(
          `UPDATE imports SET status = 'queued', bytes = $3, chunks = $4, updated_at = now()
            WHERE workspace_id = $1 AND id = $2 AND status = 'uploading' RETURNING *`,
          [principal.workspaceId, uploaded, total, seq],
        );
        // One queue per workspace: its imports run one at a time, in order, on any instance.
        await tx.rows(
          `SELECT graphile_worker.add_job($1, json_build_object('workspaceId', $2::uuid, 'importId', $3::uuid),
                                          queue_name => 'imports:' || $2, max_attempts => $4)`,
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

  /** Refused rows in row order, a page at a time (constant memory at any count); `send` resolves when the line may be followed. */
  async errors(principal: Principal, id: string, send: (line: string) => Promise<boolean>): Promise<void> {
    await this.visible(principal, id);
    let after = 0;
    for (;;) {
      const page = await this.sql.rows<{ row_no: string; messages: string[] }>(
        `SELECT row_no, messages FROM import_errors WHERE workspace_id = $1 AND import_id = $2 AND row_no > $3
          ORDER BY row_no LIMIT ${ERRORS_PAGE}`,
        [principal.workspaceId, id, after],
        { prepared: true },
      );
      for (const e of page) if (!(await send(`${JSON.stringify({ row: Number(e.row_no), messages: e.messages })}\n`))) return;
      if (page.length < ERRORS_PAGE) return;
      after = Number(page[page.length - 1].row_no);
    }
  }

  /** Stops a queued or running import; the rows it committed stay. Its file goes at once. */
  async cancel(principal: Principal, id: string): Promise<ImportSummary> {
    const found = await this.visible(principal, id);
    const [cancelled] = await this.sql.rows<ImportRow>(
      `UPDATE imports SET status = 'cancelled', finished_at = now(), updated_at = now()
        WHERE workspace_id = $1 AND id = $2 AND status IN ('queued', 'running') RETURNING *`,
      [principal.workspaceId, id],
    );
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
 * field is 403 and the upload is dropped, so nothing is written; a line that is not JSON is
 * left to the import, which refuses it as a row.
 */
function ndjsonKeysCheck(principal: Principal, object: string): (piece: Buffer | undefined) => void {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  const check = (line: string) => {
    if (!line.trim()) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) assertUpdatableFields(principal, object, Object.keys(parsed));
  };
  return (piece) => {
    const text = rest + (piece ? decoder.write(piece) : decoder.end());
    const lines = text.split('\n');
    rest = piece ? lines.pop()! : '';
    lines.forEach(check);
  };
}
