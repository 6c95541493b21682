process.env.NODE_ENV = 'production'; process.env.RATE_LIMIT_PER_MINUTE = '0'; process.env.LOG_LEVEL = 'warn'; process.env.WEBHOOKS_WORKER = 'off';
const { resolveDatabaseUrl } = await import('/work/main/dist/libs/database/src/data-source.js');
const seed = await import('/work/main/dist/bench/seed.js');
const { url, embedded } = await resolveDatabaseUrl(() => {});
const benchUrl = seed.benchDatabaseUrl(url, 'records_bench');
const data = await seed.prepareBenchData(benchUrl, 100000, () => {});
process.env.DATABASE_URL = benchUrl;
const { createRecordsApi } = await import('/work/main/dist/apps/records-api/src/bootstrap.js');
const app = await createRecordsApi(); await app.listen(0, '127.0.0.1');
const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
for (const accept of [undefined, 'application/json', 'application/graphql-response+json', '*/*']) {
  const res = await fetch(base + '/graphql', { method: 'POST', headers: { authorization: `Bearer ${data.secret}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body: JSON.stringify({ query: '{ companies(first:2){ totalCount edges { node { id name } } } }' }) });
  console.log(accept, res.status, JSON.stringify([...res.headers]), (await res.text()).slice(0, 300));
}
await app.close(); if (embedded?.owned) await embedded.stop();
