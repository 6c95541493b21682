import { fork } from 'node:child_process';
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
const { resolveDatabaseUrl } = await import('/work/main/dist/libs/database/src/data-source.js');
const seed = await import('/work/main/dist/bench/seed.js');
const { url, embedded } = await resolveDatabaseUrl(() => {});
const benchUrl = seed.benchDatabaseUrl(url, 'records_bench');
const data = await seed.prepareBenchData(benchUrl, 100000, () => {});
const flags = (process.env.FLAGS ?? '').split(' ').filter(Boolean);
const child = fork('/work/main/dist/bench/api-server.js', [], { execArgv: flags, env: { ...process.env, DATABASE_URL: benchUrl, ...(process.env.ARENA ? { MALLOC_ARENA_MAX: process.env.ARENA } : {}) } });
const { readMemory } = await import('/work/main/dist/bench/rss.js');
let maxRss = 0; const sampler = setInterval(() => { maxRss = Math.max(maxRss, readMemory(child.pid)?.rssMb ?? 0); }, 100);
const { port } = await new Promise((r) => child.once('message', r));
const cpu = () => { const f = (readFileSync(`/proc/${child.pid}/stat`, 'utf8')).split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) / 100; };
const mem = async (l) => { console.log(l, JSON.stringify(readMemory(child.pid)), 'max', maxRss, 'cpu s', cpu()); };
await mem('boot');
const base = `http://127.0.0.1:${port}`; let n = 0;
const reqs = [
  (i) => ({ method: 'GET', path: `/rest/companies?limit=60&order_by=createdAt%5BDescNullsLast%5D` }),
  (i) => ({ method: 'GET', path: `/rest/companies/${data.companyIds[i % 1000]}` }),
  (i) => ({ method: 'POST', path: '/graphql', body: JSON.stringify({ query: '{ companies(first:60){ totalCount edges { node { id name } } } }' }) }),
  (i) => ({ method: 'GET', path: `/rest/people?filter=name.lastName%5Beq%5D%3A%22Smith%22&limit=60` }),
];
const t0 = Date.now();
const r = await autocannon({ url: base, connections: 16, amount: Number(process.env.AMOUNT ?? 20000), headers: { authorization: `Bearer ${data.secret}`, 'content-type': 'application/json' },
  requests: [{ setupRequest: (req) => { const i = n++; return { ...req, ...reqs[i % reqs.length](i) }; } }] });
console.log(`${r.requests.total} requests in ${((Date.now() - t0) / 1000).toFixed(1)} s, non2xx ${r.non2xx}`);
await mem('after load');
clearInterval(sampler); child.disconnect(); await new Promise((r) => child.once('exit', r));
if (embedded?.owned) await embedded.stop();
