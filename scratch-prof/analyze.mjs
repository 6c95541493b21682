import { readdirSync, readFileSync } from 'node:fs';
const dir = process.argv[2]; const skipFrac = Number(process.argv[3] ?? 0.5);
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const prof = JSON.parse(readFileSync(`${dir}/${file}`, 'utf8'));
const byId = new Map(prof.nodes.map((nd) => [nd.id, nd]));
const parent = new Map(); for (const nd of prof.nodes) for (const c of nd.children ?? []) parent.set(c, nd.id);
let t = 0; const times = prof.timeDeltas.map((d) => (t += d)); const end = t;
const dt = new Map(); prof.samples.forEach((s, i) => { if (times[i] < end * skipFrac) return; dt.set(s, (dt.get(s) ?? 0) + prof.timeDeltas[i]); });
const key = (c) => `${c.functionName || '(anon)'} ${c.url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, '')}:${c.lineNumber}`;
const pkg = (u) => { const m = u.match(/node_modules\/((@[^/]+\/)?[^/]+)/); if (m) return m[1]; if (u.includes('/dist/')) return 'ours:' + u.split('/dist/')[1]; return u || '(native)'; };
const self = new Map(), incl = new Map(), byPkg = new Map(); let total = 0;
for (const [id, w] of dt) { total += w; const c = byId.get(id).callFrame; self.set(key(c), (self.get(key(c)) ?? 0) + w); byPkg.set(pkg(c.url), (byPkg.get(pkg(c.url)) ?? 0) + w);
  const seen = new Set(); let cur = id; while (cur !== undefined) { const k = key(byId.get(cur).callFrame); if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + w); } cur = parent.get(cur); } }
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, w]) => `${(100 * w / total).toFixed(1).padStart(5)}%  ${n}`).join('\n');
console.log('--- self by package\n' + top(byPkg, 25)); console.log('--- self\n' + top(self, 45)); console.log('--- inclusive\n' + top(incl, Number(process.argv[4] ?? 70)));
