/**
 * Each workspace's share of one worker process's delivery slots (WEBHOOKS_CONCURRENCY),
 * counted in memory where the slots are, so the check costs no database round trip.
 *
 * With `n` workspaces that have attempts in flight (the asking one included), each may
 * have `max(1, floor((slots − 1) / n))` in flight: a workspace alone gets all slots but one,
 * so another workspace's job always finds a free slot to start in; from then on the slots
 * are split evenly. One tenant whose targets never answer thus holds at most that share
 * for the POST timeout, and every other tenant's events keep flowing through the rest.
 */
export class WorkspaceShares {
  private readonly inFlight = new Map<string, number>();
  /** Attempts put back over their share, oldest first, each woken once (see whenFree). */
  private readonly waiting: { workspaceId: string; wake: () => void; timer: NodeJS.Timeout }[] = [];

  constructor(private readonly slots: number) {}

  /** A slot for the workspace, to be given back with the function returned; null when it has its share in flight. */
  take(workspaceId: string): (() => void) | null {
    const mine = this.inFlight.get(workspaceId) ?? 0;
    const busy = this.inFlight.size + (mine ? 0 : 1);
    if (mine >= Math.max(1, Math.floor((this.slots - 1) / busy))) return null;
    this.inFlight.set(workspaceId, mine + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = this.inFlight.get(workspaceId)! - 1;
      if (left) this.inFlight.set(workspaceId, left);
      else this.inFlight.delete(workspaceId);
      // The freed slot goes to the workspace's oldest waiting attempt; with none, a workspace
      // that just went idle leaves a larger share to every other: the oldest waiter overall.
      const next = this.waiting.findIndex((w) => w.workspaceId === workspaceId);
      this.wake(next >= 0 ? next : left ? -1 : 0);
    };
  }

  /**
   * An attempt of `workspaceId` was put back on the queue over its share: `wake` is called
   * once, when a slot of the workspace is given back in this process or after `ms`,
   * whichever comes first, so the attempt runs as soon as it can rather than at the queue's
   * next poll.
   */
  whenFree(workspaceId: string, ms: number, wake: () => void): void {
    const entry = { workspaceId, wake, timer: setTimeout(() => this.wake(this.waiting.indexOf(entry)), ms) };
    entry.timer.unref();
    this.waiting.push(entry);
  }

  private wake(index: number): void {
    if (index < 0 || index >= this.waiting.length) return;
    const [entry] = this.waiting.splice(index, 1);
    clearTimeout(entry.timer);
    entry.wake();
  }
}
