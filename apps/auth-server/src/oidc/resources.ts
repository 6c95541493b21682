/**
 * The two resources a token can be for (RFC 8707): the whole API, or MCP only. Clients
 * write them with or without a trailing slash; the audience is always the bare form.
 */
export function normaliseResource(resource: string): string {
  return resource.replace(/\/+$/, '');
}

export function knownResources(publicUrl: string): string[] {
  return [publicUrl, `${publicUrl}/mcp`];
}
