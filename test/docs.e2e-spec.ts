import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createAuthServer } from '../apps/auth-server/src/bootstrap.js';
import { DOC_PAGES } from '../apps/records-api/src/well-known/docs-pages.js';
import { bearer, newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { validateOpenApi } from './open-api-validate.js';
import { freePort } from './public-origin.js';
import type { Http } from './rest-helpers.js';

const PUBLIC_URL = 'http://localhost:3000';

/** `/llms.txt`, `/docs/*`, `/rest/open-api` and `/docs/api-reference` (docs/authentication.md). */
describe('llms.txt, documentation pages and OpenAPI', () => {
  const savedEnv = { ...process.env };
  let app: INestApplication;
  let auth: INestApplication;
  let ds: DataSource;
  let http: Http;

  beforeAll(async () => {
    delete process.env.PUBLIC_URL;
    delete process.env.PORT;
    // The pages also link to the auth server's documents, which the records API forwards.
    const authPort = await freePort();
    process.env.AUTH_PORT = String(authPort);
    auth = await createAuthServer();
    await auth.listen(authPort, '127.0.0.1');
    ({ app, ds, http } = await startApi());
  });
  afterAll(async () => {
    await app?.close();
    await auth?.close();
    process.env = savedEnv;
  });

  /** A link of ours as a path for supertest; undefined for other origins. */
  const pathOf = (href: string, base = `${PUBLIC_URL}/`): string | undefined => {
    const url = new URL(href, base);
    return url.origin === PUBLIC_URL ? url.pathname + url.search : undefined;
  };

  describe('/llms.txt', () => {
    let text: string;
    beforeAll(async () => {
      const res = await request(http).get('/llms.txt');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain; charset=utf-8/);
      text = res.text;
    });

    it('follows the llmstxt.org format: # title, > summary, ## sections of - [name](url): description', () => {
      const lines = text.split('\n');
      expect(lines[0]).toMatch(/^# \S/);
      expect(lines.filter((l) => l.startsWith('# '))).toHaveLength(1);
      const firstBlock = lines.slice(1).find((l) => l.trim() !== '');
      expect(firstBlock).toMatch(/^> \S/);
      const sections = lines.filter((l) => l.startsWith('## '));
      expect(sections.length).toBeGreaterThanOrEqual(2);
      // Inside sections, every list item is a link with a description.
      const firstSection = lines.findIndex((l) => l.startsWith('## '));
      for (const line of lines.slice(firstSection).filter((l) => l.startsWith('- '))) {
        expect(line).toMatch(/^- \[[^\]]+\]\([^)\s]+\): \S/);
      }
    });

    it('lists every documentation page and the OpenAPI document, with absolute URLs on PUBLIC_URL', () => {
      for (const page of DOC_PAGES) expect(text).toContain(`(${PUBLIC_URL}/docs/${page.slug}.md)`);
      expect(text).toContain(`(${PUBLIC_URL}/rest/open-api)`);
      expect(text).toContain(`(${PUBLIC_URL}/docs/api-reference)`);
    });

    it('links only to pages that answer 200, each .md page also as HTML without the .md', async () => {
      const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
      expect(links.length).toBeGreaterThanOrEqual(DOC_PAGES.length + 2);
      for (const link of links) {
        const path = pathOf(link);
        expect(path).toBeDefined();
        const res = await request(http).get(path!);
        expect({ link, status: res.status }).toEqual({ link, status: 200 });
        if (path!.endsWith('.md')) {
          expect(res.headers['content-type']).toMatch(/^text\/markdown; charset=utf-8/);
          const html = await request(http).get(path!.slice(0, -3));
          expect({ link, status: html.status }).toEqual({ link, status: 200 });
          expect(html.headers['content-type']).toMatch(/^text\/html/);
          expect(html.text).toContain('<h1');
        }
      }
    });
  });

  describe('/docs pages', () => {
    it('serve markdown and the same page as HTML; links inside them resolve', async () => {
      const checked = new Set<string>();
      for (const page of DOC_PAGES) {
        const md = await request(http).get(`/docs/${page.slug}.md`);
        expect(md.status).toBe(200);
        expect(md.text).toMatch(/^# /);
        const html = await request(http).get(`/docs/${page.slug}`);
        expect(html.status).toBe(200);
        expect(html.headers['content-security-policy']).toContain("default-src 'none'");
        expect(/<main[^>]*>([\s\S]*)<\/main>/.exec(html.text)![1]).not.toMatch(/<script/i);
        // Relative and same-origin links of the markdown; an anchor must name a heading of the HTML page.
        for (const m of md.text.matchAll(/\]\(([^)\s]+)\)/g)) {
          const [target, anchor] = m[1].split('#');
          const path = pathOf(target || `/docs/${page.slug}.md`, `${PUBLIC_URL}/docs/${page.slug}.md`);
          if (!path) continue;
          if (anchor) {
            const targetHtml = await request(http).get(path.replace(/\.md$/, ''));
            expect({ link: m[1], anchored: targetHtml.text.includes(`id="${anchor}"`) }).toEqual({ link: m[1], anchored: true });
          }
          if (checked.has(path)) continue;
          checked.add(path);
          // Pages that need a signed-in person (/settings/…) answer with a redirect to /login.
          const res = await request(http).get(path);
          expect({
            from: page.slug,
            path,
            resolves: res.status === 200 || (res.status === 303 && /\/login/.test(res.headers.location)),
          }).toEqual({
            from: page.slug,
            path,
            resolves: true,
          });
        }
        // In the HTML, links between pages lead to the HTML pages.
        expect(/<main[^>]*>([\s\S]*)<\/main>/.exec(html.text)![1]).not.toMatch(
          /href="(?:\/docs\/)?(?:quick-start|rest|graphql|authentication|mcp)\.md[#"]/,
        );
      }
      expect((await request(http).get('/docs')).status).toBe(200);
    });

    it('answer 404 in the error shape for an unknown page', async () => {
      for (const path of ['/docs/nope', '/docs/nope.md']) {
        const res = await request(http).get(path);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('NOT_FOUND');
      }
    });

    it('are true to the code: every error code and REST route is documented', async () => {
      const rest = (await request(http).get('/docs/rest.md')).text;
      const { ErrorCode } = await import('#errors/errors.js');
      for (const code of Object.values(ErrorCode)) expect({ code, documented: rest.includes(code) }).toEqual({ code, documented: true });
      const doc = (await request(http).get('/rest/open-api')).body;
      for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
        for (const method of Object.keys(item)) {
          const route = `${method.toUpperCase()} ${path.replace('{id}', ':id')}`;
          expect({ route, documented: rest.includes(route) }).toEqual({ route, documented: true });
        }
      }
      const mcp = (await request(http).get('/docs/mcp.md')).text;
      for (const tool of [
        'list_companies',
        'get_company',
        'create_company',
        'update_company',
        'delete_company',
        'list_people',
        'get_person',
        'create_person',
        'update_person',
        'delete_person',
      ]) {
        expect(mcp).toContain(`\`${tool}\``);
      }
    });
  });

  describe('OpenAPI', () => {
    let doc: any;
    let ws: TestWorkspace;

    beforeAll(async () => {
      const res = await request(http).get('/rest/open-api');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      doc = res.body;
      ws = await newWorkspace(ds, 'openapi');
    });

    it('is a valid OpenAPI 3.1 document, public, for PUBLIC_URL with a bearer scheme', async () => {
      expect(doc.openapi).toBe('3.1.0');
      expect(await validateOpenApi(doc)).toBe('valid 3.1.0');
      expect(doc.servers).toEqual([{ url: PUBLIC_URL }]);
      expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(Object.keys(doc.paths).sort()).toEqual([
        '/rest/batch/companies',
        '/rest/batch/opportunities',
        '/rest/batch/people',
        '/rest/companies',
        '/rest/companies/export',
        '/rest/companies/groupBy',
        '/rest/companies/{id}',
        '/rest/opportunities',
        '/rest/opportunities/export',
        '/rest/opportunities/groupBy',
        '/rest/opportunities/{id}',
        '/rest/people',
        '/rest/people/export',
        '/rest/people/groupBy',
        '/rest/people/{id}',
        '/rest/restore/companies/{id}',
        '/rest/restore/opportunities/{id}',
        '/rest/restore/people/{id}',
        '/rest/search',
        '/rest/vault/secrets',
        '/rest/vault/secrets/{name}',
      ]);
    });

    it('describes what a generated client needs: operation ids, parameters, bodies, envelopes, errors', () => {
      const ops = Object.values<Record<string, any>>(doc.paths).flatMap((item) => Object.values(item));
      expect(ops.map((op) => op.operationId).sort()).toEqual([
        'createCompanies',
        'createCompany',
        'createOpportunities',
        'createOpportunity',
        'createPeople',
        'createPerson',
        'createVaultSecret',
        'deleteCompanies',
        'deleteCompany',
        'deleteOpportunities',
        'deleteOpportunity',
        'deletePeople',
        'deletePerson',
        'deleteVaultSecret',
        'exportCompanies',
        'exportOpportunities',
        'exportPeople',
        'getCompany',
        'getOpportunity',
        'getPerson',
        'getVaultSecret',
        'groupByCompanies',
        'groupByOpportunities',
        'groupByPeople',
        'listCompanies',
        'listOpportunities',
        'listPeople',
        'listVaultSecrets',
        'restoreCompany',
        'restoreOpportunity',
        'restorePerson',
        'search',
        'updateCompanies',
        'updateCompany',
        'updateOpportunities',
        'updateOpportunity',
        'updatePeople',
        'updatePerson',
        'updateVaultSecret',
      ]);
      for (const op of ops) {
        expect(op.security).toEqual([{ bearer: [] }]);
        expect(op.responses['401']).toBeDefined();
      }
      const list = doc.paths['/rest/companies'].get;
      expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
        'depth',
        'ending_before',
        'fields',
        'filter',
        'limit',
        'order_by',
        'starting_after',
      ]);
      expect(list.responses['200'].content['application/json'].schema.properties.data.properties.companies.items.$ref).toBe(
        '#/components/schemas/CompanyModel',
      );
      const create = doc.paths['/rest/people'].post;
      expect(create.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/PersonCreateInput');
      expect(create.responses['201']).toBeDefined();
      const input = doc.components.schemas.PersonCreateInput.properties;
      expect(Object.keys(input).sort()).toEqual(['companyId', 'emails', 'id', 'name']);
      expect(doc.components.schemas.CompanyCreateInput.required).toEqual(['name']);
      expect(doc.components.schemas.ErrorModel.properties.code.enum).toContain('INVALID_FILTER');
    });

    it('every path and method answers (neither 404 nor 500) when called with an Admin key and plausible values', async () => {
      const company = await request(http).post('/rest/companies').set(bearer(ws.keys.Admin)).send({ name: 'OpenAPI Inc' });
      const person = await request(http)
        .post('/rest/people')
        .set(bearer(ws.keys.Admin))
        .send({ name: { firstName: 'Open' } });
      const opportunity = await request(http).post('/rest/opportunities').set(bearer(ws.keys.Admin)).send({ name: 'OpenAPI deal' });
      const ids: Record<string, string> = {
        companies: company.body.data.createCompany.id,
        people: person.body.data.createPerson.id,
        opportunities: opportunity.body.data.createOpportunity.id,
      };
      const bodies: Record<string, unknown> = {
        'POST /rest/companies': { name: 'Created from the document' },
        'POST /rest/batch/companies': [{ name: 'Batch one' }],
        'PATCH /rest/companies/{id}': { name: 'Renamed' },
        'POST /rest/people': { emails: { primaryEmail: 'doc@example.com' } },
        'POST /rest/batch/people': [{ name: { lastName: 'Batch' } }],
        'PATCH /rest/people/{id}': { companyId: ids.companies },
        'POST /rest/opportunities': { name: 'Created from the document', amount: { amountMicros: 1_000_000, currencyCode: 'USD' } },
        'POST /rest/batch/opportunities': [{ name: 'Batch deal', stage: 'MEETING' }],
        'PATCH /rest/opportunities/{id}': { companyId: ids.companies, pointOfContactId: ids.people },
        'PATCH /rest/companies': { name: 'Renamed by filter' },
        'PATCH /rest/people': { name: { lastName: 'By filter' } },
        'PATCH /rest/opportunities': { name: 'Renamed by filter' },
        'POST /rest/vault/secrets': { name: 'FROM_THE_DOCUMENT', value: 'created from the document' },
        'PATCH /rest/vault/secrets/{name}': { value: 'rotated from the document' },
      };
      // The vault's routes name a secret (docs/vault.md).
      await request(http).post('/rest/vault/secrets').set(bearer(ws.keys.Admin)).send({ name: 'OPENAPI_SECRET', value: 'v' });
      // Restore needs a deleted record of each object.
      const deleted: Record<string, string> = {};
      for (const [object, body] of [
        ['companies', { name: 'To restore' }],
        ['people', {}],
        ['opportunities', { name: 'To restore' }],
      ] as const) {
        const made = await request(http).post(`/rest/${object}`).set(bearer(ws.keys.Admin)).send(body);
        deleted[object] = Object.values<{ id: string }>(made.body.data)[0].id;
        await request(http).delete(`/rest/${object}/${deleted[object]}`).set(bearer(ws.keys.Admin));
      }
      // Deletes last, so the ids stay readable for the other calls.
      const calls = Object.entries<Record<string, any>>(doc.paths)
        .flatMap(([path, item]) => Object.keys(item).map((method) => ({ path, method })))
        .sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
      for (const { path, method } of calls) {
        const object = path.includes('compan') ? 'companies' : path.includes('opportunit') ? 'opportunities' : 'people';
        // GET /rest/search (docs/rest.md) needs its q; restore needs a deleted record.
        const url =
          path === '/rest/search'
            ? '/rest/search?q=open'
            : path.replace('{id}', path.startsWith('/rest/restore/') ? deleted[object] : ids[object]).replace('{name}', 'OPENAPI_SECRET');
        const key = `${method.toUpperCase()} ${path}`;
        let req = (request(http) as any)[method](url).set(bearer(ws.keys.Admin));
        // Changes by filter: a filter that keeps nothing, so the records stay for the other calls.
        if ((method === 'patch' || method === 'delete') && !path.includes('{id}') && !path.includes('{name}'))
          req = req.query({ filter: `id[eq]:${randomUUID()}` });
        if (method === 'get' && path.endsWith('/groupBy')) req = req.query({ group_by: 'createdAt:month', aggregate: 'count' });
        else if (method === 'get' && path.endsWith('/export')) req = req.query({ format: 'csv', filter: 'createdAt[gte]:"2000-01-01"' });
        else if (method === 'get' && !path.endsWith('{id}') && path !== '/rest/search' && !path.startsWith('/rest/vault/'))
          req = req.query({ limit: 5, order_by: 'createdAt[DescNullsLast]', depth: 1 });
        if (bodies[key] !== undefined) req = req.send(bodies[key]);
        const res = await req;
        expect({ key, status: res.status }).toEqual({
          key,
          status: Number(Object.keys(doc.paths[path][method].responses).find((s) => s.startsWith('2'))),
        });
      }
    });

    it('is served as Swagger UI at /docs/api-reference, with its assets from this server', async () => {
      const page = await request(http).get('/docs/api-reference');
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      const assets = [...page.text.matchAll(/(?:src|href)=['"]([^'"]+)['"]/g)].map((m) => m[1]).filter((u) => !u.startsWith('data:'));
      expect(assets.length).toBeGreaterThan(2);
      for (const asset of assets) {
        expect(asset).not.toMatch(/^https?:/);
        const res = await request(http).get(new URL(asset, `${PUBLIC_URL}/docs/api-reference`).pathname);
        expect({ asset, status: res.status }).toEqual({ asset, status: 200 });
      }
      const init = await request(http).get('/docs/api-reference/swagger-ui-init.js');
      expect(init.status).toBe(200);
      expect(init.text).toContain('"openapi": "3.1.0"');
    });
  });

  it('needs no credentials anywhere under /docs, /llms.txt and /rest/open-api', async () => {
    for (const path of ['/llms.txt', '/docs', '/docs/rest', '/docs/rest.md', '/rest/open-api', '/docs/api-reference']) {
      expect({ path, status: (await request(http).get(path)).status }).toEqual({ path, status: 200 });
    }
    // …while the API itself still does.
    expect((await request(http).get(`/rest/companies/${randomUUID()}`)).status).toBe(401);
  });
});
