/**
 * RFC 6750 §3 challenge: `invalid_token` (401) or `insufficient_scope` (403, §3.1, with the scope that would do). RFC 9728 §5.1: a 401 points the client at the protected resource
 * metadata; `scope` (RFC 6750 §3) tells an MCP client which scope to request.
 */
export function wwwAuthenticate(
  publicUrl: string,
  resourcePath = '',
  withError: boolean | 'insufficient_scope' = false,
  scope?: string,
): string {
  const metadata = `${publicUrl}/.well-known/oauth-protected-resource${resourcePath}`;
  const error = withError ? `, error="${withError === true ? 'invalid_token' : withError}"` : '';
  const scopeParam = scope ? `, scope="${scope}"` : '';
  return `Bearer realm="${publicUrl}"${error}, resource_metadata="${metadata}"${scopeParam}`;
}

/** What a 401 from `/mcp` says: the `/mcp` metadata document and the scope to ask for. */
export const MCP_RESOURCE_PATH = '/mcp';
export const MCP_SCOPE = 'api';
