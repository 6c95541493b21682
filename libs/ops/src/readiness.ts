/**
 * What `/health/ready` reports besides the database: the queue workers of this process
 * (docs/decisions/0051-queue-workers-that-outlive-postgres.md). Per process by nature: each
 * check is about the workers this process runs.
 */
const checks = new Map<string, () => boolean>();

/** `/health/ready` shows `name` as "up" while `up()` holds, else "down" (503); returns the check's removal. */
export function addReadinessCheck(name: string, up: () => boolean): () => void {
  checks.set(name, up);
  return () => {
    if (checks.get(name) === up) checks.delete(name);
  };
}

export function readinessChecks(): Record<string, 'up' | 'down'> {
  return Object.fromEntries([...checks].map(([name, up]) => [name, up() ? 'up' : 'down']));
}
