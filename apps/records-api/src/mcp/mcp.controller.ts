import { NodeStreamableHTTPServerTransport, toNodeHandler, toWebRequest, type NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import { Controller, Delete, Get, HttpCode, Logger, Post, Req, Res, type OnApplicationShutdown } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal, type AuthenticatedRequest } from '#auth/auth.guard.js';
import { bearerToken } from '#auth/bearer-auth.service.js';
import type { Principal } from '#auth/principal.js';
import { restrictionsKey } from '#auth/field-access.js';
import type { RequestWithId } from '../http/request-id.js';
import { ObjectServices } from '#records/service/object-service.js';
import { packageVersion } from '../well-known/docs-pages.js';
import { prefersEventStream } from './accept.js';
import { databaseUnavailableBody, errorHeaders } from '../http/error-body.js';
import { jsonRpcError } from '../http/rest-exception.filter.js';
import { authInfoFor, callOf, calledTools, convertAhead, createMcpServer, schemaLength, toolError, type McpCall } from './mcp-server.js';
import { recordTools, workspaceTools, type RecordTool } from './record-tools.js';
import { searchTool } from './search-tool.js';
import { genericTools } from './generic-tools.js';
import { jobTools } from './job-tools.js';
import { McpTasks } from './tasks.js';
import { ImportsService } from '#records/imports/imports.service.js';
import { ExportsService } from '#records/service/exports.service.js';
import { Sql } from '#database/sql.js';
import { OBJECTS } from '#records/objects/index.js';
import { SearchService } from '#records/service/search.service.js';
import { DataModel, type WorkspaceModel } from '#records/service/data-model.js';
import { BuildQueue } from '../graphql/build-queue.js';
import { LRUCache } from 'lru-cache';

type McpRequest = AuthenticatedRequest & RequestWithId & { auth?: ReturnType<typeof authInfoFor> };

/**
 * The heap the kept tool lists may take, estimated: the standard objects' tools with a
 * custom field take about 0.6 MB, zod schemas and their JSON Schemas together; custom
 * objects add no tools (the generic ones take them) and only their names to two schemas.
 */
const TOOL_LISTS_BYTES = 24 * 1024 * 1024;

/** A tool list's heap, estimated from its JSON Schemas' length (measured: 12 to 20 times it; the larger). */
const heapOf = (tools: readonly RecordTool[]) => 20 * schemaLength(tools);

/** The tools of a workspace's model as one role sees them, and what the server tells the client of them. */
interface ToolList {
  tools: RecordTool[];
  notice?: string;
}

/**
 * `/mcp` (docs/mcp.md): MCP over Streamable HTTP, stateless, on the official v2 SDK. The
 * global bearer guard has already turned the token into a principal (audience
 * PUBLIC_URL/mcp or PUBLIC_URL), or answered 401 with the /mcp resource metadata in
 * WWW-Authenticate. Protocol 2026-07-28 requests (the per-request `_meta` envelope,
 * `server/discover`) go to the SDK's handler; 2025-era ones (initialize handshake,
 * 2025-06-18 and 2025-11-25) to a fresh stateless transport, as before, so their replies
 * stay JSON unless the client prefers SSE.
 */
@ApiExcludeController()
@Controller('mcp')
export class McpController implements OnApplicationShutdown {
  private readonly logger = new Logger('MCP');
  private readonly tools: RecordTool[];
  private readonly version = packageVersion();
  private readonly modern: ReturnType<typeof createMcpHandler>;
  private readonly serveModern: NodeMcpRequestHandler;

  /**
   * Tool lists of workspaces with custom objects or fields, per data-model version, bounded
   * by their estimated heap (docs/decisions/0059-custom-objects-open-api-and-mcp.md).
   */
  private readonly workspaceTools = new LRUCache<string, ToolList, { model: WorkspaceModel; principal?: Principal }>({
    max: 200,
    maxSize: TOOL_LISTS_BYTES,
    sizeCalculation: (list) => heapOf(list.tools),
    // One build per key however many requests ask for it at once, and one at a time in the process.
    fetchMethod: (_key, _stale, { context }) =>
      this.builds.run(context.model.workspaceId, () => this.build(context.model, context.principal)),
  });
  private readonly builds = new BuildQueue('MCP tool list');

  constructor(
    private readonly services: ObjectServices,
    private readonly models: DataModel,
    private readonly searchService: SearchService,
    private readonly imports: ImportsService,
    private readonly exports: ExportsService,
    private readonly sql: Sql,
  ) {
    this.tools = [...recordTools(...services.all), ...this.shared(OBJECTS.map((o) => o.plural))];
    // One server per request, built for the principal the request carries (SDK: "factory keyed off authInfo").
    this.modern = createMcpHandler((ctx) => this.serverFor(callOf(ctx.authInfo)), {
      legacy: 'reject',
      onerror: (err) => this.logger.warn(`MCP: ${err.message}`),
    });
    this.serveModern = toNodeHandler(this.modern);
  }

  async onApplicationShutdown(): Promise<void> {
    this.builds.clear();
    await this.modern.close();
  }

  /** The tools every object shares, whatever the data model: `objects`, the plural names served. */
  private shared(objects: readonly string[]): RecordTool[] {
    return [
      searchTool(this.searchService),
      ...genericTools(this.services.all[0].records, this.models, objects),
      ...jobTools(this.imports, this.exports, objects),
    ];
  }

  private async build(model: WorkspaceModel, principal?: Principal): Promise<ToolList> {
    const { tools, withoutTools } = await workspaceTools(this.services.all, model, this.shared(model.served), principal);
    await convertAhead(tools);
    const reached = [...withoutTools, ...model.objects.filter((o) => o.isActive).map((o) => o.namePlural)];
    if (!reached.length) return { tools };
    return {
      tools,
      notice: `Objects without tools of their own: ${reached.join(', ')}; the generic tools take them (describe_object first).`,
    };
  }

  @Post()
  async handle(@CurrentPrincipal() principal: Principal, @Req() req: McpRequest, @Res() res: Response): Promise<void> {
    // JSON-RPC batches left the protocol in 2025-06-18; one POST, one message (docs/security.md),
    // so a request's rate-limit unit is one call.
    if (Array.isArray(req.body)) {
      res.status(400).json({
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not supported; send one message per POST' },
        id: null,
      });
      return;
    }
    let unavailable = false;
    answer503WhenUnavailable(req, res, () => unavailable);
    const model = await this.models.of(principal);
    // A role with field restrictions: tools without the fields it may not read or update, kept per restrictions.
    const restrictions = restrictionsKey(principal);
    let list: ToolList | undefined;
    if (model.hasActiveFields || restrictions) {
      const key = restrictions ? `${model.key}:${restrictions}` : model.key;
      list = await this.workspaceTools.fetch(key, { context: { model, principal: restrictions ? principal : undefined } });
    }
    const call: McpCall = {
      principal,
      tools: list?.tools,
      notice: list?.notice,
      called: calledTools(req.body),
      requestId: req.id,
      onUnavailable: () => {
        unavailable = true;
      },
      tasks: new McpTasks(
        this.sql,
        principal,
        this.logger,
        (importId) => this.imports.cancel(principal, importId),
        (err, tool) => toolError(err, tool, req.id, this.logger, () => undefined),
      ),
    };
    call.modern = !(await isLegacyRequest(await toWebRequest(req, req.body), req.body));
    req.auth = authInfoFor(bearerToken(req.headers.authorization), call);
    if (call.modern) {
      await this.serveModern(req, res, req.body);
      return;
    }
    const server = this.serverFor(call);
    // Stateless: no session id, a fresh server and transport per request (SDK "stateless" example).
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !prefersEventStream(req.headers.accept),
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The JSON body was parsed already (http/body-parsing.ts): hand it over.
    await transport.handleRequest(req, res, req.body);
  }

  private serverFor(call: McpCall) {
    return createMcpServer({ ...call, tools: call.tools ?? this.tools, logger: this.logger, version: this.version });
  }

  /** No server-initiated stream and no session to end in stateless mode (SDK examples answer 405). */
  @Get()
  @HttpCode(405)
  stream(@Res({ passthrough: true }) res: Response) {
    return this.methodNotAllowed(res);
  }

  @Delete()
  @HttpCode(405)
  end(@Res({ passthrough: true }) res: Response) {
    return this.methodNotAllowed(res);
  }

  private methodNotAllowed(res: Response) {
    res.setHeader('Allow', 'POST');
    return {
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: this server is stateless; send JSON-RPC messages with POST.' },
      id: null,
    };
  }
}

/**
 * README.md, Operations: a tool call that failed because the database is away makes the whole reply
 * HTTP 503 with a JSON-RPC error, as when authentication itself could not reach it. The
 * SDK writes the JSON reply after the tools ran, so its status and body are swapped as
 * they are written (a reply streamed as SSE has sent its 200 already and keeps the
 * tool's SERVICE_UNAVAILABLE result).
 */
function answer503WhenUnavailable(req: McpRequest, res: Response, unavailable: () => boolean): void {
  const writeHead = res.writeHead.bind(res) as (status: number, ...rest: unknown[]) => Response;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  let swapped = false;
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    const headers = rest.find((r) => r && typeof r === 'object') as Record<string, string> | undefined;
    if (!unavailable() || headers?.['Content-Type'] === 'text/event-stream' || headers?.['content-type'] === 'text/event-stream') {
      return writeHead(status, ...rest);
    }
    swapped = true;
    const body = { ...databaseUnavailableBody(), requestId: req.id };
    return writeHead(503, { 'Content-Type': 'application/json', ...errorHeaders(body) });
  }) as Response['writeHead'];
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  res.write = ((...args: unknown[]) => (swapped ? true : write(...args))) as Response['write'];
  res.end = ((...args: unknown[]) => {
    if (!swapped) return end(...args);
    const body = { ...databaseUnavailableBody(), requestId: req.id };
    return end(JSON.stringify(jsonRpcError(body, req.body)));
  }) as Response['end'];
}
