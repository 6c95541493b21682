import type { LoggerService } from '@nestjs/common';
import { createServer } from 'node:net';

/**
 * Exit code of a process that cannot start as configured (a port in use, say): sysexits.h
 * EX_CONFIG. The launcher does not restart an app that exits with it: the next start would
 * fail the same way.
 */
export const EXIT_CONFIG = 78;

/** Why `port` cannot be listened on at `host`, in one line naming the variable to change; undefined when it can. */
export function portProblem(port: number, host: string, variable: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      resolve(
        err.code === 'EADDRINUSE'
          ? `port ${port} is in use — is another \`npm start\` running? set ${variable}`
          : `cannot listen on ${host}:${port} (${err.code ?? err.message}); set ${variable}`,
      ),
    );
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

function exitWith(problem: string, logger: LoggerService): never {
  logger.error(problem);
  process.exit(EXIT_CONFIG);
}

/** A port that is taken ends the process with one line and EX_CONFIG; checked before the first migration, too. */
export async function exitIfPortTaken(port: number, host: string, variable: string, logger: LoggerService): Promise<void> {
  const problem = await portProblem(port, host, variable);
  if (problem) exitWith(problem, logger);
}

/**
 * Listens through `listen`, after checking the port: a port that is taken ends the process
 * with one line and EX_CONFIG instead of a stack trace (and, under the launcher, a restart loop).
 */
export async function listenOrExit(
  listen: () => Promise<unknown>,
  port: number,
  host: string,
  variable: string,
  logger: LoggerService,
): Promise<void> {
  const exit = (problem: string): never => exitWith(problem, logger);
  await exitIfPortTaken(port, host, variable, logger);
  try {
    await listen();
  } catch (err) {
    // Taken between the check and the listen.
    if ((err as NodeJS.ErrnoException)?.code === 'EADDRINUSE')
      exit(`port ${port} is in use — is another \`npm start\` running? set ${variable}`);
    throw err;
  }
}
