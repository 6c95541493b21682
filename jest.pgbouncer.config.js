// The records suites again, through a real PgBouncer in transaction mode (docs/scaling.md "Behind
// PgBouncer"): `npm run test:pgbouncer`. CI runs it once, on the machine's Node. A subset that
// covers records over REST, GraphQL and MCP (writes, lists, upserts), plus the pooler's own
// spec (credential cache polling, session URL work, prepared statements off).
import { existsSync } from 'node:fs';
import { common } from './jest.config.js';

const bin = process.env.PGBOUNCER_BIN || '/usr/sbin/pgbouncer';
const suites = ['rest-records', 'graphql', 'mcp', 'upsert'];

export default {
  projects: [
    {
      ...common,
      displayName: 'pgbouncer',
      // Without the binary only the pooler's spec runs, and it skips saying why.
      testMatch: [
        '<rootDir>/test/pooler.pgbouncer-spec.ts',
        ...(existsSync(bin) ? suites.map((name) => `<rootDir>/test/${name}.e2e-spec.ts`) : []),
      ],
      globalSetup: '<rootDir>/test/pgbouncer-setup.mjs',
      globalTeardown: '<rootDir>/test/pgbouncer-teardown.mjs',
      setupFiles: ['<rootDir>/test/pgbouncer-env.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/quiet-nest.ts'],
    },
  ],
  maxWorkers: 2,
  testTimeout: 30000,
};
