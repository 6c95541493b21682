import * as oidc from 'openid-client';
import request from 'supertest';
import { addMember, createUser, findRole } from '#identity/accounts.js';
import { createServerApp } from '#identity/server-apps.js';
import { FormBrowser } from '../bench/form-browser.js';
import { newWorkspace, type TestWorkspace } from './factories.js';
import { pkceAuthorizationUrl } from './oauth-flow.js';
import { PASSWORD, startPublicOrigin, unique, type PublicOrigin } from './public-origin.js';
import { expectError } from './rest-helpers.js';

/**
 * OAuth scopes that narrow the role (docs/authentication.md "Scopes";
 * docs/decisions/0063-oauth-scopes-for-agents.md): every token comes from a real
 * authorization-code flow (or client credentials) through the public origin, and is used
 * on REST, GraphQL and MCP as a client would.
 */
const REDIRECT = 'http://127.0.0.1:8765/callback';
const insecure = { execute: [oidc.allowInsecureRequests] };
const COUNT_COMPANIES = '{ companies { totalCount } }';
const NARROW_SCOPES = ['records:read', 'records:write', 'records:delete', 'data_model:write'];

interface Tool {
  name: string;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean };
}

describe('OAuth scopes that narrow the role', () => {
  let origin: PublicOrigin;
  let ws: TestWorkspace;
  let admin: { id: string; email: string };
  let viewer: { id: string; email: string };
  let config: oidc.Configuration;
  /** A company of the workspace every attack aims at. */
  let target: string;

  beforeAll(async () => {
    origin = await startPublicOrigin();
    ws = await newWorkspace(origin.ds, 'scopes');
    [admin, viewer] = await Promise.all(['Admin', 'Viewer'].map((role) => member(ws.id, role)));
    [{ id: target }] = await origin.ds.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, 'Target Inc') RETURNING id`, [ws.id]);
    config = await register();
  });

  afterAll(async () => {
    await origin?.close();
  });

  /** A person with PASSWORD holding `role` in the workspace. */
  async function member(workspaceId: string, role: string) {
    const user = await createUser(origin.ds, `${unique(role.toLowerCase())}@example.com`, PASSWORD);
    await addMember(origin.ds, workspaceId, user.id, await findRole(origin.ds, workspaceId, role));
    return user;
  }

  const register = (metadata: Partial<oidc.ClientMetadata> = {}) =>
    oidc.dynamicClientRegistration(
      new URL(origin.url),
      { redirect_uris: [REDIRECT], client_name: 'Scoped Agent', ...metadata },
      undefined,
      insecure,
    );

  /** A person's token for `scope` through the real pages (sign-in, consent), and the consent page it showed. */
  async function tokenFor(scope: string | undefined, email = admin.email, client = config) {
    const params: Record<string, string> = scope === undefined ? {} : { scope };
    const browser = new FormBrowser(REDIRECT);
    const { url, verifier } = await pkceAuthorizationUrl(client, REDIRECT, params);
    // pkceAuthorizationUrl's default scope stands unless this asks for one or for none at all.
    const authorize = scope === undefined ? withoutScope(url) : url;
    await browser.go(authorize);
    if (browser.labels().includes('Password')) await browser.submit('Sign in', { email, password: PASSWORD });
    const consent = browser.lastBody;
    await browser.submit('Allow');
    expect(browser.lastUrl.startsWith(REDIRECT)).toBe(true);
    const tokens = await oidc.authorizationCodeGrant(client, new URL(browser.lastUrl), { pkceCodeVerifier: verifier });
    return { tokens, token: tokens.access_token, consent, browser };
  }

  const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
  const api = () => request(origin.url);
  const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

  const postGraphql = async (token: string, query: string, variables: Record<string, unknown> = {}) =>
    (await api().post('/graphql').set(auth(token)).send({ query, variables })).body;

  /** The code of a GraphQL answer's first error. */
  const refusalOf = async (token: string, query: string, variables: Record<string, unknown> = {}) =>
    (await postGraphql(token, query, variables)).errors?.[0]?.extensions?.code;

  async function mcp(token: string, method: string, params?: Record<string, unknown>) {
    const res = await fetch(`${origin.url}/mcp`, {
      method: 'POST',
      headers: { ...auth(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return { status: res.status, body: (await res.json()) as any };
  }
  const toolsOf = async (token: string): Promise<Tool[]> => {
    const res = await mcp(token, 'tools/list');
    expect(res.status).toBe(200);
    return res.body.result.tools;
  };
  const callTool = async (token: string, name: string, args: Record<string, unknown>) => {
    const res = await mcp(token, 'tools/call', { name, arguments: args });
    expect(res.status).toBe(200);
    return res.body.result as { isError?: boolean; content: { text: string }[] };
  };

  /** Every record of the workspace, deleted ones too: "nothing written" compares two of these. */
  const snapshot = () =>
    origin.ds.query(
      `SELECT 'company' AS kind, id, name AS label, deleted_at, updated_at FROM companies WHERE workspace_id = $1
       UNION ALL SELECT 'person', id, last_name, deleted_at, updated_at FROM people WHERE workspace_id = $1
       UNION ALL SELECT 'opportunity', id, name, deleted_at, updated_at FROM opportunities WHERE workspace_id = $1 ORDER BY 1, 2`,
      [ws.id],
    );

  it('lists the scopes in both protected-resource documents and in the authorization server metadata', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const doc = (await api().get(path)).body;
      expect(doc.scopes_supported).toEqual(expect.arrayContaining(['api', ...NARROW_SCOPES]));
    }
    const meta = (await api().get('/.well-known/oauth-authorization-server')).body;
    expect(meta.scopes_supported).toEqual(expect.arrayContaining(['api', ...NARROW_SCOPES]));
  });

  it('records:read only, on an Admin: reads work on REST, GraphQL and MCP; every write and delete is FORBIDDEN and nothing is written', async () => {
    const { token, consent } = await tokenFor('records:read');
    expect(claimsOf(token).scope).toBe('records:read');
    // The consent page says in words what the token may do, and nothing more.
    expect(consent).toContain('Read records');
    expect(consent).toContain('(records:read)');
    expect(consent).not.toContain('(api)');
    expect(consent).not.toContain('(records:write)');
    const before = await snapshot();

    // REST: reads answer, every kind of write is 403 in the documented shape.
    expect((await api().get('/rest/companies').set(auth(token))).status).toBe(200);
    expect((await api().get(`/rest/companies/${target}`).set(auth(token))).body.data.company.name).toBe('Target Inc');
    expect((await api().get('/rest/search?q=Target').set(auth(token))).status).toBe(200);
    const refused = [
      api().post('/rest/companies').send({ name: 'Nope' }),
      api()
        .post('/rest/batch/companies')
        .send([{ name: 'Nope' }]),
      api().patch(`/rest/companies/${target}`).send({ name: 'Changed' }),
      api().patch('/rest/companies?filter=id[is]:NOT_NULL').send({ name: 'Changed' }),
      api().delete(`/rest/companies/${target}`),
      api().delete(`/rest/companies/${target}?hard=true`),
      api().delete('/rest/companies?filter=id[is]:NOT_NULL'),
      api().patch(`/rest/restore/companies/${target}`).send({}),
      api().post('/rest/imports?object=companies').set('Content-Type', 'text/csv').send('name\nNope\n'),
      api().post('/rest/metadata/fields').send({ object: 'companies', name: 'tier', type: 'TEXT' }),
      api().get('/rest/metadata/fields'),
      api().get('/rest/vault/secrets'),
    ];
    for (const req of refused) {
      const res = await req.set(auth(token));
      expectError(res, 403, 'FORBIDDEN');
    }
    // The refusal names the scope missing, and says it the way OAuth clients read (RFC 6750 §3.1).
    const create = await api().post('/rest/companies').set(auth(token)).send({ name: 'Nope' });
    expect(create.body.messages[0]).toMatch(/scope.*records:write/);
    expect(create.headers['www-authenticate']).toBe(
      `Bearer realm="${origin.url}", error="insufficient_scope", resource_metadata="${origin.url}/.well-known/oauth-protected-resource", scope="records:write"`,
    );

    // GraphQL: queries answer, mutations are FORBIDDEN.
    const read = await postGraphql(token, '{ companies { totalCount edges { node { name } } } }');
    expect(read.errors).toBeUndefined();
    expect(read.data.companies.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['Target Inc']);
    for (const mutation of [
      `mutation { createCompany(data: {name: "Nope"}) { id } }`,
      `mutation { createCompanies(data: [{name: "Nope"}]) { id } }`,
      `mutation($id: UUID!) { restoreCompany(id: $id) { id } }`,
      `mutation($id: UUID!) { updateCompany(id: $id, data: {name: "Changed"}) { id } }`,
      `mutation($id: UUID!) { deleteCompany(id: $id) { id } }`,
    ]) {
      const res = await postGraphql(token, mutation, mutation.includes('$id') ? { id: target } : {});
      expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(res.data?.[Object.keys(res.data ?? {})[0]] ?? null).toBeNull();
    }

    // MCP: the tool list is a Viewer's (no write or delete tool); a write tool called by name,
    // with a forged confirmation, is a FORBIDDEN tool error.
    const tools = await toolsOf(token);
    expect(tools.length).toBeGreaterThan(0);
    expect(tools.filter((t) => t.annotations?.readOnlyHint !== true).map((t) => t.name)).toEqual([]);
    expect(tools.map((t) => t.name).sort()).toEqual((await toolsOf(ws.keys.Viewer)).map((t) => t.name).sort());
    expect((await callTool(token, 'get_company', { id: target })).isError).toBeFalsy();
    for (const [name, args] of [
      ['create_company', { name: 'Nope' }],
      ['update_company', { id: target, name: 'Changed' }],
      ['upsert_company', { name: 'Target Inc' }],
      ['delete_company', { id: target }],
      ['delete_company', { id: target, confirm: true }],
    ] as const) {
      const result = await callTool(token, name, args);
      expect(result.isError).toBe(true);
      expect(result.content[0].text).toMatch(/^FORBIDDEN: /);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('records:read records:write: creates and updates everywhere; deletes are FORBIDDEN and MCP lists no delete tool', async () => {
    const { token, consent } = await tokenFor('records:read records:write');
    expect(consent).toContain('(records:write)');
    expect(consent).not.toContain('(records:delete)');
    const created = await api().post('/rest/companies').set(auth(token)).send({ name: 'Written' });
    expect(created.status).toBe(201);
    const id = created.body.data.createCompany.id;
    expect((await api().patch(`/rest/companies/${id}`).set(auth(token)).send({ name: 'Rewritten' })).status).toBe(200);
    const viaGraphql = await postGraphql(token, 'mutation { createCompany(data: {name: "Via GraphQL"}) { name } }');
    expect(viaGraphql.data.createCompany.name).toBe('Via GraphQL');
    const before = await snapshot();
    expect(expectError(await api().delete(`/rest/companies/${id}`).set(auth(token)), 403, 'FORBIDDEN')).toMatch(/records:delete/);
    expectError(await api().delete('/rest/companies?filter=name[eq]:Rewritten').set(auth(token)), 403, 'FORBIDDEN');
    expect(await refusalOf(token, 'mutation($id: UUID!) { deleteCompany(id: $id) { id } }', { id })).toBe('FORBIDDEN');
    const tools = (await toolsOf(token)).map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['create_company', 'update_company', 'list_companies']));
    expect(tools.filter((name) => name.startsWith('delete_'))).toEqual([]);
    expect((await callTool(token, 'delete_company', { id })).content[0].text).toMatch(/^FORBIDDEN: /);
    expect(await snapshot()).toEqual(before);
  });

  it('data_model:write only: the metadata API works; records are FORBIDDEN on every surface', async () => {
    const { token, consent } = await tokenFor('data_model:write');
    expect(consent).toContain('(data_model:write)');
    const field = await api().post('/rest/metadata/fields').set(auth(token)).send({ object: 'companies', name: 'tier', type: 'TEXT' });
    expect(field.status).toBe(201);
    expect((await api().get('/rest/metadata/fields').set(auth(token))).status).toBe(200);
    expectError(await api().get('/rest/companies').set(auth(token)), 403, 'FORBIDDEN');
    expectError(await api().post('/rest/companies').set(auth(token)).send({ name: 'Nope' }), 403, 'FORBIDDEN');
    expectError(await api().get('/rest/vault/secrets').set(auth(token)), 403, 'FORBIDDEN');
    expect(await refusalOf(token, COUNT_COMPANIES)).toBe('FORBIDDEN');
    // No tool at all (the server then has no tools/list either: "Method not found").
    const listed = await mcp(token, 'tools/list');
    expect(listed.status).toBe(200);
    expect(listed.body.result?.tools ?? []).toEqual([]);
    expect((await callTool(token, 'list_companies', {})).content[0].text).toMatch(/^FORBIDDEN: .*records:read/);
  });

  it('api: the whole role, as before (records, deletes, the data model, the vault)', async () => {
    const { token, consent } = await tokenFor('api');
    expect(consent).toContain('(api)');
    expect(claimsOf(token).scope).toBe('api');
    const id = (await api().post('/rest/companies').set(auth(token)).send({ name: 'Whole role' })).body.data.createCompany.id;
    expect((await api().delete(`/rest/companies/${id}`).set(auth(token))).status).toBe(200);
    expect((await api().get('/rest/metadata/fields').set(auth(token))).status).toBe(200);
    expect((await api().get('/rest/vault/secrets').set(auth(token))).status).toBe(200);
    expect((await toolsOf(token)).map((t) => t.name)).toEqual(expect.arrayContaining(['create_company', 'delete_company']));
  });

  it('a scope never widens the role: a Viewer asking for records:write and records:delete still writes nothing, and lists no write tool', async () => {
    const { token } = await tokenFor('records:read records:write records:delete', viewer.email);
    expectError(await api().post('/rest/companies').set(auth(token)).send({ name: 'Nope' }), 403, 'FORBIDDEN');
    expectError(await api().delete(`/rest/companies/${target}`).set(auth(token)), 403, 'FORBIDDEN');
    expect((await toolsOf(token)).filter((t) => t.annotations?.readOnlyHint !== true)).toEqual([]);
    const { token: whole } = await tokenFor('api', viewer.email);
    expect((await toolsOf(whole)).filter((t) => t.annotations?.readOnlyHint !== true)).toEqual([]);
  });

  it('refresh tokens keep the granted scopes and cannot widen them', async () => {
    const { tokens } = await tokenFor('records:read profile');
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(claimsOf(refreshed.access_token).scope).toBe('records:read profile');
    expect((await api().get('/rest/companies').set(auth(refreshed.access_token))).status).toBe(200);
    expectError(await api().post('/rest/companies').set(auth(refreshed.access_token)).send({ name: 'Nope' }), 403, 'FORBIDDEN');
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!, { scope: 'records:read records:write' })).rejects.toMatchObject({
      error: 'invalid_scope',
    });
  });

  it('a token holding no record scope (a refresh narrowed to profile) reaches none of /rest, /graphql and /mcp', async () => {
    const { tokens } = await tokenFor('records:read profile');
    const narrowed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { scope: 'profile' });
    const token = narrowed.access_token;
    expect(claimsOf(token).scope).toBe('profile');
    expect(expectError(await api().get('/rest/companies').set(auth(token)), 403, 'FORBIDDEN')).toMatch(/api or records:read/);
    const graphql = await api().post('/graphql').set(auth(token)).send({ query: COUNT_COMPANIES });
    expect(graphql.status).toBe(403);
    expect(graphql.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(graphql.body.data).toBeUndefined();
    expect(graphql.headers['www-authenticate']).toContain('error="insufficient_scope", resource_metadata="');
    const res = await mcp(token, 'tools/list');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    const challenge = (await api().post('/mcp').set(auth(token)).send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).headers;
    expect(challenge['www-authenticate']).toBe(
      `Bearer realm="${origin.url}", error="insufficient_scope", resource_metadata="${origin.url}/.well-known/oauth-protected-resource/mcp", scope="api"`,
    );
  });

  it('a request that names no record scope (none, openid, profile) gets api, and the consent page says so', async () => {
    for (const scope of [undefined, 'openid', 'openid profile']) {
      const { token, consent } = await tokenFor(scope);
      expect(consent).toContain('(api)');
      expect(claimsOf(token).scope.split(' ')).toContain('api');
      const created = await api()
        .post('/rest/companies')
        .set(auth(token))
        .send({ name: `Default ${scope}` });
      expect(created.status).toBe(201);
    }
  });

  it('a pushed authorization request (RFC 9126) naming no record scope gets api too', async () => {
    const verifier = oidc.randomPKCECodeVerifier();
    const clientId = config.clientMetadata().client_id;
    const pushed = await fetch(`${origin.url}/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }),
    });
    expect(pushed.status).toBe(201);
    const { request_uri: requestUri } = (await pushed.json()) as { request_uri: string };
    const browser = new FormBrowser(REDIRECT);
    await browser.go(`${origin.url}/oauth/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri })}`);
    await browser.submit('Sign in', { email: admin.email, password: PASSWORD });
    expect(browser.lastBody).toContain('(api)');
    await browser.submit('Allow');
    const tokens = await oidc.authorizationCodeGrant(config, new URL(browser.lastUrl), { pkceCodeVerifier: verifier });
    expect(claimsOf(tokens.access_token).scope).toBe('api');
  });

  it('a narrow grant is not widened without the consent page: asking again for more shows it, asking for as much skips it', async () => {
    const { browser } = await tokenFor('records:read');
    // Same browser, signed in, with a grant for records:read.
    const again = await pkceAuthorizationUrl(config, REDIRECT, { scope: 'records:read' });
    await browser.go(again.url);
    expect(browser.lastUrl.startsWith(REDIRECT)).toBe(true);
    for (const wider of [{ scope: 'records:read records:delete' }, { scope: 'openid' }, { scope: 'api' }]) {
      await browser.go((await pkceAuthorizationUrl(config, REDIRECT, wider)).url);
      expect(browser.lastUrl.startsWith(REDIRECT)).toBe(false);
      expect(browser.lastBody).toMatch(/Allow[\s\S]*Deny/);
    }
  });

  it('registration: a client registers the scopes it may ask for; others, and unknown ones, are refused', async () => {
    const reader = await register({ scope: 'records:read' });
    expect(reader.clientMetadata().scope).toBe('records:read');
    const { token } = await tokenFor('records:read', admin.email, reader);
    expect(claimsOf(token).scope).toBe('records:read');
    const browser = new FormBrowser(REDIRECT);
    await browser.go((await pkceAuthorizationUrl(reader, REDIRECT, { scope: 'records:read records:write' })).url);
    expect(new URL(browser.lastUrl).searchParams.get('error')).toBe('invalid_scope');
    const unknown = await fetch(`${origin.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT], scope: 'records:read records:admin' }),
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: string }).error).toBe('invalid_client_metadata');
    // Unknown, differently cased or oddly spaced scopes are refused, never read as a near one.
    for (const scope of ['records:admin', 'RECORDS:READ', 'records:read\trecords:write', 'records:*']) {
      const refused = new FormBrowser(REDIRECT);
      await refused.go((await pkceAuthorizationUrl(config, REDIRECT, { scope })).url);
      expect(new URL(refused.lastUrl).searchParams.get('error')).toBe('invalid_scope');
    }
  });

  it('server apps: client credentials with records:read narrow the app role; without a scope they get api', async () => {
    const app = await createServerApp(origin.ds, {
      workspaceId: ws.id,
      role: await findRole(origin.ds, ws.id, 'Admin'),
      name: 'scoped job',
    });
    const server = await oidc.discovery(new URL(origin.url), app.clientId, undefined, oidc.ClientSecretBasic(app.clientSecret), insecure);
    const reader = await oidc.clientCredentialsGrant(server, { scope: 'records:read' });
    expect(claimsOf(reader.access_token).scope).toBe('records:read');
    expect((await api().get('/rest/companies').set(auth(reader.access_token))).status).toBe(200);
    expectError(await api().post('/rest/companies').set(auth(reader.access_token)).send({ name: 'Nope' }), 403, 'FORBIDDEN');
    const whole = await oidc.clientCredentialsGrant(server, {});
    expect(claimsOf(whole.access_token).scope).toBe('api');
    expect((await api().post('/rest/companies').set(auth(whole.access_token)).send({ name: 'App wrote' })).status).toBe(201);
  });
});

/** The authorization URL without its `scope` parameter: a client that asks for none. */
function withoutScope(url: string): string {
  const parsed = new URL(url);
  parsed.searchParams.delete('scope');
  return parsed.toString();
}
