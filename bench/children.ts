import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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

/** Asks a bench server to stop (IPC disconnect), SIGKILL after 5 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
