/*
 * The descriptions of an object's GraphQL types, arguments and root fields, in one place
 * for the standard objects' code-first types (graphql-types.ts, object.resolver.ts,
 * types/page.args.ts) and a custom object's SDL (custom-object-schema.ts): introspection
 * reads the same for both (docs/graphql.md).
 */

export const PAGE_ARG_DOCS = {
  first: 'Page size reading forward: 0 to 200, default 60 (larger values are cut to 200).',
  after: '`endCursor` of the previous page (same filter and orderBy).',
  last: 'Page size reading backward from `before` (required with `last`).',
  before: '`startCursor` of the next page (same filter and orderBy).',
} as const;

export const OBJECT_DOCS = {
  orderByArg: 'Default: [{createdAt: AscNullsFirst}].',
  /** `upsert: true` on creates (docs/graphql.md, "Upsert"). */
  upsertArg: 'true: a record matching a live one by id, then by a unique field, updates it with the fields given; otherwise it is created.',
  groupBy: (plural: string) =>
    `Groups the live ${plural} the filter keeps and aggregates each group, as GET /rest/${plural}/groupBy: ` +
    'groupBy ["stage", "closeDate:month"], aggregate ["count", "sum:amount.amountMicros", "min:closeDate"].',
  one: (singular: string) => `The first ${singular} matching the filter, or null.`,
  createMany: (plural: string) => `All or none; 1 to 60 ${plural}.`,
  remove: (singular: string) => `Soft delete: returns the ${singular} with deletedAt set.`,
  restore: (singular: string) => `Brings a soft-deleted ${singular} back (deletedAt null); a live one is a CONFLICT.`,
  deletedAt: (singular: string) => `Set when the ${singular} was deleted (soft delete).`,
  totalCount: (pluralType: string) => `${pluralType} matching the filter, across all pages.`,
  createId: 'Optional client-chosen id; a taken id is a CONFLICT.',
  updateInput: 'Partial update: fields left out keep their value.',
  filterInput: 'Conditions on several fields, and the operators inside one field, all have to hold (AND).',
  filterDeletedAt: (plural: string) => `Deleted ${plural} are listed only when the filter mentions deletedAt.`,
  /** `example`: the first sortable field's item, as `{name: AscNullsFirst}`. */
  orderByInput: (example: string) =>
    `One field per item, in priority order: [${example}, {createdAt: DescNullsLast}]. id always breaks ties.`,
} as const;
