/** Records embedded per parent: `Company.people` in GraphQL, a company's people at depth=1. */
export const EMBEDDED_PER_RECORD = 60;
