import { startAuthServer } from './bootstrap.js';

await startAuthServer();
