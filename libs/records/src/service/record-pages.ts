import { BadInputError, ErrorCode } from '#errors/errors.js';
import { decodeCursor, encodeCursor, orderWithTieBreaker } from '../query/index.js';
import type { CursorPayload, FilterNode, OrderTerm } from '../query/types.js';
import type { ObjectDefinition } from './object-definitions.js';
import { iso } from './record-definition.js';
import type { PageQuery } from './record-repository.js';

/*
 * Keyset pages (docs/rest.md "Pagination"): a list call's arguments into the page the
 * repository reads, and its rows into records, cursors and pageInfo.
 */

export interface ListArgs {
  limit: number;
  orderBy: OrderTerm[];
  filter?: FilterNode;
  startingAfter?: string;
  endingBefore?: string;
  /** Names of the cursor parameters, for messages (`starting_after` on REST, `after` on GraphQL). */
  cursorParams?: { after: string; before: string };
  /** GraphQL skips the count when `totalCount` is not selected. */
  withCount?: boolean;
  /**
   * GraphQL reads only the columns of the fields its operation selects (and those of the
   * order, for cursors); the records then carry only those fields. Unset: every field.
   */
  fields?: ReadonlySet<string>;
}

export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export interface ListResult<T> {
  records: T[];
  /** The cursor of the record at this index of `records`. */
  cursorAt(index: number): string;
  totalCount: number | null;
  pageInfo: PageInfo;
}

/** The page a list call reads: the order with its tie-breaker, the direction and the cursor (checked: 400 INVALID_CURSOR), its columns. */
export function pageQuery(def: ObjectDefinition, args: ListArgs, columns: 'every' | 'selected'): PageQuery {
  const names = args.cursorParams ?? { after: 'starting_after', before: 'ending_before' };
  if (args.startingAfter && args.endingBefore) {
    throw new BadInputError(ErrorCode.INVALID_CURSOR, `${names.after} and ${names.before} cannot be used together`);
  }
  const backwards = Boolean(args.endingBefore);
  const raw = args.startingAfter ?? args.endingBefore;
  const order = orderWithTieBreaker(args.orderBy);
  return {
    order,
    backwards,
    cursor: raw ? decodeCursor(raw, args.orderBy, backwards ? names.before : names.after, def.schema) : undefined,
    filter: args.filter,
    limit: args.limit,
    columns: columns === 'every' ? def.columns : selectedColumns(def, args, order),
  };
}

/** The columns a page reads: every one, or those of the selected fields and of the order. */
function selectedColumns(def: ObjectDefinition, args: ListArgs, order: OrderTerm[]): readonly string[] {
  if (!args.fields) return def.columns;
  const columns = def.columnsFor(args.fields);
  for (const term of order) {
    const column = def.schema.fields[term.field]?.column ?? term.field;
    if (!columns.includes(column)) columns.push(column);
  }
  return columns;
}

/**
 * A page from the rows read (`limit + 1` at most, in read order): its records (`toRecords`),
 * cursors made on demand (REST shows two, GraphQL one per edge only when selected), and
 * pageInfo. `otherSide`: whether anything lies on the other side of the cursor.
 */
export function pageOf<T>(
  def: ObjectDefinition,
  args: ListArgs,
  q: PageQuery,
  rows: Record<string, unknown>[],
  otherSide: boolean,
  totalCount: number | null,
  toRecords: (rows: Record<string, unknown>[]) => T[],
): ListResult<T> {
  const hasMore = rows.length > args.limit;
  const page = rows.slice(0, args.limit);
  if (q.backwards) page.reverse();
  const cursorAt = (index: number) => encodeCursor(positionOf(page[index], q.order, def), args.orderBy);
  return {
    records: toRecords(page),
    cursorAt,
    totalCount,
    pageInfo: {
      hasNextPage: q.backwards ? otherSide : hasMore,
      hasPreviousPage: q.backwards ? hasMore : otherSide,
      startCursor: page.length ? cursorAt(0) : null,
      endCursor: page.length ? cursorAt(page.length - 1) : null,
    },
  };
}

function positionOf(row: Record<string, unknown>, order: OrderTerm[], def: ObjectDefinition): CursorPayload {
  const values = order
    .filter((term) => term.field !== 'id')
    .map((term) => {
      const leaf = def.schema.fields[term.field];
      return iso(leaf.read ? leaf.read(row) : row[leaf.column]);
    });
  return { values, id: row.id as string };
}
