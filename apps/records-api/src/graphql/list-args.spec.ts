import { AppError } from '#errors/errors.js';
import { companySchema, personSchema } from '#records/schemas.js';
import { toFilterNode, toListArgs, toOrderTerms } from './list-args.js';

const UUID = '0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10';

function refused(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(400);
    return err as AppError;
  }
  throw new Error('expected a 400');
}

describe('GraphQL filter → FilterNode', () => {
  it('is undefined for no filter or an empty one', () => {
    expect(toFilterNode(undefined, companySchema)).toBeUndefined();
    expect(toFilterNode(null, companySchema)).toBeUndefined();
    expect(toFilterNode({}, companySchema)).toBeUndefined();
    expect(toFilterNode({ name: null }, companySchema)).toBeUndefined();
  });

  it('turns one operator into one condition', () => {
    expect(toFilterNode({ name: { ilike: '%ac%' } }, companySchema)).toEqual({ kind: 'cond', field: 'name', op: 'ilike', value: '%ac%' });
  });

  it('reads composite fields as dotted paths', () => {
    expect(toFilterNode({ domainName: { primaryLinkUrl: { eq: 'acme.com' } } }, companySchema)).toEqual({
      kind: 'cond',
      field: 'domainName.primaryLinkUrl',
      op: 'eq',
      value: 'acme.com',
    });
    expect(
      toFilterNode({ name: { firstName: { startsWith: 'A' } }, emails: { additionalEmails: { containsAny: ['a@b.co'] } } }, personSchema),
    ).toEqual({
      kind: 'and',
      children: [
        { kind: 'cond', field: 'name.firstName', op: 'startsWith', value: 'A' },
        { kind: 'cond', field: 'emails.additionalEmails', op: 'containsAny', value: ['a@b.co'] },
      ],
    });
  });

  it('ANDs several operators of one field (a range)', () => {
    expect(toFilterNode({ createdAt: { gte: '2024-01-01', lt: '2024-02-01T00:00:00+01:00' } }, companySchema)).toEqual({
      kind: 'and',
      children: [
        { kind: 'cond', field: 'createdAt', op: 'gte', value: '2024-01-01T00:00:00Z' },
        { kind: 'cond', field: 'createdAt', op: 'lt', value: '2024-02-01T00:00:00+01:00' },
      ],
    });
  });

  it('nests and, or and not beside field conditions', () => {
    const node = toFilterNode(
      {
        name: { neq: 'X' },
        or: [{ name: { eq: 'A' } }, { and: [{ name: { eq: 'B' } }, { id: { is: 'NOT_NULL' } }] }],
        not: { deletedAt: { is: 'NULL' } },
      },
      companySchema,
    );
    expect(node).toEqual({
      kind: 'and',
      children: [
        { kind: 'cond', field: 'name', op: 'neq', value: 'X' },
        {
          kind: 'or',
          children: [
            { kind: 'cond', field: 'name', op: 'eq', value: 'A' },
            {
              kind: 'and',
              children: [
                { kind: 'cond', field: 'name', op: 'eq', value: 'B' },
                { kind: 'cond', field: 'id', op: 'is', value: 'NOT_NULL' },
              ],
            },
          ],
        },
        { kind: 'not', child: { kind: 'cond', field: 'deletedAt', op: 'is', value: 'NULL' } },
      ],
    });
  });

  it('unwraps a single-item and/or', () => {
    expect(toFilterNode({ or: [{ name: { eq: 'A' } }] }, companySchema)).toEqual({ kind: 'cond', field: 'name', op: 'eq', value: 'A' });
  });

  it('checks values with the shared rules and messages', () => {
    expect(refused(() => toFilterNode({ id: { eq: 'nope' } }, companySchema)).message).toBe('filter: id[eq] expects a uuid; got "nope"');
    expect(refused(() => toFilterNode({ or: [{ id: { in: [UUID, 'x'] } }] }, companySchema)).message).toBe(
      'filter: id[in] in or[0] expects a uuid; got "x"',
    );
    expect(refused(() => toFilterNode({ createdAt: { gt: 'yesterday' } }, companySchema)).code).toBe('INVALID_FILTER');
    expect(refused(() => toFilterNode({ id: { in: [] } }, companySchema)).message).toMatch(/non-empty array/);
  });

  it('refuses null operands, empty groups and unknown fields', () => {
    expect(refused(() => toFilterNode({ name: { eq: null } }, companySchema)).message).toBe(
      'filter: name.eq is null; to match a missing value use {is: NULL}',
    );
    expect(refused(() => toFilterNode({ and: [] }, companySchema)).message).toBe('filter: and is empty; put at least one condition inside');
    expect(refused(() => toFilterNode({ or: [{ name: { eq: 'a' } }, {}] }, companySchema)).message).toBe(
      'filter: or[1] holds no condition; remove it or add one',
    );
    expect(refused(() => toFilterNode({ not: {} }, companySchema)).message).toMatch(/^filter: not holds no condition/);
    expect(refused(() => toFilterNode({ nope: { eq: 'a' } }, companySchema)).message).toMatch(/^filter: unknown field "nope"/);
  });

  it('bounds nesting and the number of conditions like the REST parser', () => {
    let deep: object = { name: { eq: 'a' } };
    for (let i = 0; i < 9; i++) deep = { not: deep };
    expect(refused(() => toFilterNode(deep, companySchema)).message).toMatch(/nests deeper than 8 levels/);
    const many = { or: Array.from({ length: 51 }, (_, i) => ({ name: { eq: `n${i}` } })) };
    expect(refused(() => toFilterNode(many, companySchema)).message).toMatch(/more than 50 conditions/);
  });
});

describe('GraphQL orderBy → OrderTerm[]', () => {
  it('defaults to createdAt ascending', () => {
    expect(toOrderTerms(undefined, companySchema)).toEqual([{ field: 'createdAt', direction: 'AscNullsFirst' }]);
    expect(toOrderTerms([], companySchema)).toEqual([{ field: 'createdAt', direction: 'AscNullsFirst' }]);
  });

  it('keeps the list order and reads composites as dotted paths', () => {
    expect(toOrderTerms([{ name: { lastName: 'AscNullsFirst' } }, { createdAt: 'DescNullsLast' }], personSchema)).toEqual([
      { field: 'name.lastName', direction: 'AscNullsFirst' },
      { field: 'createdAt', direction: 'DescNullsLast' },
    ]);
    expect(toOrderTerms({ name: 'DescNullsFirst' }, companySchema)).toEqual([{ field: 'name', direction: 'DescNullsFirst' }]);
  });

  it('wants exactly one field per item, each field once', () => {
    expect(refused(() => toOrderTerms([{ name: 'AscNullsFirst', createdAt: 'AscNullsFirst' }], companySchema)).message).toMatch(
      /^orderBy: item 0 must name exactly one field/,
    );
    expect(refused(() => toOrderTerms([{ name: {} }], personSchema)).message).toMatch(
      /^orderBy: item 0 \(name\) must name exactly one field/,
    );
    expect(refused(() => toOrderTerms([{ name: 'AscNullsFirst' }, { name: 'DescNullsLast' }], companySchema)).message).toMatch(
      /sorted more than once/,
    );
    expect(refused(() => toOrderTerms([{ emails: { additionalEmails: 'AscNullsFirst' } }], personSchema)).message).toMatch(
      /cannot be sorted/,
    );
    expect(refused(() => toOrderTerms([{ name: 'Up' }], companySchema)).message).toMatch(/unknown direction/);
    const six = ['id', 'name', 'createdAt', 'updatedAt', 'deletedAt', 'domainName'].map((f) => ({ [f]: 'AscNullsFirst' }));
    expect(refused(() => toOrderTerms(six, companySchema)).code).toBe('INVALID_ORDER_BY');
  });
});

describe('GraphQL pagination → ListArgs', () => {
  it('reads first/after forward, with the GraphQL cursor names', () => {
    expect(toListArgs({ first: 10, after: 'c1' }, companySchema, true)).toEqual({
      limit: 10,
      orderBy: [{ field: 'createdAt', direction: 'AscNullsFirst' }],
      filter: undefined,
      startingAfter: 'c1',
      endingBefore: undefined,
      cursorParams: { after: 'after', before: 'before' },
      withCount: true,
    });
  });

  it('defaults to 60, cuts at 200, refuses negatives', () => {
    expect(toListArgs({}, companySchema, false).limit).toBe(60);
    expect(toListArgs({ first: null }, companySchema, false).limit).toBe(60);
    expect(toListArgs({ first: 1000 }, companySchema, false).limit).toBe(200);
    expect(toListArgs({ first: 0 }, companySchema, false).limit).toBe(0);
    expect(refused(() => toListArgs({ first: -1 }, companySchema, false)).message).toMatch(/^first must be a non-negative integer/);
    expect(refused(() => toListArgs({ last: -1, before: 'c' }, companySchema, false)).message).toMatch(/^last must be/);
  });

  it('reads last/before backward; last needs before', () => {
    const args = toListArgs({ last: 5, before: 'c9' }, companySchema, false);
    expect(args).toMatchObject({ limit: 5, endingBefore: 'c9', startingAfter: undefined, withCount: false });
    expect(toListArgs({ before: 'c9' }, companySchema, false)).toMatchObject({ limit: 60, endingBefore: 'c9' });
    expect(refused(() => toListArgs({ last: 5 }, companySchema, false)).message).toMatch(/^last reads backward from before/);
    expect(refused(() => toListArgs({ first: 5, last: 5, before: 'c' }, companySchema, false)).message).toMatch(/cannot be used together/);
    expect(refused(() => toListArgs({ first: 5, before: 'c' }, companySchema, false)).message).toMatch(/use last with before/);
    expect(refused(() => toListArgs({ last: 5, before: 'c', after: 'd' }, companySchema, false)).message).toMatch(/use first with after/);
  });
});
