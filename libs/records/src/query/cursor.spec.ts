import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '#errors/errors.js';
import { personSchema } from '../schemas.js';
import { decodeCursor, encodeCursor, orderSignature } from './cursor.js';
import type { OrderTerm } from './types.js';
import { rejection } from './rejection.spec-helper.js';

const ID = '6f1b1f6e-8c9a-4c2e-9d8f-0a1b2c3d4e5f';
const byCreated: OrderTerm[] = [{ field: 'createdAt', direction: 'AscNullsFirst' }];
const byName: OrderTerm[] = [
  { field: 'name.lastName', direction: 'DescNullsLast' },
  { field: 'name.firstName', direction: 'DescNullsLast' },
];

function rejects(raw: unknown, order: OrderTerm[], why: string, param = 'starting_after'): void {
  const err = rejection(() => decodeCursor(raw, order, param, personSchema));
  expect(err.code).toBe(ErrorCode.INVALID_CURSOR);
  expect(err.status).toBe(400);
  expect(err.message).toContain(`${param} must be a cursor from pageInfo (startCursor or endCursor) of a list with the same order_by`);
  expect(err.message).toContain(why);
}

const forge = (data: unknown) => Buffer.from(JSON.stringify(data)).toString('base64url');

describe('cursor', () => {
  it('refuses a forged value with a NUL character', () => {
    rejects(forge({ o: orderSignature(byName), v: ['\u0000', null], i: ID }), byName, 'values of the wrong type');
  });

  it('round-trips values, NULLs and odd text', () => {
    const payload = { values: ['Ünïcødé "q" ,()', null], id: ID };
    const raw = encodeCursor(payload, byName);
    expect(raw).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(raw, byName, 'starting_after', personSchema)).toEqual(payload);
    expect(decodeCursor(raw, byName, 'ending_before')).toEqual(payload);
  });

  it('records the order signature, tie-breaker included', () => {
    expect(orderSignature(byCreated)).toBe('createdAt:AscNullsFirst,id:AscNullsLast');
    expect(orderSignature(byName)).toBe('name.lastName:DescNullsLast,name.firstName:DescNullsLast,id:DescNullsLast');
    const raw = encodeCursor({ values: ['2024-01-01T00:00:00.000Z'], id: ID }, byCreated);
    expect(JSON.parse(Buffer.from(raw, 'base64url').toString())).toEqual({
      o: 'createdAt:AscNullsFirst,id:AscNullsLast',
      v: ['2024-01-01T00:00:00.000Z'],
      i: ID,
    });
  });

  it('reads the same cursor with or without the id tie-breaker in the order', () => {
    const raw = encodeCursor({ values: ['2024-01-01T00:00:00.000Z'], id: ID }, byCreated);
    const withId: OrderTerm[] = [...byCreated, { field: 'id', direction: 'AscNullsLast' }];
    expect(decodeCursor(raw, withId, 'starting_after').id).toBe(ID);
  });

  it('handles an order of id alone (no values)', () => {
    const order: OrderTerm[] = [{ field: 'id', direction: 'DescNullsLast' }];
    expect(decodeCursor(encodeCursor({ values: [], id: ID }, order), order, 'ending_before')).toEqual({ values: [], id: ID });
  });

  it('refuses to encode values that do not fit the order', () => {
    expect(() => encodeCursor({ values: [], id: ID }, byCreated)).toThrow('cursor needs 1 values, got 0');
  });

  it('refuses a cursor of another order, naming the parameter', () => {
    const raw = encodeCursor({ values: ['2024-01-01T00:00:00.000Z'], id: ID }, byCreated);
    rejects(raw, [{ field: 'createdAt', direction: 'DescNullsLast' }], 'issued for a different order_by');
    rejects(raw, [{ field: 'updatedAt', direction: 'AscNullsFirst' }], 'issued for a different order_by', 'ending_before');
  });

  it.each([
    ['nothing', undefined, 'got an empty value'],
    ['an empty string', '', 'got an empty value'],
    ['a repeated parameter', ['a', 'b'], 'got the parameter more than once'],
    ['a number', 42, 'got 42'],
    ['non-base64url characters', 'abc+/=', 'not a valid cursor'],
    ['base64url of non-JSON', Buffer.from('{oops').toString('base64url'), 'not a valid cursor'],
    ['JSON of an array', forge([1, 2, 3]), 'not a valid cursor'],
    ['JSON null', forge(null), 'not a valid cursor'],
    ['an extra key', forge({ o: orderSignature(byCreated), v: [null], i: ID, x: 1 }), 'not a valid cursor'],
    ['a missing key', forge({ o: orderSignature(byCreated), v: [null] }), 'not a valid cursor'],
    ['values not an array', forge({ o: orderSignature(byCreated), v: 'x', i: ID }), 'not a valid cursor'],
    ['a numeric id', forge({ o: orderSignature(byCreated), v: [null], i: 7 }), 'not a valid cursor'],
    ['too many values', forge({ o: orderSignature(byCreated), v: [null, null], i: ID }), 'does not match the order_by'],
    ['too few values', forge({ o: orderSignature(byCreated), v: [], i: ID }), 'does not match the order_by'],
    ['a non-uuid id', forge({ o: orderSignature(byCreated), v: [null], i: 'abc' }), 'does not hold a valid record id'],
    ['a numeric value', forge({ o: orderSignature(byCreated), v: [5], i: ID }), 'values of the wrong type'],
    ['an object value', forge({ o: orderSignature(byCreated), v: [{}], i: ID }), 'values of the wrong type'],
    ['an unreadable timestamp', forge({ o: orderSignature(byCreated), v: ['yesterday'], i: ID }), 'invalid value for createdAt'],
    ['a too long cursor', 'A'.repeat(8193), 'not a valid cursor'],
  ])('refuses %s', (_, raw, why) => {
    rejects(raw, byCreated, why);
  });

  it('checks uuid values against the schema', () => {
    const order: OrderTerm[] = [{ field: 'companyId', direction: 'AscNullsLast' }];
    rejects(forge({ o: orderSignature(order), v: ['nope'], i: ID }), order, 'invalid value for companyId');
    expect(decodeCursor(forge({ o: orderSignature(order), v: [ID], i: ID }), order, 'starting_after', personSchema).values).toEqual([ID]);
  });
});
