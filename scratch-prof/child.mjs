process.env.RATE_LIMIT_PER_MINUTE = '0'; process.env.NODE_ENV = 'production'; process.env.LOG_LEVEL = 'warn';
const v8 = await import('node:v8');
const { createRecordsApi } = await import('/work/main/dist/apps/records-api/src/bootstrap.js');
const app = await createRecordsApi(); await app.listen(0, '127.0.0.1');
process.send({ port: app.getHttpServer().address().port });
process.on('message', (m) => { if (m === 'mem') { const u = process.memoryUsage(); process.send({ mem: Object.fromEntries(Object.entries(u).map(([k, v]) => [k, Math.round(v / 1048576)])), spaces: v8.getHeapSpaceStatistics().filter(s=>s.space_size>1e6).map((s) => `${s.space_name} ${Math.round(s.space_used_size/1048576)}/${Math.round(s.space_size/1048576)}`).join(', ') }); } });
process.on('disconnect', () => { app.getHttpServer().closeAllConnections(); void app.close().finally(() => process.exit(0)); });
