import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { ImportSettings } from '#config/config.js';
import { Sql, type SqlTx } from '#database/sql.js';
import { AppError } from '#errors/errors.js';
import { composite } from '#records/objects/index.js';
import { recordEvents, recordImportCompleted } from '#webhooks/webhook-outbox.js';
import type { DataModel } from '../records/data-model.js';
import type { AnyRecord, ObjectDefinition } from '../records/object-definitions.js';
import type { RecordsService } from '../records/records.service.js';
import { csvItems, ndjsonItems, type ImportItem } from './import-reader.js';
import { importSummary, type ImportRow } from './import-summary.js';

export const IMPORT_TASK = 'import_run';

export interface ImportJob {
  workspaceId: string;
  importId: string;
}

/** Rows per transaction, and the source bytes that end a batch sooner (rows of up to 1 MB each). */
const BATCH_ROWS = 1000;
const BATCH_BYTES = 4 * 1024 * 1024;

/** Database refusals that belong to one row (unique, foreign key, check, bad value), isolated row by row. */
const ROW_ERROR_CLASSES = ['23', '22'];

/** The import was cancelled, or another worker took it over: stop without touching it. */
class Stopped extends Error {}
/** This process is shutting down: the import goes on in a new job, from its last committed batch. */
class Interrupted extends Error {}

interface Prepared {
  rows: Ready[];
  errors: { row: number; messages: string[] }[];
  last: ImportItem;
}

/** A row ready to write: its position and its columns as `jsonb_populate_recordset` takes them. */
interface Ready {
  row: number;
  columns: Record<string, unknown>;
}

/**
 * Runs one import job (docs/decisions/0032-imports.md). The file is read again from its chunks
 * and parsed from the start; the rows up to `rows_done` were committed by an earlier run and are
 * skipped unread. Each batch is one transaction: its records (set-based INSERT … SELECT FROM
 * jsonb_populate_recordset, one statement per set of columns given), its refused rows, and
 * the new `rows_done`, guarded by the old one and by `status = 'running'`, so a run that was
 * cancelled or presumed dead (and taken over) commits nothing more. A batch whose INSERT fails
 * on a constraint is written again row by row, each under a savepoint, to isolate the rows at fault.
 */
export class ImportRunner {
  constructor(
    private readonly sql: Sql,
    private readonly records: RecordsService,
    private readonly dataModel: DataModel,
    private readonly settings: ImportSettings,
  ) {}

  /** Set on shutdown: running imports stop after their current batch and are queued again. */
  stopping = false;

  async run(job: ImportJob, attempt: { attempts: number; maxAttempts: number }): Promise<void> {
    const [imp] = await this.sql.rows<ImportRow>(
      `UPDATE imports SET status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
        WHERE workspace_id = $1 AND id = $2 AND status IN ('queued', 'running') RETURNING *`,
      [job.workspaceId, job.importId],
    );
    if (!imp) return; // cancelled, or already ended
    try {
      await this.runRows(imp);
    } catch (err) {
      if (err instanceof Stopped) return;
      if (err instanceof Interrupted) {
        await this.sql.rows(
          `SELECT graphile_worker.add_job($1, json_build_object('workspaceId', $2::uuid, 'importId', $3::uuid),
                                          queue_name => 'imports:' || $2, max_attempts => $4)`,
          [IMPORT_TASK, imp.workspace_id, imp.id, attempt.maxAttempts],
        );
        return;
      }
      // graphile-worker retries with backoff; the last attempt ends the import as failed.
      if (attempt.attempts >= attempt.maxAttempts) await this.finish(imp, 'failed', `the import stopped: ${(err as Error).message}`);
      throw err;
    }
  }

  private async runRows(imp: ImportRow): Promise<void> {
    const def = (await this.dataModel.read(imp.workspace_id)).definition(imp.object);
    const chunks = this.chunks(imp);
    const batches = imp.format === 'csv' ? csvItems(chunks, def) : ndjsonItems(chunks);
    const state = { rowsDone: Number(imp.rows_done) };
    let batch: ImportItem[] = [];
    let batchBytes = 0;
    let lastBytes = Number(imp.bytes_done);
    let overLimit = false;
    // One batch is written while the next is parsed and checked (Postgres works on another core meanwhile);
    // writes stay in file order, each after the previous one committed.
    let writing: Promise<void> = Promise.resolve();
    const flush = async (rows: ImportItem[]) => {
      const prepared = await this.prepare(imp, def, rows);
      await writing;
      writing = this.write(imp, def, prepared, state);
      writing.catch(() => undefined); // awaited by the next flush or at the end
    };
    outer: for await (const items of batches) {
      for (const item of items) {
        if (item.row <= state.rowsDone) continue;
        if (item.row > this.settings.maxRows) {
          overLimit = true;
          break outer;
        }
        batch.push(item);
        batchBytes += item.bytes - lastBytes;
        lastBytes = item.bytes;
        if (batch.length >= BATCH_ROWS || batchBytes >= BATCH_BYTES) {
          await flush(batch);
          batch = [];
          batchBytes = 0;
          // Other requests and imports of this process get their turn between batches.
          await yieldToEventLoop();
          if (this.stopping) {
            await writing;
            throw new Interrupted();
          }
        }
      }
    }
    if (batch.length) await flush(batch);
    await writing;
    if (overLimit) {
      await this.finish(
        imp,
        'failed',
        `the file holds more than ${this.settings.maxRows} rows; the first ${this.settings.maxRows} were imported`,
      );
    } else await this.finish(imp, 'completed', null);
  }

  /** The file's chunks in order, one statement each; a missing chunk means the import was cancelled (its chunks go then). */
  private async *chunks(imp: ImportRow): AsyncGenerator<Buffer> {
    for (let seq = 0; seq < imp.chunks; seq++) {
      const [chunk] = await this.sql.rows<{ data: Buffer }>(
        'SELECT data FROM import_chunks WHERE workspace_id = $1 AND import_id = $2 AND seq = $3',
        [imp.workspace_id, imp.id, seq],
        { prepared: true },
      );
      if (!chunk) throw new Stopped();
      yield chunk.data;
    }
  }

  /** A batch checked: the rows to write (as recordset columns) and the rows refused so far. */
  private async prepare(imp: ImportRow, def: ObjectDefinition, batch: ImportItem[]): Promise<Prepared> {
    const errors: { row: number; messages: string[] }[] = [];
    const ready: Ready[] = [];
    for (const [i, item] of batch.entries()) {
      // Checking a row takes tens of µs: requests of this process get a turn every few ms.
      if (i % 200 === 199) await yieldToEventLoop();
      if (!item.body) {
        errors.push({ row: item.row, messages: item.problems ?? ['unreadable'] });
        continue;
      }
      try {
        ready.push({ row: item.row, columns: this.records.checkBody(def, item.body, 'create') });
      } catch (err) {
        if (!(err instanceof AppError) || err.status !== 400) throw err;
        errors.push({ row: item.row, messages: err.messages });
      }
    }
    const linked = await this.withLiveLinks(imp.workspace_id, def, ready, errors);
    const rows = linked.map((r) => ({ row: r.row, columns: recordsetColumns(def, r.columns) }));
    return { rows, errors, last: batch[batch.length - 1] };
  }

  private async write(imp: ImportRow, def: ObjectDefinition, { rows, errors, last }: Prepared, state: { rowsDone: number }): Promise<void> {
    await this.sql.transaction(async (tx) => {
      const created = await this.insert(tx, imp, def, rows, errors);
      if (errors.length) {
        await tx.rows(
          `INSERT INTO import_errors (workspace_id, import_id, row_no, messages)
           SELECT $1, $2, e.row_no, e.messages FROM jsonb_to_recordset($3::jsonb) AS e(row_no bigint, messages jsonb)
           ON CONFLICT DO NOTHING`,
          [imp.workspace_id, imp.id, JSON.stringify(errors.map((e) => ({ row_no: e.row, messages: e.messages })))],
        );
      }
      const moved = await tx.rows(
        `UPDATE imports SET rows_done = $3, bytes_done = $4, created = created + $5, failed = failed + $6, updated_at = now()
          WHERE workspace_id = $1 AND id = $2 AND rows_done = $7 AND status = 'running' RETURNING id`,
        [imp.workspace_id, imp.id, last.row, last.bytes, created.count, errors.length, state.rowsDone],
      );
      if (!moved.length) throw new Stopped();
      if (imp.record_events && created.records.length) {
        await recordEvents(
          tx,
          imp.workspace_id,
          created.records.map((record) => ({ object: def.object, action: 'created', record: record as Record<string, unknown> })),
        );
      }
    });
    state.rowsDone = last.row;
  }

  /** One INSERT per set of columns given; on a constraint error, the same rows one by one. */
  private async insert(
    tx: SqlTx,
    imp: ImportRow,
    def: ObjectDefinition,
    rows: Ready[],
    errors: { row: number; messages: string[] }[],
  ): Promise<{ count: number; records: AnyRecord[] }> {
    const groups = new Map<string, Ready[]>();
    for (const r of rows) {
      const key = Object.keys(r.columns).sort().join(',');
      const group = groups.get(key);
      if (group) group.push(r);
      else groups.set(key, [r]);
    }
    let count = 0;
    const records: AnyRecord[] = [];
    for (const [key, group] of groups) {
      const columns = key ? key.split(',') : [];
      const sql = `INSERT INTO ${def.schema.table} (workspace_id${columns.map((c) => `, ${c}`).join('')})
                   SELECT $1${columns.map((c) => `, r.${c}`).join('')} FROM jsonb_populate_recordset(NULL::${def.schema.table}, $2::jsonb) r
                   RETURNING ${imp.record_events ? def.columns.join(', ') : 'id'}`;
      await tx.rows('SAVEPOINT import_batch');
      try {
        const written = await tx.rows(sql, [imp.workspace_id, JSON.stringify(group.map((r) => r.columns))]);
        await tx.rows('RELEASE SAVEPOINT import_batch');
        count += written.length;
        if (imp.record_events) records.push(...written.map((row) => def.toRecord(row)));
        continue;
      } catch (err) {
        if (!isRowError(err)) throw err;
        await tx.rows('ROLLBACK TO SAVEPOINT import_batch');
      }
      for (const r of group) {
        await tx.rows('SAVEPOINT import_row');
        try {
          const written = await tx.rows(sql, [imp.workspace_id, JSON.stringify([r.columns])]);
          await tx.rows('RELEASE SAVEPOINT import_row');
          count += written.length;
          if (imp.record_events) records.push(...written.map((row) => def.toRecord(row)));
        } catch (err) {
          if (!isRowError(err)) throw err;
          await tx.rows('ROLLBACK TO SAVEPOINT import_row');
          errors.push({ row: r.row, messages: [rowErrorMessage(err as PgError, def)] });
        }
      }
    }
    return { count, records };
  }

  /** Rows whose links name no live record of the workspace are refused (as REST create refuses them); one query per relation. */
  private async withLiveLinks(
    workspaceId: string,
    def: ObjectDefinition,
    ready: Ready[],
    errors: { row: number; messages: string[] }[],
  ): Promise<Ready[]> {
    let kept = ready;
    for (const { field, targetTable, targetSingular } of def.relations) {
      const ids = [...new Set(kept.map((r) => r.columns[field.column]).filter((id): id is string => typeof id === 'string'))];
      if (!ids.length) continue;
      const found = new Set(
        (
          await this.sql.rows<{ id: string }>(
            `SELECT id FROM ${targetTable} WHERE workspace_id = $1 AND id = ANY($2::uuid[]) AND deleted_at IS NULL`,
            [workspaceId, ids],
          )
        ).map((r) => r.id),
      );
      kept = kept.filter((r) => {
        const id = r.columns[field.column];
        if (typeof id !== 'string' || found.has(id)) return true;
        errors.push({ row: r.row, messages: [`${field.name}: no ${targetSingular} with id ${id} in this workspace`] });
        return false;
      });
    }
    return kept;
  }

  /** Ends the import (unless it was cancelled meanwhile), with its one `import.completed` event; its chunks go. */
  private async finish(imp: ImportRow, status: 'completed' | 'failed', error: string | null): Promise<void> {
    await this.sql.transaction(async (tx) => {
      const [ended] = await tx.rows<ImportRow>(
        `UPDATE imports SET status = $3, error = $4, finished_at = now(), updated_at = now(),
                bytes_done = CASE WHEN $3 = 'completed' THEN bytes ELSE bytes_done END
          WHERE workspace_id = $1 AND id = $2 AND status = 'running' RETURNING *`,
        [imp.workspace_id, imp.id, status, error],
      );
      if (ended) await recordImportCompleted(tx, imp.workspace_id, importSummary(ended));
    });
    await this.sql.rows('DELETE FROM import_chunks WHERE workspace_id = $1 AND import_id = $2', [imp.workspace_id, imp.id]);
  }
}

interface PgError {
  code?: string;
  constraint?: string;
  detail?: string;
  message: string;
}

function isRowError(err: unknown): boolean {
  const code = (err as PgError)?.code;
  return typeof code === 'string' && ROW_ERROR_CLASSES.includes(code.slice(0, 2));
}

/** A database refusal of one row, said as REST says it; never the statement or another workspace's data. */
function rowErrorMessage(err: PgError, def: ObjectDefinition): string {
  if (err.code === '23505') {
    return err.constraint?.endsWith('_pkey')
      ? `a ${def.singular} with this id already exists`
      : `a ${def.singular} with this value already exists (${err.constraint})`;
  }
  if (err.code === '23503') {
    const relation = def.relations.find((r) => err.detail?.includes(r.field.column));
    return relation
      ? `${relation.field.name}: no ${relation.targetSingular} with this id in this workspace`
      : 'a linked record does not exist';
  }
  return `the database refused the row: ${err.message.slice(0, 200)}`;
}

/**
 * Column values as `jsonb_populate_recordset` reads them: the JSON columns (lists, custom
 * values) as JSON, where a REST write passes them as JSON text.
 */
function recordsetColumns(def: ObjectDefinition, columns: Record<string, unknown>): Record<string, unknown> {
  for (const column of jsonColumnsOf(def)) {
    const value = columns[column];
    if (typeof value === 'string') columns[column] = JSON.parse(value);
  }
  return columns;
}

const jsonColumns = new Map<string, string[]>();
function jsonColumnsOf(def: ObjectDefinition): string[] {
  let found = jsonColumns.get(def.object);
  if (!found) {
    found = ['custom'];
    for (const field of def.declaration.fields) {
      if (field.kind !== 'composite') continue;
      for (const sub of composite(field.type).subFields)
        if (sub.kind === 'textList' || sub.kind === 'linkList') found.push(field.columns[sub.name]);
    }
    jsonColumns.set(def.object, found);
  }
  return found;
}
