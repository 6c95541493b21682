import autocannon, { type RequestSpec } from 'autocannon';
import { CREATED_MARK } from './seed.js';

/**
 * The mixed run: a fixed number of requests (50,000 by default) against the records API
 * only, in a mix shaped like real traffic, mostly reads. Every autocannon connection
 * repeats the same cycle of 20 requests; within a cycle it creates one person, reads it,
 * patches it twice and deletes it (soft delete), so the run leaves no live record behind
 * (the deleted rows carry CREATED_MARK and are removed by the next run's preparation).
 *
 * Per cycle: 3 REST lists (companies, first page), 2 filtered REST lists (people by last
 * name, rotating names), 6 gets of a company, 3 gets of a person (one the just-created
 * one), 2 GraphQL lists, 1 create, 2 PATCH, 1 DELETE: 16 reads, 4 writes.
 */

export type MixedKind = 'list' | 'listFiltered' | 'getCompany' | 'getPerson' | 'graphql' | 'create' | 'patch' | 'delete';

export interface MixedInput {
  base: string;
  secret: string;
  companyIds: string[];
  personIds: string[];
  amount: number;
  connections: number;
  limit: number;
}

export interface MixedResult {
  amount: number;
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Status codes by kind of request, counted from each answer. */
  byKind: Record<MixedKind, Record<string, number>>;
  /** Creates whose answer had no id (the PATCH/DELETE after them then fail too). */
  createsWithoutId: number;
  /** GraphQL answers with `errors` (GraphQL reports them with status 200). */
  graphqlErrors: number;
}

/** Last names the filtered list rotates over (all seeded; each ~1.6% of people). */
const FILTER_NAMES = ['Smith', 'Martin', 'Garcia', 'Tanaka', 'Nguyen', 'Patel', 'Kim', 'Lopez'];

const CYCLE: MixedKind[] = [
  'list',
  'getCompany',
  'listFiltered',
  'getCompany',
  'graphql',
  'create',
  'getPerson',
  'getCompany',
  'list',
  'patch',
  'getPerson',
  'listFiltered',
  'getCompany',
  'graphql',
  'getCompany',
  'patch',
  'getPerson',
  'list',
  'getCompany',
  'delete',
];

export const MIXED_SHARES = Object.fromEntries(
  [...new Set(CYCLE)].map((kind) => [kind, CYCLE.filter((k) => k === kind).length / CYCLE.length]),
) as Record<MixedKind, number>;

export async function mixedRun(input: MixedInput): Promise<MixedResult> {
  const { base, secret, companyIds, personIds, limit } = input;
  const auth = { authorization: `Bearer ${secret}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const firstPage = `/rest/companies?${new URLSearchParams({ limit: String(limit), order_by: 'createdAt[DescNullsLast]' })}`;
  const graphqlBody = JSON.stringify({ query: `{ companies(first:${limit}){ totalCount edges { node { id name } } } }` });
  const byKind = Object.fromEntries(CYCLE.map((k) => [k, {}])) as Record<MixedKind, Record<string, number>>;
  let createsWithoutId = 0;
  let graphqlErrors = 0;
  let n = 0; // rotates ids, names and e-mail addresses over all connections
  /** The person this connection created in its current cycle (autocannon resets the context each cycle). */
  const createdId = (context: Record<string, unknown>) => (typeof context.personId === 'string' ? context.personId : 'missing-created-id');

  const spec = (kind: MixedKind): RequestSpec => {
    const build = (req: RequestSpec, context: Record<string, unknown>): RequestSpec => {
      const i = n++;
      switch (kind) {
        case 'list':
          return { ...req, method: 'GET', path: firstPage, headers: { ...auth }, body: undefined };
        case 'listFiltered': {
          const filter = `name.lastName[eq]:"${FILTER_NAMES[i % FILTER_NAMES.length]}"`;
          return {
            ...req,
            method: 'GET',
            path: `/rest/people?${new URLSearchParams({ filter, limit: String(limit) })}`,
            headers: { ...auth },
            body: undefined,
          };
        }
        case 'getCompany':
          return {
            ...req,
            method: 'GET',
            path: `/rest/companies/${companyIds[i % companyIds.length]}`,
            headers: { ...auth },
            body: undefined,
          };
        case 'getPerson': {
          // The first get of a cycle reads the person just created; the others read seeded people.
          const id = context.personId && !context.readCreated ? createdId(context) : personIds[i % personIds.length];
          if (context.personId) context.readCreated = true;
          return { ...req, method: 'GET', path: `/rest/people/${id}`, headers: { ...auth }, body: undefined };
        }
        case 'graphql':
          return { ...req, method: 'POST', path: '/graphql', headers: { ...json }, body: graphqlBody };
        case 'create':
          return {
            ...req,
            method: 'POST',
            path: '/rest/people',
            headers: { ...json },
            body: JSON.stringify({
              name: { firstName: 'Mixed', lastName: CREATED_MARK },
              emails: { primaryEmail: `bench.mixed${i}@example.com` },
              companyId: companyIds[i % companyIds.length],
            }),
          };
        case 'patch':
          return {
            ...req,
            method: 'PATCH',
            path: `/rest/people/${createdId(context)}`,
            headers: { ...json },
            body: JSON.stringify({ emails: { primaryEmail: `bench.patched${i}@example.com` } }),
          };
        case 'delete':
          return { ...req, method: 'DELETE', path: `/rest/people/${createdId(context)}`, headers: { ...auth }, body: undefined };
      }
    };
    return {
      setupRequest: build,
      onResponse: (status, body, context) => {
        const counts = byKind[kind];
        counts[status] = (counts[status] ?? 0) + 1;
        if (kind === 'create') {
          let id: unknown;
          try {
            id = JSON.parse(body)?.data?.createPerson?.id;
          } catch {
            id = undefined;
          }
          if (typeof id === 'string') context.personId = id;
          else createsWithoutId++;
        }
        if (kind === 'graphql' && (status !== 200 || body.includes('"errors"'))) graphqlErrors++;
      },
    };
  };

  const started = performance.now();
  const r = await autocannon({
    url: base + firstPage,
    connections: input.connections,
    amount: input.amount,
    requests: CYCLE.map(spec),
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    amount: input.amount,
    requests: r.requests.total,
    seconds: Number(seconds.toFixed(2)),
    rps: Math.round(r.requests.total / seconds),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, v]) => [code, Number(v.count)])),
    byKind,
    createsWithoutId,
    graphqlErrors,
  };
}
