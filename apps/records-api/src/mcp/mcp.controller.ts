import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Controller, Delete, Get, HttpCode, Logger, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal, type AuthenticatedRequest } from '../../../../libs/auth/src/auth.guard.js';
import { bearerToken } from '../../../../libs/auth/src/bearer-auth.service.js';
import type { Principal } from '../../../../libs/auth/src/principal.js';
import type { RequestWithId } from '../http/request-id.js';
import { ObjectServices } from '../objects/object-service.js';
import { packageVersion } from '../well-known/docs-pages.js';
import { prefersEventStream } from './accept.js';
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

  constructor(services: ObjectServices) {
    this.tools = recordTools(...services.all);
  }

  @Post()
  async handle(@CurrentPrincipal() principal: Principal, @Req() req: McpRequest, @Res() res: Response): Promise<void> {
    const server = createMcpServer({
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
