import { Injectable } from '@nestjs/common';

const MAX_ENTRIES = 5000;

/**
 * Exact counts of filtered lists, valid while the (workspace, object) write version they
 * were taken at is current. The version is the sum of the (workspace, object)'s slot rows
 * in `record_counts`, one of which every insert, update or delete moves (statement
 * triggers), so a cached count is never stale on any instance: a write anywhere changes the
 * version every instance reads with the page.
 */
@Injectable()
export class CountCache {
  private readonly entries = new Map<string, { version: string; count: number }>();

  get(key: string, version: string): number | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.version !== version) return undefined;
    this.entries.delete(key); // keep recently used entries last
    this.entries.set(key, entry);
    return entry.count;
  }

  set(key: string, version: string, count: number): void {
    this.entries.delete(key);
    this.entries.set(key, { version, count });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }
}
