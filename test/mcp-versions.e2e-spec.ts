import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApiKey, findRole } from '#identity/accounts.js';
import { startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';

/**
 * docs/mcp.md: /mcp speaks MCP 2026-07-28 (stateless core, `server/discover`) to the v2 SDK
 * client, and 2025-11-25 / 2025-06-18 to v1 clients, with the same tools, annotations and
 * role filtering.
 */
const READ_TOOLS = [
  'aggregate_records',
  'get_company',
  'get_opportunity',
  'get_person',
  'list_companies',
  'list_opportunities',
  'list_people',
  'search_records',
  // The generic tools' reads (docs/mcp.md "Generic tools").
  'describe_object',
  'export_records',
  'get_record',
  'list_records',
].sort();

describe('MCP protocol versions', () => {
  let origin: PublicOrigin;
  let keys: { viewer: string; admin: string };
  let workspaceId: string;

  beforeAll(async () => {
    origin = await startPublicOrigin();
    const { workspace } = await workspaceWith(origin.ds, [], 'mcp-versions');
    workspaceId = workspace.id;
    const key = async (role: string) =>
      (
        await createApiKey(origin.ds, {
          workspaceId,
          role: await findRole(origin.ds, workspaceId, role),
          name: role,
          expiresAt: new Date(Date.now() + 86_400_000),
        })
      ).secret;
    keys = { viewer: await key('Viewer'), admin: await key('Admin') };
    await origin.ds.query(`INSERT INTO companies (workspace_id, name) VALUES ($1, 'Versioned Inc')`, [workspaceId]);
  });
  afterAll(async () => {
    await origin?.close();
  });

  const headers = (key: string) => ({ requestInit: { headers: { authorization: `Bearer ${key}` } } });

  it('negotiates 2026-07-28 with the v2 client: discover, list and call tools by role', async () => {
    // `auto`: probe with server/discover, fall back to initialize only without modern evidence.
    const client = new V2Client({ name: 'v2-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new V2Transport(new URL(`${origin.url}/mcp`), headers(keys.viewer)));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getServerVersion()?.name).toBe('workspace-records');
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
      expect(tools.find((t) => t.name === 'list_companies')?.annotations?.readOnlyHint).toBe(true);
      const result = await client.callTool({ name: 'list_companies', arguments: { limit: 5 } });
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as { companies: { name: string }[] }).companies.map((c) => c.name)).toEqual(['Versioned Inc']);
      // A write the role lacks reaches the service layer and says FORBIDDEN, as on REST.
      const denied = await client.callTool({ name: 'create_company', arguments: { name: 'Nope' } });
      expect(denied.isError).toBe(true);
      expect(JSON.stringify(denied.content)).toMatch(/FORBIDDEN/);
    } finally {
      await client.close();
    }
  });

  it('speaks every revision its server card lists, 2026-07-28 first', async () => {
    // Issue 18: the card left out 2026-07-28, which /mcp serves.
    const card = (await (await fetch(`${origin.url}/.well-known/mcp/server-card.json`)).json()) as {
      remotes: { supportedProtocolVersions: string[] }[];
    };
    const versions = card.remotes[0].supportedProtocolVersions;
    expect(versions[0]).toBe('2026-07-28');
    expect(versions).toEqual(expect.arrayContaining(['2025-11-25', '2025-06-18']));
    const modern = new V2Client({ name: 'v2-card', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await modern.connect(new V2Transport(new URL(`${origin.url}/mcp`), headers(keys.viewer)));
    try {
      expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    } finally {
      await modern.close();
    }
    for (const version of versions.slice(1)) {
      const res = await fetch(`${origin.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${keys.viewer}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'card', version: '1' } },
        }),
      });
      expect({ version, status: res.status }).toEqual({ version, status: 200 });
      expect(((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(version);
    }
  });

  it.each(['2025-11-25', '2025-06-18'])('serves a v1 client speaking %s with the same tools', async (version) => {
    const client = new V1Client({ name: 'v1-test', version: '1.0.0' });
    const transport = new V1Transport(new URL(`${origin.url}/mcp`), headers(keys.admin));
    await client.connect(transport);
    try {
      // The v1 client negotiates its latest; it may also be pinned to an older revision.
      if (version !== '2025-11-25') transport.setProtocolVersion(version);
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(30); // six per object (list, get, create, upsert, update, delete): companies, people, opportunities; aggregate_records, search_records, the eight generic tools, import_records and export_records
      expect(tools.find((t) => t.name === 'delete_company')?.annotations).toMatchObject({ destructiveHint: true });
      const created = await client.callTool({ name: 'create_company', arguments: { name: `Made over ${version}` } });
      expect(created.isError).toBeFalsy();
      const [{ count }] = await origin.ds.query('SELECT count(*)::int AS count FROM companies WHERE workspace_id = $1 AND name = $2', [
        workspaceId,
        `Made over ${version}`,
      ]);
      expect(count).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('answers the same tool list to both generations', async () => {
    const v2 = new V2Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await v2.connect(new V2Transport(new URL(`${origin.url}/mcp`), headers(keys.admin)));
    const v1 = new V1Client({ name: 'v1', version: '1' });
    await v1.connect(new V1Transport(new URL(`${origin.url}/mcp`), headers(keys.admin)));
    try {
      const shape = (tools: { name: string; inputSchema: unknown; annotations?: unknown }[]) =>
        tools
          .map((t) => ({ name: t.name, inputSchema: t.inputSchema, annotations: t.annotations }))
          .sort((a, b) => a.name.localeCompare(b.name));
      expect(shape((await v2.listTools()).tools)).toEqual(shape((await v1.listTools()).tools));
    } finally {
      await v2.close();
      await v1.close();
    }
  });
});
