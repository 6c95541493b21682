import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import type { DataSource } from 'typeorm';
import { createApiKey, findRole } from '#identity/accounts.js';
import { newWorkspace, type TestWorkspace } from './factories.js';
import { importingApi } from './import-helpers.js';
import { heldCompany } from './held-record.js';
import { client, type Http } from './rest-helpers.js';

/*
 * MCP tasks (docs/mcp.md "Tasks"; docs/decisions/0065-mcp-tasks.md): import_records,
 * export_records, update_records and delete_records run as tasks for a client that takes them
 * (the v1 SDK's experimental tasks on 2025-11-25; raw JSON-RPC for the 2026-07-28 extension,
 * which no SDK client drives yet), kept per workspace and credential; other clients keep
 * today's answers.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- protocol results
type Json = Record<string, any>;
type Message = { type: string; task?: Json; result?: Json; error?: { code: number; message: string } };

describe('MCP tasks', () => {
  let app: INestApplication;
  let ds: DataSource;
  let http: Http;
  let base: string;
  let url: URL;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    // Imports run here (the suite's default leaves them queued), so an import task ends.
    ({ app, ds, http } = await importingApi());
    const server = app.getHttpServer() as import('node:http').Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    url = new URL(`${base}/mcp`);
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await app.close();
  });

  /** The v1 SDK's client (2025-11-25), which drives tasks through `client.experimental.tasks`. */
  async function agent(secret: string) {
    const c = new Client({ name: 'tasks-agent', version: '1.0.0' }, { capabilities: { tasks: {} }, defaultTaskPollInterval: 200 });
    await c.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
    closers.push(() => c.close());
    // The SDK asks for a task only of a tool it has seen listed with execution.taskSupport.
    await c.listTools();
    return c;
  }

  /** Every message of a task-augmented call, to its end. */
  async function stream(c: Client, name: string, args: Json): Promise<Message[]> {
    const seen: Message[] = [];
    for await (const m of c.experimental.tasks.callToolStream({ name, arguments: args })) seen.push(m as Message);
    return seen;
  }

  async function secondAdminKey(ws: TestWorkspace): Promise<string> {
    const key = await createApiKey(ds, {
      workspaceId: ws.id,
      role: await findRole(ds, ws.id, 'Admin'),
      name: 'second admin',
      expiresAt: new Date(Date.now() + 3600_000),
    });
    return key.secret;
  }

  async function companies(ws: TestWorkspace, ...names: string[]) {
    const api = client(http, ws.keys.Admin);
    for (const name of names) expect((await api.post('/rest/companies', { name })).status).toBe(201);
  }

  /** A 2026-07-28 request as the spec writes it: the per-request envelope and the standard headers. */
  async function modern(secret: string, method: string, params: Json, tasks = true) {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {},
    };
    const name = params.name ?? params.taskId ?? params.uri;
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${secret}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': method,
        ...(name ? { 'Mcp-Name': String(name) } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
    });
    const body = await res.text();
    return { status: res.status, ...(JSON.parse(body) as { result?: Json; error?: { code: number; message: string; data?: Json } }) };
  }

  it('declares tasks on 2025-11-25 and marks the four long tools', async () => {
    const ws = await newWorkspace(ds, 'tasks-list');
    const c = await agent(ws.keys.Admin);
    expect(c.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await c.listTools();
    const long = tools.filter((t) => t.execution?.taskSupport === 'optional').map((t) => t.name);
    expect(long.sort()).toEqual(['delete_records', 'export_records', 'import_records', 'update_records']);
  });

  it('runs an import as a task (v1 SDK client): progress from the import, then its result', async () => {
    const ws = await newWorkspace(ds, 'tasks-import');
    const c = await agent(ws.keys.Admin);
    const seen = await stream(c, 'import_records', { object: 'companies', format: 'csv', data: 'name\nTask A\nTask B\n,\n' });
    expect(seen[0].type).toBe('taskCreated');
    const statuses = seen.filter((m) => m.type === 'taskStatus').map((m) => m.task!);
    expect(statuses.at(-1)).toMatchObject({ status: 'completed' });
    expect(statuses.at(-1)!.statusMessage).toMatch(/rows read .* 2 created, 0 updated, 1 refused/);
    expect(statuses.at(-1)!._meta['workspace-records/progress']).toEqual({ progress: 3, total: 3 });
    const result = seen.at(-1)!;
    expect(result.type).toBe('result');
    expect(result.result!.isError).toBeFalsy();
    expect(result.result!.structuredContent.import).toMatchObject({ status: 'completed', created: 2, failed: 1 });
    expect(result.result!._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId: seen[0].task!.taskId });
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM companies WHERE workspace_id = $1 AND name LIKE 'Task %'`, [ws.id]);
    expect(n).toBe(2);
    // The task is the caller's: listed, and read again while it lives.
    const listed = await c.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toContain(seen[0].task!.taskId);
    expect(await c.experimental.tasks.getTask(seen[0].task!.taskId)).toMatchObject({ status: 'completed', pollInterval: 1000 });
  });

  it('runs an export as a task whose result links the file, read with resources/read', async () => {
    const ws = await newWorkspace(ds, 'tasks-export');
    await companies(ws, 'Exp One', 'Exp Two', 'Other');
    const c = await agent(ws.keys.Admin);
    const seen = await stream(c, 'export_records', { object: 'companies', filter: 'name[startsWith]:"Exp"', fields: 'name' });
    const result = seen.at(-1)!.result as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: 2 });
    const link = result.content.find((c) => c.type === 'resource_link') as { uri: string; mimeType: string };
    expect(link.uri).toBe(`workspace-records://exports/${seen[0].task!.taskId}`);
    const read = await c.readResource({ uri: link.uri });
    const [header, ...lines] = (read.contents[0] as { text: string }).text.trim().split('\n');
    expect(header).toBe('id,name');
    expect(lines.map((l) => l.split(',')[1]).sort()).toEqual(['Exp One', 'Exp Two']);
    expect(read.contents[0].mimeType).toMatch(/^text\/csv/);
  });

  it('runs update_records and delete_records as tasks, with decision 64 unchanged', async () => {
    const ws = await newWorkspace(ds, 'tasks-change');
    await companies(ws, 'Chg A', 'Chg B', 'Keep');
    const c = await agent(ws.keys.Admin);
    // Without confirm: the refusal, as a task that has already completed (the client awaits a task).
    const refused = await stream(c, 'update_records', { object: 'companies', filter: 'name[startsWith]:"Chg"', data: { name: 'X' } });
    expect(refused[0].type).toBe('taskCreated');
    expect(refused.at(-1)!.result!.isError).toBe(true);
    expect(refused.at(-1)!.result!.content[0].text).toMatch(/^CONFIRMATION_REQUIRED/);
    const updated = await stream(c, 'update_records', {
      object: 'companies',
      filter: 'name[startsWith]:"Chg"',
      data: { name: 'Chg Done' },
      confirm: true,
    });
    expect(updated.at(-1)).toMatchObject({ type: 'result', result: { structuredContent: { count: 2 } } });
    const deleted = await stream(c, 'delete_records', { object: 'companies', filter: 'name[eq]:"Chg Done"', confirm: true });
    expect(deleted.at(-1)!.result!.structuredContent).toMatchObject({ count: 2 });
    const rows = await ds.query(`SELECT name, deleted_at IS NOT NULL AS gone FROM companies WHERE workspace_id = $1 ORDER BY name`, [
      ws.id,
    ]);
    expect(rows).toEqual([
      { name: 'Chg Done', gone: true },
      { name: 'Chg Done', gone: true },
      { name: 'Keep', gone: false },
    ]);
  });

  it("answers another workspace's or credential's task id as not found, on every method", async () => {
    const ws = await newWorkspace(ds, 'tasks-owner');
    const other = await newWorkspace(ds, 'tasks-intruder');
    await companies(ws, 'Secret Co');
    const owner = await agent(ws.keys.Admin);
    const seen = await stream(owner, 'export_records', { object: 'companies' });
    const id = seen[0].task!.taskId as string;
    const uri = `workspace-records://exports/${id}`;
    for (const intruder of [await agent(other.keys.Admin), await agent(await secondAdminKey(ws)), await agent(ws.keys.Viewer)]) {
      await expect(intruder.experimental.tasks.getTask(id)).rejects.toMatchObject({
        code: -32602,
        message: expect.stringMatching(/Task not found/),
      });
      await expect(intruder.experimental.tasks.getTaskResult(id)).rejects.toMatchObject({ code: -32602 });
      await expect(intruder.experimental.tasks.cancelTask(id)).rejects.toMatchObject({ code: -32602 });
      await expect(intruder.readResource({ uri })).rejects.toMatchObject({ code: -32602 });
      expect((await intruder.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(id);
    }
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const raw = await modern(other.keys.Admin, method, { taskId: id });
      expect(raw.error).toMatchObject({ code: -32602, message: expect.stringMatching(/Task not found/) });
    }
    const read = await modern(other.keys.Admin, 'resources/read', { uri });
    expect(read.error).toMatchObject({ code: -32602 });
    // Not a UUID, or a UUID never made: the same answer.
    await expect(owner.experimental.tasks.getTask('x')).rejects.toMatchObject({ code: -32602 });
    await expect(owner.experimental.tasks.getTask('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: -32602 });
    expect(await owner.experimental.tasks.getTask(id)).toMatchObject({ status: 'completed' });
  });

  it('refuses to cancel a finished task, in the protocol error shape, and cancels a running import', async () => {
    const ws = await newWorkspace(ds, 'tasks-cancel');
    const c = await agent(ws.keys.Admin);
    const done = await stream(c, 'delete_records', { object: 'companies', filter: 'name[eq]:"none"', confirm: true });
    const doneId = done[0].task!.taskId as string;
    await expect(c.experimental.tasks.cancelTask(doneId)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/Cannot cancel task: it has already ended \(completed\)/),
    });
    expect((await modern(ws.keys.Admin, 'tasks/cancel', { taskId: doneId })).error).toMatchObject({ code: -32602 });
    // An import whose person links a company held locked waits there: cancel it while it runs.
    const held = await heldCompany(ds, base, ws.keys.Admin, 'Held Co');
    try {
      const stream = c.experimental.tasks.callToolStream({
        name: 'import_records',
        arguments: { object: 'people', format: 'ndjson', data: `${JSON.stringify({ name: { firstName: 'Wait' }, companyId: held.id })}\n` },
      });
      const first = (await stream.next()).value as Message;
      expect(first.type).toBe('taskCreated');
      const taskId = first.task!.taskId as string;
      await expect(c.experimental.tasks.getTask(taskId)).resolves.toMatchObject({ status: 'working' });
      const cancelled = await c.experimental.tasks.cancelTask(taskId);
      expect(cancelled).toMatchObject({ taskId, status: 'cancelled' });
      await stream.return(undefined);
      const [row] = await ds.query(
        `SELECT i.status FROM imports i JOIN mcp_tasks t ON t.workspace_id = i.workspace_id AND t.import_id = i.id
                                     WHERE t.workspace_id = $1 AND t.id = $2`,
        [ws.id, taskId],
      );
      expect(row.status).toBe('cancelled');
      await expect(c.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32602 });
    } finally {
      await held.release();
    }
  });

  it('refuses to cancel a change already being written (one transaction), which then completes', async () => {
    const ws = await newWorkspace(ds, 'tasks-writing');
    const c = await agent(ws.keys.Admin);
    const held = await heldCompany(ds, base, ws.keys.Admin, 'Locked Co');
    let taskId: string;
    try {
      const stream = c.experimental.tasks.callToolStream({
        name: 'update_records',
        arguments: { object: 'companies', filter: 'name[eq]:"Locked Co"', data: { name: 'Unlocked Co' }, confirm: true },
      });
      taskId = ((await stream.next()).value as Message).task!.taskId;
      await stream.return(undefined);
      // Writing once its statement waits on the held row.
      for (let i = 0; i < 100; i++) {
        const [row] = await ds.query('SELECT writing FROM mcp_tasks WHERE workspace_id = $1 AND id = $2', [ws.id, taskId]);
        if (row.writing) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await expect(c.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({
        code: -32602,
        message: expect.stringMatching(/being written in one transaction/),
      });
    } finally {
      await held.release();
    }
    const result = await c.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ count: 1 });
  });

  it('speaks the 2026-07-28 tasks extension: a task handle, tasks/get with the result inline, -32021 without the extension', async () => {
    const ws = await newWorkspace(ds, 'tasks-modern');
    await companies(ws, 'Mod A', 'Mod B');
    const created = await modern(ws.keys.Admin, 'tools/call', {
      name: 'export_records',
      arguments: { object: 'companies', format: 'ndjson' },
    });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 3_600_000, pollIntervalMs: 1000 });
    const taskId = created.result!.taskId as string;
    let task: Json = {};
    for (let i = 0; i < 100; i++) {
      task = (await modern(ws.keys.Admin, 'tasks/get', { taskId })).result!;
      if (task.status !== 'working') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(task).toMatchObject({ resultType: 'complete', status: 'completed', result: { structuredContent: { rows: 2 } } });
    const read = await modern(ws.keys.Admin, 'resources/read', { uri: `workspace-records://exports/${taskId}` });
    expect(
      (read.result!.contents[0].text as string)
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).name)
        .sort(),
    ).toEqual(['Mod A', 'Mod B']);
    expect(await modern(ws.keys.Admin, 'tasks/update', { taskId, inputResponses: {} })).toMatchObject({
      result: { resultType: 'complete' },
    });
    // A request that does not declare the extension: no task methods, and the call answers as before.
    expect(await modern(ws.keys.Admin, 'tasks/get', { taskId }, false)).toMatchObject({ status: 400 });
    expect((await modern(ws.keys.Admin, 'tasks/get', { taskId }, false)).error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    });
    const plain = await modern(ws.keys.Admin, 'tools/call', { name: 'export_records', arguments: { object: 'companies' } }, false);
    expect(plain.result).toMatchObject({ resultType: 'complete', structuredContent: { rows: 2 } });
    // A dry run answers the call itself: questions and dry runs come before any task.
    const dry = await modern(ws.keys.Admin, 'tools/call', {
      name: 'delete_records',
      arguments: { object: 'companies', filter: 'name[startsWith]:"Mod"', dryRun: true },
    });
    expect(dry.result).toMatchObject({ resultType: 'complete', structuredContent: { dryRun: true, count: 2 } });
  });

  it('gives a client without tasks what it had: the import id at once, a change when made', async () => {
    const ws = await newWorkspace(ds, 'tasks-none');
    await companies(ws, 'Plain A');
    const c = await agent(ws.keys.Admin);
    const imported = (await c.callTool({
      name: 'import_records',
      arguments: { object: 'companies', format: 'csv', data: 'name\nPlain B\n' },
    })) as CallToolResult;
    expect(imported.isError).toBeFalsy();
    const summary = (imported.structuredContent as Json).import;
    expect(summary).toMatchObject({ status: 'queued', object: 'companies' });
    expect((await client(http, ws.keys.Admin).get(`/rest/imports/${summary.id}`)).status).toBe(200);
    const changed = (await c.callTool({
      name: 'update_records',
      arguments: { object: 'companies', filter: 'name[eq]:"Plain A"', data: { name: 'Plain C' }, confirm: true },
    })) as CallToolResult;
    expect(changed).toMatchObject({ structuredContent: { count: 1 } });
    const [{ n }] = await ds.query('SELECT count(*)::int AS n FROM mcp_tasks WHERE workspace_id = $1', [ws.id]);
    expect(n).toBe(0);
  });

  it('refuses bad import and export arguments as tool errors, with nothing stored', async () => {
    const ws = await newWorkspace(ds, 'tasks-bad');
    const c = await agent(ws.keys.Admin);
    const viewer = await agent(ws.keys.Viewer);
    const unknown = await stream(c, 'export_records', { object: 'nothings' });
    expect(unknown.at(-1)!.result!.isError).toBe(true);
    const badFilter = (await c.callTool({
      name: 'export_records',
      arguments: { object: 'companies', filter: 'name[nope]:1' },
    })) as CallToolResult;
    expect(badFilter.isError).toBe(true);
    const forbidden = (await viewer.callTool({
      name: 'import_records',
      arguments: { object: 'companies', format: 'csv', data: 'name\nx\n' },
    })) as CallToolResult;
    expect(forbidden.isError).toBe(true);
    expect((forbidden.content[0] as { text: string }).text).toMatch(/^FORBIDDEN/);
    const tooLong = (await c
      .callTool({ name: 'import_records', arguments: { object: 'companies', format: 'csv', data: 'x'.repeat(1_000_001) } })
      .catch((err: Error) => ({ isError: true, content: [{ type: 'text', text: err.message }] }))) as CallToolResult;
    expect(tooLong.isError).toBe(true);
    const [{ n }] = await ds.query('SELECT count(*)::int AS n FROM imports WHERE workspace_id = $1', [ws.id]);
    expect(n).toBe(0);
  });
});
