import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { apiNodeFlags, loadConfig } from '#config/config.js';

/**
 * A bench server (`./api-server.js`, `./bare-server.js`, … in this folder) in a process of its
 * own, once it sent its first message (its port, usually).
 */
export function startChild<M>(
  file: string,
  env: Record<string, string>,
  o: { execPath?: string; execArgv?: string[] } = {},
): Promise<{ child: ChildProcess; message: M }> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
      env: { ...process.env, ...env },
      execArgv: o.execArgv ?? [],
      ...(o.execPath ? { execPath: o.execPath } : {}),
    });
    child.once('message', (message) => resolve({ child, message: message as M }));
    child.once('exit', (code) => reject(new Error(`${file} exited (code ${code}) before listening`)));
  });
}

/** The records API (`./api-server.js`) with the node flags `npm start` gives it (API_HEAP_MB), once it listens. */
export async function startApi(env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const { child, message } = await startChild<{ port: number }>('./api-server.js', env, { execArgv: apiNodeFlags(loadConfig()) });
  return { child, port: message.port };
}

/** Asks a bench server to stop (IPC disconnect), SIGKILL after 5 s. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (child.connected) child.disconnect();
  else child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
