/** A row of `imports` as read with `RETURNING *` (bigint counters arrive as strings). */
export interface ImportRow {
  workspace_id: string;
  id: string;
  object: string;
  mode: 'create' | 'upsert';
  match: string | null;
  format: 'csv' | 'ndjson';
  record_events: boolean;
  status: 'uploading' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  bytes: string;
  chunks: number;
  rows_done: string;
  bytes_done: string;
  /** Lines of the file read through the last committed record (the header row and blank lines count); every line once completed. */
  lines_done: string;
  created: string;
  updated: string;
  unchanged: string;
  failed: string;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** `kind:subject` of the credential that started it. */
  created_by?: string | null;
  /** The row limit in force when it was accepted (IMPORT_MAX_ROWS); null for imports accepted before it was kept. */
  max_rows?: string | null;
}

/** What `GET /rest/imports/{id}` and the `import.completed` event show of an import (docs/rest.md "Imports"). */
export function importSummary(row: ImportRow) {
  const bytes = Number(row.bytes);
  const ended = row.status === 'completed';
  return {
    id: row.id,
    object: row.object,
    mode: row.mode,
    match: row.match,
    format: row.format,
    status: row.status,
    rowsRead: Number(row.rows_done),
    /** Lines of the file read: every line once completed (a record may span lines; blank lines count, and so does the CSV header row). */
    linesRead: Number(row.lines_done),
    created: Number(row.created),
    updated: Number(row.updated),
    /** Upsert: rows that matched a record already holding their values (nothing written). */
    unchanged: Number(row.unchanged),
    failed: Number(row.failed),
    progress: ended ? 1 : bytes > 0 ? Math.min(1, Math.round((Number(row.bytes_done) / bytes) * 1000) / 1000) : 0,
    bytes,
    error: row.error,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

export type ImportSummary = ReturnType<typeof importSummary>;
