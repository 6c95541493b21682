import {
  McpServer,
  inputRequired,
  type AuthInfo,
  type CallToolResult,
  type ServerContext,
  type StandardSchemaWithJSON,
} from '@modelcontextprotocol/server';
import type { Logger } from '@nestjs/common';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { z } from 'zod';
import { assertCan, can, type Principal } from '#auth/principal.js';
import { isDatabaseUnavailable, isStatementTimeout, statementTimeoutMessage } from '#ops/database-unavailable.js';
import { AppError, ForbiddenError } from '#errors/errors.js';
import { objectList } from '../well-known/field-tables.js';
import type { RecordTool } from './record-tools.js';
import { ToolRefusal, type Confirmation } from './confirmation.js';
import { REVEAL_TOOL, registerRevealRefusal } from './vault-tool.js';
import { enableTasks, toolResult, type McpTasks } from './tasks.js';

const INSTRUCTIONS =
  `${objectList()} of one CRM workspace (the one your credential belongs to). ` +
  'List tools take the REST list syntax: filter like name[ilike]:"%acme%" or or(a[eq]:"x",b[is]:NULL), ' +
  'order_by like createdAt[DescNullsLast], limit (default 60, at most 200), and cursors from pageInfo. ' +
  'Deletes are soft. Only the tools your role allows are listed.';

/** What one request hands the server it builds: who calls, the tools it names, its request id. */
export interface McpCall {
  principal: Principal;
  called: ReadonlySet<string>;
  requestId: string | undefined;
  /** The tools as the principal's workspace sees them (its custom fields); unset: the built-in ones. */
  tools?: RecordTool[];
  /** Said to the client after the instructions: the workspace's objects left without tools of their own. */
  notice?: string;
  /** Called when a tool failed because the database is away: the reply becomes HTTP 503. */
  onUnavailable?: () => void;
  /** A 2026-07-28 request (the SDK's modern handler), whose tools may ask the user (input_required). */
  modern?: boolean;
  /** The caller's MCP tasks (tasks.ts): long tools run as tasks for clients that take them. */
  tasks?: McpTasks;
}

/** The principal the bearer guard resolved, with the call's details, as the SDK passes auth through (`req.auth`). */
export function authInfoFor(token: string, call: McpCall): AuthInfo {
  return { token, clientId: call.principal.subjectId, scopes: ['api'], extra: { call } };
}

export function callOf(authInfo: AuthInfo | undefined): McpCall {
  const call = authInfo?.extra?.call as McpCall | undefined;
  if (!call) throw new Error('MCP request without an authenticated principal');
  return call;
}

/** A domain error is a tool result the model can read and act on; anything else is a plain internal error. */
export function toolError(
  err: unknown,
  tool: string,
  requestId: string | undefined,
  logger: Logger,
  onUnavailable: () => void,
): CallToolResult {
  if (err instanceof AppError && err.status < 500) {
    return { isError: true, content: [{ type: 'text', text: `${err.code}: ${err.messages.join('; ')}` }] };
  }
  if (err instanceof ToolRefusal) return { isError: true, content: [{ type: 'text', text: `${err.code}: ${err.message}` }] };
  // The model can act on it (narrow the filter) as on a domain error.
  if (isStatementTimeout(err)) return { isError: true, content: [{ type: 'text', text: `QUERY_TIMEOUT: ${statementTimeoutMessage()}` }] };
  if (isDatabaseUnavailable(err)) {
    onUnavailable();
    return { isError: true, content: [{ type: 'text', text: 'SERVICE_UNAVAILABLE: The database is unavailable; retry later' }] };
  }
  logger.error(`tool ${tool} [${requestId}] ${(err as Error)?.stack ?? String(err)}`);
  return { isError: true, content: [{ type: 'text', text: `INTERNAL_ERROR: Internal server error (request id ${requestId})` }] };
}

/**
 * The tools of one request, for one principal (stateless: a fresh server per request).
 * Tools the role cannot use are not registered, so `tools/list` leaves them out; a tool
 * named by a `tools/call` in this request is registered anyway, so calling it reaches the
 * service layer and gets the same FORBIDDEN as REST instead of "tool not found".
 */
export function createMcpServer(options: {
  principal: Principal;
  tools: RecordTool[];
  called: ReadonlySet<string>;
  requestId: string | undefined;
  logger: Logger;
  version: string;
  /** Called when a tool failed because the database is away: the reply becomes HTTP 503. */
  onUnavailable?: () => void;
  /** Said after the instructions (McpCall.notice). */
  notice?: string;
  /** A 2026-07-28 request, whose tools may ask the user through an input_required result. */
  modern?: boolean;
  /** The caller's MCP tasks (McpCall.tasks). */
  tasks?: McpTasks;
}): McpServer {
  const server = new McpServer(
    { name: 'workspace-records', title: 'Workspace Records Service', version: options.version },
    { instructions: options.notice ? `${INSTRUCTIONS} ${options.notice}` : INSTRUCTIONS },
  );
  const allowedTools = new Set<string>();
  let defer: ReturnType<typeof enableTasks>['defer'] | undefined;
  for (const tool of options.tools) {
    const allowed = (tool.objects ?? [tool.object]).some(
      (object) => can(options.principal, object, tool.action) && (!tool.alsoNeeds || can(options.principal, object, tool.alsoNeeds)),
    );
    if (allowed) allowedTools.add(tool.name);
    if (!allowed && !options.called.has(tool.name)) continue;
    const registered = server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        // A tool the caller may not use takes any arguments: they are never looked at (refuse).
        inputSchema: allowed ? convertedOnce(tool.inputSchema) : ANY_ARGUMENTS,
        outputSchema: convertedOnce(tool.outputSchema),
        annotations: tool.annotations,
      },
      async (args: Record<string, unknown>, ctx: ServerContext) => {
        try {
          if (!allowed) refuse(options.principal, tool, args);
          const outcome = await tool.run(options.principal, args, confirmationOf(server, ctx, options.modern === true));
          if ('ask' in outcome) {
            return inputRequired({
              inputRequests: { [CONFIRM_KEY]: inputRequired.elicit({ message: outcome.ask, requestedSchema: CONFIRM_SCHEMA }) },
            });
          }
          if ('later' in outcome) {
            if (!defer) throw new Error(`${tool.name} needs tasks, which this server was built without`);
            return await defer(tool.name, outcome.later);
          }
          return toolResult(outcome);
        } catch (err) {
          return toolError(err, tool.name, options.requestId, options.logger, options.onUnavailable ?? (() => undefined));
        }
      },
    );
    // 2025-11-25 clients ask for a task only of a tool that says it may run as one (the 2026-07-28 codec leaves it out).
    if (tool.long) registered.execution = { taskSupport: 'optional' };
  }
  if (options.tasks) {
    ({ defer } = enableTasks(server, {
      tasks: options.tasks,
      modern: options.modern === true,
      taskTools: new Set(options.tools.filter((t) => t.long).map((t) => t.name)),
      allowed: (name) => allowedTools.has(name),
    }));
  }
  // A call naming no tool of ours is a tool error the model can read and recover from, as
  // v1 of the SDK answered it (and the conformance suite's tools-call-error expects), not
  // a JSON-RPC error the client may surface as a failure of the whole server.
  if (options.called.has(REVEAL_TOOL)) registerRevealRefusal(server);
  const known = new Set([...options.tools.map((t) => t.name), REVEAL_TOOL]);
  for (const name of options.called) {
    if (known.has(name)) continue;
    try {
      server.registerTool(name, { description: 'Not a tool of this server.', inputSchema: ANY_ARGUMENTS }, async () => ({
        isError: true,
        content: [{ type: 'text', text: `UNKNOWN_TOOL: there is no tool "${name}"; tools/list names the tools your role can use` }],
      }));
    } catch {
      // A name the SDK will not register (not a valid tool name): it answers -32602 itself.
    }
  }
  return server;
}

/** The key and answer of the question a change of many records asks (MCP 2026-07-28, input_required). */
const CONFIRM_KEY = 'confirm';
const CONFIRM_SCHEMA = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const, title: 'Go ahead', description: 'Make the change.' } },
  required: ['confirm'],
};

/**
 * Whether the client can ask its user within this request — a 2026-07-28 request from a
 * client that declared elicitation: the question goes out as an input_required result and
 * the answer comes back on the retried call, whatever instance takes it. A 2025-era client
 * could only be asked over a stream this stateless server does not keep, so it says
 * `confirm: true` instead.
 */
function confirmationOf(server: McpServer, ctx: ServerContext, modern: boolean): Confirmation {
  const canAsk = modern && server.server.getClientCapabilities()?.elicitation !== undefined;
  const response = ctx.mcpReq.inputResponses?.[CONFIRM_KEY] as { action?: string; content?: { confirm?: unknown } } | undefined;
  if (!canAsk || !response) return { canAsk };
  return { canAsk, answer: response.action === 'accept' && response.content?.confirm === true ? 'accept' : 'decline' };
}

const ANY_ARGUMENTS = z.object({}).passthrough();

/**
 * A tool the caller's role (as its token's scopes narrow it) does not allow, called by
 * name: the FORBIDDEN REST answers, whatever the arguments (a forged `confirm` included),
 * and the tool never runs. The tool is allowed on none of its objects, so the check on
 * the one named (or the first) throws.
 */
function refuse(principal: Principal, tool: RecordTool, args: Record<string, unknown>): never {
  const objects = tool.objects ?? [tool.object];
  const object = typeof args.object === 'string' && objects.includes(args.object) ? args.object : objects[0];
  assertCan(principal, object, tool.action);
  if (tool.alsoNeeds) assertCan(principal, object, tool.alsoNeeds);
  throw new ForbiddenError(`${tool.name} is not allowed for this credential`);
}

const converted = new WeakMap<object, StandardSchemaWithJSON>();
const withoutDialect = new WeakSet<object>();

/**
 * `schema`, listed without `$schema`: JSON Schema 2020-12 is the default dialect of tool
 * schemas since MCP 2025-11-25, and the 50 bytes it takes twice per tool count against the
 * tool list's size (docs/mcp.md "Generic tools"). The per-object tools keep it, as they
 * always listed it.
 */
export function dialectless<T extends object>(schema: T): T {
  withoutDialect.add(schema);
  return schema;
}
type JsonSchemaOptions = Parameters<StandardSchemaWithJSON['~standard']['jsonSchema']['input']>[0];

function frozen<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) frozen(inner);
  }
  return value;
}

/**
 * `schema` with its JSON Schema worked out once, where the SDK would convert it again at
 * every `tools/list` of every request (stateless: a server per request): 320 tools of a
 * workspace with 50 custom objects took 0.4 to 1.1 s of the event loop per list. Validation
 * stays the schema's own. The SDK converts to one target only (JSON Schema 2020-12); the
 * result is frozen, so nothing can change what the next request lists.
 */
export function convertedOnce<T extends StandardSchemaWithJSON>(schema: T): T {
  let found = converted.get(schema);
  if (!found) {
    const own = schema['~standard'];
    const json = new Map<string, Record<string, unknown>>();
    const once = (io: 'input' | 'output', options: JsonSchemaOptions) => {
      const key = `${io} ${options.target}`;
      let result = json.get(key);
      if (!result) {
        result = own.jsonSchema[io](options);
        if (withoutDialect.has(schema)) delete result.$schema;
        json.set(key, (result = frozen(result)));
      }
      return result;
    };
    found = {
      '~standard': {
        ...own,
        validate: (value) => own.validate(value),
        jsonSchema: { input: (options) => once('input', options), output: (options) => once('output', options) },
      },
    };
    converted.set(schema, found);
  }
  return found as T;
}

/** The JSON Schema target of every conversion the SDK makes (MCP 2025-11-25 and later: JSON Schema 2020-12). */
const TARGET: JsonSchemaOptions = { target: 'draft-2020-12' };

/** The length of `tools`' JSON Schemas as JSON text, once converted (convertAhead). */
export function schemaLength(tools: readonly Pick<RecordTool, 'inputSchema' | 'outputSchema'>[]): number {
  let length = 0;
  for (const tool of tools) {
    length += JSON.stringify(convertedOnce(tool.inputSchema)['~standard'].jsonSchema.input(TARGET)).length;
    length += JSON.stringify(convertedOnce(tool.outputSchema)['~standard'].jsonSchema.output(TARGET)).length;
  }
  return length;
}

/**
 * What the tools/list answer takes for `tools`, in bytes of JSON: each tool as the SDK lists
 * it (name, title, description, both schemas, annotations) and a comma.
 */
export function listedLength(tools: readonly RecordTool[]): number {
  let length = 0;
  for (const tool of tools) {
    length +=
      Buffer.byteLength(
        JSON.stringify({
          name: tool.name,
          title: tool.title,
          description: tool.description,
          inputSchema: convertedOnce(tool.inputSchema)['~standard'].jsonSchema.input(TARGET),
          annotations: tool.annotations,
          outputSchema: convertedOnce(tool.outputSchema)['~standard'].jsonSchema.output(TARGET),
        }),
      ) + 1;
  }
  return length;
}

/**
 * Converts `tools`' schemas ahead of their first `tools/list`, one tool per turn of the
 * event loop, so that a list of hundreds (a workspace's custom objects) never holds it
 * for long (docs/decisions/0059-custom-objects-open-api-and-mcp.md).
 */
export async function convertAhead(tools: readonly Pick<RecordTool, 'inputSchema' | 'outputSchema'>[]): Promise<void> {
  for (const tool of tools) {
    convertedOnce(tool.inputSchema)['~standard'].jsonSchema.input(TARGET);
    convertedOnce(tool.outputSchema)['~standard'].jsonSchema.output(TARGET);
    await yieldToEventLoop();
  }
}

/** Names of the tools a JSON-RPC message (or batch) calls. */
export function calledTools(body: unknown): Set<string> {
  const messages = Array.isArray(body) ? body : [body];
  const names = new Set<string>();
  for (const message of messages) {
    const m = message as { method?: unknown; params?: { name?: unknown } } | null;
    if (m?.method === 'tools/call' && typeof m.params?.name === 'string') names.add(m.params.name);
  }
  return names;
}
