import { createApiKey, findRole } from '#identity/accounts.js';
import { startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';

/** docs/mcp.md: /mcp's Origin check, the RFC 9727 API catalog and the MCP server card. */
describe('Discovery for agents, and /mcp against DNS rebinding', () => {
  let origin: PublicOrigin;
  let key: string;

  beforeAll(async () => {
    origin = await startPublicOrigin({ MCP_ALLOWED_ORIGINS: 'https://agent.example.com, http://localhost:6274' });
    const { workspace } = await workspaceWith(origin.ds, [], 'discovery');
    key = (
      await createApiKey(origin.ds, {
        workspaceId: workspace.id,
        role: await findRole(origin.ds, workspace.id, 'Viewer'),
        name: 'k',
        expiresAt: new Date(Date.now() + 86_400_000),
      })
    ).secret;
  });
  afterAll(async () => {
    await origin?.close();
  });

  const list = (headers: Record<string, string> = {}) =>
    fetch(`${origin.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('answers 403 to a foreign Origin, with or without credentials, and serves our own, listed and absent ones', async () => {
    for (const foreign of ['http://evil.example', 'http://localhost.evil.example', 'null', 'file://']) {
      const res = await list({ origin: foreign });
      expect({ foreign, status: res.status }).toEqual({ foreign, status: 403 });
      const body = (await res.json()) as { jsonrpc: string; id: null; error: { code: number; message: string } };
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
      expect(body.error.message).toMatch(/Origin/);
    }
    const anonymous = await fetch(`${origin.url}/mcp`, {
      method: 'POST',
      headers: { origin: 'http://evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(anonymous.status).toBe(403);
    // Loopback origins on any port are local tools while PUBLIC_URL is itself on loopback.
    for (const allowed of [
      new URL(origin.url).origin,
      'https://agent.example.com',
      'http://localhost:6274',
      'http://127.0.0.1:1',
      undefined,
    ]) {
      const res = await list(allowed ? { origin: allowed } : {});
      expect({ allowed, status: res.status }).toEqual({ allowed, status: 200 });
    }
  });

  it('takes no loopback origin when PUBLIC_URL is a public host', async () => {
    const hosted = await startPublicOrigin({ PUBLIC_URL: 'https://records.example.com', MCP_ALLOWED_ORIGINS: '' });
    try {
      const port = new URL(hosted.url).port;
      const call = (o: string) =>
        fetch(`http://127.0.0.1:${port}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            origin: o,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
      expect((await call('http://localhost:6274')).status).toBe(403);
      expect((await call('https://records.example.com')).status).toBe(200);
    } finally {
      await hosted.close();
    }
  });

  it('publishes an RFC 9727 API catalog', async () => {
    const res = await fetch(`${origin.url}/.well-known/api-catalog`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/linkset\+json/);
    expect(res.headers.get('content-type')).toContain('rfc9727');
    expect(res.headers.get('cache-control')).toMatch(/public/);
    const { linkset } = (await res.json()) as { linkset: Record<string, { href: string; type: string }[] | string>[] };
    expect(linkset.map((l) => l.anchor)).toEqual([`${origin.url}/rest`, `${origin.url}/graphql`, `${origin.url}/mcp`]);
    const [rest, , mcp] = linkset as Record<string, { href: string; type: string }[]>[];
    expect(rest['service-desc'][0].href).toBe(`${origin.url}/rest/open-api`);
    expect(rest['service-doc'][0].href).toBe(`${origin.url}/docs/rest`);
    expect(rest['service-meta'][0].href).toBe(`${origin.url}/.well-known/oauth-protected-resource`);
    expect(mcp['service-desc'][0].href).toBe(`${origin.url}/.well-known/mcp/server-card.json`);
    // Every link resolves.
    for (const entry of linkset as Record<string, { href: string }[]>[]) {
      for (const [rel, links] of Object.entries(entry)) {
        if (rel === 'anchor') continue;
        for (const { href } of links) expect({ href, status: (await fetch(href)).status }).toEqual({ href, status: 200 });
      }
    }
  });

  it('publishes an MCP server card that points at /mcp', async () => {
    const res = await fetch(`${origin.url}/.well-known/mcp/server-card.json`);
    expect(res.status).toBe(200);
    const card = (await res.json()) as Record<string, unknown> & {
      remotes: {
        type: string;
        url: string;
        supportedProtocolVersions: string[];
        authentication: { required: boolean; schemes: string[] };
      }[];
    };
    expect(card).toMatchObject({
      name: expect.stringMatching(/^[^/]+\/[^/]+$/),
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      description: expect.any(String),
      capabilities: { tools: {} },
    });
    expect(card.remotes).toEqual([
      {
        type: 'streamable-http',
        url: `${origin.url}/mcp`,
        supportedProtocolVersions: expect.arrayContaining(['2025-06-18', '2025-11-25']),
        authentication: { required: true, schemes: ['oauth2', 'bearer'] },
      },
    ]);
    const llms = await (await fetch(`${origin.url}/llms.txt`)).text();
    expect(llms).toContain(`${origin.url}/.well-known/api-catalog`);
    expect(llms).toContain(`${origin.url}/.well-known/mcp/server-card.json`);
  });
});
