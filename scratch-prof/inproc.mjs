process.env.NODE_ENV = 'production'; process.env.RATE_LIMIT_PER_MINUTE = '0'; process.env.LOG_LEVEL = 'warn'; process.env.WEBHOOKS_WORKER = 'off';
const { resolveDatabaseUrl } = await import('/work/main/dist/libs/database/src/data-source.js');
const seed = await import('/work/main/dist/bench/seed.js');
const { url, embedded } = await resolveDatabaseUrl(() => {});
const benchUrl = seed.benchDatabaseUrl(url, 'records_bench');
const data = await seed.prepareBenchData(benchUrl, 100000, () => {});
process.env.DATABASE_URL = benchUrl;
const { createRecordsApi } = await import('/work/main/dist/apps/records-api/src/bootstrap.js');
const app = await createRecordsApi(); await app.init();
const { GraphQLSchemaHost } = await import('@nestjs/graphql');
const { parse, validate, execute } = await import('graphql');
const schema = app.get(GraphQLSchemaHost).schema;
const { BearerAuthService } = await import('/work/main/dist/libs/auth/src/bearer-auth.service.js');
const { createLoaders } = await import('/work/main/dist/apps/records-api/src/graphql/loaders.js');
const { RecordsService } = await import('/work/main/dist/apps/records-api/src/objects/records.service.js');
const auth = app.get(BearerAuthService); const records = app.get(RecordsService);
const principal = await auth.authenticate(`Bearer ${data.secret}`);
const time = async (label, n, fn) => { for (let i = 0; i < 200; i++) await fn(); const c = process.cpuUsage(); const t = performance.now(); for (let i = 0; i < n; i++) await fn(); const u = process.cpuUsage(c); console.log(label, ((performance.now() - t) * 1000 / n).toFixed(0), 'µs wall', ((u.user + u.system) / n).toFixed(0), 'µs cpu'); };
for (const q of (process.env.Q ? [process.env.Q] : ['{ companies(first:1){ totalCount } }', '{ companies(first:60){ totalCount } }', '{ companies(first:60){ totalCount edges { node { id name } } } }'])) {
  const doc = parse(q);
  if (process.env.JIT) {
    const { compileQuery, isCompiledQuery } = await import('graphql-jit');
    const c = compileQuery(schema, doc);
    if (!isCompiledQuery(c)) throw new Error(JSON.stringify(c));
    await time(`jit ${q}`, Number(process.env.N ?? 2000), async () => { const r = await c.query(undefined, { req: { principal, headers: {} }, principal, loaders: createLoaders(principal, records) }, {}); if (r.errors) throw r.errors[0]; JSON.stringify(r); });
  }
  await time(`execute ${q}`, Number(process.env.N ?? 2000), async () => { const r = await execute({ schema, document: doc, contextValue: { req: { principal, headers: {} }, principal, loaders: createLoaders(principal, records) } }); if (r.errors) throw r.errors[0]; });
}
const svc = records.service ? records : records;
const pg = (await import('pg')).default;
const pool = new pg.Pool({ connectionString: benchUrl, max: 2 });
if (!process.env.Q) await time('raw pg 61 rows', 2000, () => pool.query(`SELECT id, name, domain_primary_link_url, domain_primary_link_label, domain_secondary_links, created_at, updated_at, deleted_at FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 61`, [data.workspaceId]));
if (!process.env.Q) await time('raw pg 61 rows asc', 2000, () => pool.query(`SELECT id, name, domain_primary_link_url, domain_primary_link_label, domain_secondary_links, created_at, updated_at, deleted_at FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY created_at ASC, id ASC LIMIT 61`, [data.workspaceId]));
await pool.end();
await app.close(); if (embedded?.owned) await embedded.stop();
