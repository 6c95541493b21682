import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { REVEAL_FORBIDDEN } from '#identity/vault.js';

/**
 * MCP has no vault tools; a client calling `reveal_vault_secret` (the name a model would
 * guess) gets the reason instead of "unknown tool": FORBIDDEN, for every credential, as on
 * REST and GraphQL (docs/vault.md). It is not listed: a tool that always refuses is not one
 * to offer.
 */
export const REVEAL_TOOL = 'reveal_vault_secret';

export function registerRevealRefusal(server: McpServer): void {
  server.registerTool(
    REVEAL_TOOL,
    {
      description: 'Never available: vault values are revealed only to a signed-in member in the app.',
      inputSchema: z.object({ name: z.string().optional() }).passthrough(),
    },
    async () => ({ isError: true, content: [{ type: 'text', text: `FORBIDDEN: ${REVEAL_FORBIDDEN}` }] }),
  );
}
