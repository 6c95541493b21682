import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Controller, Delete, Get, HttpCode, Logger, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal, type AuthenticatedRequest } from '../../../../libs/auth/src/auth.guard.js';
import { bearerToken } from '../../../../libs/auth/src/bearer-auth.service.js';
import type { Principal } from '../../../../libs/auth/src/principal.js';
import { CompaniesService } from '../companies/companies.service.js';
import type { RequestWithId } from '../http/request-id.js';
import { PeopleService } from '../people/people.service.js';
import { packageVersion } from '../well-known/docs-pages.js';
import { prefersEventStream } from './accept.js';
import { databaseUnavailableBody, errorHeaders } from '../http/error-body.js';
import { jsonRpcError } from '../http/rest-exception.filter.js';
import { authInfoFor, calledTools, createMcpServer } from './mcp-server.js';
import { recordTools, type RecordTool } from './record-tools.js';

type McpRequest = AuthenticatedRequest & RequestWithId & { auth?: ReturnType<typeof authInfoFor> };

/**
 * `/mcp` (SPEC §7): MCP over Streamable HTTP, stateless. The global bearer guard has
 * already turned the token into a principal (audience PUBLIC_URL/mcp or PUBLIC_URL), or
 * answered 401 with the /mcp resource metadata in WWW-Authenticate.
 */
@ApiExcludeController()
@Controller('mcp')
export class McpController {
  private readonly logger = new Logger('MCP');
  private readonly tools: RecordTool[];
  private readonly version = packageVersion();

  constructor(companies: CompaniesService, people: PeopleService) {
    this.tools = recordTools(companies, people);
  }

  @Post()
  async handle(@CurrentPrincipal() principal: Principal, @Req() req: McpRequest, @Res() res: Response): Promise<void> {
    let unavailable = false;
    answer503WhenUnavailable(req, res, () => unavailable);
    const server = createMcpServer({
      onUnavailable: () => {
        unavailable = true;
      },
      principal,
      tools: this.tools,
      called: calledTools(req.body),
      requestId: req.id,
      logger: this.logger,
      version: this.version,
    });
    // Stateless: no session id, a fresh server and transport per request (SDK "stateless" example).
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !prefersEventStream(req.headers.accept),
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    req.auth = authInfoFor(bearerToken(req.headers.authorization), principal);
    // The JSON body was parsed already (http/body-parsing.ts): hand it over.
    await transport.handleRequest(req, res, req.body);
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
    return { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless; send JSON-RPC messages with POST.' }, id: null };
  }
}

/**
 * SPEC §9: a tool call that failed because the database is away makes the whole reply
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
