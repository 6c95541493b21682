import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@nestjs/common';
import { can, type Principal } from '../../../../libs/auth/src/principal.js';
import { isDatabaseUnavailable } from '../../../../libs/ops/src/database-unavailable.js';
import { AppError } from '../../../../libs/records/src/errors.js';
import type { RecordTool } from './record-tools.js';

const INSTRUCTIONS =
  'Companies and people of one CRM workspace (the one your credential belongs to). ' +
  'List tools take the REST list syntax: filter like name[ilike]:"%acme%" or or(a[eq]:"x",b[is]:NULL), ' +
  'order_by like createdAt[DescNullsLast], limit (default 60, at most 200), and cursors from pageInfo. ' +
  'Deletes are soft. Only the tools your role allows are listed.';

/** The principal the bearer guard resolved, as the transport hands it to a tool (`extra.authInfo`). */
export function authInfoFor(token: string, principal: Principal): AuthInfo {
  return { token, clientId: principal.subjectId, scopes: ['api'], extra: { principal } };
}

function principalOf(authInfo: AuthInfo | undefined): Principal {
  const principal = authInfo?.extra?.principal as Principal | undefined;
  if (!principal) throw new Error('MCP tool called without an authenticated principal');
  return principal;
}

/** A domain error is a tool result the model can read and act on; anything else is a plain internal error. */
function toolError(err: unknown, tool: string, requestId: string | undefined, logger: Logger, onUnavailable: () => void): CallToolResult {
  if (err instanceof AppError && err.status < 500) {
    return { isError: true, content: [{ type: 'text', text: `${err.code}: ${err.messages.join('; ')}` }] };
  }
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
}): McpServer {
  const server = new McpServer(
    { name: 'workspace-records', title: 'Workspace Records Service', version: options.version },
    { instructions: INSTRUCTIONS },
  );
  for (const tool of options.tools) {
    if (!can(options.principal, tool.object, tool.action) && !options.called.has(tool.name)) continue;
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        annotations: tool.annotations,
      },
      async (args: Record<string, unknown>, extra): Promise<CallToolResult> => {
        try {
          const { structured, summary } = await tool.run(principalOf(extra.authInfo), args);
          return {
            structuredContent: structured,
            // The summary, then the same result as JSON for clients that read text content only (MCP spec, "Structured Content").
            content: [
              { type: 'text', text: summary },
              { type: 'text', text: JSON.stringify(structured) },
            ],
          };
        } catch (err) {
          return toolError(err, tool.name, options.requestId, options.logger, options.onUnavailable ?? (() => undefined));
        }
      },
    );
  }
  return server;
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
