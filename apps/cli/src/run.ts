import { DataSource } from 'typeorm';
import { dataSourceOptions, resolveDatabaseUrl, runMigrations } from '#database/data-source.js';
import { AppError, ErrorCode } from '#errors/errors.js';

export interface OutputOptions {
  json?: boolean;
}

/**
 * Where progress lines (each migration applied, say) go: stderr, and nowhere with `--json`,
 * whose callers read one object on stdout and treat anything on stderr as an error.
 */
export function progressLog(options: OutputOptions): (message: string) => void {
  return options.json ? () => undefined : (message) => void process.stderr.write(`${message}\n`);
}

/**
 * One migrated connection for the length of a command. Everything is closed afterwards
 * (pool, and the embedded Postgres when this process started it) so the process exits
 * on its own with the exit code already set.
 */
export async function withDatabase<T>(work: (ds: DataSource) => Promise<T>, log = progressLog({})): Promise<T> {
  const { url, embedded } = await resolveDatabaseUrl();
  const ds = new DataSource(dataSourceOptions(url, 2));
  try {
    await ds.initialize();
    await runMigrations(ds, log);
    return await work(ds);
  } finally {
    if (ds.isInitialized) await ds.destroy();
    await embedded?.stop();
  }
}

/** With `--json` stdout carries exactly one JSON object: the result; else the lines that describe it. */
export function printResult<T extends object>(options: OutputOptions, result: T, describe: (result: T) => string[]): void {
  process.stdout.write((options.json ? JSON.stringify(result) : describe(result).join('\n')) + '\n');
}

export async function runCommand<T extends object>(
  options: OutputOptions,
  work: (ds: DataSource) => Promise<T>,
  describe: (result: T) => string[],
): Promise<void> {
  printResult(options, await withDatabase(work, progressLog(options)), describe);
}

export function describeError(err: unknown): { code: string; message: string } {
  if (err instanceof AppError) return { code: err.code, message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  // A unique index caught a race that the service's own check missed.
  if ((err as { code?: string })?.code === '23505') return { code: ErrorCode.CONFLICT, message };
  return { code: ErrorCode.INTERNAL_ERROR, message };
}

/** The message goes to stderr; with `--json` stdout also gets the one error object. */
export function reportError(error: { code: string; message: string }, json: boolean): void {
  process.stderr.write(`error: ${error.message}\n`);
  if (json) process.stdout.write(JSON.stringify({ error }) + '\n');
}
