import { expect } from '@jest/globals';
import { BadInputError } from '#errors/errors.js';

/** The BadInputError `fn` throws; fails the test when it throws nothing or something else. */
export function rejection(fn: () => unknown): BadInputError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BadInputError);
    return err as BadInputError;
  }
  throw new Error('expected a BadInputError');
}
