import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '#errors/errors.js';
import { companySchema, personSchema } from '../schemas.js';
import { normalizeTimestamp, parseFilter, validateCondition } from './filter.js';
import type { FilterNode } from './types.js';
import { rejection } from './rejection.spec-helper.js';

const ID = '6f1b1f6e-8c9a-4c2e-9d8f-0a1b2c3d4e5f';
const ID2 = '0A1B2C3D-4E5F-4A6B-8C9D-0E1F2A3B4C5D';

function rejects(raw: unknown, ...parts: string[]): string {
  const err = rejection(() => parseFilter(raw, personSchema));
  expect(err.code).toBe(ErrorCode.INVALID_FILTER);
  expect(err.status).toBe(400);
  expect(err.message).toMatch(/^filter: /);
  for (const part of parts) expect(err.message).toContain(part);
  return err.message;
}

const parse = (raw: string) => parseFilter(raw, personSchema);
const cond = (field: string, op: string, value: string | string[]) => ({ kind: 'cond', field, op, value });

describe('parseFilter: grammar', () => {
  it('is undefined when absent or empty', () => {
    expect(parseFilter(undefined, personSchema)).toBeUndefined();
    expect(parseFilter('', personSchema)).toBeUndefined();
  });

  it('returns a single condition as itself', () => {
    expect(parse('name.firstName[eq]:"Ada"')).toEqual(cond('name.firstName', 'eq', 'Ada'));
  });

  it('reads a top-level comma list as and', () => {
    expect(parse('name.firstName[eq]:"Ada",name.lastName[neq]:"Byron"')).toEqual({
      kind: 'and',
      children: [cond('name.firstName', 'eq', 'Ada'), cond('name.lastName', 'neq', 'Byron')],
    });
  });

  it('nests and, or, not', () => {
    expect(parse('or(name.firstName[eq]:"Ada",and(name.lastName[startsWith]:"B",not(companyId[is]:NULL)))')).toEqual({
      kind: 'or',
      children: [
        cond('name.firstName', 'eq', 'Ada'),
        {
          kind: 'and',
          children: [cond('name.lastName', 'startsWith', 'B'), { kind: 'not', child: cond('companyId', 'is', 'NULL') }],
        },
      ],
    });
  });

  it('keeps a one-child group as a group', () => {
    expect(parse('and(name.firstName[eq]:"A")')).toEqual({ kind: 'and', children: [cond('name.firstName', 'eq', 'A')] });
  });

  it('allows whitespace between any two tokens', () => {
    const spaced = parse(' or ( name.firstName [ eq ] : "Ada" ,\n\tnot ( companyId[is] : NOT_NULL ) ) , name.lastName[in]: [ "a" , "b" ] ');
    expect(spaced).toEqual({
      kind: 'and',
      children: [
        { kind: 'or', children: [cond('name.firstName', 'eq', 'Ada'), { kind: 'not', child: cond('companyId', 'is', 'NOT_NULL') }] },
        cond('name.lastName', 'in', ['a', 'b']),
      ],
    });
  });

  it('decodes JSON escapes in quoted strings', () => {
    expect(parse(String.raw`name.firstName[eq]:"a\"b\\c\u00e9\n"`)).toEqual(cond('name.firstName', 'eq', 'a"b\\cé\n'));
  });

  it('keeps commas, parentheses and spaces inside quoted strings', () => {
    expect(parse('name.firstName[eq]:"a, (b) c",name.lastName[eq]:""')).toEqual({
      kind: 'and',
      children: [cond('name.firstName', 'eq', 'a, (b) c'), cond('name.lastName', 'eq', '')],
    });
  });

  it('reads bare tokens as strings', () => {
    expect(parse(`id[eq]:${ID}`)).toEqual(cond('id', 'eq', ID));
    expect(parse('name.firstName[eq]:Ada')).toEqual(cond('name.firstName', 'eq', 'Ada'));
    expect(parse('name.firstName[eq]:NULL')).toEqual(cond('name.firstName', 'eq', 'NULL'));
  });

  it('reads arrays of quoted strings for in and containsAny', () => {
    expect(parse(`id[in]:["${ID}","${ID2}"]`)).toEqual(cond('id', 'in', [ID, ID2]));
    expect(parse('emails.additionalEmails[containsAny]:["a@b.co"]')).toEqual(cond('emails.additionalEmails', 'containsAny', ['a@b.co']));
    expect(parse(String.raw`name.lastName[in]:["a\"]","b,c"]`)).toEqual(cond('name.lastName', 'in', ['a"]', 'b,c']));
  });

  it('takes NULL and NOT_NULL for is, bare or quoted', () => {
    expect(parse('deletedAt[is]:NOT_NULL')).toEqual(cond('deletedAt', 'is', 'NOT_NULL'));
    expect(parse('deletedAt[is]:"NULL"')).toEqual(cond('deletedAt', 'is', 'NULL'));
    expect(parse('emails.additionalEmails[is]:NULL')).toEqual(cond('emails.additionalEmails', 'is', 'NULL'));
  });

  it('reads a field named like a group keyword when no "(" follows', () => {
    expect(() => parse('and[eq]:"x"')).toThrow('unknown field "and"');
  });
});

describe('parseFilter: operators by field type', () => {
  const textOps = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'startsWith', 'endsWith', 'like', 'ilike'];
  it.each(textOps)('text accepts %s', (op) => {
    expect(parse(`emails.primaryEmail[${op}]:"x%"`)).toEqual(cond('emails.primaryEmail', op, 'x%'));
  });
  it.each(['eq', 'neq'])('uuid accepts %s', (op) => {
    expect(parse(`companyId[${op}]:"${ID}"`)).toEqual(cond('companyId', op, ID));
  });
  it.each(['eq', 'neq', 'gt', 'gte', 'lt', 'lte'])('timestamp accepts %s', (op) => {
    expect(parse(`createdAt[${op}]:2024-01-31`)).toEqual(cond('createdAt', op, '2024-01-31T00:00:00Z'));
  });
  it('in and is work on text, uuid and timestamp', () => {
    expect(parse('name.firstName[in]:["a"]')).toEqual(cond('name.firstName', 'in', ['a']));
    expect(parse(`companyId[in]:["${ID}"]`)).toEqual(cond('companyId', 'in', [ID]));
    expect(parse('createdAt[in]:["2024-01-01T10:00:00+02:00"]')).toEqual(cond('createdAt', 'in', ['2024-01-01T10:00:00+02:00']));
    expect(parse('name.firstName[is]:NULL')).toEqual(cond('name.firstName', 'is', 'NULL'));
    expect(parse('companyId[is]:NULL')).toEqual(cond('companyId', 'is', 'NULL'));
    expect(parse('createdAt[is]:NOT_NULL')).toEqual(cond('createdAt', 'is', 'NOT_NULL'));
  });

  it.each([
    ['companyId', 'gt', 'uuid'],
    ['companyId', 'startsWith', 'uuid'],
    ['companyId', 'like', 'uuid'],
    ['companyId', 'containsAny', 'uuid'],
    ['createdAt', 'startsWith', 'timestamp'],
    ['createdAt', 'ilike', 'timestamp'],
    ['name.firstName', 'containsAny', 'text'],
    ['emails.additionalEmails', 'eq', 'textArray'],
    ['emails.additionalEmails', 'in', 'textArray'],
  ])('refuses %s[%s] (%s)', (field, op, type) => {
    rejects(`${field}[${op}]:x`, `operator "${op}" is not allowed on ${type} field ${field} at character 1`, 'allowed: ');
  });

  it('lists the operators allowed for the field', () => {
    rejects('companyId[gt]:x', 'allowed: eq, neq, in, is');
    rejects('emails.additionalEmails[eq]:x', 'allowed: containsAny, is');
  });
});

describe('parseFilter: values', () => {
  it('normalizes timestamps to read as UTC', () => {
    expect(parse('createdAt[gte]:2024-01-01')).toEqual(cond('createdAt', 'gte', '2024-01-01T00:00:00Z'));
    expect(parse('createdAt[gte]:"2024-01-01 10:11"')).toEqual(cond('createdAt', 'gte', '2024-01-01T10:11:00Z'));
    expect(parse('createdAt[gte]:2024-01-01T10:11:12.345z')).toEqual(cond('createdAt', 'gte', '2024-01-01T10:11:12.345Z'));
    expect(parse('createdAt[gte]:2024-01-01T10:11:12-0530')).toEqual(cond('createdAt', 'gte', '2024-01-01T10:11:12-05:30'));
    expect(parse('createdAt[gte]:2024-02-29T23:59:59.999999+14')).toEqual(cond('createdAt', 'gte', '2024-02-29T23:59:59.999999+14:00'));
  });

  it.each([
    'yesterday',
    '2024-02-30',
    '2023-02-29',
    '2024-13-01',
    '2024-1-1',
    '2024-01-01T24:00',
    '2024-01-01T10:60',
    '2024-01-01T10:00:61',
    '0000-01-01',
    '2024-01-01T10',
    '2024-01-01T10:00:00+15:00',
    '2024-01-01T10:00:00.1234567Z',
    '1704067200',
  ])('refuses the timestamp %j', (value) => {
    rejects(
      `createdAt[gt]:"${value}"`,
      'createdAt[gt] at character 1 expects an ISO 8601 date or date-time',
      `got ${JSON.stringify(value)}`,
    );
  });

  it('refuses a non-uuid for a uuid field, also inside in', () => {
    rejects('companyId[eq]:"abc"', 'companyId[eq] at character 1 expects a uuid; got "abc"');
    rejects(`id[in]:["${ID}","nope"]`, 'id[in] at character 1 expects a uuid; got "nope"');
    rejects(`id[eq]:{${ID}}`, 'expects a uuid');
  });

  it('refuses an is value other than NULL or NOT_NULL', () => {
    rejects('deletedAt[is]:null', 'deletedAt[is] at character 1 takes NULL or NOT_NULL; got "null"');
    rejects('deletedAt[is]:NOTNULL', 'takes NULL or NOT_NULL');
    rejects('deletedAt[is]:["NULL"]', 'takes NULL or NOT_NULL; got an array');
  });

  it('refuses in/containsAny without a non-empty array', () => {
    rejects('name.firstName[in]:"a"', 'name.firstName[in] at character 1 takes a non-empty array of double-quoted strings', 'got "a"');
    rejects('name.firstName[in]:[]', 'takes a non-empty array', 'got an empty array');
    rejects('emails.additionalEmails[containsAny]:a@b.co', 'emails.additionalEmails[containsAny] at character 1 takes a non-empty array');
  });

  it('refuses an array for a scalar operator', () => {
    rejects('name.firstName[eq]:["a"]', 'name.firstName[eq] at character 1 takes a single value, not an array; use name.firstName[in]');
  });

  it('refuses unquoted or malformed array elements', () => {
    rejects('name.firstName[in]:[a,b]', 'array elements must be double-quoted strings', 'at character 21');
    rejects('name.firstName[in]:["a" "b"]', 'unterminated array starting at character 20');
    rejects('name.firstName[in]:["a",', 'array elements must be double-quoted strings', 'the end of the filter');
    rejects('name.firstName[in]:["a"', 'unterminated array starting at character 20');
  });

  it('refuses unterminated strings and bad escapes', () => {
    rejects('name.firstName[eq]:"abc', 'unterminated string starting at character 20');
    rejects('name.firstName[eq]:"abc\\"', 'unterminated string');
    rejects('name.firstName[eq]:"a\\qb"', 'invalid string at character 20', 'JSON escapes');
  });

  it('refuses a missing value', () => {
    rejects('name.firstName[eq]:', 'missing value for name.firstName[eq] at character 1');
    rejects('name.firstName[eq]:,name.lastName[eq]:x', 'missing value for name.firstName[eq]');
    rejects('name.firstName[eq]', 'expected ":" and a value after name.firstName[eq] at character 1');
  });
});

describe('parseFilter: fields and operators', () => {
  it('refuses an unknown field and lists the allowed ones', () => {
    rejects(
      'nmae[eq]:"x"',
      'unknown field "nmae" at character 1',
      'allowed fields: id, name.firstName, name.lastName, emails.primaryEmail',
    );
    rejects('name.firstName[eq]:"x",foo.bar[eq]:1', 'unknown field "foo.bar" at character 24');
    rejects('constructor[eq]:x', 'unknown field "constructor"');
  });

  it('points a composite field to its sub-fields', () => {
    rejects('name[eq]:"x"', '"name" at character 1 is a composite field', 'name.firstName, name.lastName');
  });

  it('refuses an unknown operator and lists the allowed ones', () => {
    rejects('name.firstName[equals]:"x"', 'unknown operator "equals" for name.firstName at character 1', 'eq, neq, in, is');
    rejects('name.firstName[EQ]:"x"', 'unknown operator "EQ"');
    rejects('name.firstName[]:"x"', 'unknown operator ""');
  });

  it('names field and operator before looking at the value', () => {
    rejects('nmae[eq]:', 'unknown field "nmae"');
    rejects('companyId[gt]:', 'operator "gt" is not allowed');
  });

  it('refuses a malformed operator bracket', () => {
    rejects('name.firstName[e q]:x', 'expected an operator and "]" after "name.firstName[" at character 1', 'operators: eq, neq');
    rejects('name.firstName:x', 'expected "[" after "name.firstName" at character 1, as in name.firstName[eq]:value');
  });
});

describe('parseFilter: structure and limits', () => {
  it('refuses unbalanced parentheses', () => {
    rejects('and(name.firstName[eq]:"a"', 'missing ")" to close "and(" opened at character 1');
    rejects('or(not(name.firstName[eq]:"a")', 'missing ")" to close "or(" opened at character 1');
    rejects('name.firstName[eq]:"a")', 'unexpected ")" at character 23; no "(" is open');
    rejects('and(name.firstName[eq]:"a"))', 'unexpected ")" at character 28');
  });

  it('refuses trailing garbage', () => {
    rejects('name.firstName[eq]:"a" x', 'unexpected "x" at character 24; expected "," or the end of the filter');
    rejects('name.firstName[eq]:"a"x', 'unexpected "x" at character 23');
    rejects('and(name.firstName[eq]:"a" x)', 'unexpected "x)" at character 28; expected "," or ")" to close "and("');
  });

  it('refuses empty groups and empty terms', () => {
    rejects('and()', 'and() at character 1 is empty');
    rejects('name.firstName[eq]:"a",or( )', 'or() at character 24 is empty');
    rejects('not()', 'not() at character 1 is empty');
    rejects(
      'name.firstName[eq]:"a",',
      'expected a condition field[op]:value, and(…), or(…) or not(…) at character 24; found the end of the filter',
    );
    rejects(',name.firstName[eq]:"a"', 'at character 1; found ",name.firstN"');
    rejects('and(name.firstName[eq]:"a",)', 'at character 28; found ")"');
  });

  it('takes one expression in not(…)', () => {
    rejects('not(name.firstName[eq]:"a",name.lastName[eq]:"b")', 'not(…) at character 1 takes one expression');
  });

  it('refuses unknown or upper-case groups', () => {
    rejects('AND(name.firstName[eq]:"a")', 'unknown group "AND(" at character 1', 'and(…), or(…) and not(…)');
    rejects('xor(name.firstName[eq]:"a")', 'unknown group "xor("');
  });

  const nest = (levels: number) => 'not('.repeat(levels) + 'name.firstName[eq]:"a"' + ')'.repeat(levels);
  it('allows 8 levels of nesting and refuses 9', () => {
    let node = parse(nest(8)) as FilterNode;
    for (let i = 0; i < 8; i++) {
      expect(node.kind).toBe('not');
      node = (node as { child: FilterNode }).child;
    }
    expect(node).toEqual(cond('name.firstName', 'eq', 'a'));
    rejects(nest(9), 'nests deeper than 8 levels', 'at character 33');
    rejects('and(or(and(or(and(or(and(or(and(id[is]:NULL)))))))))', 'and(…) at character 29 nests deeper than 8');
  });

  it('allows 50 conditions and refuses 51', () => {
    const conds = (n: number) => Array.from({ length: n }, (_, i) => `name.firstName[eq]:"${i}"`).join(',');
    expect((parse(conds(50)) as { children: unknown[] }).children).toHaveLength(50);
    rejects(conds(51), 'more than 50 conditions', 'at most 50');
    rejects(`or(${conds(30)}),and(${conds(21)})`, 'more than 50 conditions');
  });

  it('allows 4000 characters and refuses 4001', () => {
    const head = 'name.firstName[eq]:"';
    const at = (n: number) => head + 'x'.repeat(n - head.length - 1) + '"';
    expect(parse(at(4000))).toEqual(cond('name.firstName', 'eq', 'x'.repeat(4000 - head.length - 1)));
    rejects(at(4001), 'is 4001 characters long; at most 4000 are allowed');
  });

  it.each([[['a', 'b']], [42], [null], [{ name: 'x' }]])('refuses the non-string %p', (raw) => {
    rejects(raw, 'must be a string such as name[eq]:"Acme"');
  });
});

describe('NUL characters', () => {
  it('are refused in any value, for the string syntax and for built conditions alike', () => {
    rejects('name.lastName[eq]:"a\\u0000b"', 'name.lastName[eq]', 'NUL');
    rejects('name.lastName[in]:["a","b\\u0000"]', 'name.lastName[in]', 'NUL');
    const err = rejection(() => validateCondition('name', 'eq', 'x\u0000', companySchema));
    expect(err.code).toBe(ErrorCode.INVALID_FILTER);
    expect(err.message).toContain('NUL');
  });
});

describe('validateCondition', () => {
  it('checks and normalizes a condition built without the string syntax', () => {
    expect(validateCondition('createdAt', 'lt', '2024-05-01', companySchema)).toEqual(cond('createdAt', 'lt', '2024-05-01T00:00:00Z'));
    const err = rejection(() => validateCondition('name', 'in', 'x', companySchema, ' in where.name'));
    expect(err.code).toBe(ErrorCode.INVALID_FILTER);
    expect(err.message).toBe('filter: name[in] in where.name takes a non-empty array of double-quoted strings, as in ["a","b"]; got "x"');
    expect(() => validateCondition('name', 'in', ['a', 1], companySchema)).toThrow('got an array');
    expect(() => validateCondition('name', 'eq', undefined, companySchema)).toThrow('not no value');
  });
});

describe('normalizeTimestamp', () => {
  it('keeps precision and offsets', () => {
    expect(normalizeTimestamp('2024-06-01T01:02:03.123456+05:45')).toBe('2024-06-01T01:02:03.123456+05:45');
    expect(normalizeTimestamp('2024-06-01t01:02:03Z')).toBe('2024-06-01T01:02:03Z');
    expect(normalizeTimestamp('2024-06-01T01:02:03+0100')).toBe('2024-06-01T01:02:03+01:00');
    expect(normalizeTimestamp('2024-06-31')).toBeUndefined();
  });
});
