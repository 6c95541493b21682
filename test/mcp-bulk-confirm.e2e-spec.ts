import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import type { DataSource } from 'typeorm';
import { newWorkspace, startApi, type TestWorkspace } from './factories.js';
import { client, type Http } from './rest-helpers.js';

/*
 * Changes of many records through MCP (docs/mcp.md "Generic tools"): update_records and
 * delete_records answer a dry run without writing, and change nothing until the user agreed —
 * asked by a 2026-07-28 client that can elicit (input_required, answered on the retried call),
 * or said with confirm: true by a client that cannot.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool results
type Json = Record<string, any>;

describe('MCP changes by filter: dry run and confirmation', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let url: URL;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    ({ app, ds, http } = await startApi());
    const server = app.getHttpServer() as import('node:http').Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await app.close();
  });

  const headers = (secret: string) => ({ requestInit: { headers: { Authorization: `Bearer ${secret}` } } });

  /** A 2025-era client (the v1 SDK): it cannot be asked within a stateless request. */
  async function legacy(secret: string) {
    const c = new Client({ name: 'bulk-legacy', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(url, headers(secret)));
    closers.push(() => c.close());
    return c;
  }

  /** A 2026-07-28 client; with `answer`, it declares elicitation and answers every question so. */
  async function modern(secret: string, answer?: 'accept' | 'decline') {
    const asked: string[] = [];
    const c = new V2Client(
      { name: 'bulk-modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: answer ? { elicitation: { form: {} } } : {} },
    );
    if (answer) {
      c.setRequestHandler('elicitation/create', async (request) => {
        asked.push(String((request.params as { message?: unknown }).message));
        return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' };
      });
    }
    await c.connect(new V2Transport(url, headers(secret)));
    closers.push(() => c.close());
    return { client: c, asked };
  }

  /** Three companies named "Bulk …" (two of them tier GOLD by name) and one other. */
  async function workspaceWithCompanies(label: string): Promise<{ ws: TestWorkspace; ids: string[] }> {
    const ws = await newWorkspace(ds, label);
    const api = client(http, ws.keys.Admin);
    const ids: string[] = [];
    for (const name of ['Bulk A', 'Bulk B', 'Bulk C', 'Other']) {
      const res = await api.post('/rest/companies', { name });
      expect(res.status).toBe(201);
      ids.push(res.body.data.createCompany.id);
    }
    return { ws, ids };
  }

  /** What the workspace's companies are, and the events written for them: a dry run must change neither. */
  async function state(ws: TestWorkspace) {
    const rows = await ds.query(
      `SELECT id, name, updated_at::text AS "updatedAt", deleted_at::text AS "deletedAt" FROM companies WHERE workspace_id = $1 ORDER BY id`,
      [ws.id],
    );
    const [{ events }] = await ds.query('SELECT count(*)::int AS events FROM webhook_events WHERE workspace_id = $1', [ws.id]);
    return { rows, events };
  }

  const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;

  it('a dry run counts and shows the first records, and writes nothing', async () => {
    const { ws } = await workspaceWithCompanies('bulk-dry');
    const before = await state(ws);
    const agent = await legacy(ws.keys.Admin);
    const dry = (await agent.callTool({
      name: 'update_records',
      arguments: { object: 'companies', filter: 'name[startsWith]:"Bulk"', data: { name: 'Renamed' }, dryRun: true },
    })) as CallToolResult;
    expect(dry.isError).toBeFalsy();
    expect(dry.structuredContent).toMatchObject({ dryRun: true, count: 3 });
    expect(((dry.structuredContent as Json).records as Json[]).map((r) => r.name).sort()).toEqual(['Bulk A', 'Bulk B', 'Bulk C']);
    const dryDelete = (await agent.callTool({
      name: 'delete_records',
      arguments: { object: 'companies', filter: 'name[startsWith]:"Bulk"', dryRun: true },
    })) as CallToolResult;
    expect(dryDelete.structuredContent).toMatchObject({ dryRun: true, count: 3 });
    // Even from a client that could be asked: a dry run asks nothing.
    const { client: asking, asked } = await modern(ws.keys.Admin, 'accept');
    const dryModern = await asking.callTool({
      name: 'delete_records',
      arguments: { object: 'companies', filter: 'name[startsWith]:"Bulk"', dryRun: true },
    });
    expect(dryModern.structuredContent).toMatchObject({ dryRun: true, count: 3 });
    expect(asked).toEqual([]);
    expect(await state(ws)).toEqual(before);
    // At most 10 records shown, whatever matches.
    const api = client(http, ws.keys.Admin);
    expect(
      (
        await api.post(
          '/rest/batch/companies',
          Array.from({ length: 12 }, (_, i) => ({ name: `Bulk ${i}` })),
        )
      ).status,
    ).toBe(201);
    const many = (await agent.callTool({
      name: 'delete_records',
      arguments: { object: 'companies', filter: 'name[startsWith]:"Bulk"', dryRun: true },
    })) as CallToolResult;
    expect((many.structuredContent as Json).count).toBe(15);
    expect((many.structuredContent as Json).records).toHaveLength(10);
  });

  it('a client that cannot ask needs confirm: true, and changes nothing without it', async () => {
    const { ws, ids } = await workspaceWithCompanies('bulk-confirm');
    const before = await state(ws);
    const agent = await legacy(ws.keys.Admin);
    for (const [name, args] of [
      ['update_records', { object: 'companies', filter: 'name[startsWith]:"Bulk"', data: { name: 'Renamed' } }],
      ['delete_records', { object: 'companies', filter: 'name[startsWith]:"Bulk"' }],
      ['delete_records', { object: 'companies', filter: 'name[startsWith]:"Bulk"', confirm: false }],
    ] as const) {
      const refused = (await agent.callTool({ name, arguments: args })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/^CONFIRMATION_REQUIRED: .*dryRun: true.*confirm: true/);
    }
    // A 2026-07-28 client that declared no elicitation is in the same case.
    const { client: mute } = await modern(ws.keys.Admin);
    const muteRefused = await mute.callTool({
      name: 'delete_records',
      arguments: { object: 'companies', filter: 'name[startsWith]:"Bulk"' },
    });
    expect(muteRefused.isError).toBe(true);
    expect(JSON.stringify(muteRefused.content)).toMatch(/CONFIRMATION_REQUIRED/);
    expect(await state(ws)).toEqual(before);

    const done = (await agent.callTool({
      name: 'update_records',
      arguments: { object: 'companies', filter: 'name[startsWith]:"Bulk"', data: { name: 'Renamed' }, confirm: true },
    })) as CallToolResult;
    expect(done.isError).toBeFalsy();
    expect((done.structuredContent as Json).count).toBe(3);
    expect(((done.structuredContent as Json).ids as string[]).sort()).toEqual(ids.slice(0, 3).sort());
    const names = (await client(http, ws.keys.Admin).get('/rest/companies')).body.data.companies.map((c: Json) => c.name).sort();
    expect(names).toEqual(['Other', 'Renamed', 'Renamed', 'Renamed']);
    const deleted = (await agent.callTool({
      name: 'delete_records',
      arguments: { object: 'companies', filter: 'name[eq]:"Renamed"', confirm: true },
    })) as CallToolResult;
    expect((deleted.structuredContent as Json).count).toBe(3);
    expect((await client(http, ws.keys.Admin).get('/rest/companies')).body.totalCount).toBe(1);
  });

  it('a client that can elicit asks its user: yes changes, no changes nothing, and confirm: true does not skip the question', async () => {
    const { ws } = await workspaceWithCompanies('bulk-elicit');
    const before = await state(ws);
    const { client: declining, asked: declinedQuestions } = await modern(ws.keys.Admin, 'decline');
    const declined = await declining.callTool({
      name: 'delete_records',
      arguments: { object: 'companies', filter: 'name[startsWith]:"Bulk"', confirm: true },
    });
    expect(declined.isError).toBeFalsy();
    expect(declined.structuredContent).toEqual({ count: 0, confirmed: false });
    expect(declinedQuestions).toEqual(['Delete 3 companies matching name[startsWith]:"Bulk"? This cannot be undone in one step.']);
    expect(await state(ws)).toEqual(before);

    const { client: accepting, asked } = await modern(ws.keys.Admin, 'accept');
    const accepted = await accepting.callTool({
      name: 'update_records',
      arguments: { object: 'companies', filter: 'name[startsWith]:"Bulk"', data: { name: 'Agreed' } },
    });
    expect(accepted.isError).toBeFalsy();
    expect((accepted.structuredContent as Json).count).toBe(3);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/^Update 3 companies matching/);
    const names = (await client(http, ws.keys.Admin).get('/rest/companies')).body.data.companies.map((c: Json) => c.name).sort();
    expect(names).toEqual(['Agreed', 'Agreed', 'Agreed', 'Other']);
  });

  it('refuses what the role does not allow (dry runs too), objects it cannot reach, and empty filters', async () => {
    const { ws } = await workspaceWithCompanies('bulk-attacks');
    const before = await state(ws);
    const viewer = await legacy(ws.keys.Viewer);
    const listed = (await viewer.listTools()).tools.map((t) => t.name);
    expect(listed).not.toContain('update_records');
    expect(listed).not.toContain('delete_records');
    for (const args of [
      { object: 'companies', filter: 'name[startsWith]:"Bulk"', dryRun: true },
      { object: 'companies', filter: 'name[startsWith]:"Bulk"', confirm: true },
    ]) {
      const refused = (await viewer.callTool({ name: 'delete_records', arguments: args })) as CallToolResult;
      expect(text(refused)).toMatch(/^FORBIDDEN: /);
    }
    const admin = await legacy(ws.keys.Admin);
    const other = await newWorkspace(ds, 'bulk-attacks-other');
    const otherApi = client(http, other.keys.Admin);
    expect((await otherApi.post('/rest/metadata/objects', { nameSingular: 'ticket', namePlural: 'tickets' })).status).toBe(201);
    for (const object of ['tickets', 'nothing', 'metadata']) {
      const missing = (await admin.callTool({
        name: 'delete_records',
        arguments: { object, filter: 'name[eq]:"x"', confirm: true },
      })) as CallToolResult;
      expect([object, text(missing)]).toEqual([object, expect.stringMatching(/^NOT_FOUND: /)]);
    }
    const empty = (await admin.callTool({
      name: 'delete_records',
      arguments: { object: 'companies', filter: '', confirm: true },
    })) as CallToolResult;
    expect(empty.isError).toBe(true);
    const bad = (await admin.callTool({
      name: 'update_records',
      arguments: { object: 'companies', filter: 'name[nope]:1', data: { name: 'x' }, confirm: true },
    })) as CallToolResult;
    expect(text(bad)).toMatch(/^INVALID_FILTER: /);
    const badData = (await admin.callTool({
      name: 'update_records',
      arguments: { object: 'companies', filter: 'name[startsWith]:"Bulk"', data: { name: '' }, confirm: true },
    })) as CallToolResult;
    expect(text(badData)).toMatch(/^VALIDATION_FAILED: /);
    expect(await state(ws)).toEqual(before);
  });
});
