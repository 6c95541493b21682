import DataLoader from 'dataloader';
import type { Principal } from '#auth/principal.js';
import type { AnyRecord } from '#records/service/object-definitions.js';
import type { RecordsService } from '#records/service/records.service.js';
import type { ListArgs, ListResult, Via } from '#records/service/records.service.js';

export interface ChildrenOf {
  /** The oldest live records of the parent, at most EMBEDDED_PER_RECORD (60). */
  records: AnyRecord[];
  total: number;
}

/**
 * Batches the relation fields of one request: every `Company.people` (or `Person.company`,
 * `Opportunity.pointOfContact`, …) resolved in the same tick becomes one service call, so
 * one SQL query per relation. Made per request (in the GraphQL context), so a cache never
 * outlives the request or crosses principals.
 */
export class Loaders {
  private readonly byIdLoaders = new Map<string, DataLoader<string, AnyRecord | null>>();
  private readonly childLoaders = new Map<string, DataLoader<string, ChildrenOf>>();
  private readonly pageLoaders = new Map<string, DataLoader<string, ListResult<AnyRecord>>>();

  constructor(
    private readonly principal: Principal,
    private readonly records: RecordsService,
  ) {}

  /** Live records of `target` by id. */
  byId(target: string): DataLoader<string, AnyRecord | null> {
    let loader = this.byIdLoaders.get(target);
    if (!loader) {
      loader = new DataLoader(async (ids: readonly string[]) => {
        const found = new Map((await this.records.byIds(target, this.principal, [...ids])).map((r) => [r.id, r]));
        return ids.map((id) => found.get(id) ?? null);
      });
      this.byIdLoaders.set(target, loader);
    }
    return loader;
  }

  /** The oldest live `source` records per parent id through `via` (an inverse relation). */
  children(source: string, via: Via): DataLoader<string, ChildrenOf> {
    const key = `${source}.${JSON.stringify(via)}`;
    let loader = this.childLoaders.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids: readonly string[]) => {
        const byParent = await this.records.children(source, via, this.principal, [...ids]);
        return ids.map((id) => byParent.get(id) ?? { records: [], total: 0 });
      });
      this.childLoaders.set(key, loader);
    }
    return loader;
  }

  /** Pages of an inverse relation read with list arguments; one loader per distinct arguments (`key`). */
  pages(source: string, via: Via, key: string, args: ListArgs): DataLoader<string, ListResult<AnyRecord>> {
    const id = `${source}.${JSON.stringify(via)}.${key}`;
    let loader = this.pageLoaders.get(id);
    if (!loader) {
      loader = new DataLoader(async (ids: readonly string[]) => {
        const byParent = await this.records.pagesByParent(source, via, this.principal, [...ids], args);
        return ids.map((parent) => byParent.get(parent)!);
      });
      this.pageLoaders.set(id, loader);
    }
    return loader;
  }
}

export function createLoaders(principal: Principal, records: RecordsService): Loaders {
  return new Loaders(principal, records);
}
