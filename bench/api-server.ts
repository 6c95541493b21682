import type { AddressInfo } from 'node:net';

/**
 * The records API as a child process of the bench (its own event loop, not shared with
 * autocannon). The parent passes DATABASE_URL (records_bench); the settings below are
 * read by loadConfig() when the app is created, so they are set before the import.
 */
process.env.RATE_LIMIT_PER_MINUTE = '0';
process.env.RATE_LIMIT_PER_WORKSPACE_PER_MINUTE = '0';
// As deployed; also keeps the GraphQL schema in memory instead of writing apps/records-api/schema.gql.
process.env.NODE_ENV = 'production';
process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'warn';

const { createRecordsApi } = await import('../apps/records-api/src/bootstrap.js');
const app = await createRecordsApi();
await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address() as AddressInfo;
process.send?.({ port });
process.on('disconnect', () => {
  app.getHttpServer().closeAllConnections();
  void app.close().finally(() => process.exit(0));
});
