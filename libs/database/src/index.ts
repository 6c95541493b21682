export * from '#config/config.js';
export * from './data-source.js';
export * from './embedded-postgres.js';
export * from './entities/index.js';
export * from './sql.js';
