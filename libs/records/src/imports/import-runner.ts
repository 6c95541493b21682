import { setImmediate as yieldToEventLoop, setTimeout as waitFor } from 'node:timers/promises';
import { loadConfig } from '#config/config.js';
import { Sql, type SqlTx } from '#database/sql.js';
import { isUUID } from 'class-validator';
import { AppError, BadInputError, ConflictError, ErrorCode, NotFoundError } from '#errors/errors.js';
import { isDatabaseUnavailable } from '#ops/database-unavailable.js';
import { uniqueValueIn } from '../objects/index.js';
import { recordImportCompleted } from '#webhooks/webhook-outbox.js';
import type { DataModel } from '../service/data-model.js';
import type { ObjectDefinition } from '../service/object-definitions.js';
import { columnsToWrite } from '../service/record-input.js';
import { scope, type RecordScope } from '../query/scope.js';
import type { ImportRowColumns, RecordWriter, RowError, Wanted } from '../service/record-writer.js';
import { CHUNK_BYTES, csvHeader, csvItems, ndjsonItems, UnreadableFile, type ImportItem, type ReadFrom } from './import-reader.js';
import type { ImportColumn } from './import-columns.js';
import { auditImport, importActor } from './import-audit.js';
import { importSummary, type ImportRow } from './import-summary.js';

export const IMPORT_TASK = 'import_run';

export interface ImportJob {
  workspaceId: string;
  importId: string;
}

/** Rows per transaction, and the source bytes that end a batch sooner (rows of up to 1 MB each). */
const BATCH_ROWS = 1000;
const BATCH_BYTES = 4 * 1024 * 1024;

/** The import was cancelled, or another worker took it over: stop without touching it. */
class Stopped extends Error {}
/**
 * The import gives up its worker (this process is shutting down, or its turn is over while
 * another workspace waits): it goes on in a new job, from its last committed batch.
 */
class Interrupted extends Error {}
/** The import's custom object was deactivated or deleted: no batch after that is written, and no later run could write one. */
class ObjectGone extends Error {}

interface Prepared {
  rows: ImportRowColumns[];
  errors: RowError[];
  batch: ImportItem[];
}

/**
 * Runs one import job (docs/decisions/0035-imports.md). The file is read again from its chunks
 * and parsed from the start; the rows up to `rows_done` were committed by an earlier run and are
 * skipped unread. Each batch is one transaction: its records and their events, written by the
 * records' one writer (libs/records/src/service/record-writer.ts: set-based INSERT … SELECT FROM
 * jsonb_populate_recordset, one statement per set of columns given, a constraint error isolated
 * row by row under savepoints), its refused rows, and the new `rows_done`, guarded by the old
 * one and by `status = 'running'`, so a run that was cancelled or presumed dead (and taken
 * over) commits nothing more.
 */
export class ImportRunner {
  constructor(
    private readonly sql: Sql,
    private readonly writer: RecordWriter,
    private readonly dataModel: DataModel,
  ) {}

  /** Set on shutdown: running imports stop after their current batch and are queued again. */
  stopping = false;

  /**
   * One run of an import. The import's own account decides whether it goes on, never the
   * job's attempts (docs/decisions/0051-queue-workers-that-outlive-postgres.md): each run's
   * start counts the runs in a row that imported no row before it (`failed_runs`; a run whose
   * worker or database died counts too), and at IMPORT_MAX_FAILED_RUNS the import ends
   * `failed` with the last reason. A run that fails queues the next one itself, at once
   * when it imported rows, else after a wait that doubles, and returns: graphile-worker
   * neither spends an attempt on it nor waits e^attempts seconds before the next. While
   * the database is unreachable, the run's first statement and that queueing are retried
   * until they take, so the import goes on as soon as the database is back.
   */
  async run(job: ImportJob, attempt: { maxAttempts: number }): Promise<void> {
    const { retryBaseMs, maxFailedRuns } = loadConfig().imports;
    const [imp] = await this.onceReachable(() =>
      this.sql.rows<ImportRow & { failed_runs: number; run_error: string | null }>(
        `UPDATE imports SET status = 'running', started_at = coalesce(started_at, now()), updated_at = now(),
                failed_runs = CASE WHEN run_rows_done = rows_done THEN failed_runs + 1 ELSE 0 END,
                run_error = CASE WHEN run_rows_done = rows_done THEN run_error END,
                run_rows_done = rows_done
          WHERE workspace_id = $1 AND id = $2 AND status IN ('queued', 'running') RETURNING *`,
        [job.workspaceId, job.importId],
      ),
    );
    if (!imp) return; // cancelled, or already ended
    if (imp.failed_runs >= maxFailedRuns) {
      const why = imp.run_error ?? 'its worker or the database went away';
      await this.finish(imp, 'failed', `the import stopped: ${imp.failed_runs} runs in a row imported no row; the last one: ${why}`);
      return;
    }
    try {
      await this.runRows(imp);
    } catch (err) {
      if (err instanceof Stopped) return;
      if (err instanceof Interrupted) return this.queueNextRun(imp, attempt.maxAttempts, null, 0);
      await this.queueNextRun(imp, attempt.maxAttempts, (err as Error).message.slice(0, 500), retryBaseMs);
    }
  }

  /**
   * The import's next run, as a new job on its workspace's queue, in one statement with the
   * reason this one stopped: due at once after a run that imported rows, else after
   * `baseMs` doubling with each run in a row that imported none (at most 60 × `baseMs`).
   * Nothing when the import was cancelled meanwhile.
   */
  private async queueNextRun(imp: ImportRow, maxAttempts: number, error: string | null, baseMs: number): Promise<void> {
    await this.onceReachable(() =>
      this.sql.rows(
        `WITH ran AS (
           UPDATE imports SET run_error = coalesce($3, run_error), updated_at = now()
            WHERE workspace_id = $1 AND id = $2 AND status = 'running'
           RETURNING workspace_id, id, CASE WHEN rows_done = run_rows_done THEN failed_runs + 1 ELSE 0 END AS failed_runs
         )
         SELECT graphile_worker.add_job($4, json_build_object('workspaceId', workspace_id, 'importId', id),
                  queue_name => 'imports:' || workspace_id, max_attempts => $5,
                  run_at => now() + CASE WHEN failed_runs = 0 THEN 0 ELSE least($6 * 2 ^ (failed_runs - 1), 60 * $6) END * interval '1 millisecond')
           FROM ran`,
        [imp.workspace_id, imp.id, error, IMPORT_TASK, maxAttempts, baseMs],
      ),
    );
  }

  /**
   * `statement` again (every 100 ms, doubling to 1 s) while the database is unreachable:
   * a job that threw then would end its worker (its outcome cannot be recorded) or, once
   * recorded, wait e^attempts seconds. Thrown as is when the process is stopping (another
   * instance's heartbeat releases the job).
   */
  private async onceReachable<T>(statement: () => Promise<T>): Promise<T> {
    for (let wait = 100; ; wait = Math.min(2 * wait, 1000)) {
      try {
        return await statement();
      } catch (err) {
        if (this.stopping || !isDatabaseUnavailable(err)) throw err;
        await waitFor(wait);
      }
    }
  }

  private async runRows(imp: ImportRow): Promise<void> {
    try {
      await this.runBatches(imp, (await this.dataModel.read(imp.workspace_id)).definition(imp.object));
    } catch (err) {
      if (!(err instanceof NotFoundError || err instanceof ObjectGone)) throw err;
      // Deactivated or deleted since the upload, or during the run: no later run can import either (docs/rest.md "Imports").
      await this.finish(imp, 'failed', `${imp.object} is not an active object of this workspace any more; no row was imported after that`);
    }
  }

  /**
   * In a batch's transaction, before its rows: a custom object's row, locked for share, so
   * deactivating or deleting the object waits for the batch, and a batch after that writes
   * nothing (ObjectGone) instead of records the sweep of a deleted object would miss. The
   * workspace's row first, as the records' foreign key takes it (FOR KEY SHARE): a metadata
   * change locks the workspace, then the object (libs/identity/src/objects.ts), and the
   * batch takes them in the same order, so neither waits on the other in a cycle.
   */
  private async assertObjectActive(tx: SqlTx, imp: ImportRow, def: ObjectDefinition): Promise<void> {
    if (!def.objectId) return;
    await tx.rows('SELECT 1 FROM workspaces WHERE id = $1 FOR KEY SHARE', [imp.workspace_id]);
    const [live] = await tx.rows('SELECT 1 FROM objects WHERE workspace_id = $1 AND id = $2 AND is_active FOR SHARE', [
      imp.workspace_id,
      def.objectId,
    ]);
    if (!live) throw new ObjectGone();
  }

  private async runBatches(imp: ImportRow, def: ObjectDefinition): Promise<void> {
    const keys = imp.mode === 'upsert' ? await this.writer.upsertKeys(def, importScope(imp, def), imp.match ?? undefined) : [];
    const state = { rowsDone: Number(imp.rows_done) };
    const batches = await this.items(imp, def);
    // The row limit is the import's own, fixed when it was accepted (imports older than that: this instance's).
    const { sliceMs, maxRows: ownLimit } = loadConfig().imports;
    const maxRows = imp.max_rows === null || imp.max_rows === undefined ? ownLimit : Number(imp.max_rows);
    const turn = { started: Date.now(), lookAgainAt: 0, sliceMs };
    let batch: ImportItem[] = [];
    let batchBytes = 0;
    let lastBytes = Number(imp.bytes_done);
    let overLimit = false;
    let unreadable: UnreadableFile | undefined;
    // One batch is written while the next is parsed and checked (Postgres works on another core meanwhile);
    // writes stay in file order, each after the previous one committed.
    let writing: Promise<void> = Promise.resolve();
    const flush = async (rows: ImportItem[]) => {
      // Upsert matches inside the writing transaction, after the previous batch committed (a key may repeat across batches).
      const prepared = imp.mode === 'upsert' ? undefined : await this.prepare(imp, def, rows);
      await writing;
      writing = prepared ? this.write(imp, def, prepared, state) : this.writeUpsert(imp, def, keys, rows, state);
      writing.catch(() => undefined); // awaited by the next flush or at the end
    };
    try {
      outer: for await (const items of batches.items) {
        for (const item of items) {
          if (item.row <= state.rowsDone) continue;
          if (item.row > maxRows) {
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
            if (this.stopping || (await this.turnOver(imp, turn))) {
              await writing;
              throw new Interrupted();
            }
          }
        }
      }
    } catch (err) {
      // A quote that never closes: the records before it are imported, then the import fails saying where.
      if (!(err instanceof UnreadableFile)) throw err;
      unreadable = err;
    }
    if (batch.length) await flush(batch);
    await writing;
    if (overLimit) {
      await this.finish(imp, 'failed', `the file holds more than ${maxRows} rows; the first ${maxRows} were imported`);
    } else if (unreadable) await this.finish(imp, 'failed', unreadable.message);
    else await this.finish(imp, 'completed', null, batches.lines());
  }

  /**
   * The file's records from where the last committed batch ended: its byte, row and line
   * (an import resumed after a crash, a deploy or its turn ending), the CSV header row read
   * from the first chunk. An import committed before lines were counted is read from the start,
   * its committed rows skipped.
   */
  private async items(imp: ImportRow, def: ObjectDefinition): Promise<{ items: AsyncGenerator<ImportItem[]>; lines: () => number }> {
    const from: ReadFrom = { bytes: Number(imp.bytes_done), rows: Number(imp.rows_done), lines: Number(imp.lines_done) };
    const resume = from.rows > 0 && from.lines > 0;
    const chunks = this.chunks(imp, resume ? from.bytes : 0);
    let lines = 0;
    const read = { lines: (n: number) => (lines = n) };
    if (imp.format === 'ndjson') return { items: ndjsonItems(chunks, def, resume ? from : undefined, read), lines: () => lines };
    let columns: ImportColumn[] | undefined;
    if (resume) {
      const [first] = await this.sql.rows<{ data: Buffer }>(
        'SELECT data FROM import_chunks WHERE workspace_id = $1 AND import_id = $2 AND seq = 0',
        [imp.workspace_id, imp.id],
        { prepared: true },
      );
      if (!first) throw new Stopped();
      columns = csvHeader(first.data, def, imp.chunks === 1);
    }
    return { items: csvItems(chunks, def, columns ? { columns, from } : undefined, read), lines: () => lines };
  }

  /**
   * Whether the import has held its worker for IMPORTS_SLICE_MS while another workspace's
   * import waits for one (a job no worker has taken, whose workspace runs nothing): then it
   * goes to the back of the line (docs/decisions/0047-import-quotes-and-fairness.md). Looked
   * at no more than once a second.
   */
  private async turnOver(imp: ImportRow, turn: { started: number; lookAgainAt: number; sliceMs: number }): Promise<boolean> {
    const now = Date.now();
    if (!turn.sliceMs || now - turn.started < turn.sliceMs || now < turn.lookAgainAt) return false;
    turn.lookAgainAt = now + Math.min(turn.sliceMs, 1000);
    const [{ waiting }] = await this.sql.rows<{ waiting: boolean }>(
      `SELECT EXISTS (
         SELECT 1 FROM graphile_worker.jobs j
          WHERE j.task_identifier = $1 AND j.locked_at IS NULL AND j.run_at <= now() AND j.attempts < j.max_attempts
            AND j.queue_name IS DISTINCT FROM $2
            AND NOT EXISTS (SELECT 1 FROM graphile_worker.jobs k WHERE k.queue_name = j.queue_name AND k.locked_at IS NOT NULL)
       ) AS waiting`,
      [IMPORT_TASK, `imports:${imp.workspace_id}`],
    );
    return waiting;
  }

  /** The file's chunks in order from byte `from`, one statement each; a missing chunk means the import was cancelled (its chunks go then). */
  private async *chunks(imp: ImportRow, from = 0): AsyncGenerator<Buffer> {
    for (let seq = Math.floor(from / CHUNK_BYTES); seq < imp.chunks; seq++) {
      const [chunk] = await this.sql.rows<{ data: Buffer }>(
        'SELECT data FROM import_chunks WHERE workspace_id = $1 AND import_id = $2 AND seq = $3',
        [imp.workspace_id, imp.id, seq],
        { prepared: true },
      );
      if (!chunk) throw new Stopped();
      yield seq * CHUNK_BYTES < from ? chunk.data.subarray(from - seq * CHUNK_BYTES) : chunk.data;
    }
  }

  /** A batch checked: the rows to write (as recordset columns) and the rows refused so far. */
  private async prepare(imp: ImportRow, def: ObjectDefinition, batch: ImportItem[]): Promise<Prepared> {
    const errors: RowError[] = [];
    const ready: ImportRowColumns[] = [];
    for (const [i, item] of batch.entries()) {
      // Checking a row takes tens of µs: requests of this process get a turn every few ms.
      if (i % 200 === 199) await yieldToEventLoop();
      if (!item.body) {
        errors.push({ row: item.row, messages: item.problems ?? ['unreadable'] });
        continue;
      }
      try {
        ready.push({ row: item.row, columns: columnsToWrite(def, item.body, 'create') });
      } catch (err) {
        if (!(err instanceof AppError) || err.status !== 400) throw err;
        errors.push({ row: item.row, messages: err.messages });
      }
    }
    return { rows: await this.writer.withLiveLinks(this.sql, def, importScope(imp, def), ready, errors), errors, batch };
  }

  private async write(
    imp: ImportRow,
    def: ObjectDefinition,
    { rows, errors, batch }: Prepared,
    state: { rowsDone: number },
  ): Promise<void> {
    const last = batch[batch.length - 1];
    const s = importScope(imp, def);
    await this.sql.transaction(async (tx) => {
      await this.assertObjectActive(tx, imp, def);
      const created = await this.writer.insertImported(tx, def, s, rows, errors, imp.record_events);
      await this.saveErrors(tx, imp, errors, batch);
      await this.advance(tx, imp, last, state, { created: created.count, updated: 0, unchanged: 0, failed: errors.length });
      await this.writer.recordChanges(tx, s, created.changes);
    });
    state.rowsDone = last.row;
  }

  /** Refused rows of a batch, each with the line of the file it starts on, in the batch's transaction. */
  private async saveErrors(tx: SqlTx, imp: ImportRow, errors: RowError[], batch: ImportItem[]): Promise<void> {
    if (!errors.length) return;
    const lines = new Map(batch.map((item) => [item.row, item.line]));
    await tx.rows(
      `INSERT INTO import_errors (workspace_id, import_id, row_no, line_no, messages)
       SELECT $1, $2, e.row_no, e.line_no, e.messages FROM jsonb_to_recordset($3::jsonb) AS e(row_no bigint, line_no bigint, messages jsonb)
       ON CONFLICT DO NOTHING`,
      [imp.workspace_id, imp.id, JSON.stringify(errors.map((e) => ({ row_no: e.row, line_no: lines.get(e.row), messages: e.messages })))],
    );
  }

  /** The resume point and counters, moved in the batch's transaction; guarded so a cancelled or taken-over run commits nothing. */
  private async advance(
    tx: SqlTx,
    imp: ImportRow,
    last: ImportItem,
    state: { rowsDone: number },
    n: { created: number; updated: number; unchanged: number; failed: number },
  ): Promise<void> {
    const moved = await tx.rows(
      `UPDATE imports SET rows_done = $3, bytes_done = $4, lines_done = $10, created = created + $5, updated = updated + $6,
              unchanged = unchanged + $7, failed = failed + $8, updated_at = now()
        WHERE workspace_id = $1 AND id = $2 AND rows_done = $9 AND status = 'running' RETURNING id`,
      [imp.workspace_id, imp.id, last.row, last.bytes, n.created, n.updated, n.unchanged, n.failed, state.rowsDone, last.lastLine],
    );
    if (!moved.length) throw new Stopped();
  }

  /**
   * An upsert batch, in one transaction: each row matches a live record by \`id\`, then by the
   * object's unique fields (or only \`match\`), as REST upsert does (RecordWriter.matches). A
   * match is updated with the columns the row gives, and only when a value differs, so the
   * same file imported again writes nothing; no match is created. A row matching the record
   * an earlier row of the same batch matched, or two records at once, is refused.
   */
  private async writeUpsert(
    imp: ImportRow,
    def: ObjectDefinition,
    keys: { field: string; normalize: string }[],
    batch: ImportItem[],
    state: { rowsDone: number },
  ): Promise<void> {
    const errors: RowError[] = [];
    const refuse = (row: number, err: unknown) => {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      errors.push({ row, messages: err.messages });
    };
    const items = batch.filter((item) => {
      if (!item.body) errors.push({ row: item.row, messages: item.problems ?? ['unreadable'] });
      return Boolean(item.body);
    });
    const wanted = items.map((item): Wanted => {
      const body = item.body!;
      const id = (imp.match === null || imp.match === 'id') && typeof body.id === 'string' && isUUID(body.id) ? body.id : undefined;
      const values = keys.map((k) => ({ ...k, raw: uniqueValueIn(body, k.field) })).filter((k) => k.raw !== undefined);
      return { id, values: values as Wanted['values'] };
    });
    const last = batch[batch.length - 1];
    const s = importScope(imp, def);
    await this.sql.transaction(async (tx) => {
      await this.assertObjectActive(tx, imp, def);
      let found: (string | undefined | null)[];
      try {
        found = await this.writer.matches(tx, def, s, wanted);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        // One row's values match two records: find which, one row at a time.
        found = [];
        for (const [i, w] of wanted.entries()) {
          try {
            found.push((await this.writer.matches(tx, def, s, [w]))[0]);
          } catch (one) {
            refuse(items[i].row, one);
            found.push(null);
          }
        }
      }
      const creates: ImportRowColumns[] = [];
      const updates: (ImportRowColumns & { id: string })[] = [];
      const matchedBy = new Map<string, number>();
      items.forEach((item, i) => {
        const id = found[i];
        if (id === null) return;
        try {
          if (id === undefined) {
            if (imp.match !== null && !wanted[i].id && !wanted[i].values.length)
              throw new BadInputError(ErrorCode.VALIDATION_FAILED, `the match field ${imp.match} is missing`);
            creates.push({ row: item.row, columns: columnsToWrite(def, item.body, 'create') });
            return;
          }
          const earlier = matchedBy.get(id);
          if (earlier !== undefined)
            throw new ConflictError(`matches the ${def.singular} ${id}, as row ${earlier} does; a record is upserted once per batch`);
          matchedBy.set(id, item.row);
          const { id: given, ...rest } = item.body!;
          if (given !== undefined && given !== id)
            throw new ConflictError(`id ${String(given)} is not the ${def.singular} ${id} that ${imp.match ?? 'its unique values'} match`);
          updates.push({ row: item.row, id, columns: columnsToWrite(def, rest, 'update') });
        } catch (err) {
          refuse(item.row, err);
        }
      });
      const linkedCreates = await this.writer.withLiveLinks(this.sql, def, s, creates, errors);
      const linkedUpdates = await this.writer.withLiveLinks(this.sql, def, s, updates, errors);
      const created = await this.writer.insertImported(tx, def, s, linkedCreates, errors, imp.record_events);
      const updated = await this.writer.updateImported(tx, def, s, linkedUpdates, errors, imp.record_events);
      await this.saveErrors(tx, imp, errors, batch);
      await this.advance(tx, imp, last, state, {
        created: created.count,
        updated: updated.changed,
        unchanged: updated.unchanged,
        failed: errors.length,
      });
      await this.writer.recordChanges(tx, s, [...created.changes, ...updated.changes]);
    });
    state.rowsDone = last.row;
  }

  /** Ends the import (unless it was cancelled meanwhile), with its one `import.completed` event and its audit entry; its chunks go. */
  private async finish(imp: ImportRow, status: 'completed' | 'failed', error: string | null, lines?: number): Promise<void> {
    // Before the import shows as ended: the credential that started it, reading its records
    // after that, reads them through a replica only once the replica has every batch.
    if (imp.created_by) await this.writer.wroteFor(imp.workspace_id, imp.created_by).catch(() => undefined);
    const actor = await importActor(this.sql, imp.workspace_id, imp.created_by);
    await this.sql.transaction(async (tx) => {
      const [ended] = await tx.rows<ImportRow>(
        `UPDATE imports SET status = $3, error = $4, finished_at = now(), updated_at = now(),
                bytes_done = CASE WHEN $3 = 'completed' THEN bytes ELSE bytes_done END, lines_done = coalesce($5, lines_done)
          WHERE workspace_id = $1 AND id = $2 AND status = 'running' RETURNING *`,
        [imp.workspace_id, imp.id, status, error, lines ?? null],
      );
      if (!ended) return;
      await recordImportCompleted(tx, imp.workspace_id, importSummary(ended));
      await auditImport(tx, actor, 'import.end', ended);
    });
    await this.sql.rows('DELETE FROM import_chunks WHERE workspace_id = $1 AND import_id = $2', [imp.workspace_id, imp.id]);
  }
}

/** The scope of an import's statements: its workspace's records of its object (libs/records/src/query/scope.ts). */
function importScope(imp: ImportRow, def: ObjectDefinition): RecordScope {
  return scope({ workspaceId: imp.workspace_id }, def);
}
