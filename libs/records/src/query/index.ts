export * from './types.js';
export * from './limit.js';
export * from './order-by.js';
export * from './filter.js';
export * from './cursor.js';
export * from './sql.js';
