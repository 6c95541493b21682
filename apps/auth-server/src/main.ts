import '#ops/json-console.js';
import { exitOnConfigError } from '#config/config.js';
import { startAuthServer } from './bootstrap.js';

// Started by `npm start` (apps/start.ts): go down with the launcher, even when it is killed.
if (process.send) process.on('disconnect', () => process.exit(0));

// A wrong setting (VAULT_MASTER_KEY, …) ends the start with one line saying why.
await startAuthServer().catch(exitOnConfigError);
