import { performance } from 'node:perf_hooks';
import { TooManyRequestsError } from '#errors/errors.js';

/*
 * Schema builds of a process, one at a time (docs/decisions/0052-graphql-schemas-bounded-in-bytes.md);
 * the workspace OpenAPI documents and MCP tool lists are built the same way, each in a queue
 * of its own (docs/decisions/0059-custom-objects-open-api-and-mcp.md).
 * A build runs on the event loop (a 300-field workspace schema: ~50 ms), so builds are
 * taken in turn from each workspace that waits (round robin, not first come), and after a
 * build of t ms the next waits 3t ms: builds take at most a quarter of the event loop,
 * however fast one workspace changes its data model, and every other request gets the rest.
 * A workspace with more builds waiting than MAX_WAITING_PER_WORKSPACE is told to retry
 * (429): only a workspace changing its data model in a loop gets there.
 */

const MAX_WAITING_PER_WORKSPACE = 4;
/** Share of the event loop builds may take. */
const DUTY = 0.25;
const RETRY_AFTER_SECONDS = 1;

export class BuildsBusyError extends TooManyRequestsError {
  constructor(what: string) {
    super(
      `This workspace's data model changes faster than its ${what} can be built; retry after ${RETRY_AFTER_SECONDS} s`,
      RETRY_AFTER_SECONDS,
    );
  }
}

interface Task {
  start(): void;
  cancel(err: Error): void;
}

export class BuildQueue {
  /** Waiting builds per workspace; a Map iterates in insertion order, which makes the round robin. */
  private readonly waiting = new Map<string, Task[]>();
  private running = false;
  private readyAt = 0;
  private timer?: NodeJS.Timeout;

  /** `what` is built: named in the 429 of a workspace that waits for too many. */
  constructor(private readonly what = 'GraphQL schema') {}

  run<T>(workspaceId: string, build: () => Promise<T>): Promise<T> {
    const queue = this.waiting.get(workspaceId) ?? [];
    if (queue.length >= MAX_WAITING_PER_WORKSPACE) return Promise.reject(new BuildsBusyError(this.what));
    return new Promise<T>((resolve, reject) => {
      queue.push({
        start: () => {
          const started = performance.now();
          let done: Promise<T>;
          try {
            done = build();
          } catch (err) {
            done = Promise.reject(err);
          }
          void done.then(resolve, reject).finally(() => this.finished(performance.now() - started));
        },
        cancel: reject,
      });
      this.waiting.set(workspaceId, queue);
      this.pump();
    });
  }

  private finished(ms: number): void {
    this.running = false;
    this.readyAt = performance.now() + (ms * (1 - DUTY)) / DUTY;
    this.pump();
  }

  private pump(): void {
    if (this.running || this.timer || !this.waiting.size) return;
    const wait = this.readyAt - performance.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, wait).unref();
      return;
    }
    const [workspaceId, queue] = this.waiting.entries().next().value!;
    const task = queue.shift()!;
    // Its next build, if any, waits behind every other workspace's.
    this.waiting.delete(workspaceId);
    if (queue.length) this.waiting.set(workspaceId, queue);
    this.running = true;
    task.start();
  }

  /** Refuses what waits (the app is closing): nothing more is built. */
  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const queue of this.waiting.values()) for (const task of queue) task.cancel(new Error('closing'));
    this.waiting.clear();
  }
}
