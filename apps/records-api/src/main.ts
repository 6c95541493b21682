import '#ops/json-console.js';
import { exitOnConfigError } from '#config/config.js';
import { answerStatsOverIpc } from '#ops/process-stats.js';
import { startRecordsApi } from './bootstrap.js';

// Started by `npm start` (apps/start.ts): go down with the launcher, even when it is killed.
if (process.send) process.on('disconnect', () => process.exit(0));
// The launcher (or a test) may ask for the process's own figures over that channel.
answerStatsOverIpc();

// A wrong setting (VAULT_MASTER_KEY, …) ends the start with one line saying why.
await startRecordsApi().catch(exitOnConfigError);
