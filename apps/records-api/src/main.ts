import '#ops/json-console.js';
import { startRecordsApi } from './bootstrap.js';

// Started by `npm start` (apps/start.ts): go down with the launcher, even when it is killed.
if (process.send) process.on('disconnect', () => process.exit(0));

await startRecordsApi();
