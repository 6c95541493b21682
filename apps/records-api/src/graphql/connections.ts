import { DEFAULT_ORDER, encodeCursor } from '#records/query/index.js';
import type { ListResult } from '#records/service/records.service.js';

export interface Connection<T> {
  totalCount: number | null;
  edges: { node: T; cursor: string }[];
  pageInfo: ListResult<T>['pageInfo'];
}

/**
 * An edge whose cursor is encoded only when the operation selects it. A prototype getter,
 * not an object literal's `get cursor()`: a literal's accessor is a new closure per edge,
 * which V8 keeps in a hidden class of its own (an old-space object), so every page's rows
 * outlived the request until a full collection (issue 12: about 45 KB promoted per
 * GraphQL list, and the mark-compacts that follow).
 */
class Edge<T> {
  constructor(
    readonly node: T,
    private readonly page: ListResult<T>,
    private readonly index: number,
  ) {}

  get cursor(): string {
    return this.page.cursorAt(this.index);
  }
}

/** A list page of the service layer as a Relay connection. */
export function toConnection<T>(page: ListResult<T>): Connection<T> {
  return {
    totalCount: page.totalCount,
    edges: page.records.map((node, i) => new Edge(node, page, i)),
    pageInfo: page.pageInfo,
  };
}

/**
 * An inverse relation such as `Company.people`: the oldest records of a parent, in the
 * default order (createdAt, then id), so the cursors are those of
 * `people(filter: {companyId: {eq: …}})` and its `endCursor` continues there as `after`.
 */
export function embeddedConnection<T extends { id: string; createdAt: string }>({
  records,
  total,
}: {
  records: T[];
  total: number;
}): Connection<T> {
  const order = DEFAULT_ORDER.map((term) => ({ ...term }));
  const cursors = records.map((p) => encodeCursor({ values: [p.createdAt], id: p.id }, order));
  return {
    totalCount: total,
    edges: records.map((node, i) => ({ node, cursor: cursors[i] })),
    pageInfo: {
      hasNextPage: total > records.length,
      hasPreviousPage: false,
      startCursor: cursors[0] ?? null,
      endCursor: cursors.at(-1) ?? null,
    },
  };
}
