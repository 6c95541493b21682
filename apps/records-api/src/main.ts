import { startRecordsApi } from './bootstrap.js';

await startRecordsApi();
