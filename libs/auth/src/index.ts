export * from '#identity/api-key-expiry.js';
export * from './auth.guard.js';
export * from './bearer-auth.service.js';
export * from './credential-cache.js';
export * from './principal.js';
export * from '#identity/secrets.js';
export * from './www-authenticate.js';
export * from './field-access.js';
