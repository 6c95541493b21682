import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { depthLimitRule, pageSize } from './query-limits.js';

const schema = buildSchema(`
  type Node { id: ID, child: Node }
  type Query { node: Node }
`);

function depthErrors(query: string, max = 3): string[] {
  return validate(schema, parse(query), [...specifiedRules, depthLimitRule(max)]).map((e) => e.message);
}

describe('depthLimitRule', () => {
  it('allows max levels and refuses one more', () => {
    expect(depthErrors('{ node { child { id } } }')).toEqual([]);
    expect(depthErrors('{ node { child { child { id } } } }')).toEqual([
      expect.stringMatching(/^The operation is 4 fields deep; at most 3 levels are allowed/),
    ]);
  });

  it('follows fragments and inline fragments, and skips introspection fields', () => {
    expect(depthErrors('{ node { ...F } } fragment F on Node { child { ... on Node { child { id } } } }')).toHaveLength(1);
    expect(depthErrors('{ node { __typename child { id } } __schema { types { fields { type { name } } } } }')).toEqual([]);
  });

  it('measures each fragment once, so many spreads stay cheap', () => {
    const spreads = Array.from({ length: 2000 }, () => '...F').join(' ');
    const started = Date.now();
    expect(depthErrors(`{ node { ${spreads} } } fragment F on Node { child { id } }`)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('pageSize', () => {
  it('reads first or last as the resolvers do: default 60, at most 200', () => {
    expect(pageSize({})).toBe(60);
    expect(pageSize({ first: 10 })).toBe(10);
    expect(pageSize({ last: 500 })).toBe(200);
    expect(pageSize({ first: -5 })).toBe(0);
  });
});
