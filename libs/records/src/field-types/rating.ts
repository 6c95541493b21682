import { oneOf } from './select.js';

/** RATING: one to five (Twenty's RATING values). */
export const rating = oneOf({
  name: 'RATING',
  word: 'one of RATING_1 … RATING_5',
  pageWord: '1 to 5',
  values: ['RATING_1', 'RATING_2', 'RATING_3', 'RATING_4', 'RATING_5'],
});
