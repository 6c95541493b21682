import { setImmediate as yieldToEventLoop, setTimeout as waitFor } from 'node:timers/promises';
import { loadConfig } from '#config/config.js';
import { Sql, type SqlTx } from '#database/sql.js';
import { isUUID } from 'class-validator';
import { AppError, BadInputError, ConflictError, ErrorCode, NotFoundError } from '#errors/errors.js';
import { isDatabaseUnavailable } from '#ops/database-unavailable.js';
import { composite, compositeSubFields, fullComposite, ownValue, uniqueValueIn } from '#records/objects/index.js';
import { changedFields, recordEvents, recordImportCompleted, type RecordChange } from '#webhooks/webhook-outbox.js';
import type { DataModel } from '../records/data-model.js';
import type { AnyRecord, ObjectDefinition } from '../records/object-definitions.js';
import { scopeOf } from '../records/record-definition.js';
import type { RecordsService } from '../records/records.service.js';
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

/** Database refusals that belong to one row (unique, foreign key, check, bad value), isolated row by row. */
const ROW_ERROR_CLASSES = ['23', '22'];

/** The import was cancelled, or another worker took it over: stop without touching it. */
class Stopped extends Error {}
/**
 * The import gives up its worker (this process is shutting down, or its turn is over while
 * another workspace waits): it goes on in a new job, from its last committed batch.
 */
class Interrupted extends Error {}
/** The import's custom object was deactivated or deleted: no batch after that is written, and no later run could write one. */
class ObjectGone extends Error {}

type RowError = { row: number; messages: string[] };

interface Prepared {
  rows: Ready[];
  errors: { row: number; messages: string[] }[];
  batch: ImportItem[];
}

/** A row ready to write: its position and its columns as `jsonb_populate_recordset` takes them. */
interface Ready {
  row: number;
  columns: Record<string, unknown>;
}

/**
 * Runs one import job (docs/decisions/0035-imports.md). The file is read again from its chunks
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
    const keys = imp.mode === 'upsert' ? await this.records.upsertKeys(def, imp.workspace_id, imp.match ?? undefined) : [];
    const state = { rowsDone: Number(imp.rows_done) };
    const batches = await this.items(imp, def);
    // Read at each run, as the upload limit is at each upload.
    const { maxRows, sliceMs } = loadConfig().imports;
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
    return { rows, errors, batch };
  }

  private async write(
    imp: ImportRow,
    def: ObjectDefinition,
    { rows, errors, batch }: Prepared,
    state: { rowsDone: number },
  ): Promise<void> {
    const last = batch[batch.length - 1];
    await this.sql.transaction(async (tx) => {
      await this.assertObjectActive(tx, imp, def);
      const created = await this.insert(tx, imp, def, rows, errors);
      await this.saveErrors(tx, imp, errors, batch);
      await this.advance(tx, imp, last, state, { created: created.count, updated: 0, unchanged: 0, failed: errors.length });
      if (imp.record_events && created.records.length) {
        await recordEvents(
          tx,
          imp.workspace_id,
          created.records.map((record) => ({
            object: def.object,
            singular: def.singular,
            action: 'created',
            record: record as Record<string, unknown>,
          })),
        );
      }
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
   * object's unique fields (or only \`match\`), as REST upsert does (RecordsService.matches). A
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
    const wanted = items.map((item) => {
      const body = item.body!;
      const id = (imp.match === null || imp.match === 'id') && typeof body.id === 'string' && isUUID(body.id) ? body.id : undefined;
      const values = keys.map((k) => ({ ...k, raw: uniqueValueIn(body, k.field) })).filter((k) => k.raw !== undefined);
      return { id, values: values as { field: string; normalize: string; raw: string }[] };
    });
    const last = batch[batch.length - 1];
    await this.sql.transaction(async (tx) => {
      await this.assertObjectActive(tx, imp, def);
      let found: (string | undefined | null)[];
      try {
        found = await this.records.matches(tx, def, imp.workspace_id, wanted);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        // One row's values match two records: find which, one row at a time.
        found = [];
        for (const [i, w] of wanted.entries()) {
          try {
            found.push((await this.records.matches(tx, def, imp.workspace_id, [w]))[0]);
          } catch (one) {
            refuse(items[i].row, one);
            found.push(null);
          }
        }
      }
      const creates: Ready[] = [];
      const updates: (Ready & { id: string })[] = [];
      const matchedBy = new Map<string, number>();
      items.forEach((item, i) => {
        const id = found[i];
        if (id === null) return;
        try {
          if (id === undefined) {
            if (imp.match !== null && !wanted[i].id && !wanted[i].values.length)
              throw new BadInputError(ErrorCode.VALIDATION_FAILED, `the match field ${imp.match} is missing`);
            creates.push({ row: item.row, columns: this.records.checkBody(def, item.body, 'create') });
            return;
          }
          const earlier = matchedBy.get(id);
          if (earlier !== undefined)
            throw new ConflictError(`matches the ${def.singular} ${id}, as row ${earlier} does; a record is upserted once per batch`);
          matchedBy.set(id, item.row);
          const { id: given, ...rest } = item.body!;
          if (given !== undefined && given !== id)
            throw new ConflictError(`id ${String(given)} is not the ${def.singular} ${id} that ${imp.match ?? 'its unique values'} match`);
          updates.push({ row: item.row, id, columns: this.records.checkBody(def, rest, 'update') });
        } catch (err) {
          refuse(item.row, err);
        }
      });
      const linkedCreates = await this.withLiveLinks(imp.workspace_id, def, creates, errors);
      const linkedUpdates = (await this.withLiveLinks(imp.workspace_id, def, updates, errors)) as (Ready & { id: string })[];
      const created = await this.insert(
        tx,
        imp,
        def,
        linkedCreates.map((r) => ({ row: r.row, columns: recordsetColumns(def, r.columns) })),
        errors,
      );
      const updated = await this.update(tx, imp, def, linkedUpdates, errors);
      await this.saveErrors(tx, imp, errors, batch);
      await this.advance(tx, imp, last, state, {
        created: created.count,
        updated: updated.changed,
        unchanged: updated.unchanged,
        failed: errors.length,
      });
      if (imp.record_events) {
        await recordEvents(tx, imp.workspace_id, [
          ...created.records.map((record) => ({
            object: def.object,
            singular: def.singular,
            action: 'created' as const,
            record: record as Record<string, unknown>,
          })),
          ...updated.events,
        ]);
      }
    });
    state.rowsDone = last.row;
  }

  /**
   * Matched rows written set-based: the records locked, each row's custom values merged into
   * its record's (a composite given in part keeps its other sub-fields, as PATCH does), then
   * one UPDATE … FROM jsonb_populate_recordset per set of columns, touching only records
   * whose values differ. A constraint error isolates the rows one by one.
   */
  private async update(
    tx: SqlTx,
    imp: ImportRow,
    def: ObjectDefinition,
    rows: (Ready & { id: string })[],
    errors: RowError[],
  ): Promise<{ changed: number; unchanged: number; events: RecordChange[] }> {
    const events: RecordChange[] = [];
    if (!rows.length) return { changed: 0, unchanged: 0, events };
    const before = new Map(
      (
        await tx.rows(
          `SELECT ${def.columns.join(', ')} FROM ${def.schema.table}
            WHERE ${scopeOf(def)} AND id = ANY($2::uuid[]) AND deleted_at IS NULL ORDER BY id FOR UPDATE`,
          [imp.workspace_id, rows.map((r) => r.id)],
        )
      ).map((row) => [row.id as string, row]),
    );
    const groups = new Map<string, { row: number; columns: Record<string, unknown> }[]>();
    for (const r of rows) {
      const old = before.get(r.id);
      if (!old) {
        errors.push({ row: r.row, messages: [`the ${def.singular} ${r.id} it matched was deleted meanwhile`] });
        continue;
      }
      const columns: Record<string, unknown> = { ...recordsetColumns(def, { ...r.columns, custom: undefined }), id: r.id };
      delete columns.custom;
      if (r.columns.custom !== undefined) columns.custom = mergedCustom(def, old.custom, r.columns.custom as Record<string, unknown>);
      const key = Object.keys(columns)
        .filter((c) => c !== 'id')
        .sort()
        .join(',');
      const group = groups.get(key);
      if (group) group.push({ row: r.row, columns });
      else groups.set(key, [{ row: r.row, columns }]);
    }
    let changed = 0;
    let matched = 0;
    for (const [key, group] of groups) {
      const columns = key ? key.split(',') : [];
      matched += group.length;
      if (!columns.length) continue;
      const sql = `UPDATE ${def.schema.table} t SET ${columns.map((c) => `${c} = r.${c}`).join(', ')}, updated_at = now()
                     FROM jsonb_populate_recordset(NULL::${def.schema.table}, $2::jsonb) r
                    WHERE ${scopeOf(def, 't.')} AND t.id = r.id AND t.deleted_at IS NULL
                      AND ROW(${columns.map((c) => `t.${c}`).join(', ')}) IS DISTINCT FROM ROW(${columns.map((c) => `r.${c}`).join(', ')})
                RETURNING ${def.columns.map((c) => `t.${c}`).join(', ')}`;
      const written = await this.inSavepoints(tx, def, sql, imp.workspace_id, group, errors);
      changed += written.length;
      matched -= written.refused;
      if (imp.record_events) {
        for (const row of written) {
          const record = def.toRecord(row) as Record<string, unknown>;
          const previous = def.toRecord(before.get(record.id as string)!) as Record<string, unknown>;
          events.push({ object: def.object, singular: def.singular, action: 'updated', record, previous: changedFields(previous, record) });
        }
      }
    }
    return { changed, unchanged: matched - changed, events };
  }

  /** One statement over the whole group under a savepoint; on a constraint error, the same statement row by row. */
  private async inSavepoints(
    tx: SqlTx,
    def: ObjectDefinition,
    sql: string,
    workspaceId: string,
    group: { row: number; columns: Record<string, unknown> }[],
    errors: RowError[],
  ): Promise<Record<string, unknown>[] & { refused: number }> {
    const out = Object.assign([] as Record<string, unknown>[], { refused: 0 });
    await tx.rows('SAVEPOINT import_batch');
    try {
      out.push(...(await tx.rows(sql, [workspaceId, JSON.stringify(group.map((r) => r.columns))])));
      await tx.rows('RELEASE SAVEPOINT import_batch');
      return out;
    } catch (err) {
      if (!isRowError(err)) throw err;
      await tx.rows('ROLLBACK TO SAVEPOINT import_batch');
    }
    for (const r of group) {
      await tx.rows('SAVEPOINT import_row');
      try {
        out.push(...(await tx.rows(sql, [workspaceId, JSON.stringify([r.columns])])));
        await tx.rows('RELEASE SAVEPOINT import_row');
      } catch (err) {
        if (!isRowError(err)) throw err;
        await tx.rows('ROLLBACK TO SAVEPOINT import_row');
        out.refused++;
        errors.push({ row: r.row, messages: [await this.rowErrorMessage(err as PgError, def, workspaceId)] });
      }
    }
    return out;
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
      // A custom object's records name it (docs/decisions/0057-custom-objects-storage.md).
      const owner = def.objectId ? { column: ', object_id', value: `, '${def.objectId}'::uuid` } : { column: '', value: '' };
      const sql = `INSERT INTO ${def.schema.table} (workspace_id${owner.column}${columns.map((c) => `, ${c}`).join('')})
                   SELECT $1${owner.value}${columns.map((c) => `, r.${c}`).join('')} FROM jsonb_populate_recordset(NULL::${def.schema.table}, $2::jsonb) r
                   RETURNING ${imp.record_events ? def.columns.join(', ') : 'id'}`;
      const written = await this.inSavepoints(tx, def, sql, imp.workspace_id, group, errors);
      count += written.length;
      if (imp.record_events) records.push(...written.map((row) => def.toRecord(row)));
    }
    return { count, records };
  }

  /** A database refusal of one row, said as REST says it (a unique value names the record holding it); never the statement. */
  private async rowErrorMessage(err: PgError, def: ObjectDefinition, workspaceId: string): Promise<string> {
    if (err.code === '23505' && err.constraint === 'record_keys_pkey') {
      try {
        await this.records.explainConflict(err, def, workspaceId);
      } catch (explained) {
        if (explained instanceof AppError) return explained.messages.join('; ');
      }
    }
    if (err.code === '23505') return `a ${def.singular} with this id already exists`;
    if (err.code === '23503') {
      const relation = def.relations.find((r) => err.detail?.includes(r.field.column));
      return relation
        ? `${relation.field.name}: no ${relation.targetSingular} with this id in this workspace`
        : 'a linked record does not exist';
    }
    return `the database refused the row: ${err.message.slice(0, 200)}`;
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

  /** Ends the import (unless it was cancelled meanwhile), with its one `import.completed` event and its audit entry; its chunks go. */
  private async finish(imp: ImportRow, status: 'completed' | 'failed', error: string | null, lines?: number): Promise<void> {
    // Before the import shows as ended: the credential that started it, reading its records
    // after that, reads them through a replica only once the replica has every batch.
    if (imp.created_by) await this.records.wroteFor(imp.workspace_id, imp.created_by).catch(() => undefined);
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

/** By declaration, not by name: custom objects of many workspaces share names, and a declaration goes with its model. */
const jsonColumns = new WeakMap<object, string[]>();
function jsonColumnsOf(def: ObjectDefinition): string[] {
  let found = jsonColumns.get(def.declaration);
  if (!found) {
    found = ['custom'];
    for (const field of def.declaration.fields) {
      if (field.kind !== 'composite') continue;
      for (const sub of composite(field.type).subFields)
        if (sub.kind === 'textList' || sub.kind === 'linkList') found.push(field.columns[sub.name]);
    }
    jsonColumns.set(def.declaration, found);
  }
  return found;
}

/** A record's custom values after a row's are applied: scalars replace, a composite given in part keeps its other sub-fields, null clears. */
function mergedCustom(def: ObjectDefinition, stored: unknown, given: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(stored && typeof stored === 'object' ? (stored as Record<string, unknown>) : {}) };
  for (const [name, value] of Object.entries(given)) {
    const field = def.custom?.find((f) => f.name === name);
    const old = ownValue(out, name);
    out[name] =
      field && compositeSubFields(field.type) && value !== null && typeof value === 'object'
        ? {
            ...(old && typeof old === 'object'
              ? (old as Record<string, unknown>)
              : (fullComposite(field.type, {}) as Record<string, unknown>)),
            ...value,
          }
        : value;
  }
  return out;
}
