import {
  GraphQLEnumType,
  GraphQLInt,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  execute,
  parse,
} from 'graphql';
import { NotPlannable, planQuery, runPlan } from './query-plan.js';

/**
 * A query plan (query-plan.ts) must answer exactly as graphql-js + JSON.stringify, and give
 * up (NotPlannable, so Apollo answers) wherever graphql-js would answer differently. A small
 * schema whose root resolver returns whatever a test puts in `data`.
 */
let data: unknown;
const Color = new GraphQLEnumType({ name: 'Color', values: { RED: { value: 'red' }, BLUE: { value: 'blue' } } });
const Item: GraphQLObjectType = new GraphQLObjectType({
  name: 'Item',
  fields: () => ({
    a: { type: new GraphQLNonNull(GraphQLString) },
    b: { type: GraphQLString },
    n: { type: GraphQLInt },
    color: { type: Color },
    tags: { type: new GraphQLList(GraphQLString) },
    child: { type: Item },
    computed: { type: GraphQLString, resolve: () => 'computed' },
  }),
});
const Named = new GraphQLInterfaceType({ name: 'Named', fields: { a: { type: GraphQLString } } });
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: {
      items: { type: new GraphQLList(Item), resolve: () => data },
      item: {
        type: Item,
        args: { id: { type: GraphQLString, defaultValue: 'x' } },
        resolve: (_root, args) => (args.id === 'none' ? null : (data as unknown[])[0]),
      },
      failing: { type: GraphQLString, resolve: () => Promise.reject(new Error('no')) },
      named: { type: Named, resolve: () => null },
    },
  }),
  types: [new GraphQLObjectType({ name: 'NamedItem', interfaces: [Named], fields: { a: { type: GraphQLString } } })],
});

async function both(query: string, variables?: Record<string, unknown>) {
  const document = parse(query);
  const plan = planQuery(schema, document, undefined);
  if (!plan) throw new Error('not planned');
  const expected = JSON.stringify(await execute({ schema, document, variableValues: variables }));
  const actual = await runPlan(plan, {}, variables).catch((err: unknown) => err);
  return { expected, actual };
}

describe('query plans', () => {
  it('write what graphql-js writes: aliases, fragments, merged fields, enums, lists, nulls, __typename, escaping', async () => {
    data = [
      {
        a: 'quote " backslash \\ line\u2028 emoji 😀 \u0001',
        b: null,
        n: 3,
        color: 'blue',
        tags: ['x', null],
        child: { a: 'c', child: null },
      },
      { a: 'second', n: 0, color: null, tags: [] },
    ];
    const { expected, actual } =
      await both(`{ __typename list: items { ...F a x: a n color tags child { a child { a } } __typename } items { b } one: item { a } none: item(id: "none") { a } }
      fragment F on Item { b ... on Item { n } }`);
    expect(actual).toBe(expected);
    expect(JSON.parse(expected).errors).toBeUndefined();
  });

  it.each<[string, unknown]>([
    ['a null in a non-null field', [{ a: null }]],
    ['an Error as a value', [{ a: new Error('boom') }]],
    ['a promise below the root', [{ a: Promise.resolve('later') }]],
    ['a value its enum does not know', [{ a: 'x', color: 'green' }]],
    ['a number Int cannot carry', [{ a: 'x', n: 1.5 }]],
    ['an iterable that is not an array', [{ a: 'x', tags: new Set(['t']) }]],
    ['a function where graphql-js would call it', [{ a: () => 'called' }]],
  ])('gives up on %s, where graphql-js answers otherwise', async (_label, value) => {
    data = value;
    const { expected, actual } = await both('{ items { a color n tags } }');
    expect(actual).toBeInstanceOf(NotPlannable);
    // graphql-js reports an error, or resolves the promise or function, which the plan does not.
    expect(expected).not.toBe('{"data":{"items":[{"a":null,"color":null,"n":null,"tags":null}]}}');
  });

  it('gives up on a promise that rejects below the root without leaving the rejection unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      data = [{ a: Promise.reject(new Error('later')) }];
      const plan = planQuery(schema, parse('{ items { a } }'), undefined)!;
      await expect(runPlan(plan, {}, undefined)).rejects.toBeInstanceOf(NotPlannable);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it("passes a root resolver's rejection on (Apollo then answers), with every root field watched", async () => {
    data = [{ a: 'x' }];
    const plan = planQuery(schema, parse('{ failing items { a } }'), undefined)!;
    await expect(runPlan(plan, {}, undefined)).rejects.toThrow('no');
  });

  it('is not made for what only graphql-js can do', () => {
    const plans = (query: string) => planQuery(schema, parse(query), undefined) !== null;
    expect(plans('{ items { computed } }')).toBe(false); // a resolver of its own
    expect(plans('{ named { a } }')).toBe(false); // an interface
    expect(plans('query($s: Boolean!) { items { a @skip(if: $s) } }')).toBe(false);
    expect(plans('{ __schema { queryType { name } } }')).toBe(false);
    expect(plans('mutation { x }')).toBe(false);
    expect(plans('{ items { a } }')).toBe(true);
  });
});
