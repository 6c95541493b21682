import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { FormBrowser } from '../bench/form-browser.js';
import { PASSWORD, startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';

/**
 * OAuth Client ID Metadata Documents (docs/mcp.md): the client_id is an https URL whose
 * document the authorization server fetches. The documents are served over https on
 * loopback with the test certificate of the global setup (trusted via NODE_EXTRA_CA_CERTS).
 */
const REDIRECT = 'http://127.0.0.1:8765/callback';
const insecure = { execute: [oidc.allowInsecureRequests] };

describe('Client ID Metadata Documents', () => {
  let origin: PublicOrigin;
  let docs: Server;
  let docsUrl: string;
  const documents = new Map<string, unknown>();
  const fetched: string[] = [];

  beforeAll(async () => {
    docs = createServer(
      { key: readFileSync(process.env.WRS_TEST_TLS_KEY!), cert: readFileSync(process.env.WRS_TEST_TLS_CERT!) },
      (req, res) => {
        fetched.push(req.url!);
        if (req.url === '/redirect') {
          res.writeHead(302, { location: `${docsUrl}/good.json` }).end();
          return;
        }
        const doc = documents.get(req.url!);
        if (!doc) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' }).end(JSON.stringify(doc));
      },
    );
    await new Promise<void>((resolve) => docs.listen(0, '127.0.0.1', resolve));
    docsUrl = `https://127.0.0.1:${(docs.address() as AddressInfo).port}`;
    origin = await startPublicOrigin({ CIMD_ALLOW_PRIVATE: '1' });
  });

  afterAll(async () => {
    await origin?.close();
    await new Promise((resolve) => docs?.close(resolve));
  });

  const document = (path: string, overrides: Record<string, unknown> = {}) => {
    const clientId = `${docsUrl}${path}`;
    documents.set(path, { client_id: clientId, client_name: 'Metadata Agent', redirect_uris: [REDIRECT], ...overrides });
    return clientId;
  };

  /** The code the browser was redirected with, exchanged for tokens for /mcp as the document's public client. */
  async function exchange(clientId: string, browser: FormBrowser, verifier: string) {
    const server = await oidc.discovery(new URL(origin.url), clientId, { token_endpoint_auth_method: 'none' }, oidc.None(), insecure);
    return oidc.authorizationCodeGrant(server, new URL(browser.lastUrl), { pkceCodeVerifier: verifier }, { resource: `${origin.url}/mcp` });
  }

  /** An authorization request of `clientId`; `scope` '' asks for none. */
  async function start(clientId: string, url = origin.url, scope = 'api') {
    const verifier = oidc.randomPKCECodeVerifier();
    const browser = new FormBrowser(REDIRECT);
    const params = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: `${url}/mcp`,
    });
    await browser.go(`${url}/oauth/authorize?${params}`);
    return { browser, verifier };
  }

  it('advertises the feature', async () => {
    const meta = (await (await fetch(`${origin.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(meta.client_id_metadata_document_supported).toBe(true);
  });

  it('runs the authorization-code flow with a metadata-document client, and the token calls /mcp', async () => {
    const { people } = await workspaceWith(origin.ds, ['Admin'], 'cimd');
    const clientId = document('/good.json');
    const { browser, verifier } = await start(clientId);
    await browser.submit('Sign in', { email: people[0].email, password: PASSWORD });
    expect(browser.lastBody).toContain('Metadata Agent');
    expect(browser.lastBody).toContain('127.0.0.1:8765');
    await browser.submit('Allow');
    expect(browser.lastUrl.startsWith(REDIRECT)).toBe(true);

    const tokens = await exchange(clientId, browser, verifier);
    expect(tokens.access_token).toBeTruthy();
    const mcp = await fetch(`${origin.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(mcp.status).toBe(200);
    const listed = (await mcp.json()) as { result: { tools: { name: string }[] } };
    expect(listed.result.tools.map((t) => t.name)).toContain('list_companies');
    // Nothing was registered: the client lives in its document.
    expect(await origin.ds.query(`SELECT 1 FROM oidc_models WHERE model = 'Client' AND id = $1`, [clientId])).toHaveLength(0);
  });

  it('takes the scope a document registers: asking for none gets it, asking for more is invalid_scope (docs/authentication.md "Scopes")', async () => {
    const { people } = await workspaceWith(origin.ds, ['Admin'], 'cimd-scope');
    const clientId = document('/reader.json', { scope: 'records:read' });
    const { browser, verifier } = await start(clientId, origin.url, '');
    await browser.submit('Sign in', { email: people[0].email, password: PASSWORD });
    expect(browser.lastBody).toContain('(records:read)');
    expect(browser.lastBody).not.toContain('(api)');
    await browser.submit('Allow');
    const tokens = await exchange(clientId, browser, verifier);
    expect(JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url').toString()).scope).toBe('records:read');
    const wider = await start(clientId, origin.url, 'records:read records:write');
    expect(new URL(wider.browser.lastUrl).searchParams.get('error')).toBe('invalid_scope');
  });

  it('refuses a document whose client_id is not its URL, or that does not list the redirect URI', async () => {
    const mismatched = document('/mismatch.json', { client_id: `${docsUrl}/other.json` });
    const otherRedirect = document('/other-redirect.json', { redirect_uris: ['http://127.0.0.1:9999/elsewhere'] });
    for (const clientId of [mismatched, otherRedirect]) {
      const { browser } = await start(clientId);
      expect(browser.lastUrl.startsWith(REDIRECT)).toBe(false);
      expect(browser.lastStatus).toBe(400);
      expect(browser.lastBody).toMatch(/invalid_client|invalid_redirect_uri|redirect_uri/);
    }
  });

  it('does not follow redirects, and takes no http client_id URL', async () => {
    const { browser } = await start(`${docsUrl}/redirect`);
    expect(browser.lastStatus).toBe(400);
    expect(browser.lastBody).toMatch(/invalid_client/);
    expect(fetched).not.toContain('/good.json?redirected');
    const plain = await start(`http://127.0.0.1:${new URL(docsUrl).port}/good.json`);
    expect(plain.browser.lastStatus).toBe(400);
    expect(plain.browser.lastBody).toMatch(/invalid_client/);
  });

  it('refuses documents on private or loopback addresses without CIMD_ALLOW_PRIVATE', async () => {
    const strict = await startPublicOrigin({ CIMD_ALLOW_PRIVATE: '0' });
    try {
      const byName = `https://localhost:${new URL(docsUrl).port}/by-name.json`;
      documents.set('/by-name.json', { client_id: byName, client_name: 'Loopback by name', redirect_uris: [REDIRECT] });
      const before = fetched.length;
      // An address literal, and a name that resolves to loopback (checked where the socket connects).
      for (const clientId of [document('/strict.json'), byName]) {
        const { browser } = await start(clientId, strict.url);
        expect(browser.lastStatus).toBe(400);
        expect(browser.lastBody).toMatch(/invalid_client/);
        expect(browser.lastUrl.startsWith(REDIRECT)).toBe(false);
      }
      // Refused before any request: neither document was served.
      expect(fetched.slice(before)).toEqual([]);
      // The same name is fetched when private addresses are allowed.
      const { browser } = await start(byName);
      expect(browser.lastBody).toContain('Sign in');
      expect(fetched.slice(before)).toEqual(['/by-name.json']);
    } finally {
      await strict.close();
    }
  });
});
