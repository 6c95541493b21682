import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '#errors/errors.js';
import { companySchema, personSchema } from '../schemas.js';
import { parseOrderBy, sortableFields } from './order-by.js';
import { rejection } from './rejection.spec-helper.js';

function rejects(raw: unknown, ...parts: string[]): string {
  const err = rejection(() => parseOrderBy(raw, personSchema));
  expect(err.code).toBe(ErrorCode.INVALID_ORDER_BY);
  expect(err.status).toBe(400);
  expect(err.message).toMatch(/^order_by: /);
  for (const part of parts) expect(err.message).toContain(part);
  return err.message;
}

describe('parseOrderBy', () => {
  it('defaults to createdAt[AscNullsFirst]', () => {
    const expected = [{ field: 'createdAt', direction: 'AscNullsFirst' }];
    expect(parseOrderBy(undefined, companySchema)).toEqual(expected);
    expect(parseOrderBy('', companySchema)).toEqual(expected);
  });

  it('returns a fresh default each time', () => {
    parseOrderBy(undefined, companySchema)[0].direction = 'DescNullsLast';
    expect(parseOrderBy(undefined, companySchema)[0].direction).toBe('AscNullsFirst');
  });

  it('reads each direction, and a bare field as AscNullsFirst', () => {
    expect(
      parseOrderBy('name[AscNullsFirst],createdAt[AscNullsLast],updatedAt[DescNullsFirst],deletedAt[DescNullsLast],id', companySchema),
    ).toEqual([
      { field: 'name', direction: 'AscNullsFirst' },
      { field: 'createdAt', direction: 'AscNullsLast' },
      { field: 'updatedAt', direction: 'DescNullsFirst' },
      { field: 'deletedAt', direction: 'DescNullsLast' },
      { field: 'id', direction: 'AscNullsFirst' },
    ]);
  });

  it('accepts dotted leaves and spaces around terms', () => {
    expect(parseOrderBy(' name.lastName[DescNullsLast] , emails.primaryEmail', personSchema)).toEqual([
      { field: 'name.lastName', direction: 'DescNullsLast' },
      { field: 'emails.primaryEmail', direction: 'AscNullsFirst' },
    ]);
  });

  it('expands composite keys to their leaves with the same direction', () => {
    expect(parseOrderBy('name[DescNullsLast]', personSchema)).toEqual([
      { field: 'name.firstName', direction: 'DescNullsLast' },
      { field: 'name.lastName', direction: 'DescNullsLast' },
    ]);
    expect(parseOrderBy('domainName', companySchema)).toEqual([{ field: 'domainName.primaryLinkUrl', direction: 'AscNullsFirst' }]);
  });

  it('allows id as an explicit term, anywhere', () => {
    expect(parseOrderBy('id[DescNullsLast],createdAt', companySchema)).toEqual([
      { field: 'id', direction: 'DescNullsLast' },
      { field: 'createdAt', direction: 'AscNullsFirst' },
    ]);
  });

  it('allows five terms and refuses six', () => {
    expect(parseOrderBy('name,emails,companyId,createdAt,updatedAt', personSchema)).toHaveLength(6);
    rejects('name.firstName,name.lastName,emails,companyId,createdAt,updatedAt', 'at most 5 terms', 'got 6');
  });

  it('refuses an unknown field and lists the sortable ones', () => {
    const msg = rejects('nme[AscNullsFirst]', 'unknown field "nme"', 'sortable fields: id, name.firstName');
    expect(msg).toContain('name, emails'); // composite keys are listed too
    expect(msg).not.toContain('emails.additionalEmails');
  });

  it('does not treat Object.prototype names as fields', () => {
    rejects('constructor', 'unknown field "constructor"');
    rejects('__proto__', 'unknown field "__proto__"');
    rejects('toString[AscNullsFirst]', 'unknown field "toString"');
  });

  it('refuses a field that cannot be sorted', () => {
    rejects('emails.additionalEmails', 'field "emails.additionalEmails" cannot be sorted', 'sortable fields:');
  });

  it.each(['asc', 'ascNullsFirst', 'ASCNULLSFIRST', 'Asc', 'DescNullsMiddle', ''])('refuses the direction %j', (dir) => {
    rejects(
      `createdAt[${dir}]`,
      `unknown direction "${dir}" for field "createdAt"`,
      'AscNullsFirst, AscNullsLast, DescNullsFirst, DescNullsLast',
    );
  });

  it.each(['name[Asc', 'name]', 'name[AscNullsFirst]x', 'name[[AscNullsFirst]]', 'first name', '.name', 'name.', 'name..x', '1abc', ','])(
    'refuses the malformed term in %j',
    (raw) => {
      rejects(raw, 'is malformed', 'expected field or field[Direction]', 'AscNullsFirst');
    },
  );

  it('names the malformed term', () => {
    rejects('createdAt,name[Asc', 'term "name[Asc" is malformed');
    rejects('createdAt,', 'term "" is malformed');
  });

  it('refuses the same field twice, also through a composite', () => {
    rejects('createdAt,createdAt[DescNullsLast]', 'field "createdAt" is sorted more than once');
    rejects('name.lastName,name', 'field "name" is sorted more than once (through name.lastName)');
    rejects('id,id', 'field "id" is sorted more than once');
  });

  it.each([[['name', 'createdAt']], [42], [null], [{ name: 'AscNullsFirst' }]])('refuses the non-string %p', (raw) => {
    rejects(raw, 'must be a comma list of field[Direction]');
  });

  it('lists sortable fields: sortable leaves, then composite keys', () => {
    expect(sortableFields(companySchema)).toEqual([
      'id',
      'name',
      'domainName.primaryLinkUrl',
      'domainName.primaryLinkLabel',
      'createdAt',
      'updatedAt',
      'deletedAt',
      'domainName',
    ]);
  });
});
