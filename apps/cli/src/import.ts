import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { createReadStream, statSync } from 'node:fs';
import { extname } from 'node:path';
import type { Principal } from '#auth/principal.js';
import { DataSource } from 'typeorm';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { Sql } from '#database/sql.js';
import { BadInputError, ErrorCode } from '#errors/errors.js';
import { findRole, findWorkspace } from '#identity/accounts.js';
import { ImportsWorker } from '#records/imports/imports-worker.js';
import { ImportsService, parseImportRequest } from '#records/imports/imports.service.js';
import { importSummary, type ImportRow, type ImportSummary } from '#records/imports/import-summary.js';
import { ImportsModule } from '#records/imports/imports.module.js';
import { progressLog } from './run.js';

/** The records API's import service and worker, without its HTTP side. */
@Module({
  imports: [TypeOrmModule.forRootAsync({ useFactory: async () => dataSourceOptions((await resolveDatabaseUrl()).url, 4) }), ImportsModule],
  providers: [ImportsWorker],
})
class ImportCliModule {}

export interface ImportOptions {
  workspace: string;
  object: string;
  file: string;
  mode: string;
  match?: string;
  json?: boolean;
}

const TYPES: Record<string, string> = { '.csv': 'text/csv', '.ndjson': 'application/x-ndjson', '.jsonl': 'application/x-ndjson' };

/**
 * `import`: the file is uploaded into the database as the REST upload is (same checks, same
 * chunks, same queue), and this process runs an import worker until the import ends, so it
 * needs no records API running; if one runs, either may take the job. Progress (rows/s, ETA)
 * goes to stderr while it runs; the summary to stdout. Exit code 1 unless `completed`.
 */
export async function runImport(
  opts: ImportOptions,
): Promise<ImportSummary & { errors: { row: number; line: number | null; messages: string[] }[] }> {
  const type = TYPES[extname(opts.file).toLowerCase()];
  if (!type) throw new BadInputError(ErrorCode.VALIDATION_FAILED, `--file must end in .csv, .ndjson or .jsonl; got "${opts.file}"`);
  const size = statSync(opts.file).size;
  const request = parseImportRequest(
    { object: opts.object, mode: opts.mode, ...(opts.match ? { match: opts.match } : {}) },
    { 'content-type': type },
  );
  process.env.IMPORTS_WORKER = 'on';
  process.env.IMPORTS_CONCURRENCY ||= '1';
  // One database connection for everything (the embedded Postgres, when it is used, is started once and stopped at the end).
  const app = await NestFactory.createApplicationContext(ImportCliModule, { logger: ['error', 'warn'] });
  try {
    const ds = app.get(DataSource);
    await runMigrations(ds, progressLog(opts));
    const workspace = await findWorkspace(ds, opts.workspace);
    const role = await findRole(ds, workspace.id, 'Admin');
    const principal: Principal = {
      kind: 'user',
      subjectId: 'operator',
      workspaceId: workspace.id,
      role: {
        id: role.id,
        name: 'operator (CLI)',
        objectPermissions: role.objectPermissions,
        settingsPermissions: role.settingsPermissions,
      },
    };
    const service = app.get(ImportsService);
    const sql = app.get(Sql);
    const started = await service.start(principal, request, createReadStream(opts.file), size, 'operator (CLI)');
    const bar = new ProgressBar(!opts.json && process.stderr.isTTY !== false);
    let state = started;
    for (;;) {
      const [row] = await sql.rows<ImportRow>('SELECT * FROM imports WHERE workspace_id = $1 AND id = $2', [
        principal.workspaceId,
        started.id,
      ]);
      state = importSummary(row);
      bar.draw(state);
      if (!['queued', 'running'].includes(state.status)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    bar.done();
    const errors = (
      await sql.rows<{ row_no: string; line_no: string | null; messages: string[] }>(
        'SELECT row_no, line_no, messages FROM import_errors WHERE workspace_id = $1 AND import_id = $2 ORDER BY row_no LIMIT 20',
        [principal.workspaceId, started.id],
      )
    ).map((e) => ({ row: Number(e.row_no), line: e.line_no === null ? null : Number(e.line_no), messages: e.messages }));
    return { ...state, errors };
  } finally {
    await app.close();
    await (await resolveDatabaseUrl()).embedded?.stop();
  }
}

/** One line on stderr, redrawn: the share done, rows, rows/s and the time left at that rate. */
class ProgressBar {
  private readonly startedAt = Date.now();
  private drawn = false;

  constructor(private readonly enabled: boolean) {}

  draw(s: ImportSummary): void {
    if (!this.enabled) return;
    const width = 30;
    const filled = Math.round(s.progress * width);
    const seconds = (Date.now() - this.startedAt) / 1000;
    const rate = seconds > 0 ? s.rowsRead / seconds : 0;
    const left = s.progress > 0 && s.progress < 1 ? (seconds / s.progress) * (1 - s.progress) : 0;
    const eta = s.status === 'running' && left > 0 ? `ETA ${clock(left)}` : s.status;
    const line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(s.progress * 100).toFixed(0).padStart(3)}%  ${s.rowsRead.toLocaleString('en-US')} rows  ${Math.round(rate).toLocaleString('en-US')} rows/s  ${eta}`;
    process.stderr.write(`\r${line}\u001b[K`);
    this.drawn = true;
  }

  done(): void {
    if (this.drawn) process.stderr.write('\n');
  }
}

function clock(seconds: number): string {
  const s = Math.ceil(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
