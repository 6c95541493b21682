export * from './types.js';
export * from './registry.js';
export { formulaGuard, subColumn, subFieldGraphql, subFieldInput, subFieldOutput } from './composite.js';
export { CURRENCY_CODE, LINK, MAX_OPTIONS, MAX_TEXT, columnOf, indexedValue, ownValue, requiredOnCreate, valuesOf } from './shared.js';
export { MAX_RICH_TEXT } from './rich-text.js';
export { searchFunctions } from './search-sql.js';
export { isRelationType, relationSettings } from './relation.js';
