import { jest } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@nestjs/common';
import { assertCan, type Principal } from '#auth/principal.js';
import type { CompaniesService } from '../companies/companies.service.js';
import type { PeopleService } from '../people/people.service.js';
import { prefersEventStream } from './accept.js';
import { calledTools, createMcpServer } from './mcp-server.js';
import { recordTools } from './record-tools.js';

const actions = (read: boolean, write: boolean) => ({ read, create: write, update: write, delete: write });
const principal = (name: string, write: boolean): Principal => ({
  kind: 'apiKey',
  subjectId: 'key-1',
  workspaceId: 'ws-1',
  role: {
    id: 'role-1',
    name,
    objectPermissions: { companies: actions(true, write), people: actions(true, false) },
    settingsPermissions: [],
  },
});

const company = {
  id: '0b7c2b1e-5a3f-4a5e-9d36-2f1d1b7a9c10',
  name: 'Acme',
  domainName: { primaryLinkUrl: null, primaryLinkLabel: null, secondaryLinks: [] },
  createdAt: 'x',
  updatedAt: 'x',
  deletedAt: null,
};

/** Services that check the role like the real ones and answer from memory. */
const companies = {
  create: async (p: Principal) => {
    assertCan(p, 'companies', 'create');
    return company;
  },
  delete: async () => {
    throw new Error('connection reset by peer at 10.0.0.7');
  },
} as unknown as CompaniesService;

async function connect(who: Principal, called: string[] = [], logger = { error: jest.fn() }) {
  const server = createMcpServer({
    principal: who,
    tools: recordTools(companies, {} as PeopleService),
    called: new Set(called),
    requestId: 'req-1',
    logger: logger as unknown as Logger,
    version: '1.2.3',
  });
  // The server is built for its principal (one per request): the transport's authInfo is not needed.
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'spec', version: '1' });
  await client.connect(clientSide);
  return client;
}

describe('MCP server for one principal', () => {
  it('lists only the tools the role allows', async () => {
    const writer = await connect(principal('Editor', true));
    expect((await writer.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'aggregate_records',
      'create_company',
      'delete_company',
      'get_company',
      'get_person',
      'list_companies',
      'list_people',
      'update_company',
      // Create and update on companies: the upsert tool too (docs/rest.md "Upsert").
      'upsert_company',
    ]);
    const reader = await connect(principal('Reader', false));
    expect((await reader.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'aggregate_records',
      'get_company',
      'get_person',
      'list_companies',
      'list_people',
    ]);
  });

  it('registers a forbidden tool only when it is called, so the service answers FORBIDDEN', async () => {
    const reader = await connect(principal('Reader', false), ['create_company']);
    const result = (await reader.callTool({ name: 'create_company', arguments: { name: 'Acme' } })) as CallToolResult;
    expect(result).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'FORBIDDEN: The role "Reader" does not allow create on companies' }],
    });
  });

  it('returns structured content, a summary and the JSON', async () => {
    const writer = await connect(principal('Editor', true));
    const result = (await writer.callTool({ name: 'create_company', arguments: { name: 'Acme' } })) as CallToolResult;
    expect(result.structuredContent).toEqual({ company });
    expect(result.content).toEqual([
      { type: 'text', text: `Created company "Acme" (id ${company.id}).` },
      { type: 'text', text: JSON.stringify({ company }) },
    ]);
  });

  it('refuses unknown arguments before the service is called', async () => {
    const writer = await connect(principal('Editor', true));
    const result = (await writer.callTool({ name: 'create_company', arguments: { name: 'Acme', colour: 'red' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('colour');
  });

  it('hides unexpected failures behind INTERNAL_ERROR and logs them with the request id', async () => {
    const logger = { error: jest.fn() };
    const writer = await connect(principal('Editor', true), [], logger);
    const result = (await writer.callTool({ name: 'delete_company', arguments: { id: company.id } })) as CallToolResult;
    expect(result).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'INTERNAL_ERROR: Internal server error (request id req-1)' }],
    });
    expect(logger.error).toHaveBeenCalledWith(expect.stringContaining('[req-1]'));
    expect(logger.error).toHaveBeenCalledWith(expect.stringContaining('connection reset'));
  });
});

describe('calledTools', () => {
  it('names the tools of tools/call messages, single or batched', () => {
    expect(calledTools({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_company' } })).toEqual(
      new Set(['create_company']),
    );
    expect(calledTools([{ method: 'tools/list' }, { method: 'tools/call', params: { name: 'x' } }])).toEqual(new Set(['x']));
    expect(calledTools(undefined)).toEqual(new Set());
    expect(calledTools({ method: 'tools/call', params: { name: 42 } })).toEqual(new Set());
  });
});

describe('prefersEventStream', () => {
  it('answers JSON unless text/event-stream ranks higher (RFC 9110 q-values)', () => {
    expect(prefersEventStream('application/json, text/event-stream')).toBe(false);
    expect(prefersEventStream('text/event-stream, application/json')).toBe(false);
    expect(prefersEventStream('application/json;q=0.5, text/event-stream')).toBe(true);
    expect(prefersEventStream('text/event-stream')).toBe(true);
    expect(prefersEventStream('application/json; q=0.9, text/event-stream; q=0.8')).toBe(false);
    expect(prefersEventStream(undefined)).toBe(false);
  });
});
