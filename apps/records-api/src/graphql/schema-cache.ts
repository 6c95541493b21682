import { LRUCache } from 'lru-cache';

/*
 * What is built from a workspace's data model (a GraphQL schema and its server), kept by
 * content and bounded in bytes (docs/decisions/0052-graphql-schemas-bounded-in-bytes.md):
 * - keyed by a hash of what the build reads, so workspaces (and roles) whose visible
 *   metadata is identical share one entry;
 * - each entry is held by the workspaces whose current version uses it; when a
 *   workspace's version moves, it lets go of its old entries, and an entry no workspace
 *   holds is dropped at once (a workspace never keeps old versions);
 * - the least recently used entries go when the estimated bytes pass the budget;
 * - one build per key at a time: requests that arrive during a build wait for it.
 */

/** Workspaces whose holds are tracked (~150 bytes each); the least recently seen one lets go of its entries. */
const MAX_WORKSPACES = 10_000;

interface Entry<T> {
  value: Promise<T>;
  /** Workspaces whose current version uses this entry. */
  holders: Set<string>;
  /** Estimated; 1 until built. */
  bytes: number;
}

export interface Built<T> {
  value: T;
  bytes: number;
}

export class SchemaCache<T> {
  private readonly entries: LRUCache<string, Entry<T>>;
  /** Per workspace: the newest version seen and the keys it holds; a workspace dropped from here lets go of its keys. */
  private readonly workspaces = new LRUCache<string, { version: number; keys: Set<string> }>({
    max: MAX_WORKSPACES,
    dispose: (workspace, workspaceId, reason) => {
      if (reason !== 'set') this.release(workspaceId, workspace);
    },
  });
  private builds = 0;
  private failures = 0;

  constructor(readonly budgetBytes: number) {
    this.entries = new LRUCache<string, Entry<T>>({
      maxSize: budgetBytes,
      sizeCalculation: (entry) => entry.bytes,
      dispose: (entry, key, reason) => {
        // 'set': the same entry, sized once built (see get).
        if (reason === 'set') return;
        for (const holder of entry.holders) this.workspaces.peek(holder)?.keys.delete(key);
      },
    });
  }

  /**
   * The entry `key` for `workspaceId` at `version`, built by `build` when it is not kept.
   * A request with a version older than the newest one seen for that workspace is served
   * but holds nothing (a slower instance's principal; the newer version stays).
   */
  get(workspaceId: string, version: number, key: string, build: () => Promise<Built<T>>): Promise<T> {
    const workspace = this.holdFor(workspaceId, version);
    let entry = this.entries.get(key);
    if (!entry) {
      this.builds++;
      const value: Promise<T> = build().then(
        (built) => {
          // Sized now (lru-cache sizes a value when it is set, so a copy is set), unless it was let go meanwhile.
          const current = this.entries.peek(key);
          if (current?.value === value) this.entries.set(key, { ...current, bytes: Math.max(1, built.bytes) });
          return built.value;
        },
        (err: unknown) => {
          this.failures++;
          if (this.entries.peek(key)?.value === value) this.entries.delete(key);
          throw err;
        },
      );
      entry = { value, holders: new Set(), bytes: 1 };
      this.entries.set(key, entry);
    }
    if (workspace) {
      entry.holders.add(workspaceId);
      workspace.keys.add(key);
    }
    return entry.value;
  }

  /** The workspace's record when `version` is its newest; its older entries are let go when the version moved. */
  private holdFor(workspaceId: string, version: number): { version: number; keys: Set<string> } | undefined {
    const known = this.workspaces.get(workspaceId);
    if (known && version < known.version) return undefined;
    if (known && version === known.version) return known;
    if (known) this.release(workspaceId, known);
    const fresh = { version, keys: new Set<string>() };
    this.workspaces.set(workspaceId, fresh);
    return fresh;
  }

  /** `workspaceId` no longer holds its keys; an entry nobody holds goes at once. */
  private release(workspaceId: string, workspace: { keys: Set<string> }): void {
    for (const key of [...workspace.keys]) {
      const entry = this.entries.peek(key);
      if (!entry) continue;
      entry.holders.delete(workspaceId);
      if (!entry.holders.size) this.entries.delete(key);
    }
    workspace.keys.clear();
  }

  clear(): void {
    this.entries.clear();
    this.workspaces.clear();
  }

  stats(): Record<string, number> {
    return {
      builds: this.builds,
      failedBuilds: this.failures,
      entries: this.entries.size,
      bytes: this.entries.calculatedSize,
      budgetBytes: this.budgetBytes,
      workspaces: this.workspaces.size,
    };
  }
}
