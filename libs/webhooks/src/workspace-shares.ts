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
    };
  }
}
