import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { addMember, createUser, createWorkspace, findRole } from '#identity/accounts.js';
import { createServerApp } from '#identity/server-apps.js';
import { newWorkspace } from './factories.js';
import { FormBrowser } from '../bench/form-browser.js';
import { startPublicOrigin, type PublicOrigin } from './public-origin.js';

process.env.LOG_LEVEL ??= 'error';

/** A loopback redirect URI, as MCP clients on a desktop use; nothing listens: the browser stops there. */
const REDIRECT = 'http://127.0.0.1:8765/callback';
// export_records reads (docs/mcp.md "Tasks"): listed for every role that reads an object.
const GENERIC_READ_TOOLS = ['describe_object', 'export_records', 'get_record', 'list_records'];
const ALL_TOOLS = [
  'aggregate_records',
  'create_company',
  'create_opportunity',
  'create_person',
  'delete_company',
  'delete_opportunity',
  'delete_person',
  'get_company',
  'get_opportunity',
  'get_person',
  'list_companies',
  'list_opportunities',
  'list_people',
  'search_records',
  'update_company',
  'update_opportunity',
  'update_person',
  'upsert_company',
  'upsert_opportunity',
  'upsert_person',
  // The generic tools (docs/mcp.md "Generic tools"): every object of the workspace by name.
  ...GENERIC_READ_TOOLS,
  'create_record',
  'delete_record',
  'delete_records',
  'import_records',
  'update_record',
  'update_records',
].sort();
// search_records (docs/mcp.md): read-only, listed for every role that reads an object.
const READ_TOOLS = [
  'aggregate_records',
  'get_company',
  'get_opportunity',
  'get_person',
  'list_companies',
  'list_opportunities',
  'list_people',
  'search_records',
  ...GENERIC_READ_TOOLS,
].sort();

/**
 * An MCP client's OAuth side, as a desktop app implements it: storage in memory, and a
 * "browser" (FormBrowser) that signs the person in and allows access on the real pages.
 */
class SignInProvider implements OAuthClientProvider {
  private client?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier = '';
  /** What the SDK sent the browser to, and the code the redirect brought back. */
  authorizationUrl?: URL;
  code?: string;
  registrations = 0;

  constructor(private readonly person: { email: string; password: string }) {}

  get redirectUrl() {
    return REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test MCP client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(info: OAuthClientInformationMixed) {
    this.registrations++;
    this.client = info;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  async redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
    const browser = new FormBrowser(REDIRECT);
    await browser.go(url.toString());
    expect(browser.labels()).toEqual(expect.arrayContaining(['Email', 'Password']));
    await browser.submit('Sign in', { email: this.person.email, password: this.person.password });
    expect(browser.lastBody).toContain('Test MCP client');
    await browser.submit('Allow');
    expect(browser.lastUrl.startsWith(REDIRECT)).toBe(true);
    this.code = new URL(browser.lastUrl).searchParams.get('code') ?? undefined;
  }
}

const structured = (result: unknown) => (result as CallToolResult).structuredContent as Record<string, any>;
const text = (result: unknown) => ((result as CallToolResult).content as { type: string; text: string }[]).map((c) => c.text).join('\n');

describe('MCP at /mcp (Streamable HTTP, official SDK client)', () => {
  let origin: PublicOrigin;
  let publicUrl: string;
  let mcpUrl: URL;
  let ds: DataSource;
  const open: Client[] = [];

  beforeAll(async () => {
    // Registrations are counted per address across instances (one database), and
    // oauth.e2e-spec.ts exhausts its own budget of 40 on purpose: a size of our own.
    origin = await startPublicOrigin({ REGISTRATIONS_PER_MINUTE: '1000' });
    ({ url: publicUrl, ds } = origin);
    mcpUrl = new URL(`${publicUrl}/mcp`);
  });

  afterAll(async () => {
    for (const client of open) await client.close().catch(() => undefined);
    await origin?.close();
  });

  /** A person with a password, member of one new workspace (holding one company) with the given role. */
  async function person(role: string) {
    const email = `mcp-${randomUUID().slice(0, 8)}@example.com`;
    const password = 'correct horse battery';
    const user = await createUser(ds, email, password);
    const workspace = await createWorkspace(ds, `mcp-${role}-${randomUUID().slice(0, 6)}`);
    await addMember(ds, workspace.id, user.id, await findRole(ds, workspace.id, role));
    await ds.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, $2)`, [workspace.id, `${workspace.name} Inc`]);
    return { user, email, password, workspace };
  }

  async function connect(transport: StreamableHTTPClientTransport): Promise<Client> {
    const client = new Client({ name: 'records-e2e', version: '1.0.0' });
    await client.connect(transport);
    open.push(client);
    return client;
  }

  /**
   * What an MCP client does on its own: connect, get a 401, discover, register, send the
   * person to sign in, exchange the code, reconnect with the token.
   */
  async function connectWithOAuth(provider: SignInProvider): Promise<Client> {
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.code).toBeTruthy();
    await first.finishAuth(provider.code!);
    return connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  }

  const withKey = (secret: string) =>
    new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { Authorization: `Bearer ${secret}` } } });

  it('goes from an unauthenticated connect to tool calls through discovery, registration, sign-in and consent', async () => {
    const p = await person('Admin');
    const provider = new SignInProvider(p);
    const client = await connectWithOAuth(provider);

    // Registered dynamically, and sent to our authorization endpoint for the MCP resource with PKCE S256.
    expect(provider.registrations).toBe(1);
    const authorization = provider.authorizationUrl!;
    expect(`${authorization.origin}${authorization.pathname}`).toBe(`${publicUrl}/oauth/authorize`);
    expect(authorization.searchParams.get('resource')).toBe(`${publicUrl}/mcp`);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('scope')).toBe('api');
    const token = provider.tokens()!;
    const claims = JSON.parse(Buffer.from(token.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ aud: `${publicUrl}/mcp`, iss: publicUrl, sub: p.user.id, workspace_id: p.workspace.id });
    expect(token.refresh_token).toBeTruthy();

    expect(client.getServerVersion()?.name).toBe('workspace-records');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS);
    const list = tools.find((t) => t.name === 'list_companies')!;
    expect(Object.keys(list.inputSchema.properties ?? {}).sort()).toEqual([
      'depth',
      'ending_before',
      'fields',
      'filter',
      'limit',
      'order_by',
      'starting_after',
    ]);
    expect(JSON.stringify(list.inputSchema)).toContain('name[ilike]:\\"%acme%\\"');
    expect(list.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === 'delete_person')!.annotations?.destructiveHint).toBe(true);

    const companies = await client.callTool({ name: 'list_companies', arguments: { order_by: 'name[AscNullsFirst]', limit: 10 } });
    expect(companies.isError).toBeFalsy();
    expect(structured(companies).companies.map((c: { name: string }) => c.name)).toEqual([`${p.workspace.name} Inc`]);
    expect(structured(companies).totalCount).toBe(1);
    expect(text(companies)).toMatch(/^1 of 1 companies\./);
    const companyId = structured(companies).companies[0].id;

    const created = await client.callTool({
      name: 'create_person',
      arguments: { name: { firstName: 'Ada', lastName: 'Lovelace' }, emails: { primaryEmail: 'ada@example.com' }, companyId },
    });
    expect(created.isError).toBeFalsy();
    expect(structured(created).person).toMatchObject({ name: { firstName: 'Ada', lastName: 'Lovelace' }, companyId });
    expect(text(created)).toContain('Created person "Ada Lovelace"');
    const rows = await ds.query('SELECT workspace_id, first_name FROM people WHERE id = $1', [structured(created).person.id]);
    expect(rows).toEqual([{ workspace_id: p.workspace.id, first_name: 'Ada' }]);

    const embedded = await client.callTool({ name: 'get_company', arguments: { id: companyId, depth: 1 } });
    expect(structured(embedded).company.people.map((x: { id: string }) => x.id)).toEqual([structured(created).person.id]);

    const found = await client.callTool({
      name: 'list_people',
      arguments: { filter: 'emails.primaryEmail[eq]:"ada@example.com"', depth: 1 },
    });
    expect(structured(found).people[0].company.id).toBe(companyId);

    const updated = await client.callTool({
      name: 'update_person',
      arguments: { id: structured(created).person.id, name: { lastName: 'King' } },
    });
    expect(structured(updated).person.name).toEqual({ firstName: 'Ada', lastName: 'King' });
    const deleted = await client.callTool({ name: 'delete_person', arguments: { id: structured(created).person.id } });
    expect(structured(deleted)).toEqual({ id: structured(created).person.id });
    const gone = await client.callTool({ name: 'get_person', arguments: { id: structured(created).person.id } });
    expect(gone.isError).toBe(true);
    expect(text(gone)).toMatch(/^NOT_FOUND: /);
  });

  it("gives a Viewer's token no write tools; calling one anyway is a tool error, not a crash", async () => {
    const p = await person('Viewer');
    const client = await connectWithOAuth(new SignInProvider(p));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);

    const refused = await client.callTool({ name: 'create_company', arguments: { name: 'Nope' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe('FORBIDDEN: The role "Viewer" does not allow create on companies');
    expect((await ds.query('SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1', [p.workspace.id]))[0].n).toBe(1);
    // The session is still usable.
    expect(structured(await client.callTool({ name: 'list_companies', arguments: {} })).totalCount).toBe(1);
  });

  it('takes an API key as the bearer, with the REST parsers and their messages', async () => {
    const ws = await newWorkspace(ds, 'mcp-key');
    const admin = await connect(withKey(ws.keys.Admin));
    expect((await admin.listTools()).tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS);
    const created = await admin.callTool({
      name: 'create_company',
      arguments: { name: 'Acme', domainName: { primaryLinkUrl: 'acme.com' } },
    });
    expect(structured(created).company).toMatchObject({
      name: 'Acme',
      domainName: { primaryLinkUrl: 'acme.com', primaryLinkLabel: null, secondaryLinks: [] },
    });
    await admin.callTool({ name: 'create_company', arguments: { name: 'Initech' } });

    const page = await admin.callTool({ name: 'list_companies', arguments: { limit: 1, order_by: 'name[DescNullsLast]' } });
    expect(structured(page).companies.map((c: { name: string }) => c.name)).toEqual(['Initech']);
    expect(structured(page).pageInfo.hasNextPage).toBe(true);
    expect(text(page)).toContain('starting_after');
    const next = await admin.callTool({
      name: 'list_companies',
      arguments: { limit: 1, order_by: 'name[DescNullsLast]', starting_after: structured(page).pageInfo.endCursor },
    });
    expect(structured(next).companies.map((c: { name: string }) => c.name)).toEqual(['Acme']);

    // The same input errors as REST, word for word.
    const cases: [Record<string, unknown>, Record<string, string>][] = [
      [{ filter: 'name[near]:"x"' }, { filter: 'name[near]:"x"' }],
      [{ order_by: 'name[Up]' }, { order_by: 'name[Up]' }],
      [{ starting_after: 'nonsense' }, { starting_after: 'nonsense' }],
    ];
    for (const [args, query] of cases) {
      const result = await admin.callTool({ name: 'list_companies', arguments: args });
      const rest = (await (
        await fetch(`${publicUrl}/rest/companies?${new URLSearchParams(query)}`, { headers: { authorization: `Bearer ${ws.keys.Admin}` } })
      ).json()) as { code: string; messages: string[] };
      expect(result.isError).toBe(true);
      expect(text(result)).toBe(`${rest.code}: ${rest.messages.join('; ')}`);
    }
    const invalid = await admin.callTool({ name: 'create_person', arguments: { emails: { primaryEmail: 'not-an-email' } } });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/^VALIDATION_FAILED: emails\.primaryEmail/);
    const unknownField = await admin.callTool({ name: 'create_company', arguments: { name: 'X', website: 'x.com' } });
    expect(unknownField.isError).toBe(true);

    const viewer = await connect(withKey(ws.keys.Viewer));
    expect((await viewer.listTools()).tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
  });

  it('accepts whole-API tokens (audience PUBLIC_URL) as well as MCP ones', async () => {
    const ws = await createWorkspace(ds, `mcp-app-${randomUUID().slice(0, 6)}`);
    const app = await createServerApp(ds, { workspaceId: ws.id, role: await findRole(ds, ws.id, 'Viewer'), name: 'mcp job' });
    const res = await fetch(`${publicUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=api',
    });
    const { access_token: token } = (await res.json()) as { access_token: string };
    expect(JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).aud).toBe(publicUrl);
    const client = await connect(withKey(token));
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
  });

  describe('over plain HTTP', () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    };
    const post = (headers: Record<string, string>, body: unknown = initialize) =>
      fetch(mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(body),
      });

    it('answers 401 with WWW-Authenticate naming the /mcp resource metadata and the scope', async () => {
      const res = await post({});
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer realm="${publicUrl}", resource_metadata="${publicUrl}/.well-known/oauth-protected-resource/mcp", scope="api"`,
      );
      expect(((await res.json()) as { code: string }).code).toBe('UNAUTHENTICATED');
      const bad = await post({ authorization: 'Bearer wrs_nope' });
      expect(bad.status).toBe(401);
      expect(bad.headers.get('www-authenticate')).toBe(
        `Bearer realm="${publicUrl}", error="invalid_token", resource_metadata="${publicUrl}/.well-known/oauth-protected-resource/mcp", scope="api"`,
      );
      const metadata = await (await fetch(`${publicUrl}/.well-known/oauth-protected-resource/mcp`)).json();
      expect(metadata).toMatchObject({
        resource: `${publicUrl}/mcp`,
        authorization_servers: [publicUrl],
        scopes_supported: expect.arrayContaining(['api']),
      });
    });

    it('answers JSON by default and an SSE stream to a client that prefers it; GET and DELETE are 405', async () => {
      const ws = await newWorkspace(ds, 'mcp-http');
      const authz = { authorization: `Bearer ${ws.keys.Viewer}` };
      const json = await post(authz);
      expect(json.status).toBe(200);
      expect(json.headers.get('content-type')).toMatch(/^application\/json/);
      expect(json.headers.get('mcp-session-id')).toBeNull();
      expect(json.headers.get('x-request-id')).toBeTruthy();
      const body = (await json.json()) as { result: { serverInfo: { name: string }; capabilities: { tools?: unknown } } };
      expect(body.result.serverInfo.name).toBe('workspace-records');
      expect(body.result.capabilities.tools).toBeDefined();

      const sse = await post(
        { ...authz, accept: 'application/json;q=0.5, text/event-stream' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      );
      expect(sse.status).toBe(200);
      expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const stream = await sse.text();
      const data = JSON.parse(/^data: (.*)$/m.exec(stream)![1]);
      expect(data.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(READ_TOOLS);

      // A tool call needs no initialize first (stateless), as in the docs' curl example.
      const call = await post(authz, {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'list_people', arguments: { filter: 'name.lastName[eq]:"Kim"', limit: 5 } },
      });
      expect(call.status).toBe(200);
      const called = (await call.json()) as { result: CallToolResult };
      expect(called.result.isError).toBeFalsy();
      expect(called.result.structuredContent).toEqual({
        people: [],
        totalCount: 0,
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      });

      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(mcpUrl, { method, headers: { ...authz, accept: 'text/event-stream' } });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
      }
    });
  });
});
