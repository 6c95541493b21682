import { DEFAULT_ORDER, encodeCursor } from '../../../../libs/records/src/query/index.js';
import type { PersonRecord } from '../people/person.definition.js';
import type { ListResult } from '../records/record-store.js';
import type { PeopleOfCompany } from './loaders.js';

export interface Connection<T> {
  totalCount: number | null;
  edges: { node: T; cursor: string }[];
  pageInfo: ListResult<T>['pageInfo'];
}

/** A list page of the service layer as a Relay connection. */
export function toConnection<T>(page: ListResult<T>): Connection<T> {
  return {
    totalCount: page.totalCount,
    // A getter: the cursor is encoded only when the operation selects it.
    edges: page.records.map((node, i) => ({
      node,
      get cursor() {
        return page.cursorAt(i);
      },
    })),
    pageInfo: page.pageInfo,
  };
}

/**
 * `Company.people`: the oldest people of a company, in the default order (createdAt, then
 * id), so the cursors are those of `people(filter: {companyId: {eq: …}})` and its
 * `endCursor` continues there as `after`.
 */
export function embeddedPeopleConnection({ records, total }: PeopleOfCompany): Connection<PersonRecord> {
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
