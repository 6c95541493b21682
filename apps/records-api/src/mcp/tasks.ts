import { McpServer, ProtocolError, ResourceTemplate, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import type { Logger } from '@nestjs/common';
import { z } from 'zod';
import type { Principal } from '#auth/principal.js';
import { Sql } from '#database/sql.js';
import { TooManyRequestsError } from '#errors/errors.js';
import { importSummary, type ImportRow } from '#records/imports/import-summary.js';
import type { ToolOutcome } from './record-tools.js';

/*
 * MCP tasks (docs/mcp.md "Tasks"; docs/decisions/0065-mcp-tasks.md): a long tool's work as a
 * row of `mcp_tasks`, owned by a workspace and a credential, that any instance answers for.
 * Protocol 2025-11-25 has tasks in its core (a `task` on `tools/call`; `tasks/get`,
 * `tasks/result`, `tasks/list`, `tasks/cancel`); 2026-07-28 has them as the
 * `io.modelcontextprotocol/tasks` extension (`resultType: "task"`; `tasks/get`,
 * `tasks/cancel`, `tasks/update`). The v2 SDK has no helpers for either, so the handlers are ours.
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** Where a task's progress is, as numbers (`_meta` keys take a prefix of their own). */
export const PROGRESS_META = 'workspace-records/progress';
const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';
const EXPORT_URI = 'workspace-records://exports/';

const TTL_MS = 60 * 60 * 1000;
const MAX_TTL_MS = 24 * 60 * 60 * 1000;
const MIN_TTL_MS = 60 * 1000;
const POLL_MS = 1000;
/** How often the instance running a task writes to its row; a row unwritten for STALE_MS lost its instance. */
const BEAT_MS = 2000;
const STALE_MS = 30_000;
/** Tasks a workspace runs at once in the instances that took them (exports, changes); imports queue on their own. */
const RUNNING_PER_WORKSPACE = 4;
/** How long `tasks/result` waits for a task to end before sending the client back to `tasks/get`. */
const RESULT_WAIT_MS = 25_000;
const LIST_PAGE = 50;

/** The work a long tool leaves once its call was checked (permissions, arguments, the user's yes). */
export type Later =
  /** An import on the import queue: the call's answer without a task, and the import a task follows. */
  | { importId: string; now: ToolOutcome }
  /** Work run in this instance; `stored`: even without a task, as a row whose file the result links (exports). */
  | { run: (job: TaskJob) => Promise<ToolOutcome & { file?: TaskFile }>; stored?: boolean; abandon?: () => void };

export interface TaskFile {
  data: Buffer;
  mimeType: string;
}

/** What running work tells its task. */
export interface TaskJob {
  /** Aborted when the task is cancelled: the work stops at its next step. */
  signal: AbortSignal;
  /** A task someone may poll (false: a call answered when done), so progress is worth counting. */
  tracked: boolean;
  /** The job's counters so far (written at most every BEAT_MS). */
  progress(done: number, total: number | undefined, message: string): Promise<void>;
  /** Before a write that cannot stop half way: false when the task was cancelled first. */
  startWriting(): Promise<boolean>;
}

/** A task as both revisions show it (2025-11-25 names `ttl` and `pollInterval`, 2026-07-28 `ttlMs` and `pollIntervalMs`). */
interface TaskView {
  taskId: string;
  status: 'working' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number;
  result?: CallToolResult;
  error?: { code: number; message: string };
  progress?: { progress: number; total?: number };
}

interface TaskRow {
  id: string;
  tool: string;
  status: TaskView['status'];
  writing: boolean;
  status_message: string | null;
  progress: string | null;
  total: string | null;
  import_id: string | null;
  result: CallToolResult | null;
  error: TaskView['error'] | null;
  ttl_ms: number;
  created_at: string;
  updated_at: string;
  stale: boolean;
  import?: ImportRow | null;
}

const credentialOf = (principal: Principal) => `${principal.kind}:${principal.subjectId}`;
const notFound = () => new ProtocolError(-32602, 'Failed to retrieve task: Task not found');
/** A row's columns as TaskRow has them; `t`: the table's alias. */
const columns = (t = 'mcp_tasks') =>
  `${t}.id, ${t}.tool, ${t}.status, ${t}.writing, ${t}.status_message, ${t}.progress, ${t}.total, ${t}.import_id, ${t}.result,
   ${t}.error, ${t}.ttl_ms, ${utc(`${t}.created_at`)} AS created_at, ${utc(`${t}.updated_at`)} AS updated_at`;
const utc = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** Not expired: past its TTL a task is gone, as if it never was. */
const LIVE = `created_at + ttl_ms * interval '1 millisecond' > now()`;

/** A tool's outcome as the result of its call (mcp-server.ts answers the same way without a task). */
export function toolResult(outcome: ToolOutcome, extra: CallToolResult['content'] = []): CallToolResult {
  return {
    structuredContent: outcome.structured,
    content: [{ type: 'text', text: outcome.summary }, { type: 'text', text: JSON.stringify(outcome.structured) }, ...extra],
  };
}

/**
 * The tasks of one credential: made, run and read with every statement naming its workspace
 * and credential, so another's task is not found, whatever its id.
 */
export class McpTasks {
  constructor(
    private readonly sql: Sql,
    private readonly principal: Principal,
    private readonly logger: Logger,
    private readonly cancelImport: (importId: string) => Promise<unknown>,
    private readonly errorResult: (err: unknown, tool: string) => CallToolResult,
  ) {}

  private get owner() {
    return [this.principal.workspaceId, credentialOf(this.principal)];
  }

  /** Starts `later` as a task and answers with it once the row exists (any instance can then read it). */
  async start(tool: string, later: Later, requestedTtl?: unknown): Promise<TaskView> {
    try {
      const ttl = clampTtl(requestedTtl);
      if ('importId' in later) {
        return view(await this.insert(tool, ttl, { importId: later.importId, message: 'Queued' }));
      }
      const row = await this.insert(tool, ttl, { message: 'Started' });
      void this.run(row.id, tool, later);
      return view(row);
    } catch (err) {
      if ('abandon' in later) later.abandon?.();
      throw err;
    }
  }

  /** `later` without a task: run here and answered when done (a stored one leaves its row for the file it links). */
  async now(tool: string, later: Later): Promise<CallToolResult> {
    if ('importId' in later) return toolResult(later.now);
    if (!later.stored) {
      const outcome = await later.run({
        signal: new AbortController().signal,
        tracked: false,
        progress: async () => undefined,
        startWriting: async () => true,
      });
      return toolResult(outcome);
    }
    let row: TaskRow;
    try {
      row = await this.insert(tool, TTL_MS, { message: 'Started' });
    } catch (err) {
      later.abandon?.();
      throw err;
    }
    await this.run(row.id, tool, later);
    const [ended] = await this.read(row.id);
    return ended?.result ?? this.errorResult(new Error('the task ended without a result'), tool);
  }

  /** A call answered at once (a dry run, a refusal) by a client that asked for a task: a task already completed. */
  async completed(tool: string, result: CallToolResult, requestedTtl?: unknown): Promise<TaskView> {
    return view(await this.insert(tool, clampTtl(requestedTtl), { result }));
  }

  private async insert(
    tool: string,
    ttl: number,
    init: { importId?: string; message?: string; result?: CallToolResult },
  ): Promise<TaskRow> {
    const [workspace, credential] = this.owner;
    return this.sql.transaction(async (tx) => {
      // One at a time per workspace, so two calls cannot both take its last place.
      await tx.rows(`SELECT pg_advisory_xact_lock(hashtextextended('mcp-tasks:' || $1, 0))`, [workspace]);
      await tx.rows(`DELETE FROM mcp_tasks WHERE workspace_id = $1 AND NOT (${LIVE})`, [workspace]);
      if (!init.importId && !init.result) {
        const [{ running }] = await tx.rows<{ running: number }>(
          `SELECT count(*)::int AS running FROM mcp_tasks
            WHERE workspace_id = $1 AND status = 'working' AND import_id IS NULL AND beat_at > now() - $2 * interval '1 millisecond'`,
          [workspace, STALE_MS],
        );
        if (running >= RUNNING_PER_WORKSPACE) {
          throw new TooManyRequestsError(
            `this workspace is running ${running} MCP tasks, its most at once; wait for one to end (tasks/get) and call again`,
            POLL_MS / 1000,
          );
        }
      }
      const [row] = await tx.rows<TaskRow>(
        `INSERT INTO mcp_tasks (workspace_id, credential, tool, ttl_ms, import_id, status_message, status, result)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${columns()}, false AS stale`,
        [
          workspace,
          credential,
          tool,
          ttl,
          init.importId ?? null,
          init.message ?? null,
          init.result ? 'completed' : 'working',
          init.result ? JSON.stringify(init.result) : null,
        ],
      );
      return row;
    });
  }

  /** Runs the work, beating while it does; its end (or its tool error) is written to the row unless it was cancelled. */
  private async run(id: string, tool: string, later: Extract<Later, { run: unknown }>): Promise<void> {
    const [workspace] = this.owner;
    const controller = new AbortController();
    let lastWrite = 0;
    const beat = async (set = '', params: unknown[] = []) => {
      lastWrite = Date.now();
      const rows = await this.sql.rows(
        `UPDATE mcp_tasks SET beat_at = now()${set} WHERE workspace_id = $1 AND id = $2 AND status = 'working' RETURNING id`,
        [workspace, id, ...params],
      );
      if (!rows.length) controller.abort();
    };
    const timer = setInterval(() => void beat().catch(() => undefined), BEAT_MS);
    timer.unref();
    const job: TaskJob = {
      signal: controller.signal,
      tracked: true,
      progress: async (done, total, message) => {
        if (Date.now() - lastWrite < BEAT_MS) return;
        await beat(', progress = $3, total = $4, status_message = $5, updated_at = now()', [done, total ?? null, message]);
      },
      startWriting: async () => {
        await beat(', writing = true, updated_at = now()');
        return !controller.signal.aborted;
      },
    };
    let result: CallToolResult;
    let file: TaskFile | undefined;
    try {
      const outcome = await later.run(job);
      file = outcome.file;
      const link = file
        ? [
            {
              type: 'resource_link' as const,
              uri: `${EXPORT_URI}${id}`,
              name: `export ${id}`,
              mimeType: file.mimeType,
              size: file.data.length,
            },
          ]
        : [];
      result = toolResult(file ? { ...outcome, structured: { ...outcome.structured, uri: `${EXPORT_URI}${id}` } } : outcome, link);
    } catch (err) {
      if (controller.signal.aborted) {
        clearInterval(timer);
        return;
      }
      result = this.errorResult(err, tool);
    }
    clearInterval(timer);
    await this.sql
      .rows(
        `UPDATE mcp_tasks SET status = 'completed', result = $3, output = $4, output_type = $5, status_message = $6,
                updated_at = now(), beat_at = now()
          WHERE workspace_id = $1 AND id = $2 AND status = 'working'`,
        [workspace, id, JSON.stringify(result), file?.data ?? null, file?.mimeType ?? null, firstText(result)],
      )
      .catch((err: Error) => this.logger.warn(`MCP task ${id} could not be ended: ${err.message}`));
  }

  /** The row, its import's, and whether its instance stopped beating; none when not the caller's or expired. */
  private async read(id: string): Promise<TaskRow[]> {
    if (!z.uuid().safeParse(id).success) return [];
    const [workspace, credential] = this.owner;
    const rows = await this.sql.rows<TaskRow & { i: ImportRow | null }>(
      `SELECT ${columns('t')},
              (t.status = 'working' AND t.import_id IS NULL AND t.beat_at < now() - $4 * interval '1 millisecond') AS stale,
              to_jsonb(i) AS i
         FROM mcp_tasks t LEFT JOIN imports i ON i.workspace_id = t.workspace_id AND i.id = t.import_id
        WHERE t.workspace_id = $1 AND t.id = $2 AND t.credential = $3 AND t.${LIVE}`,
      [workspace, id, credential, STALE_MS],
    );
    return rows.map(({ i, ...row }) => ({ ...row, import: i }));
  }

  /** The task as it stands: an import task follows its import; a task whose instance stopped is failed. */
  async get(id: string): Promise<TaskView> {
    const [row] = await this.read(id);
    if (!row) throw notFound();
    if (row.stale) {
      const error = { code: -32603, message: 'The server running this task stopped before it ended; call the tool again' };
      const [workspace] = this.owner;
      await this.sql.rows(
        `UPDATE mcp_tasks SET status = 'failed', error = $3, status_message = $4, updated_at = now()
          WHERE workspace_id = $1 AND id = $2 AND status = 'working'`,
        [workspace, row.id, JSON.stringify(error), error.message],
      );
      return view({ ...row, status: 'failed', error, status_message: error.message, stale: false });
    }
    return row.import ? importView(row, row.import) : view(row);
  }

  /** 2025-11-25 `tasks/result`: waits for the end (at most RESULT_WAIT_MS), then the call's result or error. */
  async result(id: string): Promise<CallToolResult> {
    const until = Date.now() + RESULT_WAIT_MS;
    for (;;) {
      const task = await this.get(id);
      if (task.status === 'completed') return { ...task.result!, _meta: { ...task.result!._meta, [RELATED_TASK_META]: { taskId: id } } };
      if (task.status === 'failed') throw new ProtocolError(task.error!.code, task.error!.message);
      if (task.status === 'cancelled') throw new ProtocolError(-32602, 'The task was cancelled: it has no result');
      if (Date.now() >= until)
        throw new ProtocolError(-32602, 'The task is still working: poll tasks/get and ask for its result once it has ended');
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** 2025-11-25 `tasks/list`: the caller's tasks, newest first; the cursor is the last one's id. */
  async list(cursor?: string): Promise<{ tasks: TaskView[]; nextCursor?: string }> {
    const [workspace, credential] = this.owner;
    let before: string | null = null;
    if (cursor !== undefined) {
      const [row] = await this.read(cursor);
      if (!row) throw new ProtocolError(-32602, 'Invalid cursor');
      before = row.id;
    }
    const rows = await this.sql.rows<{ id: string }>(
      `SELECT id FROM mcp_tasks WHERE workspace_id = $1 AND credential = $2 AND ${LIVE}
          AND ($3::uuid IS NULL OR (created_at, id) < (SELECT created_at, id FROM mcp_tasks WHERE workspace_id = $1 AND id = $3::uuid))
        ORDER BY created_at DESC, id DESC LIMIT ${LIST_PAGE + 1}`,
      [workspace, credential, before],
    );
    const page = rows.slice(0, LIST_PAGE);
    const tasks = [];
    for (const { id } of page) tasks.push(withoutPayload(await this.get(id)));
    return { tasks, ...(rows.length > LIST_PAGE ? { nextCursor: page[page.length - 1].id } : {}) };
  }

  /** Moves a working task to cancelled before answering; an ended one is an error (-32602), as is one writing. */
  async cancel(id: string): Promise<TaskView> {
    const task = await this.get(id);
    if (task.status !== 'working') throw new ProtocolError(-32602, `Cannot cancel task: it has already ended (${task.status})`);
    const [workspace] = this.owner;
    const [row] = await this.read(id);
    if (row.import_id) {
      // The import's own cancel (audited; its committed rows stay): one that ended meanwhile is a conflict, told as such.
      try {
        await this.cancelImport(row.import_id);
      } catch {
        throw new ProtocolError(-32602, `Cannot cancel task: it has already ended (${(await this.get(id)).status})`);
      }
    }
    const [cancelled] = await this.sql.rows<{ id: string }>(
      `UPDATE mcp_tasks SET status = 'cancelled', status_message = 'Cancelled', updated_at = now()
        WHERE workspace_id = $1 AND id = $2 AND status = 'working' AND NOT writing RETURNING id`,
      [workspace, id],
    );
    if (!cancelled) {
      const now = await this.get(id);
      throw new ProtocolError(
        -32602,
        now.status === 'working'
          ? 'Cannot cancel task: its change is being written in one transaction, which cannot stop half way; it will complete'
          : `Cannot cancel task: it has already ended (${now.status})`,
      );
    }
    return this.get(id);
  }

  /** An export's file, for `resources/read`; not found unless the caller's and live. */
  async file(id: string): Promise<TaskFile> {
    if (!z.uuid().safeParse(id).success) throw new ProtocolError(-32602, 'Resource not found');
    const [workspace, credential] = this.owner;
    const [row] = await this.sql.rows<{ output: Buffer; output_type: string }>(
      `SELECT output, output_type FROM mcp_tasks
        WHERE workspace_id = $1 AND id = $2 AND credential = $3 AND ${LIVE} AND output IS NOT NULL`,
      [workspace, id, credential],
    );
    if (!row) throw new ProtocolError(-32602, 'Resource not found');
    return { data: row.output, mimeType: row.output_type };
  }
}

function clampTtl(requested: unknown): number {
  const ttl = (requested as { ttl?: unknown } | undefined)?.ttl;
  if (typeof ttl !== 'number' || !Number.isFinite(ttl)) return TTL_MS;
  return Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, Math.round(ttl)));
}

const firstText = (result: CallToolResult) => (result.content?.[0]?.type === 'text' ? result.content[0].text.slice(0, 500) : null);

function view(row: TaskRow): TaskView {
  return {
    taskId: row.id,
    status: row.status,
    ...(row.status_message ? { statusMessage: row.status_message } : {}),
    createdAt: row.created_at,
    lastUpdatedAt: row.updated_at,
    ttl: row.ttl_ms,
    ...(row.progress !== null
      ? { progress: { progress: Number(row.progress), ...(row.total !== null ? { total: Number(row.total) } : {}) } }
      : {}),
    ...(row.status === 'completed' && row.result ? { result: row.result } : {}),
    ...(row.status === 'failed' && row.error ? { error: row.error } : {}),
  };
}

/** An import task as its import stands: its counters are the progress; its end is the task's. */
function importView(row: TaskRow, imported: ImportRow): TaskView {
  const summary = importSummary(imported);
  const base = view({ ...row, status: row.status === 'cancelled' ? 'cancelled' : 'working' });
  const progress = { progress: summary.rowsRead, ...(summary.status === 'completed' ? { total: summary.rowsRead } : {}) };
  const counts = `${summary.rowsRead} rows read (${Math.round(summary.progress * 100)}% of the file), ${summary.created} created, ${summary.updated} updated, ${summary.failed} refused`;
  const lastUpdatedAt = new Date(
    Math.max(
      Date.parse(row.updated_at),
      Date.parse(String((imported as ImportRow & { updated_at?: string }).updated_at ?? row.updated_at)),
    ),
  ).toISOString();
  if (summary.status === 'cancelled' || row.status === 'cancelled')
    return { ...base, status: 'cancelled', statusMessage: `Cancelled: ${counts}`, progress, lastUpdatedAt };
  if (summary.status === 'queued' || summary.status === 'running' || summary.status === 'uploading') {
    return { ...base, statusMessage: `${summary.status === 'running' ? 'Running' : 'Queued'}: ${counts}`, progress, lastUpdatedAt };
  }
  const refused = summary.failed ? ` Refused rows: GET /rest/imports/${summary.id}/errors.` : '';
  const text =
    summary.status === 'completed'
      ? `Import ${summary.id} completed: ${counts}.${refused}`
      : `IMPORT_FAILED: ${summary.error ?? 'the import failed'}`;
  return {
    ...base,
    status: 'completed',
    statusMessage: text,
    progress,
    lastUpdatedAt,
    result: {
      ...(summary.status === 'completed' ? {} : { isError: true }),
      structuredContent: { import: summary },
      content: [
        { type: 'text', text },
        { type: 'text', text: JSON.stringify({ import: summary }) },
      ],
    },
  };
}

/** A task in `tasks/list` and on creation: its state, without its result or error (2025-11-25 Task). */
function withoutPayload({ result: _result, error: _error, ...task }: TaskView): TaskView {
  return task;
}

/** What both revisions show of a task, with their names for its TTL and poll interval. */
function shown(task: TaskView, names: { ttl: string; poll: string }) {
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt, ttl, progress } = task;
  return {
    taskId,
    status,
    ...(statusMessage ? { statusMessage } : {}),
    createdAt,
    lastUpdatedAt,
    [names.ttl]: ttl,
    [names.poll]: POLL_MS,
    ...(progress ? { _meta: { [PROGRESS_META]: progress } } : {}),
  };
}

/** The task as 2025-11-25 shows it (`tasks/get`, `tasks/list`, `tasks/cancel`, the `{task}` of a call). */
const legacyTask = (task: TaskView) => shown(task, { ttl: 'ttl', poll: 'pollInterval' });

/** The task as the 2026-07-28 extension shows it: a DetailedTask, its result or error inline. */
function modernTask(task: TaskView) {
  return {
    ...shown(task, { ttl: 'ttlMs', poll: 'pollIntervalMs' }),
    ...(task.status === 'completed' ? { result: task.result } : {}),
    ...(task.status === 'failed' ? { error: task.error } : {}),
  };
}

/**
 * Tasks on one request's server: the capability, the task methods of its revision, the
 * export files as resources, and `tools/call` of `taskTools` answered with a task when the
 * client takes them. `run` is the server's own tool call; the tool handler hands its work
 * over with `defer` instead of doing it, and the task is what the call answers.
 */
export function enableTasks(
  server: McpServer,
  options: { tasks: McpTasks; modern: boolean; taskTools: ReadonlySet<string>; allowed: (tool: string) => boolean },
): { defer: (tool: string, later: Later) => Promise<CallToolResult> } {
  const { tasks, modern } = options;
  const clientTakesTasks = () => server.server.getClientCapabilities()?.extensions?.[TASKS_EXTENSION] !== undefined;
  // A 2026-07-28 task method from a client that did not declare the extension (its spec: -32021).
  const requireExtension = () => {
    if (modern && !clientTakesTasks()) {
      throw new ProtocolError(-32021, 'Missing required client capability', {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
  };
  // The task methods' own params schemas (SDK 2.4 types no task method of either revision).
  const byId = { params: z.looseObject({ taskId: z.string() }) };
  if (modern) {
    server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
    server.server.setRequestHandler('tasks/get', byId, async ({ taskId }) => (requireExtension(), modernTask(await tasks.get(taskId))));
    server.server.setRequestHandler('tasks/cancel', byId, async ({ taskId }) => {
      requireExtension();
      await tasks.cancel(taskId);
      return {};
    });
    // No task of ours asks for input: responses are acknowledged and ignored (the extension: unknown keys are ignored).
    server.server.setRequestHandler('tasks/update', byId, async ({ taskId }) => {
      requireExtension();
      await tasks.get(taskId);
      return {};
    });
  } else {
    server.server.registerCapabilities({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } });
    server.server.setRequestHandler('tasks/get', byId, async ({ taskId }) => legacyTask(await tasks.get(taskId)));
    server.server.setRequestHandler('tasks/result', byId, async ({ taskId }) => tasks.result(taskId));
    server.server.setRequestHandler('tasks/list', { params: z.looseObject({ cursor: z.string().optional() }) }, async ({ cursor }) => {
      const page = await tasks.list(cursor);
      return { tasks: page.tasks.map(legacyTask), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
    });
    server.server.setRequestHandler('tasks/cancel', byId, async ({ taskId }) => legacyTask(await tasks.cancel(taskId)));
  }
  server.registerResource(
    'export',
    new ResourceTemplate(`${EXPORT_URI}{taskId}`, { list: undefined }),
    { title: 'An export_records file', description: 'The file of an export_records call, for the lifetime of its task.' },
    async (uri, variables) => {
      const file = await tasks.file(String(variables.taskId));
      return { contents: [{ uri: uri.href, mimeType: file.mimeType, text: file.data.toString('utf8') }] };
    },
  );

  // This request's call (one JSON-RPC message per POST): whether it asked for a task, and the task its tool made.
  let asked: { ttl?: unknown } | undefined;
  let made: TaskView | undefined;
  // The SDK checks a tools/call result as a CallToolResult, which a task is not: the task is
  // answered around its handler (SDK 2.4 has no hook for it; its Protocol keeps the handlers here).
  const handlers = (
    server.server as unknown as { _requestHandlers: Map<string, (request: unknown, ctx: ServerContext) => Promise<unknown>> }
  )._requestHandlers;
  const call = handlers.get('tools/call');
  if (call) {
    handlers.set('tools/call', async (request, ctx) => {
      const params = (request as { params?: { name?: unknown; task?: unknown } }).params;
      const name = String(params?.name);
      const taskTool = options.taskTools.has(name) && options.allowed(name);
      if (taskTool) {
        if (modern) asked = clientTakesTasks() ? {} : undefined;
        else if (params?.task && typeof params.task === 'object') asked = params.task as { ttl?: unknown };
      }
      const result = (await call(request, ctx)) as CallToolResult;
      if (made) return modern ? { resultType: 'task', ...modernTask(withoutPayload(made)) } : { task: legacyTask(made) };
      // 2025-11-25: a client that asked for a task awaits one, whatever the call came to.
      if (asked && !modern) return { task: legacyTask(withoutPayload(await tasks.completed(name, result, asked))) };
      return result;
    });
  }
  return {
    async defer(tool, later) {
      if (!asked) return tasks.now(tool, later);
      made = await tasks.start(tool, later, asked);
      // Never sent: the wrapper above answers with the task.
      return { content: [], isError: true };
    },
  };
}
